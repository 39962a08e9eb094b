// transferReversalWorkflow alone (decisions §21), under Temporal's time-skipping test server, its
// activities stubs that record every call: a status query that cannot be had is asked again with
// backoff and then leaves the word as a discrepancy; one that confirms it applies it once; a
// transfer still in flight is told of its reversal by the signal its run waits for, and asked
// again after a durable wait until it is final. The whole stack's behaviour is in
// test/integration/reversals.test.ts.
import { ApplicationFailure } from '@temporalio/common';
import { describe, expect, it } from 'vitest';
import {
  type BankOutcome,
  type ReversalApplied,
  type ReversalCheck,
  TRANSFER_REVERSAL_WORKFLOW_TYPE,
  type TransferReversalInput,
  type TransferReversalState,
  bankConfirmedSignal,
  transferReversalWorkflowId,
} from '../../workflows/transfers/definitions.ts';
import { inFlightWaitMs } from '../../workflows/transfers/transfer-reversal.ts';
import { recordingStubs, useStubWorkflowEnv } from '../support/stub-activities.ts';

const stub = useStubWorkflowEnv('transfer-reversal-workflow');

let references = 0;
function input(): TransferReversalInput {
  references += 1;
  return {
    transferId: `00000000-0000-4000-8000-00000000000${references}`,
    tenantId: 'tenant-a',
    reference: `invoice-${references}`,
    connector: 'generic',
    word: { eventId: `evt-${references}`, sessionId: 'S1', providerCode: '00', message: 'closed account' },
  };
}

function run(taskQueue: string, given: TransferReversalInput): Promise<TransferReversalState> {
  return stub.env.client.workflow.execute<(input: TransferReversalInput) => Promise<TransferReversalState>>(
    TRANSFER_REVERSAL_WORKFLOW_TYPE,
    { workflowId: transferReversalWorkflowId(given.tenantId, given.reference), taskQueue, args: [given] },
  );
}

const REVERSED: ReversalCheck = { status: 'reversed', sessionId: 'S1', providerCode: '00', message: 'Reversed' };

describe('transferReversalWorkflow', () => {
  it('applies a reversal its status query confirms, once', async () => {
    const stubs = recordingStubs({
      reversalStatus: async (): Promise<ReversalCheck> => REVERSED,
      applyReversal: async (): Promise<ReversalApplied> => ({ outcome: 'applied', reversedAt: '2026-12-01T10:00:00Z' }),
      recordDiscrepancy: async () => true,
    });
    const given = input();
    const state = await stub.withWorker(stubs.activities, (taskQueue) => run(taskQueue, given));
    expect(state).toEqual({ phase: 'done', bankSays: 'reversed', outcome: 'applied' });
    expect(stubs.seen()).toEqual([
      { name: 'reversalStatus', input: { transferId: given.transferId, connector: 'generic' } },
      { name: 'applyReversal', input: { transferId: given.transferId, providerCode: '00' } },
    ]);
  });

  it('keeps a word as a discrepancy when the status query says anything but reversed, moving nothing', async () => {
    const stubs = recordingStubs({
      reversalStatus: async (): Promise<ReversalCheck> => ({
        status: 'successful',
        sessionId: 'S1',
        providerCode: '00',
      }),
      applyReversal: async (): Promise<ReversalApplied> => ({ outcome: 'applied', reversedAt: 'x' }),
      recordDiscrepancy: async () => true,
    });
    const given = input();
    const state = await stub.withWorker(stubs.activities, (taskQueue) => run(taskQueue, given));
    expect(state).toEqual({ phase: 'done', bankSays: 'successful', outcome: 'discrepancy' });
    expect(stubs.names()).toEqual(['reversalStatus', 'recordDiscrepancy']);
    expect(stubs.inputsOf('recordDiscrepancy')).toEqual([
      {
        transferId: given.transferId,
        bank: {
          status: 'failed',
          source: 'callback',
          connector: 'generic',
          sessionId: 'S1',
          providerCode: '00',
          message: 'generic said it reversed the transfer, but its status query says successful: closed account',
        },
      },
    ]);
  });

  it('asks again with backoff while the status query cannot be had, then keeps the word unconfirmed', async () => {
    // When each attempt ran, by the test server's clock.
    const ran: number[] = [];
    const stubs = recordingStubs({
      reversalStatus: async (): Promise<ReversalCheck> => {
        ran.push(await stub.env.currentTimeMs());
        throw ApplicationFailure.create({ message: 'bank unavailable (503)' });
      },
      applyReversal: async (): Promise<ReversalApplied> => ({ outcome: 'applied', reversedAt: 'x' }),
      recordDiscrepancy: async () => true,
    });
    const given = input();
    const state = await stub.withWorker(stubs.activities, (taskQueue) => run(taskQueue, given));
    expect(state).toEqual({ phase: 'done', bankSays: 'no answer', outcome: 'discrepancy' });
    expect(ran).toHaveLength(8);
    // 2 s doubling, at most 2 min: about four minutes in all, never a reversal on a guess.
    const gaps = ran.slice(1).map((at, i) => Math.round((at - ran[i]!) / 1000));
    expect(gaps).toEqual([2, 4, 8, 16, 32, 64, 120]);
    expect(stubs.names().filter((name) => name !== 'reversalStatus')).toEqual(['recordDiscrepancy']);
    expect(stubs.inputsOf('recordDiscrepancy')[0].bank.message).toBe(
      'generic said it reversed the transfer, but its status query could not be had (bank unavailable (503)): closed account',
    );
  });

  it('tells a transfer still in flight by its run’s signal, and applies the reversal once it is final', async () => {
    const given = input();
    let asks = 0;
    const received: BankOutcome[] = [];
    const stubs = recordingStubs({
      reversalStatus: async (): Promise<ReversalCheck> => REVERSED,
      // In flight twice; then its run completed it (its success came first), and the reversal applies.
      applyReversal: async (): Promise<ReversalApplied> =>
        ++asks <= 2 ? { outcome: 'in_flight' } : { outcome: 'applied', reversedAt: '2026-12-01T10:00:00Z' },
      recordDiscrepancy: async () => true,
    });
    const state = await stub.withWorker(stubs.activities, async (taskQueue) => {
      // The transfer's run, as a workflow that only listens: what the reversal run tells it.
      const transferRun = await stub.env.client.workflow.start('transferWorkflow', {
        workflowId: `transfer:${given.tenantId}:${given.reference}`,
        taskQueue: `${taskQueue}-nobody`,
        args: [{}],
      });
      const state = await run(taskQueue, given);
      const history = await transferRun.fetchHistory();
      for (const event of history.events ?? []) {
        const signalled = event.workflowExecutionSignaledEventAttributes;
        if (signalled?.signalName === bankConfirmedSignal.name) {
          const payload = signalled.input?.payloads?.[0]?.data;
          received.push(JSON.parse(Buffer.from(payload!).toString('utf8')) as BankOutcome);
        }
      }
      await transferRun.terminate('test over');
      return state;
    });
    expect(state).toEqual({ phase: 'done', bankSays: 'reversed', outcome: 'applied' });
    // Told once, as the bank's status query said it.
    expect(received).toEqual([
      {
        status: 'failed',
        reversed: true,
        source: 'status_query',
        connector: 'generic',
        sessionId: 'S1',
        providerCode: '00',
        message: 'Reversed',
      },
    ]);
    const applies = stubs.calls.filter((call) => call.name === 'applyReversal');
    expect(applies).toHaveLength(3);
    // Asked again after durable waits of 5 s, then 10 s.
    const gaps = applies.slice(1).map((call, i) => Math.round((call.scheduledAtMs - applies[i]!.scheduledAtMs) / 1000));
    expect(gaps).toEqual([inFlightWaitMs(0) / 1000, inFlightWaitMs(1) / 1000]);
    expect(gaps).toEqual([5, 10]);
  });

  it('ends `failed` when its run failed the transfer in flight, and `unchanged` when it was failed already', async () => {
    let asks = 0;
    const stubs = recordingStubs({
      reversalStatus: async (): Promise<ReversalCheck> => REVERSED,
      applyReversal: async (): Promise<ReversalApplied> =>
        ++asks === 1 ? { outcome: 'in_flight' } : { outcome: 'already_failed' },
      recordDiscrepancy: async () => true,
    });
    const inFlight = input();
    expect(await stub.withWorker(stubs.activities, (taskQueue) => run(taskQueue, inFlight))).toEqual({
      phase: 'done',
      bankSays: 'reversed',
      outcome: 'failed',
    });
    const already = recordingStubs({
      reversalStatus: async (): Promise<ReversalCheck> => REVERSED,
      applyReversal: async (): Promise<ReversalApplied> => ({ outcome: 'already_reversed' }),
      recordDiscrepancy: async () => true,
    });
    const again = input();
    expect(await stub.withWorker(already.activities, (taskQueue) => run(taskQueue, again))).toEqual({
      phase: 'done',
      bankSays: 'reversed',
      outcome: 'unchanged',
    });
    expect(already.names()).toEqual(['reversalStatus', 'applyReversal']);
  });
});
