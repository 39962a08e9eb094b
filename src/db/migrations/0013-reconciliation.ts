// Daily reconciliation against the bank's settlement statement: one row per run, one per item it
// looked at (matched or not), kept so that an operator can read any day's result again. Inbound
// credits keep the bank's session id from now on, so that both sides can be matched on it.
import { ID } from './columns.ts';
import { sqlMigration } from './sql-migration.ts';

export const Migration0013Reconciliation = sqlMigration('0013-reconciliation', [
  'alter table inbound_credits add column session_id text',
  `
      create table reconciliation_runs (
        ${ID},
        value_date date not null,
        trigger text not null check (trigger in ('schedule', 'operator')),
        workflow_id text not null,
        bank_items integer not null check (bank_items >= 0),
        our_items integer not null check (our_items >= 0),
        matched integer not null check (matched >= 0),
        mismatched integer not null check (mismatched >= 0),
        counts jsonb not null,
        discrepancies_open integer not null check (discrepancies_open >= 0),
        discrepancies_received integer not null check (discrepancies_received >= 0),
        started_at timestamptz not null,
        completed_at timestamptz not null default now()
      )`,
  'create index reconciliation_runs_date_idx on reconciliation_runs (value_date, completed_at desc)',
  `
      create table reconciliation_items (
        ${ID},
        run_id uuid not null references reconciliation_runs (id),
        outcome text not null
          check (outcome in ('matched', 'missing_ours', 'missing_at_bank', 'amount_differs', 'status_differs')),
        kind text not null check (kind in ('transfer', 'inbound_credit')),
        reference text not null,
        session_id text,
        tenant_id uuid references tenants (id),
        transfer_id uuid references transfers (id),
        tenant_reference text,
        provider text,
        account_number text,
        bank_amount_minor bigint,
        our_amount_minor bigint,
        bank_status text,
        our_status text
      )`,
  'create index reconciliation_items_run_idx on reconciliation_items (run_id, outcome)',
]);
