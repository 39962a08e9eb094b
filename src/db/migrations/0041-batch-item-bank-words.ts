// The bank's word about a batch item that came before the item's run (decisions §14): a batch
// submits its items first and starts their runs after, a bounded number at a time, so a bank that
// answers at once can answer about an item whose run is not there yet. The callback keeps the
// word on the item (the first one wins) and still asks the bank to send it again; the run, when
// it starts, takes the kept word in its first task (docs/workflows.md#a-batchs-items).
import { sqlMigration } from './sql-migration.ts';

export const Migration0041BatchItemBankWords = sqlMigration('0041-batch-item-bank-words', [
  `alter table transfer_batch_items add column bank_word jsonb`,
]);
