// A submission that may have been taken (decisions §17). `possibly_taken_at` is written before each
// submission is sent and cleared once the provider's answer settles the question (taken for
// certain, or refused before processing); left set by an ambiguous attempt (no answer, a 5xx, a
// connection lost mid-request, a refusal the connector does not recognise) or by a process that
// died mid-request, it pins the transfer to its connector: no other connector is ever sent it, no
// refusal fails it, and only that connector's status query can clear it. `ambiguous_since` keeps
// the first ambiguous attempt for good: a refusal proves "not taken" only if there never was one.
//
// `transfer_connector_conflicts`: an answer about a transfer from a connector that does not hold
// it (a late success after a failover), kept with both connectors named until an operator closes
// it; never applied, never dropped.
import { ID, TENANT_ID } from './columns.ts';
import { sqlMigration } from './sql-migration.ts';

export const Migration0029PossiblyTaken = sqlMigration('0029-possibly-taken', [
  'alter table transfers add column possibly_taken_at timestamptz, add column ambiguous_since timestamptz',
  `
      create table transfer_connector_conflicts (
        ${ID},
        transfer_id uuid not null references transfers (id),
        ${TENANT_ID},
        reference text not null,
        holder text not null,
        connector text not null,
        said text not null check (said in ('successful', 'failed')),
        transfer_status text not null,
        detail jsonb not null default '{}',
        received_at timestamptz not null default now(),
        closed_at timestamptz,
        closed_by text,
        close_note text,
        constraint transfer_connector_conflicts_holder check (holder <> connector),
        constraint transfer_connector_conflicts_closing check (
          (closed_at is null and closed_by is null and close_note is null)
          or (closed_at is not null and closed_by is not null and close_note is not null)
        )
      )`,
  // A repeated answer finds the open record instead of adding another.
  `create unique index transfer_connector_conflicts_open_idx
     on transfer_connector_conflicts (transfer_id, connector, said) where closed_at is null`,
  'create index transfer_connector_conflicts_received_idx on transfer_connector_conflicts (received_at, id)',
]);
