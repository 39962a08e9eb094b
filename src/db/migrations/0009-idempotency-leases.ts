// Idempotency keys hold their claim only for a lease: a key whose first request died (its process
// killed mid-request) is taken over by a retry once the lease has run out, instead of answering
// 409 for 24 hours. Each claim has its own token, so a request that outlived its lease cannot
// complete or release the claim of the request that took over.
import { sqlMigration } from './sql-migration.ts';

export const Migration0009IdempotencyLeases = sqlMigration('0009-idempotency-leases', [
  'alter table idempotency_keys add column locked_until timestamptz, add column claim_token uuid',
]);
