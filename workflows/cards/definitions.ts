// The card workflow's contract: one long-lived workflow per card (id `card:<card_id>`) that
// applies operations one at a time, in the order it accepted them.
import { defineQuery, defineSignal, defineUpdate } from '@temporalio/workflow';
export {
  CARD_ISSUE_WORKFLOW_TYPE,
  CARD_WORKFLOW_TYPE,
  cardIssueWorkflowId,
  cardWorkflowId,
} from '../workflow-names.ts';

export interface CardIssueInput {
  /** The new card's id, also its reference at the processor (which issues once per reference). */
  cardId: string;
  tenantId: string;
  customerId: string;
  currency: string;
  metadata: Record<string, unknown> | null;
}

export interface CardIssueState {
  cardId: string;
  /** `issuing` at the processor, `recording` the card, then `issued`. */
  status: 'issuing' | 'recording' | 'issued';
}

export const cardIssueStatusQuery = defineQuery<CardIssueState>('status');

export type CardOperation =
  | { kind: 'lock' | 'unlock'; operationId: string }
  | { kind: 'fund'; operationId: string; fundingId: string; amountMinor: number };

export interface CardWorkflowInput {
  cardId: string;
  tenantId: string;
  locked: boolean;
  /** Operations accepted but not yet applied, carried across continue-as-new. */
  queue?: CardOperation[];
  /** Recently accepted operation ids, so a repeated update is not applied twice. */
  seen?: string[];
  /** Continue-as-new after this many applied operations (default 200). */
  continueAsNewAfter?: number;
}

export interface CardState {
  locked: boolean;
  queued: number;
  applied: number;
}

/** How runs started before `operationRequested` took operations in; kept so that they replay. */
export const operateUpdate = defineUpdate<{ operation_id: string; status: 'accepted' }, [CardOperation]>('operate');
/**
 * An operation the API has recorded in PostgreSQL and asks the card to apply. A signal, not an
 * update: Temporal admits only 10 in-flight updates per workflow, and a busy card must take any
 * number of concurrent requests (the API answers 202 once the signal is durable).
 */
export const operationRequestedSignal = defineSignal<[CardOperation]>('operationRequested');
/** The card workflow's state, named `status` like every workflow type's query. */
export const cardStatusQuery = defineQuery<CardState>('status');
/** The same, under the name it had first (`state`), for callers written against it. */
export const cardStateQuery = defineQuery<CardState>('state');

/** What the card workflows ask of their activities (activities/cards/cards.ts). */
export type CardActivities = {
  /** Issues the card at the processor, once per card id (the processor is idempotent on it). */
  issueCardAtProcessor(input: {
    cardId: string;
    customerId: string;
    /** The card's tenant (its mode picks the processor); absent in runs recorded before connectors: test. */
    tenantId?: string;
  }): Promise<{
    cardReference: string;
    last4: string;
  }>;
  /** The issued card's row, its ledger account and `card.created`, in one transaction, once. */
  recordIssuedCard(
    input: CardIssueInput & {
      cardReference: string;
      last4: string;
    },
  ): Promise<void>;
  /** Locks or unlocks at the processor, then records it; an unchanged state is accepted and changes nothing. */
  setCardLock(input: { cardId: string; operationId: string; locked: boolean }): Promise<{
    changed: boolean;
  }>;
  /** Wallet → card, one journal entry; a short wallet fails the funding and moves nothing. */
  debitForFunding(input: { fundingId: string }): Promise<{
    ok: boolean;
  }>;
  /**
   * Loads the card at the processor (idempotent there on the funding id), then marks it funded.
   * A processor that is down is retried; one that refuses for good gets the money back: card →
   * wallet, and the funding fails (`processor_refused`).
   *
   * The money is on the card in the books from the debit on, so while the load waits (the
   * processor down, then refusing) authorizations may approve against it and hold it. The
   * refusal then returns to the wallet what the card still holds of the funding — its available
   * balance, up to the funding's amount — never more: the rest is held or cleared for purchases
   * the gateway approved, and the processor settles those from their holds. That rest is the
   * funding's `unrecovered_minor`; it stays on the card's side of the books (cards_match_fundings
   * counts it as funded), and it is an alert for operators: logged at error level with the card,
   * the funding and the amount, listed by `admin cards alerts`, counted by the API's metrics. The
   * funding ends here either way, so the card's queue goes on: returning the whole amount from a
   * card that no longer has it failed for ever and froze every later operation of the card.
   */
  loadCardAtProcessor(input: { fundingId: string }): Promise<void>;
  /** An operation the workflow could not apply: recorded as failed, so the card's queue goes on. */
  failCardOperation(input: { operationId: string; reason: string }): Promise<void>;
  failFunding(input: { fundingId: string; reason: string }): Promise<void>;
};
