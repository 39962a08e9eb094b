// The run that awaits a group of a batch's submitted items (workflows/transfers/transfer-batch-chunk.ts)
// against stubbed activities on the time-skipping server: each item finished once, on the bank's
// word (from its submission, kept before the run, by signal, by status query) or an operator's,
// the single transfer's status-query schedule and stuck flag, late contradicting words kept.
import { ApplicationFailure } from '@temporalio/common';
import { describe, expect, it } from 'vitest';
import {
  type AwaitedItem,
  type BankOutcome,
  type BatchChunkInput,
  type ItemFinish,
  type OperatorResolution,
  type ReversalApplied,
  type ReversalCheck,
  TRANSFER_BATCH_CHUNK_WORKFLOW_TYPE,
  TRANSFER_REVERSAL_WORKFLOW_TYPE,
  type TransferBatchActivities,
  type TransferReversalInput,
  itemWordSignal,
  resolveItemUpdate,
  transferBatchChunkWorkflowId,
  transferReversalWorkflowId,
} from '../../workflows/transfers/definitions.ts';
import type { transferReversalWorkflow } from '../../workflows/transfers/transfer-reversal.ts';
import type { transferBatchChunkWorkflow } from '../../workflows/transfers/transfer-batch-chunk.ts';
import { STUCK_AFTER_MS } from '../../workflows/transfers/transfer.ts';
import { recordingStubs, useStubWorkflowEnv } from '../support/stub-activities.ts';

const stub = useStubWorkflowEnv('transfer-batch-chunk-workflow');

const PAID: BankOutcome = { status: 'successful', source: 'callback', connector: 'sandbox', sessionId: 'S-1' };
const REFUSED: BankOutcome = { status: 'failed', source: 'callback', connector: 'sandbox', message: 'dormant account' };

function item(n: number, extra: Partial<AwaitedItem> = {}): AwaitedItem {
  return {
    transferId: `00000000-0000-4000-8000-${String(n).padStart(12, '0')}`,
    reference: `payroll-${n}`,
    connector: 'sandbox',
    sessionId: `SESSION-${n}`,
    ...extra,
  };
}

/** Stubs whose finish answers what each word asked (the books follow the first word). */
function chunkStubs(overrides: Partial<TransferBatchActivities> = {}) {
  const stubs: Pick<
    TransferBatchActivities,
    'keptItemWords' | 'finishBatchItems' | 'queryItemStatuses' | 'flagItemsStuck' | 'recordItemDiscrepancy'
  > = {
    keptItemWords: async () => ({}),
    finishBatchItems: async ({ items }) =>
      items.map((finish: ItemFinish) => ({
        transferId: finish.transferId,
        status: (finish.outcome?.status ?? finish.resolution?.outcome) === 'successful' ? 'completed' : 'failed',
      })),
    queryItemStatuses: async () => [],
    flagItemsStuck: async () => undefined,
    recordItemDiscrepancy: async () => true,
    ...overrides,
  };
  return recordingStubs(stubs);
}

let runs = 0;
async function startChunk(taskQueue: string, items: AwaitedItem[], input: Partial<BatchChunkInput> = {}) {
  runs += 1;
  const args: BatchChunkInput = {
    tenantId: 'tenant-a',
    batchId: `batch-${runs}`,
    batchReference: `payroll-${runs}`,
    chunk: 0,
    items,
    ...input,
  };
  return stub.env.client.workflow.start<typeof transferBatchChunkWorkflow>(TRANSFER_BATCH_CHUNK_WORKFLOW_TYPE, {
    workflowId: transferBatchChunkWorkflowId(args.tenantId, args.batchReference, args.chunk),
    taskQueue,
    args: [args],
  });
}

/** Every item finished, with what it was finished on, in the order the run asked. */
function finishes(stubs: ReturnType<typeof chunkStubs>): ItemFinish[] {
  return stubs.inputsOf('finishBatchItems').flatMap((input: { items: ItemFinish[] }) => input.items);
}

describe('a group of batch items awaiting their banks', () => {
  it('finishes each once on its word: the submission’s, one kept before the run, one by signal; no status query', async () => {
    const [a, b, c] = [item(1, { outcome: { ...PAID, source: 'submission' } }), item(2), item(3)];
    const stubs = chunkStubs({ keptItemWords: async () => ({ [b.transferId]: REFUSED }) });
    await stub.withWorker(stubs.activities, async (taskQueue) => {
      const handle = await startChunk(taskQueue, [a, b, c]);
      await stubs.calledWith('finishBatchItems');
      await handle.signal(itemWordSignal, { transferId: c.transferId, outcome: PAID });
      // A second word about an item finished as it says changes nothing.
      await handle.signal(itemWordSignal, { transferId: c.transferId, outcome: PAID });
      expect(await handle.result()).toEqual({
        chunk: 0,
        open: 0,
        successful: 2,
        failed: 1,
        statusChecks: 0,
        stuck: false,
      });
      expect(stubs.inputsOf('keptItemWords')).toEqual([{ transferIds: [a.transferId, b.transferId, c.transferId] }]);
      expect(finishes(stubs)).toEqual([
        { transferId: a.transferId, sessionId: a.sessionId, outcome: { ...PAID, source: 'submission' } },
        { transferId: b.transferId, sessionId: b.sessionId, outcome: REFUSED },
        { transferId: c.transferId, sessionId: c.sessionId, outcome: PAID },
      ]);
      expect(stubs.names()).not.toContain('queryItemStatuses');
      expect(stubs.names()).not.toContain('recordItemDiscrepancy');
    });
  });

  it('takes only the holder’s word, and keeps a later word contradicting a finished item for operators', async () => {
    const [a, b] = [item(1), item(2)];
    const stubs = chunkStubs();
    await stub.withWorker(stubs.activities, async (taskQueue) => {
      const handle = await startChunk(taskQueue, [a, b]);
      await stubs.calledWith('keptItemWords');
      await handle.signal(itemWordSignal, { transferId: a.transferId, outcome: { ...PAID, connector: 'paystack' } });
      await handle.signal(itemWordSignal, { transferId: a.transferId, outcome: REFUSED });
      await stubs.calledWith('finishBatchItems');
      await handle.signal(itemWordSignal, { transferId: a.transferId, outcome: PAID });
      await handle.signal(itemWordSignal, { transferId: b.transferId, outcome: PAID });
      expect(await handle.result()).toMatchObject({ successful: 1, failed: 1 });
      expect(finishes(stubs)).toEqual([
        { transferId: a.transferId, sessionId: a.sessionId, outcome: REFUSED },
        { transferId: b.transferId, sessionId: b.sessionId, outcome: PAID },
      ]);
      expect(stubs.inputsOf('recordItemDiscrepancy')).toEqual([{ transferId: a.transferId, bank: PAID }]);
    });
  });

  it('asks the silent items’ status on the single transfer’s schedule, flags the still silent stuck after 24 h, and an operator finishes the last', async () => {
    const [a, b, c] = [item(1), item(2), item(3)];
    let checks = 0;
    const stubs = chunkStubs({
      queryItemStatuses: async ({ items }) => {
        checks += 1;
        if (checks === 1) return [{ transferId: a.transferId, outcome: { ...PAID, source: 'status_query' } }];
        if (checks === 3) return [{ transferId: b.transferId, outcome: { ...REFUSED, source: 'status_query' } }];
        expect(items.map((asked: { transferId: string }) => asked.transferId)).not.toContain(a.transferId);
        return [];
      },
    });
    await stub.withWorker(stubs.activities, async (taskQueue) => {
      const handle = await startChunk(taskQueue, [a, b, c]);
      await stub.env.sleep('25 hours');
      await stubs.calledWith('flagItemsStuck');
      const resolution: OperatorResolution = {
        outcome: 'failed',
        note: 'the bank confirmed by phone',
        operator: 'ada',
      };
      const resolved = await handle.executeUpdate(resolveItemUpdate, {
        args: [{ transferId: c.transferId, ...resolution }],
      });
      expect(resolved).toEqual({ transferId: c.transferId, status: 'failed', decidedBy: 'operator', resolution });
      // 7 early checks, then hourly: the 31st is the first past 24 h of waiting.
      expect(await handle.result()).toEqual({
        chunk: 0,
        open: 0,
        successful: 1,
        failed: 2,
        statusChecks: 31,
        stuck: true,
      });
      const asked = stubs.calls.filter((call) => call.name === 'queryItemStatuses');
      expect(asked.map((call) => call.input.items.length)).toEqual([3, 2, 2, ...Array(28).fill(1)]);
      const first = stubs.calls.find((call) => call.name === 'keptItemWords')!.scheduledAtMs;
      const waits = asked.map((call, i) => call.scheduledAtMs - (asked[i - 1]?.scheduledAtMs ?? first));
      for (const [i, atLeast] of [15_000, 30_000, 60_000, 120_000].entries()) {
        expect(waits[i]).toBeGreaterThanOrEqual(atLeast);
      }
      expect(stubs.inputsOf('flagItemsStuck')).toEqual([{ transferIds: [c.transferId] }]);
      const flagged = stubs.calls.find((call) => call.name === 'flagItemsStuck')!.scheduledAtMs;
      expect(flagged - first).toBeGreaterThanOrEqual(STUCK_AFTER_MS);
      expect(finishes(stubs)).toEqual([
        { transferId: a.transferId, sessionId: a.sessionId, outcome: { ...PAID, source: 'status_query' } },
        { transferId: b.transferId, sessionId: b.sessionId, outcome: { ...REFUSED, source: 'status_query' } },
        { transferId: c.transferId, sessionId: c.sessionId, resolution },
      ]);
    });
  });

  it('waits on when a status check fails for good, and asks again on the schedule', async () => {
    const [a] = [item(1)];
    let checks = 0;
    const stubs = chunkStubs({
      queryItemStatuses: async () => {
        checks += 1;
        if (checks === 1) throw ApplicationFailure.nonRetryable('the bank is down', 'bank_unavailable');
        return [{ transferId: a.transferId, outcome: { ...PAID, source: 'status_query' } }];
      },
    });
    await stub.withWorker(stubs.activities, async (taskQueue) => {
      const handle = await startChunk(taskQueue, [a]);
      expect(await handle.result()).toMatchObject({ open: 0, successful: 1, failed: 0, statusChecks: 2 });
      const asked = stubs.calls.filter((call) => call.name === 'queryItemStatuses');
      expect(asked).toHaveLength(2);
      expect(asked[1]!.scheduledAtMs - asked[0]!.scheduledAtMs).toBeGreaterThanOrEqual(30_000);
      expect(finishes(stubs)).toEqual([
        { transferId: a.transferId, sessionId: a.sessionId, outcome: { ...PAID, source: 'status_query' } },
      ]);
    });
  });

  it('holds one resolution per item, refuses the other outcome and an item it does not await', async () => {
    const [a, b] = [item(1), item(2)];
    const stubs = chunkStubs();
    await stub.withWorker(stubs.activities, async (taskQueue) => {
      // b keeps the run open while a is resolved, and asked again.
      const handle = await startChunk(taskQueue, [a, b]);
      await stubs.calledWith('keptItemWords');
      await expect(
        handle.executeUpdate(resolveItemUpdate, {
          args: [{ transferId: item(9).transferId, outcome: 'failed', note: 'n', operator: 'ada' }],
        }),
      ).rejects.toMatchObject({ cause: { type: 'unknown_transfer' } });
      const first = handle.executeUpdate(resolveItemUpdate, {
        args: [{ transferId: a.transferId, outcome: 'successful', note: 'paid', operator: 'ada' }],
      });
      await expect(first).resolves.toMatchObject({ status: 'completed', decidedBy: 'operator' });
      await expect(
        handle.executeUpdate(resolveItemUpdate, {
          args: [{ transferId: a.transferId, outcome: 'failed', note: 'no', operator: 'bola' }],
        }),
      ).rejects.toMatchObject({ cause: { type: 'already_resolved' } });
      await handle.signal(itemWordSignal, { transferId: b.transferId, outcome: PAID });
      expect(await handle.result()).toMatchObject({ successful: 2, failed: 0 });
      expect(finishes(stubs)).toEqual([
        {
          transferId: a.transferId,
          sessionId: a.sessionId,
          resolution: { outcome: 'successful', note: 'paid', operator: 'ada' },
        },
        { transferId: b.transferId, sessionId: b.sessionId, outcome: PAID },
      ]);
    });
  });

  it('takes a reversal word its reversal run tells it (awaitedBy): the item fails as reversed, once', async () => {
    const [a] = [item(1)];
    let finished = false;
    const stubs = chunkStubs({
      finishBatchItems: async ({ items }) => {
        finished = true;
        return items.map((finish: ItemFinish) => ({ transferId: finish.transferId, status: 'failed' as const }));
      },
    });
    const reversal = recordingStubs({
      recordDiscrepancy: async () => false,
      reversalStatus: async (): Promise<ReversalCheck> => ({ status: 'reversed', providerCode: '00' }),
      applyReversal: async (): Promise<ReversalApplied> =>
        finished ? { outcome: 'already_failed' } : { outcome: 'in_flight' },
    });
    await stub.withWorker({ ...stubs.activities, ...reversal.activities }, async (taskQueue) => {
      const handle = await startChunk(taskQueue, [a]);
      const input: TransferReversalInput = {
        transferId: a.transferId,
        tenantId: 'tenant-a',
        reference: a.reference,
        connector: 'sandbox',
        word: { eventId: 'evt-1' },
        awaitedBy: handle.workflowId,
      };
      const reversed = await stub.env.client.workflow.start<typeof transferReversalWorkflow>(
        TRANSFER_REVERSAL_WORKFLOW_TYPE,
        { workflowId: transferReversalWorkflowId('tenant-a', a.reference), taskQueue, args: [input] },
      );
      expect(await handle.result()).toMatchObject({ successful: 0, failed: 1 });
      expect(await reversed.result()).toMatchObject({ outcome: 'failed' });
      expect(finishes(stubs)).toEqual([
        {
          transferId: a.transferId,
          sessionId: a.sessionId,
          outcome: {
            status: 'failed',
            reversed: true,
            source: 'status_query',
            connector: 'sandbox',
            providerCode: '00',
          },
        },
      ]);
    });
  });
});
