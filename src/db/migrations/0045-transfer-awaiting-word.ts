// A first submission the bank answered "pending" waits for the bank's word as an open activity
// (docs/workflows.md#the-banks-word-completes-the-submission): its task token is kept on the
// transfer, where the bank's callback finds it and completes that activity with the word. Null when
// no submission waits (answered, finished, or one that was never made to wait).
import { sqlMigration } from './sql-migration.ts';

export const Migration0045TransferAwaitingWord = sqlMigration('0045-transfer-awaiting-word', [
  'alter table transfers add column awaiting_word_token text',
]);
