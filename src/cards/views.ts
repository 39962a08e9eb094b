// Cards and fundings as the API shows them (decisions §6).
export interface CardRow {
  id: string;
  tenant_id: string;
  customer_id: string;
  status: 'active' | 'locked';
  last4: string;
  currency: string;
  metadata: Record<string, unknown> | null;
  processor_reference: string;
  created_at: Date;
  updated_at: Date;
}

export interface FundingRow {
  id: string;
  card_id: string;
  operation_id: string;
  amount_minor: string | number;
  currency: string;
  status: 'pending' | 'succeeded' | 'failed';
  transaction_reference: string | null;
  idempotency_key: string | null;
  failure_reason: string | null;
  created_at: Date;
  completed_at: Date | null;
}

const iso = (value: Date | null) => (value ? new Date(value).toISOString() : null);

export function cardView(row: CardRow) {
  return {
    id: row.id,
    customer_id: row.customer_id,
    status: row.status,
    last4: row.last4,
    currency: row.currency,
    metadata: row.metadata,
    created_at: iso(row.created_at)!,
    updated_at: iso(row.updated_at)!,
  };
}

export function fundingView(row: FundingRow) {
  return {
    id: row.id,
    amount_minor: Number(row.amount_minor),
    currency: row.currency,
    status: row.status,
    transaction_reference: row.transaction_reference,
    idempotency_key: row.idempotency_key,
    failure_reason: row.failure_reason,
    created_at: iso(row.created_at)!,
    completed_at: iso(row.completed_at),
  };
}
