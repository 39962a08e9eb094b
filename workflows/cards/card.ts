// One entity workflow per card: lock, unlock and fund arrive as `operationRequested` signals (the
// API answers 202 once the signal is durable; runs of older versions took the `operate` update)
// and are applied strictly one after another, so concurrent calls end in a state some serial
// order explains. Before its history grows large it continues as new,
// after every handler has finished, carrying the operations still queued.
import {
  ActivityFailure,
  ApplicationFailure,
  condition,
  log,
  proxyActivities,
  setHandler,
  workflowInfo,
} from '@temporalio/workflow';
import type { CardActivities } from './definitions.ts';
import { UNTIL_RECORDED, UNTIL_THE_PROCESSOR_TAKES_IT, WHILE_THE_API_WAITS } from '../activity-options.ts';
import { continueAsNewOnceHandled } from '../continue-as-new.ts';
import {
  type CardOperation,
  type CardState,
  type CardWorkflowInput,
  type CardIssueInput,
  type CardIssueState,
  cardIssueStatusQuery,
  cardStateQuery,
  cardStatusQuery,
  operateUpdate,
  operationRequestedSignal,
} from './definitions.ts';

const { setCardLock, debitForFunding, failFunding, failCardOperation } =
  proxyActivities<CardActivities>(UNTIL_RECORDED);
const { loadCardAtProcessor } = proxyActivities<CardActivities>(UNTIL_THE_PROCESSOR_TAKES_IT);

const SEEN_KEPT = 1_000;

export async function cardWorkflow(input: CardWorkflowInput): Promise<void> {
  const queue: CardOperation[] = [...(input.queue ?? [])];
  const seen = new Set(input.seen ?? []);
  const state: CardState = { locked: input.locked, queued: queue.length, applied: 0 };
  const limit = input.continueAsNewAfter ?? 200;
  const shouldContinueAsNew = () => state.applied >= limit || workflowInfo().continueAsNewSuggested;

  const validFunding = (operation: CardOperation) =>
    operation.kind !== 'fund' || (Number.isSafeInteger(operation.amountMinor) && operation.amountMinor > 0);
  // A repeated operation id (a client's retry, a signal re-sent) is applied once.
  const enqueue = (operation: CardOperation) => {
    if (seen.has(operation.operationId)) return;
    seen.add(operation.operationId);
    queue.push(operation);
    state.queued = queue.length;
  };
  setHandler(
    operateUpdate,
    (operation) => {
      enqueue(operation);
      return { operation_id: operation.operationId, status: 'accepted' as const };
    },
    {
      validator: (operation: CardOperation) => {
        if (!validFunding(operation)) throw new Error('amountMinor must be a positive whole number of kobo');
      },
    },
  );
  setHandler(operationRequestedSignal, (operation) => {
    // The API validates amounts; a signal cannot be refused, so a malformed one is dropped loudly.
    if (!validFunding(operation)) {
      log.error('card operation with an invalid amount dropped', { operationId: operation.operationId });
      return;
    }
    enqueue(operation);
  });
  setHandler(cardStatusQuery, () => state);
  setHandler(cardStateQuery, () => state);

  async function apply(operation: CardOperation): Promise<void> {
    if (operation.kind !== 'fund') {
      const locked = operation.kind === 'lock';
      await setCardLock({ cardId: input.cardId, operationId: operation.operationId, locked });
      state.locked = locked;
      return;
    }
    if (state.locked) {
      await failFunding({ fundingId: operation.fundingId, reason: 'card_locked' });
      return;
    }
    const debited = await debitForFunding({ fundingId: operation.fundingId });
    if (debited.ok) await loadCardAtProcessor({ fundingId: operation.fundingId });
  }

  for (;;) {
    await condition(() => queue.length > 0 || shouldContinueAsNew());
    while (queue.length > 0 && !shouldContinueAsNew()) {
      const operation = queue.shift()!;
      state.queued = queue.length;
      try {
        await apply(operation);
      } catch (error) {
        // One operation refused for good (e.g. by the processor) fails alone; the queue goes on.
        const reason =
          error instanceof ActivityFailure && error.cause instanceof ApplicationFailure
            ? (error.cause.type ?? 'failed')
            : 'failed';
        log.warn('card operation failed', { cardId: input.cardId, operationId: operation.operationId, reason });
        if (operation.kind === 'fund') await failFunding({ fundingId: operation.fundingId, reason });
        else await failCardOperation({ operationId: operation.operationId, reason });
      }
      state.applied += 1;
    }
    if (shouldContinueAsNew()) {
      // Updates accepted meanwhile land in `queue`, which the next run starts with.
      await continueAsNewOnceHandled<typeof cardWorkflow>(() => [
        { ...input, locked: state.locked, queue, seen: [...seen].slice(-SEEN_KEPT) },
      ]);
    }
  }
}

// Issuing runs while the API request waits: a processor that stays unavailable fails it in time
// (the client retries with the same Idempotency-Key and meets this run). Recording the card waits
// out the database: the card exists at the processor, so it is recorded, never dropped.
const issuing = proxyActivities<CardActivities>(WHILE_THE_API_WAITS);
const recording = proxyActivities<CardActivities>(UNTIL_RECORDED);

/** Issues a card at the processor under the card's id, then records it (row, ledger account, event). */
export async function cardIssueWorkflow(input: CardIssueInput): Promise<{ cardId: string }> {
  const state: CardIssueState = { cardId: input.cardId, status: 'issuing' };
  setHandler(cardIssueStatusQuery, () => state);
  const issued = await issuing.issueCardAtProcessor({
    cardId: input.cardId,
    customerId: input.customerId,
    tenantId: input.tenantId,
  });
  state.status = 'recording';
  await recording.recordIssuedCard({ ...input, ...issued });
  state.status = 'issued';
  return { cardId: input.cardId };
}
