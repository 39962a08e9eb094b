// Webhook endpoints (secrets encrypted at rest: signing needs them back), one delivery per
// (event, endpoint) with its recorded attempts, and the fan-out marker on events.
import { TENANT_OWNED, TIMESTAMPS } from './columns.ts';
import { sqlMigration } from './sql-migration.ts';

export const Migration0004Webhooks = sqlMigration('0004-webhooks', [
  `
      create table webhook_endpoints (
        ${TENANT_OWNED},
        url text not null,
        mode text not null check (mode in ('test', 'live')),
        events text[] not null,
        secret_ciphertext text not null,
        status text not null check (status in ('listening', 'disabled', 'deleted')),
        disabled_reason text,
        ${TIMESTAMPS}
      )`,
  'create index webhook_endpoints_tenant_idx on webhook_endpoints (tenant_id, created_at desc)',
  `
      create table webhook_deliveries (
        ${TENANT_OWNED},
        event_id uuid not null references events (id),
        endpoint_id uuid not null references webhook_endpoints (id),
        event_type text not null,
        status text not null check (status in ('queued', 'retrying', 'succeeded', 'failed')),
        attempt_count integer not null default 0,
        signature text,
        replay_id text,
        ${TIMESTAMPS},
        constraint webhook_deliveries_pair unique (event_id, endpoint_id)
      )`,
  'create index webhook_deliveries_tenant_idx on webhook_deliveries (tenant_id, created_at desc)',
  `
      create table webhook_attempts (
        id bigint generated always as identity primary key,
        delivery_id uuid not null references webhook_deliveries (id),
        number integer not null,
        attempted_at timestamptz not null,
        status_code integer,
        error text,
        duration_ms integer not null,
        response_body text,
        replay_id text,
        constraint webhook_attempts_number unique (delivery_id, number)
      )`,
  'alter table events add column fanned_out_at timestamptz',
  'create index events_unfanned_idx on events (created_at) where fanned_out_at is null',
]);
