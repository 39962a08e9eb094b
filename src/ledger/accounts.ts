// The ledger's account codes: the journal (./ledger.ts) opens and posts to these accounts, and the
// movements (./movements.ts) name them, so both take them from here.

/** Platform-wide accounts, seeded by the first migration. */
export type SystemAccountCode =
  'external_funding' | 'bank_settlement' | 'fee_revenue' | 'inbound_clearing' | 'card_settlement';
/**
 * Per-tenant accounts (each tenant mode has its own): the wallet and in flight, opened with the
 * tenant, and the suspense account, opened with the first credit it holds (decisions §21): credits
 * to closed or expired accounts, the sender's money, never the tenant's until an operator releases it.
 */
export type TenantAccountCode = 'wallet' | 'in_flight' | 'suspense';
