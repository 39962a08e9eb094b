// How a transfer row reads in each response shape. Create responses use the create field names
// and statuses (pending | processing | completed | failed); list and get use their own names and
// the get/list vocabulary (pending | successful | failed, src/transfers/domain.ts maps them), as
// the interface specifies.
import { publicStatus } from './domain.ts';
import type { TransferCreateView, TransferItemView } from './schemas.ts';
import type { TransferRow } from './store.ts';

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
  };
}
