// A virtual account as the API shows it (interface §2.2).
import type { InferEntity } from '@mikro-orm/core';
import type { InboundCreditView, VirtualAccountView } from './schemas.ts';
import type { InboundCreditRecord, VirtualAccountRow } from './store.ts';

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

/** An applied inbound credit of an account: what the sender paid, what the provider kept. */
export function inboundCreditView(row: InferEntity<typeof InboundCreditRecord>): InboundCreditView {
  return {
    id: row.id,
    virtual_account_id: row.virtual_account_id ?? '',
    amount_minor: row.amount_minor,
    fee_minor: row.fee_minor,
    transaction_reference: row.transaction_reference,
    sender_name: row.sender_name ?? null,
    session_id: row.session_id ?? null,
    provider: row.provider,
    created_at: row.created_at.toISOString(),
  };
}
