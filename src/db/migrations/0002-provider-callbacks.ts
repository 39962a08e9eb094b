// Callbacks received from providers, one row per (provider, event id): the record that makes
// intake idempotent, and the audit trail operators read when a bank disputes what it sent.
import { ID } from './columns.ts';
import { sqlMigration } from './sql-migration.ts';

export const Migration0002ProviderCallbacks = sqlMigration('0002-provider-callbacks', [
  `
      create table provider_callbacks (
        ${ID},
        provider text not null,
        event_id text not null,
        type text not null,
        payload jsonb not null,
        received_at timestamptz not null default now(),
        dispatched_at timestamptz,
        dispatch_result text,
        constraint provider_callbacks_event unique (provider, event_id)
      )`,
  'create index provider_callbacks_undispatched_idx on provider_callbacks (received_at) where dispatched_at is null',
]);
