// How a transfer row reads in each response shape. Create responses use the create field names
// and statuses (pending | processing | completed | failed); list and get use their own names and
// the get/list vocabulary (pending | successful | failed), as the interface specifies.
import type { TransferCreateView, TransferStatus } from '../../workflows/transfer-definitions.ts';

export interface TransferRow {
  id: string;
  tenant_id: string;
  reference: string;
  request_hash: string;
  amount_minor: string | number;
  fee_minor: string | number;
  currency: string;
  recipient_account: string;
  recipient_bank_code: string;
  recipient_bank: string;
  recipient_name: string;
  narration: string;
  metadata: Record<string, unknown>;
  status: TransferStatus;
  name_enquiry_session_id: string | null;
  session_id: string | null;
  provider_code: string | null;
  failure_reason: string | null;
  stuck_since: Date | null;
  created_at: Date;
  updated_at: Date;
  completed_at: Date | null;
}

export type PublicTransferStatus = 'pending' | 'successful' | 'failed';

export function publicStatus(status: TransferStatus): PublicTransferStatus {
  if (status === 'completed') return 'successful';
  if (status === 'failed') return 'failed';
  return 'pending';
}

/** The statuses of the create vocabulary that a get/list status filter stands for. */
export function internalStatuses(status: PublicTransferStatus): TransferStatus[] {
  if (status === 'successful') return ['completed'];
  if (status === 'failed') return ['failed'];
  return ['pending', 'processing'];
}

export function createView(row: TransferRow): TransferCreateView {
  const amount = Number(row.amount_minor);
  const fee = Number(row.fee_minor);
  return {
    id: row.id,
    amount_minor: amount,
    fee_minor: fee,
    total_minor: amount + fee,
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
    created_at: new Date(row.created_at).toISOString(),
  };
}

export interface TransferItemView {
  id: string;
  reference: string;
  amount_minor: number;
  currency: string;
  status: PublicTransferStatus;
  bankCode: string;
  accountNumber: string;
  accountName: string;
  createdAt: string;
  completedAt?: string;
}

export function itemView(row: TransferRow, options: { withCompletedAt: boolean }): TransferItemView {
  return {
    id: row.id,
    reference: row.reference,
    amount_minor: Number(row.amount_minor),
    currency: row.currency,
    status: publicStatus(row.status),
    bankCode: row.recipient_bank_code,
    accountNumber: row.recipient_account,
    accountName: row.recipient_name,
    createdAt: new Date(row.created_at).toISOString(),
    ...(options.withCompletedAt && row.completed_at ? { completedAt: new Date(row.completed_at).toISOString() } : {}),
  };
}
