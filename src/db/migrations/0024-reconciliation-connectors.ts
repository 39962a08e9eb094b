// Reconciliation per connector (decisions §13): each run reconciles one connector's record of a
// day against the books of that connector, and its items name it. Every run made before this was
// the sandbox bank's, so existing rows are the sandbox's; new rows must say whose they are (the
// default goes once the old rows have it).
import { sqlMigration } from './sql-migration.ts';

export const Migration0024ReconciliationConnectors = sqlMigration('0024-reconciliation-connectors', [
  `alter table reconciliation_runs add column connector text not null default 'sandbox'`,
  'alter table reconciliation_runs alter column connector drop default',
  `alter table reconciliation_items add column connector text not null default 'sandbox'`,
  'alter table reconciliation_items alter column connector drop default',
  // The report reads a day's latest run per connector.
  'create index reconciliation_runs_connector_date_idx on reconciliation_runs (connector, value_date, completed_at desc)',
  'create index reconciliation_runs_workflow_idx on reconciliation_runs (workflow_id)',
]);
