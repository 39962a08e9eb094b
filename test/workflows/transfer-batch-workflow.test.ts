// transferBatchWorkflow's approval (decisions §20) alone, under Temporal's time-skipping test
// server: its activities are stubs that record every call (no database, no bank), so each test
// states what a held batch asks of them and when — a day's expiry waited out in full, a decision
// during the enquiry, the decideApproval update's refusals. The whole stack's behaviour is tested in
// test/integration/batch-approvals.test.ts.
import { WorkflowUpdateFailedError } from '@temporalio/client';
import { describe, expect, it } from 'vitest';
import {
  type ApprovalDecision,
  TRANSFER_BATCH_WORKFLOW_TYPE,
  type TransferBatchActivities,
  type TransferBatchInput,
  decideApprovalUpdate,
  transferBatchWorkflowId,
} from '../../workflows/transfers/definitions.ts';
import type { transferBatchWorkflow } from '../../workflows/transfers/transfer-batch.ts';
import { gate, recordingStubs, useStubWorkflowEnv } from '../support/stub-activities.ts';

const stub = useStubWorkflowEnv('transfer-batch-workflow');

const DAY = 24 * 60 * 60 * 1000;
const MAKER = '11111111-1111-4111-8111-111111111111';
const APPROVER = '22222222-2222-4222-8222-222222222222';

/** Stubs of a batch whose items are all refused (no item runs): what the approval does is the test. */
function batchStubs(overrides: Partial<TransferBatchActivities> = {}) {
  const stubs: TransferBatchActivities = {
    enquireBatchNames: async () => ({ answered: 0, refused: 0 }),
    reserveBatchItems: async () => ({ accepted: [], refused: 0 }),
    submitBatchItems: async () => [],
    completeBatch: async () => undefined,
    decideBatchApproval: async (input) => ({ status: input.outcome }),
    settleHeldBatchItems: async () => ({ approved: 0, failed: 0 }),
    keptItemWords: async () => ({}),
    finishBatchItems: async () => [],
    queryItemStatuses: async () => [],
    flagItemsStuck: async () => undefined,
    recordItemDiscrepancy: async () => false,
    ...overrides,
  };
  return recordingStubs(stubs);
}

let batches = 0;
async function startBatch(taskQueue: string, input: Partial<TransferBatchInput> = {}) {
  batches += 1;
  const args: TransferBatchInput = {
    batchId: `batch-${batches}`,
    tenantId: 'tenant-a',
    batchReference: `payroll-${batches}`,
    totalCount: 600,
    createdByKeyId: MAKER,
    ...input,
  };
  return stub.env.client.workflow.start<typeof transferBatchWorkflow>(TRANSFER_BATCH_WORKFLOW_TYPE, {
    workflowId: transferBatchWorkflowId(args.tenantId, args.batchReference),
    taskQueue,
    args: [args],
  });
}

function decision(keyId: string, verdict: 'approve' | 'reject'): ApprovalDecision {
  return {
    decision: verdict,
    actor: { type: 'key', id: keyId, name: 'approvals' },
    ip: '10.0.0.1',
    requestId: 'req-1',
  };
}

async function refusedWith(sent: Promise<unknown>) {
  const error = await sent.then(
    () => undefined,
    (caught: unknown) => caught,
  );
  expect(error).toBeInstanceOf(WorkflowUpdateFailedError);
  const cause = (error as WorkflowUpdateFailedError).cause as { type?: string; message: string };
  return { type: cause.type, message: cause.message };
}

describe('a held batch', () => {
  it('waits out its whole expiry, then records it expired and fails its items a chunk at a time, submitting nothing', async () => {
    const stubs = batchStubs();
    await stub.withWorker(stubs.activities, async (taskQueue) => {
      const startedAt = await stub.env.currentTimeMs();
      const handle = await startBatch(taskQueue, { approval: { expiresAt: startedAt + DAY } });
      const result = await handle.result();
      expect(result.phase).toBe('completed');
      // Two chunks asked and reserved (the second's names asked while the first is reserved), then the decision.
      expect(stubs.names().slice(0, 4).sort()).toEqual([
        'enquireBatchNames',
        'enquireBatchNames',
        'reserveBatchItems',
        'reserveBatchItems',
      ]);
      expect(stubs.names().slice(4)).toEqual([
        'decideBatchApproval',
        'settleHeldBatchItems',
        'settleHeldBatchItems',
        'completeBatch',
      ]);
      const [expired] = stubs.calls.filter((call) => call.name === 'decideBatchApproval');
      expect(expired!.input).toEqual({ batchId: expect.any(String), outcome: 'expired' });
      // Not a moment before the expiry the API wrote on the row.
      expect(expired!.scheduledAtMs).toBeGreaterThanOrEqual(startedAt + DAY);
      expect(stubs.inputsOf('settleHeldBatchItems').map(({ from, to }) => [from, to])).toEqual([
        [0, 500],
        [500, 600],
      ]);
      // Once the run has ended, nothing can decide it.
      await expect(
        handle.executeUpdate(decideApprovalUpdate, { args: [decision(APPROVER, 'approve')] }),
      ).rejects.toThrow();
    });
  });

  it('takes a decision sent during the enquiry, refusing its maker, a malformed one and a second one; approved, it submits', async () => {
    const enquiry = gate();
    const stubs = batchStubs({
      enquireBatchNames: async () => {
        await enquiry.opened;
        return { answered: 0, refused: 0 };
      },
    });
    await stub.withWorker(stubs.activities, async (taskQueue) => {
      const handle = await startBatch(taskQueue, {
        totalCount: 3,
        approval: { expiresAt: (await stub.env.currentTimeMs()) + DAY },
      });
      await stubs.calledWith('enquireBatchNames');
      const send = (sent: unknown) => handle.executeUpdate(decideApprovalUpdate, { args: [sent as ApprovalDecision] });
      expect(await refusedWith(send(decision(MAKER, 'approve')))).toEqual({
        type: 'forbidden',
        message: 'a batch cannot be approved by the key that made it',
      });
      for (const malformed of [
        null,
        'approve',
        { decision: 'approve' },
        { ...decision(APPROVER, 'approve'), decision: 'yes' },
      ]) {
        expect((await refusedWith(send(malformed))).type).toBe('invalid_decision');
      }
      expect(await send(decision(APPROVER, 'approve'))).toEqual({ status: 'approved' });
      expect(await refusedWith(send(decision(APPROVER, 'reject')))).toEqual({
        type: 'already_decided',
        message: `batch ${handle.workflowId.split(':').at(-1)} is already decided: approved`,
      });
      // Recorded at once, while the names were still being asked.
      expect(stubs.names()).toEqual(['enquireBatchNames', 'decideBatchApproval']);
      expect(stubs.inputsOf('decideBatchApproval')).toEqual([
        { batchId: expect.any(String), outcome: 'approved', decision: decision(APPROVER, 'approve') },
      ]);
      enquiry.open();
      await handle.result();
      expect(stubs.names()).toEqual([
        'enquireBatchNames',
        'decideBatchApproval',
        'reserveBatchItems',
        'settleHeldBatchItems',
        'submitBatchItems',
        'completeBatch',
      ]);
    });
  });

  it('rejected, fails its items and submits nothing', async () => {
    const reserved = gate();
    const stubs = batchStubs({
      reserveBatchItems: async () => {
        await reserved.opened;
        return { accepted: [], refused: 0 };
      },
    });
    await stub.withWorker(stubs.activities, async (taskQueue) => {
      const handle = await startBatch(taskQueue, {
        totalCount: 2,
        approval: { expiresAt: (await stub.env.currentTimeMs()) + DAY },
      });
      await stubs.calledWith('reserveBatchItems');
      reserved.open();
      expect(await handle.executeUpdate(decideApprovalUpdate, { args: [decision(APPROVER, 'reject')] })).toEqual({
        status: 'rejected',
      });
      await handle.result();
      expect(stubs.names()).toEqual([
        'enquireBatchNames',
        'reserveBatchItems',
        'decideBatchApproval',
        'settleHeldBatchItems',
        'completeBatch',
      ]);
    });
  });
});

describe('a batch that is not held', () => {
  it('refuses a decision as not_held and runs as before', async () => {
    const enquiry = gate();
    const stubs = batchStubs({
      enquireBatchNames: async () => {
        await enquiry.opened;
        return { answered: 0, refused: 0 };
      },
    });
    await stub.withWorker(stubs.activities, async (taskQueue) => {
      const handle = await startBatch(taskQueue, { totalCount: 1 });
      await stubs.calledWith('enquireBatchNames');
      expect(
        await refusedWith(handle.executeUpdate(decideApprovalUpdate, { args: [decision(APPROVER, 'approve')] })),
      ).toMatchObject({ type: 'not_held' });
      enquiry.open();
      await handle.result();
      expect(stubs.names()).toEqual(['enquireBatchNames', 'reserveBatchItems', 'submitBatchItems', 'completeBatch']);
    });
  });
});
