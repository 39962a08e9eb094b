// The trace an event was recorded in (its W3C `traceparent`, null when tracing is off), so that the
// fan-out starts the event's webhook deliveries in the same trace: one trace follows a transfer
// from its request to the webhook attempts it causes.
import { sqlMigration } from './sql-migration.ts';

export const Migration0014EventTraceContext = sqlMigration('0014-event-trace-context', [
  'alter table events add column traceparent text',
]);
