// Cards and fundings as the API shows them (decisions §6).
import type { CardRow, FundingRow } from './store.ts';

export function cardView(row: CardRow) {
  return {
    id: row.id,
    customer_id: row.customer_id,
    status: row.status,
    last4: row.last4,
    currency: row.currency,
    metadata: row.metadata,
    created_at: row.created_at.toISOString(),
    updated_at: row.updated_at.toISOString(),
  };
}

export function fundingView(row: FundingRow) {
  return {
    id: row.id,
    amount_minor: row.amount_minor,
    currency: row.currency,
    status: row.status,
    transaction_reference: row.transaction_reference,
    idempotency_key: row.idempotency_key,
    failure_reason: row.failure_reason,
    created_at: row.created_at.toISOString(),
    completed_at: row.completed_at?.toISOString() ?? null,
  };
}
