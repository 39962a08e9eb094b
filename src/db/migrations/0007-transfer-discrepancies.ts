// Late bank answers that contradict a transfer already final in our books (decisions §12): kept
// for operators, never applied by themselves. One open record per transfer; settling one posts
// the correcting journal entry and records who settled it, when and why.
import { ID, TENANT_ID } from './columns.ts';
import { sqlMigration } from './sql-migration.ts';

export const Migration0007TransferDiscrepancies = sqlMigration('0007-transfer-discrepancies', [
  `
      create table transfer_discrepancies (
        ${ID},
        transfer_id uuid not null references transfers (id),
        ${TENANT_ID},
        reference text not null,
        ours text not null check (ours in ('completed', 'failed')),
        bank text not null check (bank in ('successful', 'failed')),
        bank_detail jsonb not null default '{}',
        received_at timestamptz not null default now(),
        settled_at timestamptz,
        settled_by text,
        settlement_note text,
        journal_entry_id uuid references journal_entries (id),
        idempotency_key text unique,
        constraint transfer_discrepancies_contradiction check (
          (ours = 'completed' and bank = 'failed') or (ours = 'failed' and bank = 'successful')
        ),
        constraint transfer_discrepancies_settlement check (
          (settled_at is null and settled_by is null and settlement_note is null and journal_entry_id is null)
          or (settled_at is not null and settled_by is not null and settlement_note is not null
              and journal_entry_id is not null and idempotency_key is not null)
        )
      )`,
  // A repeated answer finds the open record instead of adding another.
  'create unique index transfer_discrepancies_open_idx on transfer_discrepancies (transfer_id) where settled_at is null',
  'create index transfer_discrepancies_received_idx on transfer_discrepancies (received_at, id)',
]);
