// An identity customer as the API, its events and webhooks show it: the BVN's last 4 digits at
// most, never the BVN or its hash.
import type { CustomerView } from './schemas.ts';
import type { CustomerRow } from './store.ts';

export function customerView(row: CustomerRow): CustomerView {
  return {
    id: row.id,
    external_reference: row.external_reference,
    first_name: row.first_name,
    last_name: row.last_name,
    email: row.email ?? null,
    phone: row.phone ?? null,
    country: row.country,
    metadata: row.metadata ?? null,
    kyc_status: row.kyc_status as CustomerView['kyc_status'],
    kyc_failure_reason: (row.kyc_failure_reason ?? null) as CustomerView['kyc_failure_reason'],
    bvn_last4: row.bvn_last4 ?? null,
    created_at: row.created_at.toISOString(),
    updated_at: row.updated_at.toISOString(),
  };
}
