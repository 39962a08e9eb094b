// Wallet statements (decisions §15): a tenant's movements in a date range, newest first, and its
// balances as they were at a moment, read from the postings of one account by time.
import { sqlMigration } from './sql-migration.ts';

export const Migration0026WalletStatements = sqlMigration('0026-wallet-statements', [
  'create index postings_account_time_idx on postings (account_id, created_at, id)',
]);
