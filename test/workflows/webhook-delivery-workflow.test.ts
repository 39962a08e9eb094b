// webhookDeliveryWorkflow alone under Temporal's time-skipping test server, its two activities
// stubbed (no database, no receiver): the attempts it makes, when (server time), and how the
// delivery ends. The real deliveries are tested in test/integration/webhooks.test.ts and
// webhook-bounds.test.ts.
import { describe, expect, it } from 'vitest';
import type { WebhookActivities } from '../../activities/webhooks/webhooks.ts';
import {
  type AttemptResult,
  DELIVERY_WORKFLOW_TYPE,
  type DeliveryInput,
  deliveryWorkflowId,
  endpointEnabledSignal,
  replaySignal,
  slotSignal,
} from '../../workflows/webhooks/definitions.ts';
import type { webhookDeliveryWorkflow } from '../../workflows/webhooks/webhook-delivery.ts';
import { eventually } from '../support/eventually.ts';
import { recordingStubs, useStubWorkflowEnv } from '../support/stub-activities.ts';

const stub = useStubWorkflowEnv('webhook-delivery-workflow');

const MINUTE = 60_000;
const HOUR = 60 * MINUTE;

const succeeded: AttemptResult = { outcome: 'succeeded', statusCode: 200, retryAfterMs: null };
const failed: AttemptResult = { outcome: 'failed', statusCode: 500, retryAfterMs: null };

/** Stubs whose attempts answer in turn (the last answer again and again). */
function deliveryStubs(...results: AttemptResult[]) {
  let next = 0;
  const stubs: WebhookActivities = {
    attemptDelivery: async () => results[Math.min(next++, results.length - 1)]!,
    finishDelivery: async () => undefined,
  };
  return recordingStubs(stubs);
}

let deliveries = 0;
/** Starts a delivery with this schedule and no jitter. */
async function deliver(taskQueue: string, scheduleMs: number[]) {
  deliveries += 1;
  const input: DeliveryInput = {
    deliveryId: `delivery-${deliveries}`,
    tenantId: 'tenant-a',
    eventId: `event-${deliveries}`,
    endpointId: 'endpoint-a',
    scheduleMs,
    jitter: 0,
  };
  const handle = await stub.env.client.workflow.start<typeof webhookDeliveryWorkflow>(DELIVERY_WORKFLOW_TYPE, {
    workflowId: deliveryWorkflowId(input.eventId, input.endpointId),
    taskQueue,
    args: [input],
  });
  return { handle, deliveryId: input.deliveryId };
}

describe('a webhook delivery', () => {
  it.each([
    ['succeeded on a 2xx', succeeded, 'succeeded'],
    [
      'failed on a 410 Gone (the attempt has disabled the endpoint)',
      { ...failed, outcome: 'gone', statusCode: 410 },
      'failed',
    ],
  ] as const)('ends after one attempt: %s', async (_case, answer, status) => {
    const stubs = deliveryStubs(answer);
    await stub.withWorker(stubs.activities, async (taskQueue) => {
      const { handle, deliveryId } = await deliver(taskQueue, [0, MINUTE, 5 * MINUTE]);
      expect(await handle.result()).toMatchObject({ status, attempts: 1 });
      expect(stubs.seen()).toEqual([{ name: 'attemptDelivery', input: { deliveryId, attemptNumber: 1 } }]);
    });
  });

  it('tries again on its schedule, waiting as long as a Retry-After asks instead', async () => {
    const stubs = deliveryStubs(failed, { outcome: 'failed', statusCode: 429, retryAfterMs: 2 * HOUR }, succeeded);
    await stub.withWorker(stubs.activities, async (taskQueue) => {
      const { handle, deliveryId } = await deliver(taskQueue, [0, MINUTE, 5 * MINUTE, 30 * MINUTE]);
      expect(await handle.result()).toMatchObject({ status: 'succeeded', attempts: 3 });
      expect(stubs.inputsOf('attemptDelivery')).toEqual([
        { deliveryId, attemptNumber: 1 },
        { deliveryId, attemptNumber: 2 },
        { deliveryId, attemptNumber: 3 },
      ]);
      // Server time: the second attempt a minute after the first, the third two hours after that.
      const [first, second, third] = stubs.calls.map((call) => call.scheduledAtMs);
      expect(second! - first!).toBeGreaterThanOrEqual(MINUTE);
      expect(third! - second!).toBeGreaterThanOrEqual(2 * HOUR);
      expect(stubs.inputsOf('finishDelivery')).toEqual([]);
    });
  });

  it('ends failed, and says so, once its schedule is spent', async () => {
    const stubs = deliveryStubs(failed);
    await stub.withWorker(stubs.activities, async (taskQueue) => {
      const { handle, deliveryId } = await deliver(taskQueue, [0, MINUTE]);
      expect(await handle.result()).toMatchObject({ status: 'failed', attempts: 2 });
      expect(stubs.seen()).toEqual([
        { name: 'attemptDelivery', input: { deliveryId, attemptNumber: 1 } },
        { name: 'attemptDelivery', input: { deliveryId, attemptNumber: 2 } },
        { name: 'finishDelivery', input: { deliveryId, status: 'failed' } },
      ]);
    });
  });

  it('waits for its tenant’s slot when the tenant has its limit in flight, then makes the same attempt', async () => {
    const stubs = deliveryStubs({ outcome: 'wait', statusCode: null, retryAfterMs: null }, succeeded);
    await stub.withWorker(stubs.activities, async (taskQueue) => {
      const { handle, deliveryId } = await deliver(taskQueue, [0, MINUTE]);
      await stubs.calledWith('attemptDelivery');
      await handle.signal(slotSignal);
      expect(await handle.result()).toMatchObject({ status: 'succeeded', attempts: 1 });
      expect(stubs.inputsOf('attemptDelivery')).toEqual([
        { deliveryId, attemptNumber: 1 },
        { deliveryId, attemptNumber: 1 },
      ]);
      // Server time: on the slot's signal, not on the wait's five-minute recheck.
      const [asked, made] = stubs.calls.map((call) => call.scheduledAtMs);
      expect(made! - asked!).toBeLessThan(5 * MINUTE);
    });
  });

  const paused: AttemptResult = { outcome: 'paused', statusCode: null, retryAfterMs: null };

  it('waits while its endpoint is disabled, counting nothing, and makes the same attempt once it is enabled', async () => {
    const stubs = deliveryStubs(failed, paused, succeeded);
    await stub.withWorker(stubs.activities, async (taskQueue) => {
      const { handle, deliveryId } = await deliver(taskQueue, [0, MINUTE, 5 * MINUTE]);
      // The first attempt fails; a minute later the second finds the endpoint disabled.
      await stub.env.sleep(2 * MINUTE);
      await eventually(() => stubs.calls.length === 2);
      // An hour of waiting: no attempt, no failure, the schedule's next steps not spent.
      await stub.env.sleep(HOUR);
      expect(stubs.inputsOf('attemptDelivery')).toHaveLength(2);
      expect(await handle.query('status')).toMatchObject({ status: 'retrying', attempts: 1 });
      await handle.signal(endpointEnabledSignal);
      expect(await handle.result()).toMatchObject({ status: 'succeeded', attempts: 2 });
      expect(stubs.inputsOf('attemptDelivery')).toEqual([
        { deliveryId, attemptNumber: 1 },
        { deliveryId, attemptNumber: 2 },
        { deliveryId, attemptNumber: 2 },
      ]);
      // Server time: on the signal, not on the six-hour recheck.
      const [, asked, made] = stubs.calls.map((call) => call.scheduledAtMs);
      expect(made! - asked!).toBeGreaterThanOrEqual(HOUR);
      expect(made! - asked!).toBeLessThan(6 * HOUR);
      expect(stubs.inputsOf('finishDelivery')).toEqual([]);
    });
  });

  it('looks at its disabled endpoint again every six hours, should the signal that wakes it be lost', async () => {
    const stubs = deliveryStubs(paused, paused, succeeded);
    await stub.withWorker(stubs.activities, async (taskQueue) => {
      const { handle, deliveryId } = await deliver(taskQueue, [0, MINUTE]);
      expect(await handle.result()).toMatchObject({ status: 'succeeded', attempts: 1 });
      expect(stubs.inputsOf('attemptDelivery')).toEqual(
        Array.from({ length: 3 }, () => ({ deliveryId, attemptNumber: 1 })),
      );
      const [first, second, third] = stubs.calls.map((call) => call.scheduledAtMs);
      expect(second! - first!).toBeGreaterThanOrEqual(6 * HOUR);
      expect(third! - second!).toBeGreaterThanOrEqual(6 * HOUR);
    });
  });

  it('delivers at once when replayed, without waiting for its scheduled time', async () => {
    const stubs = deliveryStubs(succeeded);
    await stub.withWorker(stubs.activities, async (taskQueue) => {
      const { handle, deliveryId } = await deliver(taskQueue, [HOUR]);
      await handle.signal(replaySignal, { replayId: 'replay-1' });
      expect(await handle.result()).toMatchObject({ status: 'succeeded', attempts: 1, lastReplayId: 'replay-1' });
      expect(stubs.inputsOf('attemptDelivery')).toEqual([{ deliveryId, attemptNumber: 1, replayId: 'replay-1' }]);
      const started = (await handle.describe()).startTime.getTime();
      expect(stubs.calls[0]!.scheduledAtMs - started).toBeLessThan(HOUR);
    });
  });
});
