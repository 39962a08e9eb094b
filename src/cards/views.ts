// Cards and fundings as the API shows them (decisions §6).
import type { CardView, FundingView } from './schemas.ts';
import type { CardRow, FundingRow } from './store.ts';

export function cardView(row: CardRow): CardView {
  return {
    id: row.id,
    customer_id: row.customer_id,
    status: row.status,
    last4: row.last4,
    currency: row.currency,
    metadata: row.metadata ?? null,
    created_at: row.created_at.toISOString(),
    updated_at: row.updated_at.toISOString(),
  };
}

export function fundingView(row: FundingRow): FundingView {
  return {
    id: row.id,
    amount_minor: row.amount_minor,
    currency: row.currency,
    status: row.status,
    transaction_reference: row.transaction_reference ?? null,
    idempotency_key: row.idempotency_key ?? null,
    failure_reason: row.failure_reason ?? null,
    created_at: row.created_at.toISOString(),
    completed_at: row.completed_at?.toISOString() ?? null,
  };
}
