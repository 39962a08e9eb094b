// Payout approvals (decisions §20): a transfer or a batch the tenant's transfer policy holds waits,
// reserved, for another key's (or a person's) decision until its expiry. `approval_status` is null
// for everything the policy did not hold, as for every row before this migration; the key that
// made the row is kept so that it cannot approve its own payout.
import { sqlMigration } from './sql-migration.ts';

const approvalColumns = (table: string) =>
  `alter table ${table}
     add column approval_status text check (approval_status in ('required', 'approved', 'rejected', 'expired')),
     add column approval_expires_at timestamptz,
     add column approval_decided_by jsonb,
     add column approval_decided_at timestamptz,
     add column created_by_key_id uuid`;

export const Migration0035Approvals = sqlMigration('0035-approvals', [
  approvalColumns('transfers'),
  approvalColumns('transfer_batches'),
  `create index transfers_awaiting_approval on transfers (tenant_id, approval_expires_at)
     where approval_status = 'required'`,
  `create index transfer_batches_awaiting_approval on transfer_batches (tenant_id, approval_expires_at)
     where approval_status = 'required'`,
]);
