// A tenant's webhook attempts in flight are bounded (WEBHOOK_TENANT_CONCURRENCY): a delivery about
// to attempt holds one of its tenant's slots (`granted`, until `expires_at` in case its worker dies)
// or waits for one (`waiting`, in `queued_at` order) without holding a worker slot; a finished
// attempt hands its slot to the tenant's longest-waiting delivery and signals that workflow. One row
// per delivery (a delivery makes one attempt at a time); see src/webhooks/attempt-slots.ts.
import { sqlMigration } from './sql-migration.ts';

export const Migration0022WebhookAttemptSlots = sqlMigration('0022-webhook-attempt-slots', [
  `
      create table webhook_attempt_slots (
        delivery_id uuid primary key references webhook_deliveries (id),
        tenant_id uuid not null,
        workflow_id text not null,
        state text not null check (state in ('waiting', 'granted')),
        queued_at timestamptz not null default clock_timestamp(),
        expires_at timestamptz,
        constraint webhook_attempt_slots_granted_expire check ((state = 'granted') = (expires_at is not null))
      )
  `,
  'create index webhook_attempt_slots_tenant_idx on webhook_attempt_slots (tenant_id, state, queued_at)',
]);
