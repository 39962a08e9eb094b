// A virtual account as the API shows it (interface §2.2).
import type { InboundCreditView, VirtualAccountView } from './schemas.ts';
import type { InboundCreditRow, VirtualAccountRow } from './store.ts';
import { creditStatus } from './domain.ts';

export function virtualAccountView(row: VirtualAccountRow): VirtualAccountView {
  return {
    id: row.id,
    tenant_id: row.owner_tenant_id,
    customer_id: row.customer_id,
    account_number: row.account_number,
    account_name: row.account_name,
    bank_code: row.bank_code,
    bank_name: row.bank_name,
    provider: row.provider,
    status: row.status,
    account_type: row.account_type,
    total_received_minor: row.total_received_minor,
    transaction_count: row.transaction_count,
    metadata: row.metadata ?? null,
    expires_at: row.expires_at?.toISOString() ?? null,
    created_at: row.created_at.toISOString(),
    updated_at: row.updated_at.toISOString(),
  };
}

/**
 * An inbound credit of an account (decisions §21): what the sender paid, what the provider kept,
 * who sent it, and what returns not failed hold of it (`returnedMinor`, from its transfers).
 */
export function inboundCreditView(row: InboundCreditRow, returnedMinor: number): InboundCreditView {
  const stored = row.status === 'held' ? 'held' : 'applied';
  return {
    id: row.id,
    amount_minor: row.amount_minor,
    fee_minor: row.fee_minor,
    sender_name: row.sender_name || null,
    sender_account_number: row.sender_account_number ?? null,
    sender_bank_code: row.sender_bank_code ?? null,
    transaction_reference: row.transaction_reference,
    status: creditStatus({ stored, amountMinor: row.amount_minor, feeMinor: row.fee_minor, returnedMinor }),
    returned_minor: returnedMinor,
    created_at: row.created_at.toISOString(),
  };
}
