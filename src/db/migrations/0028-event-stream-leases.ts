// Open event streams, counted across every API process (decisions §15, STREAM_MAX_PER_KEY): each
// open stream holds a lease under its API key, renewed by its process while it is open and deleted
// when it ends. A process that dies leaves its leases to lapse at `expires_at`; lapsed leases do
// not count. See src/event-stream/stream-leases.ts.
import { sqlMigration } from './sql-migration.ts';

export const Migration0028EventStreamLeases = sqlMigration('0028-event-stream-leases', [
  `
      create table event_stream_leases (
        id uuid primary key,
        api_key_id uuid not null,
        tenant_id uuid not null,
        opened_at timestamptz not null default clock_timestamp(),
        expires_at timestamptz not null
      )
  `,
  'create index event_stream_leases_key_idx on event_stream_leases (api_key_id, expires_at)',
]);
