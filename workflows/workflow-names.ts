// Every workflow's names, side by side: its type (the name the worker registers it under and
// clients start it by) and the id of each of its runs, made of its business key (`<kind>:<key>…`,
// no two kinds sharing a prefix), so that a retried request meets the run its first try started
// and an operator reads in the Web UI what a run is about. Each feature's definitions.ts
// (workflows/<feature>/definitions.ts) exports its own with the rest of its contract.

export const TRANSFER_WORKFLOW_TYPE = 'transferWorkflow';
export const TRANSFER_BATCH_WORKFLOW_TYPE = 'transferBatchWorkflow';
export const TRANSFER_REVERSAL_WORKFLOW_TYPE = 'transferReversalWorkflow';
export const TRANSFER_BATCH_CHUNK_WORKFLOW_TYPE = 'transferBatchChunkWorkflow';
export const DELIVERY_WORKFLOW_TYPE = 'webhookDeliveryWorkflow';
export const CARD_ISSUE_WORKFLOW_TYPE = 'cardIssueWorkflow';
export const CARD_WORKFLOW_TYPE = 'cardWorkflow';
export const CREATE_WORKFLOW_TYPE = 'virtualAccountCreateWorkflow';
export const EXPIRY_WORKFLOW_TYPE = 'virtualAccountExpiryWorkflow';
export const CLOSE_WORKFLOW_TYPE = 'virtualAccountCloseWorkflow';
export const INBOUND_CREDIT_WORKFLOW_TYPE = 'inboundCreditWorkflow';
export const HELD_CREDIT_RETURN_WORKFLOW_TYPE = 'heldCreditReturnWorkflow';
export const BVN_VERIFICATION_WORKFLOW_TYPE = 'bvnVerificationWorkflow';
export const RECONCILIATION_WORKFLOW_TYPE = 'reconciliationWorkflow';

/** One run per transfer: `transfer:<tenant>:<reference>`. */
export function transferWorkflowId(tenantId: string, reference: string): string {
  return `transfer:${tenantId}:${reference}`;
}

/**
 * A bank's word that it reversed a transfer (decisions §21): `transfer-reversal:<tenant>:<reference>`,
 * one run at a time (a repeated word finds it), another only once it has ended.
 */
export function transferReversalWorkflowId(tenantId: string, reference: string): string {
  return `transfer-reversal:${tenantId}:${reference}`;
}

/** One run per bulk transfer request: `transfer-batch:<tenant>:<batch_reference>`. */
export function transferBatchWorkflowId(tenantId: string, batchReference: string): string {
  return `transfer-batch:${tenantId}:${batchReference}`;
}

/**
 * The run that awaits the bank's word for one group of a batch's submitted items (items
 * `k * BATCH_AWAIT_GROUP` up to the next group): `transfer-batch-chunk:<tenant>:<batch_reference>:<k>`.
 */
export function transferBatchChunkWorkflowId(tenantId: string, batchReference: string, chunk: number): string {
  return `transfer-batch-chunk:${tenantId}:${batchReference}:${chunk}`;
}

/** One run per (event, endpoint). */
export function deliveryWorkflowId(eventId: string, endpointId: string): string {
  return `delivery:${eventId}:${endpointId}`;
}

/** Issuing a card: one run per tenant and key (the client's Idempotency-Key, or a fresh one). */
export function cardIssueWorkflowId(tenantId: string, key: string): string {
  return `card-issue:${tenantId}:${key}`;
}

/** The card's one long-lived workflow. */
export function cardWorkflowId(cardId: string): string {
  return `card:${cardId}`;
}

/** Creating an account: one run per tenant and key (request_id, Idempotency-Key, or a fresh one). */
export function createWorkflowId(tenantId: string, key: string): string {
  return `va-create:${tenantId}:${key}`;
}

/** An account's expiry: one run per account that has an expires_at. */
export function expiryWorkflowId(accountId: string): string {
  return `va-expiry:${accountId}`;
}

/** Closing an account: one run per account (a failed run may be retried). */
export function closeWorkflowId(accountId: string): string {
  return `va-close:${accountId}`;
}

/** One run per credit the provider reports, however often it reports it. */
export function inboundCreditWorkflowId(provider: string, transactionReference: string): string {
  return `credit:${provider}:${transactionReference}`;
}

/** An operator's return of a held credit: one run per credit and return reference. */
export function heldCreditReturnWorkflowId(creditId: string, reference: string): string {
  return `credit-return:${creditId}:${reference}`;
}

/** One run per verification. */
export function bvnVerificationWorkflowId(customerId: string, verificationId: string): string {
  return `bvn-verification:${customerId}:${verificationId}`;
}

/** The Schedule that starts a reconciliation every day (per task queue). */
export function reconciliationScheduleId(taskQueue: string): string {
  return `daily-reconciliation:${taskQueue}`;
}

/** An operator's run for a given day. */
export function reconciliationWorkflowId(date: string, unique: string): string {
  return `reconciliation:${date}:${unique}`;
}
