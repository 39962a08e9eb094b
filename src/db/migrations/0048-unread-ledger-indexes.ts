// Two ledger indexes that no query reads, each one more entry written per posting or per entry:
// `postings (account_id, id)`, whose account lookups `postings (account_id, created_at, id)`
// serves (a statement's window, a balance at a time, the ledger's checks), and
// `journal_entries (tenant_id, created_at)`, which nothing looks up by (entries are found by their
// idempotency key, or through their postings). A card decision writes three fewer index entries, a
// transfer seven.
import { sqlMigration } from './sql-migration.ts';

export const Migration0048UnreadLedgerIndexes = sqlMigration('0048-unread-ledger-indexes', [
  'drop index if exists postings_account_idx',
  'drop index if exists journal_entries_tenant_idx',
]);
