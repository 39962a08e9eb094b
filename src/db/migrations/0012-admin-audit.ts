// Every operator command that changes something, written down: who ran it, which command, with
// which arguments (secrets never: the CLI takes none), when, and how it ended.
import { ID } from './columns.ts';
import { sqlMigration } from './sql-migration.ts';

export const Migration0012AdminAudit = sqlMigration('0012-admin-audit', [
  `
      create table admin_audit (
        ${ID},
        operator text not null,
        command text not null,
        arguments jsonb not null,
        outcome text not null check (outcome in ('succeeded', 'refused', 'failed')),
        error text,
        at timestamptz not null default now()
      )`,
  'create index admin_audit_at_idx on admin_audit (at)',
]);
