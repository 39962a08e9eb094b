// How a transfer row reads in each response shape. Create responses use the create field names
// and statuses (pending | processing | completed | failed); list and get use their own names and
// the get/list vocabulary (pending | successful | failed, src/transfers/domain.ts maps them), as
// the interface specifies.
import { batchItemStatus, publicStatus } from './domain.ts';
import { approvalView } from './approvals.ts';
import type {
  TransferBatchDetailView,
  TransferBatchItemView,
  TransferBatchView,
  TransferCreateView,
  TransferExpandableView,
  TransferItemView,
} from './schemas.ts';
import type { TransferRow } from './store.ts';
import type { BatchCounts, BatchItemWithTransfer, TransferBatchRow } from './batch-store.ts';

export function createView(row: TransferRow): TransferCreateView {
  return {
    id: row.id,
    amount_minor: row.amount_minor,
    fee_minor: row.fee_minor,
    total_minor: row.amount_minor + row.fee_minor,
    recipient_account: row.recipient_account,
    recipient_name: row.recipient_name,
    recipient_bank: row.recipient_bank,
    recipient_bank_code: row.recipient_bank_code,
    status: row.status,
    reference: row.reference,
    narration: row.narration,
    session_id: row.session_id ?? row.name_enquiry_session_id ?? '',
    currency: row.currency,
    metadata: row.metadata,
    created_at: row.created_at.toISOString(),
    approval: approvalView(row),
    return_of: row.return_of ?? null,
  };
}

export function itemView(row: TransferRow, options: { withCompletedAt: boolean }): TransferItemView {
  return {
    id: row.id,
    reference: row.reference,
    amount_minor: row.amount_minor,
    currency: row.currency,
    status: publicStatus(row.status),
    bankCode: row.recipient_bank_code,
    accountNumber: row.recipient_account,
    accountName: row.recipient_name,
    createdAt: row.created_at.toISOString(),
    ...(options.withCompletedAt && row.completed_at ? { completedAt: row.completed_at.toISOString() } : {}),
    ...(row.status === 'failed' ? { failure_reason: row.failure_reason ?? 'failed' } : {}),
    ...(row.reversed_at ? { reversed_at: row.reversed_at.toISOString() } : {}),
    approval: approvalView(row),
    return_of: row.return_of ?? null,
  };
}

/** A list or get item with `expand=details`: the item and the fields it leaves out. */
export function expandedView(
  row: TransferRow,
  options: { withCompletedAt: boolean; batchId?: string | null },
): TransferExpandableView {
  return {
    ...itemView(row, options),
    fee_minor: row.fee_minor,
    total_minor: row.amount_minor + row.fee_minor,
    recipient_bank: row.recipient_bank,
    narration: row.narration,
    metadata: row.metadata,
    created_by_key_id: row.created_by_key_id ?? null,
    batch_id: options.batchId ?? null,
  };
}

/** The batch as POST answers it (decisions §14). */
export function batchView(row: TransferBatchRow): TransferBatchView {
  return {
    id: row.id,
    batch_reference: row.batch_reference,
    status: row.status,
    total_count: row.total_count,
    total_amount_minor: row.total_amount_minor,
    total_fee_minor: row.total_fee_minor,
    atomic: row.atomic,
    created_at: row.created_at.toISOString(),
    approval: approvalView(row),
  };
}

/** The batch as GET answers it and `transfer_batch.completed` carries it: with its items by outcome. */
export function batchDetailView(row: TransferBatchRow, counts: BatchCounts): TransferBatchDetailView {
  return { ...batchView(row), counts, completed_at: row.completed_at ? row.completed_at.toISOString() : null };
}

/** An item: refused with its code, or its transfer's status; a failed transfer's reason as its error. */
export function batchItemView(item: BatchItemWithTransfer): TransferBatchItemView {
  const status = batchItemStatus(item.status, item.transfer_status);
  const error =
    item.status === 'refused'
      ? { code: item.error_code ?? 'refused', message: item.error_message ?? '' }
      : status === 'failed'
        ? { code: 'transfer_failed', message: item.failure_reason ?? 'the bank did not pay it out' }
        : null;
  return { index: item.index, reference: item.reference, transfer_id: item.transfer_id, status, error };
}
