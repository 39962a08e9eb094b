// Entry point of the workflow bundle the worker loads. Workflow code is deterministic: it imports
// activity types only, never Node built-ins, the ORM or the network (lint enforces this).
export { transferWorkflow } from './transfer.ts';
export { transferBatchWorkflow } from './transfer-batch.ts';
export { webhookDeliveryWorkflow } from './webhook-delivery.ts';
export {
  inboundCreditWorkflow,
  virtualAccountCloseWorkflow,
  virtualAccountCreateWorkflow,
  virtualAccountExpiryWorkflow,
} from './virtual-accounts.ts';
export { cardIssueWorkflow, cardWorkflow } from './card.ts';
export { reconciliationWorkflow } from './reconciliation.ts';
export { bvnVerificationWorkflow } from './bvn-verification.ts';
