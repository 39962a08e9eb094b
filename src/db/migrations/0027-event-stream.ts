// The event stream and test events (decisions §15).
// - Every event gets its place in the stream: the id of the transaction that recorded it (`txid`)
//   and a number within it (`seq`). A stream reads events in that order, and only those whose
//   transaction is older than every transaction still running (PostgreSQL's snapshot xmin), so an
//   event committed late by a transaction that began early can never fall behind a reader's
//   position: nothing is skipped, and a position is enough to resume.
// - A test event (`test`) is delivered to the one endpoint it was sent to and nowhere else: the
//   fan-out starts only the delivery queued with it, no stream or list shows it, and its delivery
//   (`webhook_deliveries.test`) is not counted in the webhook metrics.
import { sqlMigration } from './sql-migration.ts';

export const Migration0027EventStream = sqlMigration('0027-event-stream', [
  'alter table events add column test boolean not null default false',
  'alter table events add column txid xid8 not null default pg_current_xact_id()',
  'alter table events add column seq bigint generated always as identity',
  'create index events_stream_idx on events (txid, seq)',
  'create index events_tenant_stream_idx on events (tenant_id, txid, seq)',
  'alter table webhook_deliveries add column test boolean not null default false',
]);
