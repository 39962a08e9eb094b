// One workflow per bulk transfer request (id `transfer-batch:<tenant>:<batch_reference>`,
// decisions §14), owning the batch from the API's answer to `transfer_batch.completed`:
//   enquire  — every queued item's recipient name, many at once (an unknown account refuses the item);
//   reserve  — items decided in chunks, one transaction each (activities/transfers/bulk.ts), each
//              while the next chunk's names are being asked: a batch that
//              is not atomic reserves each accepted item's amount + fee there; an atomic one reserved
//              them all when the API accepted it;
//   submit   — the accepted items submitted to their banks by the batch, many at once (the same
//              submission a single transfer's run makes, without a run per item through Temporal
//              first); then the items taken cleanly are awaited in groups of BATCH_AWAIT_GROUP, one
//              run each (transfer-batch-chunk.ts, `transfer-batch-chunk:<tenant>:<batch>:<k>`, a
//              child that outlives the batch), which takes their banks' words, asks, flags them
//              stuck and takes an operator's resolve, as a single transfer's run does; an item not
//              taken cleanly becomes an ordinary transfer run (`transfer:<tenant>:<reference>`),
//              started a bounded number at a time, submitting itself with every rule of a single
//              transfer's submission, or asking its connector when it may hold it;
//   complete — once every item's run has ended, the batch is completed and its event recorded, once.
// A batch the tenant's transfer policy holds (decisions §20, `input.approval`) is enquired and
// reserved as any batch, then waits — a durable timer until its expiry — for the `decideApproval`
// update of another key (or a person), before submitting anything. Approved, it goes on; rejected,
// or undecided at its expiry, each accepted item's transfer fails with its money returned, no item
// run is started, and the batch completes. A batch without `approval` issues the commands it
// always did (recorded histories replay).
// History stays well within Temporal's limits for 1,000 items: item requests travel without
// metadata, in the chunk's answer and in the group run's start; a batch of 1,000 recorded 122 and
// 134 events in two runs, its group runs at most 127 and 443 each (printed by
// test/integration/transfer-batches.test.ts).
// Batches begun before the `batch-await-groups` patch start a transfer run per item (about 4
// events each), as their histories recorded.
import {
  ApplicationFailure,
  ParentClosePolicy,
  WorkflowIdReusePolicy,
  condition,
  log,
  patched,
  proxyActivities,
  setHandler,
  sleep,
  startChild,
  upsertSearchAttributes,
} from '@temporalio/workflow';
import type { TransferBatchActivities } from './definitions.ts';
import { transferBatchChunkWorkflowId, transferWorkflowId } from '../workflow-names.ts';
import {
  type ApprovalDecision,
  type AwaitedItem,
  BATCH_AWAIT_GROUP,
  awaitGroupOf,
  type BatchChunkState,
  type BatchItemStart,
  type BatchItemSubmission,
  type BatchProgress,
  batchStatusQuery,
  decideApprovalUpdate,
  type TransferBatchInput,
  type TransferState,
  type TransferWorkflowInput,
} from './definitions.ts';
import type { transferWorkflow } from './transfer.ts';
import type { transferBatchChunkWorkflow } from './transfer-batch-chunk.ts';
import {
  TenantIdKey,
  TransferApprovalKey,
  TransferBatchReferenceKey,
  transferStartAttributes,
} from '../search-attributes.ts';

/**
 * Items enquired, decided (one transaction: the tenant's lock is held for one chunk at a time, so
 * single creates interleave) and submitted per activity.
 */
export const RESERVE_CHUNK = 500;
/** Item runs being started at once. */
export const START_CONCURRENCY = 50;
/**
 * The patch under which a batch's cleanly submitted items are awaited by one run per group of
 * BATCH_AWAIT_GROUP (transfer-batch-chunk.ts) instead of a transfer run each; batches begun before it
 * start a run per item, as their histories recorded.
 */
const AWAIT_GROUPS = 'batch-await-groups';

// Database steps must happen, whatever the database's hiccups.
const batch = proxyActivities<TransferBatchActivities>({
  startToCloseTimeout: '2m',
  retry: { initialInterval: '1s', backoffCoefficient: 2, maximumInterval: '1m' },
});
// The steps that call banks, many at once: they heartbeat after each call, so a worker that dies
// is noticed in 30 s, and a retry asks only for what is still unanswered (names) or unsubmitted.
// A bank down for longer is waited for: its items stay reserved until it answers or an operator
// steps in, as a single transfer's submission waits.
const bankCalls = proxyActivities<TransferBatchActivities>({
  startToCloseTimeout: '10m',
  heartbeatTimeout: '30s',
  retry: { initialInterval: '1s', backoffCoefficient: 2, maximumInterval: '1m' },
});

export async function transferBatchWorkflow(input: TransferBatchInput): Promise<BatchProgress> {
  const progress: BatchProgress = {
    phase: 'enquiring',
    total: input.totalCount,
    refused: 0,
    accepted: 0,
    started: 0,
    successful: 0,
    failed: 0,
  };
  setHandler(batchStatusQuery, () => progress);
  // Registered first, so that a decision sent while the batch is still enquiring or reserving is
  // taken (and recorded at once); the wait below then finds it made. Not a command: a batch that
  // is not held refuses every decision (not_held) and its history is as before.
  const approval = heldBatch(input);
  upsertSearchAttributes([
    { key: TenantIdKey, value: input.tenantId },
    { key: TransferBatchReferenceKey, value: input.batchReference },
  ]);
  if (input.approval) upsertSearchAttributes([{ key: TransferApprovalKey, value: 'required' }]);

  // Enquiries and decisions in chunks, pipelined: a chunk is decided while the next one's names
  // are being asked.
  const chunks: { from: number; to: number }[] = [];
  for (let from = 0; from < input.totalCount; from += RESERVE_CHUNK) {
    chunks.push({ from, to: Math.min(input.totalCount, from + RESERVE_CHUNK) });
  }
  const accepted: BatchItemStart[] = [];
  let enquiry = askNames(input.batchId, chunks[0]!);
  for (const [k, chunk] of chunks.entries()) {
    await enquiry;
    const following = chunks[k + 1];
    if (following) enquiry = askNames(input.batchId, following);
    progress.phase = 'reserving';
    const decided = await batch.reserveBatchItems({ batchId: input.batchId, ...chunk });
    accepted.push(...decided.accepted);
    progress.refused += decided.refused;
    progress.accepted += decided.accepted.length;
  }

  if (input.approval) {
    // Reserved and held: nothing reaches a bank before the decision, which comes before the expiry.
    progress.phase = 'awaiting_approval';
    await condition(() => approval.status !== 'required', Math.max(1, input.approval.expiresAt - Date.now()));
    if (approval.status === 'required') {
      approval.status = 'expired';
      approval.recorded = batch.decideBatchApproval({ batchId: input.batchId, outcome: 'expired' });
    }
    await approval.recorded;
    upsertSearchAttributes([{ key: TransferApprovalKey, value: approval.status }]);
    // The items' transfers take the decision, a chunk per transaction (their money back unless approved).
    for (const chunk of chunks) await batch.settleHeldBatchItems({ batchId: input.batchId, ...chunk });
    if (approval.status !== 'approved') {
      progress.failed = progress.accepted;
      progress.phase = 'settling';
      await batch.completeBatch({ batchId: input.batchId });
      progress.phase = 'completed';
      return progress;
    }
  }

  // Submitted once every item is reserved, by the batch, many at once (the bank's own calls, not
  // a run per item through Temporal first); an item not cleanly taken is left to its own run,
  // which submits it as any transfer's run does.
  progress.phase = 'submitting';
  const grouped = patched(AWAIT_GROUPS);
  const submitted = new Map<number, BatchItemSubmission>();
  const answers = await Promise.all(
    chunks.map((chunk) =>
      bankCalls.submitBatchItems({
        batchId: input.batchId,
        ...chunk,
        ...(grouped ? { awaitGroup: BATCH_AWAIT_GROUP } : {}),
      }),
    ),
  );
  for (const answer of answers.flat()) {
    if (answer.submitted) submitted.set(answer.index, answer.submitted);
  }

  const outcomes: Promise<void>[] = [];
  // Items taken cleanly are awaited by their group's run; the rest (not taken cleanly, or possibly
  // taken) each by a transfer run of its own, which submits it or asks its connector (decisions §17).
  const groups = new Map<number, AwaitedItem[]>();
  const alone: BatchItemStart[] = [];
  for (const item of accepted) {
    const answer = grouped ? submitted.get(item.index) : undefined;
    if (!answer || answer.possiblyTaken) {
      alone.push(item);
      continue;
    }
    const group = awaitGroupOf(item.index);
    groups.set(group, [...(groups.get(group) ?? []), awaitedItem(item, answer)]);
  }
  for (const [group, items] of groups) {
    const { result } = await startGroup(input, group, items);
    progress.started += items.length;
    outcomes.push(
      result.then(
        (ended) => {
          progress.successful += ended.successful;
          progress.failed += ended.failed;
        },
        itemRunEnded(items.length === 1 ? items[0]!.transferId : `${items.length} items`),
      ),
    );
  }
  let next = 0;
  const lane = async () => {
    while (next < alone.length) {
      const item = alone[next++]!;
      const { result } = await startItem(input, item, submitted.get(item.index));
      progress.started += 1;
      outcomes.push(
        result.then((state) => {
          if (state.status === 'completed') progress.successful += 1;
          else progress.failed += 1;
        }, itemRunEnded(item.reserved.transferId)),
      );
    }
  };
  await Promise.all(Array.from({ length: Math.min(START_CONCURRENCY, alone.length) }, lane));

  progress.phase = 'settling';
  await Promise.all(outcomes);
  await batch.completeBatch({ batchId: input.batchId });
  progress.phase = 'completed';
  return progress;
}

/**
 * An item run (or a group's) ended by hand (terminated) without finishing its transfers: their rows
 * say how they stand, and completing the batch waits until an operator has resolved them.
 */
function itemRunEnded(transfers: string): (error: unknown) => void {
  return (error) => {
    log.error('a batch item run ended without finishing its transfer', { transferId: transfers, error: String(error) });
  };
}

/** A cleanly submitted item as its group's run awaits it. */
function awaitedItem(item: BatchItemStart, answer: BatchItemSubmission): AwaitedItem {
  return {
    transferId: item.reserved.transferId,
    reference: item.request.reference,
    connector: item.reserved.connector,
    sessionId: answer.sessionId,
    ...(answer.outcome ? { outcome: answer.outcome } : {}),
  };
}

/** Starts the run awaiting a group of the batch's items (the items' rows already name it); its result is its end. */
async function startGroup(
  input: TransferBatchInput,
  chunk: number,
  items: AwaitedItem[],
): Promise<{ result: Promise<BatchChunkState> }> {
  const handle = await startChild<typeof transferBatchChunkWorkflow>('transferBatchChunkWorkflow', {
    workflowId: transferBatchChunkWorkflowId(input.tenantId, input.batchReference, chunk),
    args: [{ tenantId: input.tenantId, batchId: input.batchId, batchReference: input.batchReference, chunk, items }],
    // Its items' money is reserved and only it moves them on: it outlives a batch ended by hand.
    parentClosePolicy: ParentClosePolicy.ABANDON,
    memo: { tenantId: input.tenantId, batchId: input.batchId, chunk },
    typedSearchAttributes: [
      { key: TenantIdKey, value: input.tenantId },
      { key: TransferBatchReferenceKey, value: input.batchReference },
    ],
  });
  return { result: handle.result() };
}

type ApprovalState = 'required' | 'approved' | 'rejected' | 'expired';

/**
 * The batch's approval (decisions §20) and the decideApproval update's handler. The first decision
 * the validator lets through wins: the handler sets it before anything else runs, so the next
 * validator already sees it decided. The decision is recorded at once (the batch row and the
 * audit log, decideBatchApproval) and the update answered once it is.
 */
function heldBatch(input: TransferBatchInput): { status: ApprovalState; recorded: Promise<unknown> } {
  const approval: { status: ApprovalState; recorded: Promise<unknown> } = {
    status: 'required',
    recorded: Promise.resolve(),
  };
  setHandler(
    decideApprovalUpdate,
    async (decision) => {
      const outcome = decision.decision === 'approve' ? 'approved' : 'rejected';
      approval.status = outcome;
      approval.recorded = batch.decideBatchApproval({ batchId: input.batchId, outcome, decision });
      await approval.recorded;
      return { status: outcome };
    },
    {
      validator: (decision) => {
        if (!input.approval) throw refusal('not_held', `batch ${input.batchReference} is not held for approval`);
        if (approval.status === 'required' && Date.now() >= input.approval.expiresAt) {
          throw refusal('already_decided', `batch ${input.batchReference} is already decided: expired`);
        }
        if (approval.status !== 'required') {
          throw refusal('already_decided', `batch ${input.batchReference} is already decided: ${approval.status}`);
        }
        if (!isDecision(decision)) {
          throw refusal(
            'invalid_decision',
            'a decision is {decision: approve|reject, actor: {type, id, name}, ip, requestId}',
          );
        }
        if (decision.actor.type === 'key' && decision.actor.id === input.createdByKeyId) {
          throw refusal('forbidden', 'a batch cannot be approved by the key that made it');
        }
      },
    },
  );
  return approval;
}

function refusal(type: string, message: string): ApplicationFailure {
  return ApplicationFailure.create({ type, message, nonRetryable: true });
}

/** Whether an update's argument is a decision as the API sends it (anything else is refused, never thrown on). */
function isDecision(value: unknown): value is ApprovalDecision {
  if (typeof value !== 'object' || value === null) return false;
  const { decision, actor, reason, ip, requestId } = value as Record<string, unknown>;
  if (decision !== 'approve' && decision !== 'reject') return false;
  if (typeof actor !== 'object' || actor === null) return false;
  const { type, id, name } = actor as Record<string, unknown>;
  return (
    (type === 'key' || type === 'user') &&
    typeof id === 'string' &&
    id.length > 0 &&
    typeof name === 'string' &&
    (reason === undefined || (typeof reason === 'string' && reason.length <= 500)) &&
    typeof ip === 'string' &&
    typeof requestId === 'string'
  );
}

/** A chunk's name enquiries, started now and awaited later (never left to fail unobserved). */
function askNames(batchId: string, chunk: { from: number; to: number }): Promise<unknown> {
  const asked = bankCalls.enquireBatchNames({ batchId, ...chunk });
  asked.catch(() => undefined);
  return asked;
}

/**
 * Starts the item's transfer run; its result is the run's end. A run of the same id still open is a
 * create of the item's reference that lost to the batch (refused as a duplicate) and is closing:
 * started again once it has closed, however long that takes.
 */
async function startItem(
  input: TransferBatchInput,
  item: BatchItemStart,
  submitted: BatchItemSubmission | undefined,
): Promise<{ result: Promise<TransferState> }> {
  const { reserved } = item;
  // Submitted by its batch: the run starts where a transfer waits for its bank's answer.
  const args: TransferWorkflowInput = submitted
    ? {
        request: item.request,
        shape: 'lean',
        resume: {
          transferId: reserved.transferId,
          recipientName: reserved.recipientName,
          connector: reserved.connector,
          sessionId: submitted.sessionId,
          waitedMs: 0,
          stuck: false,
          statusChecks: 0,
          ...(submitted.outcome ? { bankOutcome: submitted.outcome } : {}),
          ...(submitted.possiblyTaken ? { possiblyTaken: submitted.possiblyTaken } : {}),
          // Its bank may have answered before this run is there: the run takes the kept word.
          earlyWord: true,
        },
      }
    : { request: item.request, reserved, shape: 'lean' };
  for (let wait = 2; ; wait = Math.min(60, wait * 2)) {
    try {
      const handle = await startChild<typeof transferWorkflow>('transferWorkflow', {
        workflowId: transferWorkflowId(input.tenantId, item.request.reference),
        args: [args],
        parentClosePolicy: ParentClosePolicy.ABANDON,
        // The batch made this transfer's row, and no transfer held its reference then: an earlier
        // run of the id (a create that was refused, or never came) made no transfer.
        workflowIdReusePolicy: WorkflowIdReusePolicy.ALLOW_DUPLICATE,
        memo: { tenantId: input.tenantId, reference: item.request.reference, batchId: input.batchId },
        typedSearchAttributes: transferStartAttributes(item.request),
      });
      return { result: handle.result() };
    } catch (error) {
      // Never given up: the item's money is reserved and only its run moves it on.
      log.warn('item run id taken by a closing run; starting again shortly', {
        reference: item.request.reference,
        error: String(error),
      });
      await sleep(`${wait} seconds`);
    }
  }
}
