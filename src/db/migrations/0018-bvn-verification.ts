// BVN verification (decisions §11). A BVN is kept only as a keyed hash (HMAC-SHA256 under a server
// secret) and its last four digits; while its lookup runs, an AES-256-GCM copy sits on the
// verification row for the worker to read, and it is erased in the transaction that records the
// outcome (the check below makes a finished verification that still holds it impossible). One
// pending verification per customer.
import { CREATED_AT, TENANT_OWNED } from './columns.ts';
import { sqlMigration } from './sql-migration.ts';

export const Migration0018BvnVerification = sqlMigration('0018-bvn-verification', [
  'alter table identity_customers add column bvn_last4 char(4)',
  'alter table identity_customers add column kyc_failure_reason text',
  `
      create table bvn_verifications (
        ${TENANT_OWNED},
        customer_id uuid not null references identity_customers (id),
        status text not null check (status in ('pending', 'verified', 'verification_failed', 'abandoned')),
        failure_reason text check (failure_reason in ('bvn_not_found', 'name_mismatch')),
        bvn_hash text not null,
        bvn_last4 char(4) not null,
        bvn_ciphertext text,
        ${CREATED_AT},
        completed_at timestamptz,
        constraint bvn_verifications_erased check (status = 'pending' or bvn_ciphertext is null),
        constraint bvn_verifications_reason check ((status = 'verification_failed') = (failure_reason is not null))
      )`,
  `create unique index bvn_verifications_one_pending on bvn_verifications (customer_id) where status = 'pending'`,
  'create index bvn_verifications_by_customer on bvn_verifications (customer_id, created_at)',
]);
