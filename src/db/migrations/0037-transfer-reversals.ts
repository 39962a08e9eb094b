// Reversals after success (decisions §21): a transfer its bank paid out and later reversed ends
// `failed` with `failure_reason` `reversed`, and `reversed_at` says when the reversal was applied
// (its amount and fee back in the wallet, journal key `transfer:<id>:reversal`). Null for every
// other transfer, as for every row before this migration.
import { sqlMigration } from './sql-migration.ts';

export const Migration0037TransferReversals = sqlMigration('0037-transfer-reversals', [
  'alter table transfers add column reversed_at timestamptz',
  `alter table transfers add constraint transfers_reversed_is_failed
     check (reversed_at is null or (status = 'failed' and failure_reason = 'reversed'))`,
  // Reconciliation reads a reversed transfer on the day it was reversed.
  'create index transfers_reversed_at on transfers (reversed_at) where reversed_at is not null',
]);
