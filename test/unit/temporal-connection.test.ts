import { isGrpcServiceError } from '@temporalio/client';
import { describe, expect, it } from 'vitest';
import { boundedTemporalConnection } from '../../src/http/deadlines.ts';

// Nothing listens on port 1: every attempt fails at once with UNAVAILABLE, which the SDK retries
// from a timer (100 ms, 200 ms, 400 ms, … apart).
const UNREACHABLE = '127.0.0.1:1';
const UNAVAILABLE = 14;

async function failure(call: Promise<unknown>): Promise<unknown> {
  return call.then(
    () => expect.unreachable('the call reached a server on port 1'),
    (error: unknown) => error,
  );
}

describe("the API's Temporal connection", () => {
  it('gives up retrying before the call’s deadline, failing with UNAVAILABLE', async () => {
    const connection = boundedTemporalConnection(UNREACHABLE, 10_000);
    try {
      const started = Date.now();
      const deadline = started + 1_500;
      const error = await failure(
        connection.withDeadline(deadline, () => connection.workflowService.describeNamespace({ namespace: 'default' })),
      );
      expect(isGrpcServiceError(error) && error.code).toBe(UNAVAILABLE);
      expect(Date.now()).toBeLessThan(deadline);
    } finally {
      await connection.close();
    }
  });

  it('closes while a retry is scheduled without the retry throwing on the closed channel', async () => {
    const connection = boundedTemporalConnection(UNREACHABLE, 10_000);
    const call = failure(
      connection.withDeadline(Date.now() + 5_000, () =>
        connection.workflowService.describeNamespace({ namespace: 'default' }),
      ),
    );
    // Past the first two retries (100 ms and 200 ms), so the third is waiting on its timer now.
    await new Promise((resolve) => setTimeout(resolve, 400));
    await connection.close();
    // The SDK's own retry would re-send on the shut channel ("Channel has been shut down", thrown
    // from a timer) and leave this call unanswered; here it is answered.
    const error = await call;
    expect(isGrpcServiceError(error) && error.code).toBe(UNAVAILABLE);
  });
});
