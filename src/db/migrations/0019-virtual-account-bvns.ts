// A BVN sent with a virtual-account create (#15 item 6, kept as BVN verification keeps one, 0018):
// its keyed hash and last four digits, and while the create workflow may still need it for the
// provider, an AES-256-GCM copy bound to the create's account id. The copy is erased in the
// transaction that records the account, when the workflow fails, when the API has its answer, and
// at the latest an hour after it was sealed; the check makes an erased row that still holds it
// (or a held copy without its erasure unset) impossible.
import { CREATED_AT, TENANT_ID } from './columns.ts';
import { sqlMigration } from './sql-migration.ts';

export const Migration0019VirtualAccountBvns = sqlMigration('0019-virtual-account-bvns', [
  `
      create table virtual_account_bvns (
        account_id uuid primary key,
        ${TENANT_ID},
        bvn_hash text not null,
        bvn_last4 char(4) not null,
        bvn_ciphertext text,
        ${CREATED_AT},
        erased_at timestamptz,
        constraint virtual_account_bvns_erased check ((bvn_ciphertext is null) = (erased_at is not null))
      )`,
  `create index virtual_account_bvns_held on virtual_account_bvns (created_at) where bvn_ciphertext is not null`,
]);
