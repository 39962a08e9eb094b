// One run per group of a batch's submitted items (id `transfer-batch-chunk:<tenant>:<batch_reference>:<k>`,
// items k * BATCH_AWAIT_GROUP up to the next group), started by the batch once it has submitted
// them: it awaits their banks' words together, instead of one transfer run per item
// (docs/workflows.md#a-batchs-items). Each item keeps what a single transfer's run gives it:
//   word    — the bank's callback reaches this run as `itemWord` (callbacks.ts, by the item's row,
//             which names this run); a word that came before the run was there was kept on the
//             item and is read in the run's first task;
//   ask     — items still unanswered have their holder's status asked on the single transfer's
//             schedule (they were submitted together, so they share it), and are flagged stuck
//             for operators once unconfirmed after 24 h;
//   resolve — an operator's `resolveItem` update (admin transfers resolve) finishes an item the
//             bank is silent on; the bank's own word wins when it came first;
//   finish  — decided items are settled or reversed once each, all in one transaction, by one
//             local activity in the task that takes their words (finishBatchItems: each item's
//             fee, events and webhooks as a single transfer's); a late word contradicting the
//             books is kept for operators.
// The run ends once every item is finished, answering its items by outcome to the batch.
import {
  allHandlersFinished,
  condition,
  continueAsNew,
  log,
  proxyActivities,
  proxyLocalActivities,
  setHandler,
  sleep,
  workflowInfo,
} from '@temporalio/workflow';
import { UNTIL_RECORDED } from '../activity-options.ts';
import { contradictsBooks, transferFailure } from '../../src/transfers/domain.ts';
import {
  type AwaitedItem,
  type BankOutcome,
  type BatchChunkInput,
  type BatchChunkState,
  type ItemFinish,
  type OperatorResolution,
  type ResolveResult,
  type TransferBatchActivities,
  batchChunkStatusQuery,
  itemWordSignal,
  resolveItemUpdate,
} from './definitions.ts';
import { STUCK_AFTER_MS, nextStatusCheckMs } from './transfer.ts';

// Settling is idempotent under each transfer's row lock and answers what the books hold, so a
// workflow task that runs it again adopts the books' decision (as a lean transfer run's finish does).
const ledgerLocal = proxyLocalActivities<TransferBatchActivities>(UNTIL_RECORDED);
const ledger = proxyActivities<TransferBatchActivities>(UNTIL_RECORDED);
// The holders' status queries, many at once: a worker that dies is noticed in 30 s.
const statusCheck = proxyActivities<TransferBatchActivities>({
  startToCloseTimeout: '5m',
  heartbeatTimeout: '30s',
  retry: { initialInterval: '1s', maximumAttempts: 3 },
});

/** An item finished by this run: how, and on whose word. */
interface Finished {
  status: 'completed' | 'failed';
  decidedBy: ResolveResult['decidedBy'];
  resolution?: AwaitedItem['resolution'];
}

export async function transferBatchChunkWorkflow(input: BatchChunkInput): Promise<BatchChunkState> {
  const open = new Map(input.items.map((item) => [item.transferId, { ...item }]));
  const finished = new Map<string, Finished>();
  const state: BatchChunkState = {
    chunk: input.chunk,
    open: open.size,
    successful: input.successful ?? 0,
    failed: input.failed ?? 0,
    statusChecks: input.statusChecks ?? 0,
    stuck: input.stuck ?? false,
  };
  setHandler(batchChunkStatusQuery, () => state);
  // Words that contradict an item this run has already finished: kept for operators.
  const late: { transferId: string; bank: BankOutcome }[] = [];
  // The first word about an item is kept, from the connector that holds it only (the callback has
  // already kept another's as a connector conflict, decisions §17).
  const take = (transferId: string, outcome: BankOutcome) => {
    const item = open.get(transferId);
    if (item) {
      if (outcome.connector !== undefined && outcome.connector !== item.connector) {
        log.warn('a connector that does not hold the item answered about it: not applied', {
          transferId,
          holder: item.connector,
          connector: outcome.connector,
        });
        return;
      }
      item.outcome ??= outcome;
      return;
    }
    const done = finished.get(transferId);
    if (done && contradictsBooks(done.status, outcome.status)) late.push({ transferId, bank: outcome });
  };
  setHandler(itemWordSignal, ({ transferId, outcome }) => take(transferId, outcome));
  setHandler(
    resolveItemUpdate,
    async ({ transferId, ...resolution }: OperatorResolution & { transferId: string }): Promise<ResolveResult> => {
      const item = open.get(transferId);
      if (item) item.resolution ??= resolution;
      await condition(() => finished.has(transferId));
      const done = finished.get(transferId)!;
      return { transferId, status: done.status, decidedBy: done.decidedBy, resolution: done.resolution ?? resolution };
    },
    {
      validator: ({ transferId, outcome }: OperatorResolution & { transferId: string }) => {
        const held = open.get(transferId)?.resolution ?? finished.get(transferId)?.resolution;
        if (!open.has(transferId) && !finished.has(transferId)) {
          throw transferFailure(
            'unknown_transfer',
            `transfer ${transferId} is not awaited by ${workflowInfo().workflowId}`,
          );
        }
        // One resolution per transfer: a second one that says otherwise is refused, never silently dropped.
        if (held && held.outcome !== outcome) {
          throw transferFailure(
            'already_resolved',
            `transfer ${transferId} is already being resolved as ${held.outcome} by ${held.operator}: ${held.note}`,
          );
        }
      },
    },
  );

  // Words its items' banks sent before this run was there (kept on the items by their callbacks).
  try {
    const kept = await ledgerLocal.keptItemWords({ transferIds: [...open.keys()] });
    for (const [transferId, word] of Object.entries(kept)) take(transferId, word);
  } catch (error) {
    // Not lost: the callbacks also asked their banks to send them again, and the status query asks.
    log.warn('the bank words kept for the items could not be read; waiting for the banks', { error: String(error) });
  }

  let waitedMs = input.waitedMs ?? 0;
  let interval = nextStatusCheckMs(state.statusChecks, waitedMs);
  let lapsed = timer(interval);
  for (;;) {
    await finishDecided(open, finished, state, late);
    await keepLate(late);
    if (open.size === 0) break;
    // One timer per wait for the status query: a word that wakes the run does not restart it.
    const asked = await Promise.race([condition(() => decidedItems(open).length > 0 || late.length > 0), lapsed]);
    if (asked !== 'lapsed') continue;
    waitedMs += interval;
    state.statusChecks += 1;
    const unanswered = [...open.values()];
    try {
      const known = await statusCheck.queryItemStatuses({
        items: unanswered.map(({ transferId, connector }) => ({ transferId, connector })),
      });
      for (const { transferId, outcome } of known) if (outcome) take(transferId, outcome);
    } catch (error) {
      // The items wait on, as a single transfer does: their banks are asked again on the schedule.
      log.warn('bank status queries failed for the group; will ask again', { error: String(error) });
    }
    const silent = [...open.values()].filter((item) => !item.outcome && !item.resolution);
    if (silent.length > 0 && !state.stuck && waitedMs >= STUCK_AFTER_MS) {
      state.stuck = true;
      await ledger.flagItemsStuck({ transferIds: silent.map((item) => item.transferId) });
      log.warn('batch items unconfirmed after 24 h: flagged as stuck for operators', { count: silent.length });
    }
    if (decidedItems(open).length === 0 && late.length === 0 && workflowInfo().continueAsNewSuggested) {
      // A word or a resolution arriving meanwhile is finished by this run: an update waiting for
      // its item would never let the handlers finish.
      await condition(() => allHandlersFinished() || decidedItems(open).length > 0 || late.length > 0);
      // A late word is kept by this run too: the next one would not know the item it is about.
      if (decidedItems(open).length === 0 && late.length === 0) {
        await continueAsNew<typeof transferBatchChunkWorkflow>({
          ...input,
          items: [...open.values()],
          waitedMs,
          statusChecks: state.statusChecks,
          stuck: state.stuck,
          successful: state.successful,
          failed: state.failed,
        });
      }
    }
    interval = nextStatusCheckMs(state.statusChecks, waitedMs);
    lapsed = timer(interval);
  }
  // Every item is finished: updates are answered, and a word still arriving is weighed before the end.
  await condition(allHandlersFinished);
  await keepLate(late);
  return state;
}

/** A durable timer that says when it lapsed. */
function timer(ms: number): Promise<'lapsed'> {
  return sleep(ms).then(() => 'lapsed' as const);
}

/** Open items with the bank's word or an operator's resolution. */
function decidedItems(open: ReadonlyMap<string, AwaitedItem>): AwaitedItem[] {
  return [...open.values()].filter((item) => item.outcome !== undefined || item.resolution !== undefined);
}

/**
 * The decided items finished once each, the bank's word before an operator's, by one local
 * activity; each then leaves the open set and answers its resolve update. The books may say
 * otherwise than the word asked only when an earlier execution of this task finished the item on
 * the other word: that word decided it.
 */
async function finishDecided(
  open: Map<string, AwaitedItem>,
  finished: Map<string, Finished>,
  state: BatchChunkState,
  late: { transferId: string; bank: BankOutcome }[],
): Promise<void> {
  const decided = decidedItems(open);
  if (decided.length === 0) return;
  const asked: ItemFinish[] = decided.map((item) => ({
    transferId: item.transferId,
    sessionId: item.sessionId,
    ...(item.outcome ? { outcome: item.outcome } : { resolution: item.resolution! }),
  }));
  const books = new Map(
    (await ledgerLocal.finishBatchItems({ items: asked })).map((item) => [item.transferId, item.status]),
  );
  for (const [k, item] of decided.entries()) {
    const word = asked[k]!;
    const intended = (word.outcome?.status ?? word.resolution?.outcome) === 'successful' ? 'completed' : 'failed';
    const held = books.get(item.transferId);
    const status = held === 'completed' || held === 'failed' ? held : intended;
    const bankDecided = (word.outcome !== undefined) === (status === intended);
    finished.set(item.transferId, {
      status,
      decidedBy: bankDecided ? 'bank' : 'operator',
      ...(item.resolution ? { resolution: item.resolution } : {}),
    });
    open.delete(item.transferId);
    if (status === 'completed') state.successful += 1;
    else state.failed += 1;
    // The bank answered while this task finished the item on an operator's word, or (a lost execution
    // of this task having finished it on the operator's) its word is what this one asked with: if it
    // says the opposite of the books, it is kept.
    const answer = item.outcome;
    if (answer && (answer !== word.outcome || status !== intended) && contradictsBooks(status, answer.status)) {
      late.push({ transferId: item.transferId, bank: answer });
    }
  }
  state.open = open.size;
}

/** Late words that contradict the books, each kept for operators once (decisions §12). */
async function keepLate(late: { transferId: string; bank: BankOutcome }[]): Promise<void> {
  while (late.length > 0) await ledger.recordItemDiscrepancy(late.shift()!);
}
