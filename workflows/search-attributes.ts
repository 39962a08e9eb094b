// The custom search attributes workflows upsert and operators query (registered on the server by
// `npm start` / `npm run setup`; see src/stack/temporal-dev.ts for their types).
import { defineSearchAttributeKey } from '@temporalio/common';

export const TenantIdKey = defineSearchAttributeKey('TenantId', 'KEYWORD');
export const TransferReferenceKey = defineSearchAttributeKey('TransferReference', 'KEYWORD');
export const TransferStatusKey = defineSearchAttributeKey('TransferStatus', 'KEYWORD');
export const AmountMinorKey = defineSearchAttributeKey('AmountMinor', 'INT');
/** The connector that took a transfer (decisions §13): `sandbox`, `generic`, `paystack`. */
export const TransferConnectorKey = defineSearchAttributeKey('TransferConnector', 'KEYWORD');
/** A held payout's approval (decisions §20): `required`, then `approved`, `rejected` or `expired`. */
export const TransferApprovalKey = defineSearchAttributeKey('TransferApproval', 'KEYWORD');
/** The batch_reference of a bulk transfer request (decisions §14), on its batch workflow. */
export const TransferBatchReferenceKey = defineSearchAttributeKey('TransferBatchReference', 'KEYWORD');
