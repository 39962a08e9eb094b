// The ledger's account codes: the journal (./ledger.ts) opens and posts to these accounts, and the
// movements (./movements.ts) name them, so both take them from here.

/** Platform-wide accounts, seeded by the first migration. */
export type SystemAccountCode =
  'external_funding' | 'bank_settlement' | 'fee_revenue' | 'inbound_clearing' | 'card_settlement';
/** Per-tenant accounts, opened with the tenant. */
export type TenantAccountCode = 'wallet' | 'in_flight';
