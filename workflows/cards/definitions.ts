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
