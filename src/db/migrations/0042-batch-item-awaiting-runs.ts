// The run that awaits a batch item's bank word (decisions §14): a batch submits its items and one
// run per group of them awaits their banks' words (docs/workflows.md#a-batchs-items), instead of a
// transfer run per item. The item's row names that run, so that a callback, an operator's resolve
// and `admin transfers show` find it; null for an item its own transfer run awaits.
import { sqlMigration } from './sql-migration.ts';

export const Migration0042BatchItemAwaitingRuns = sqlMigration('0042-batch-item-awaiting-runs', [
  `alter table transfer_batch_items add column awaited_by text`,
]);
