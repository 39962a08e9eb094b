// Entry point of the workflow bundle the worker loads. Workflow code is deterministic: it knows its
// activities by the types in its feature's definitions.ts, and imports no Node built-in, the ORM or
// the network (lint enforces this).
export { transferWorkflow } from './transfers/transfer.ts';
export { transferBatchWorkflow } from './transfers/transfer-batch.ts';
export { transferBatchChunkWorkflow } from './transfers/transfer-batch-chunk.ts';
export { transferReversalWorkflow } from './transfers/transfer-reversal.ts';
export { webhookDeliveryWorkflow } from './webhooks/webhook-delivery.ts';
export {
  heldCreditReturnWorkflow,
  inboundCreditWorkflow,
  virtualAccountCloseWorkflow,
  virtualAccountCreateWorkflow,
  virtualAccountExpiryWorkflow,
} from './virtual-accounts/virtual-accounts.ts';
export { cardIssueWorkflow, cardWorkflow } from './cards/card.ts';
export { reconciliationWorkflow } from './reconciliation/reconciliation.ts';
export { bvnVerificationWorkflow } from './identity/bvn-verification.ts';
