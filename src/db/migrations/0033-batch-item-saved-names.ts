// A batch item naming a saved recipient (decisions §20) keeps the name it was saved under: the
// item's name enquiry must still give that name, and the item is paid under it. Null for an item
// naming an account, as every item before this migration did.
import { sqlMigration } from './sql-migration.ts';

export const Migration0033BatchItemSavedNames = sqlMigration('0033-batch-item-saved-names', [
  'alter table transfer_batch_items add column saved_name text',
]);
