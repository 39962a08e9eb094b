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

/**
 * A transfer run's search attributes, set when it starts (the API's Update-with-Start, a batch's
 * child): runs of the lean shape never upsert any, their status and connector being the read
 * model's (docs/workflows.md#the-lean-shape).
 */
export function transferStartAttributes(request: { tenantId: string; reference: string; amountMinor: number }) {
  return [
    { key: TenantIdKey, value: request.tenantId },
    { key: TransferReferenceKey, value: request.reference },
    { key: AmountMinorKey, value: request.amountMinor },
  ];
}
