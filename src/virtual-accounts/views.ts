// A virtual account as the API shows it (interface §2.2). closure_reason and closed_at are kept
// but never shown.
export interface VirtualAccountRow {
  id: string;
  tenant_id: string;
  customer_id: string;
  account_number: string;
  account_name: string;
  bank_code: string;
  bank_name: string;
  provider: string;
  provider_reference: string;
  status: 'active' | 'frozen' | 'closed' | 'expired';
  account_type: string;
  total_received_minor: string | number;
  transaction_count: number;
  metadata: Record<string, unknown> | null;
  request_id: string | null;
  expires_at: Date | null;
  created_at: Date;
  updated_at: Date;
}

export function virtualAccountView(row: VirtualAccountRow) {
  return {
    id: row.id,
    tenant_id: row.tenant_id,
    customer_id: row.customer_id,
    account_number: row.account_number,
    account_name: row.account_name,
    bank_code: row.bank_code,
    bank_name: row.bank_name,
    provider: row.provider,
    status: row.status,
    account_type: row.account_type,
    total_received_minor: Number(row.total_received_minor),
    transaction_count: row.transaction_count,
    metadata: row.metadata,
    expires_at: row.expires_at ? new Date(row.expires_at).toISOString() : null,
    created_at: new Date(row.created_at).toISOString(),
    updated_at: new Date(row.updated_at).toISOString(),
  };
}
