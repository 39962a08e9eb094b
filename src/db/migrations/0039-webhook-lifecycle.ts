// The webhook endpoint's lifecycle (decisions §21): a rotated signing secret kept beside the new one
// for its overlap, when and by what an endpoint was disabled (its tenant or its failures hold its
// deliveries; a receiver's 410 ends them), since when every attempt to it has failed (what
// auto-disable reads), and which deliveries wait for their disabled endpoint to be enabled again.
// Deliveries are also read by endpoint and time (recover since).
import { sqlMigration } from './sql-migration.ts';

export const Migration0039WebhookLifecycle = sqlMigration('0039-webhook-lifecycle', [
  'alter table webhook_endpoints add column previous_secret_ciphertext text',
  'alter table webhook_endpoints add column previous_secret_expires_at timestamptz',
  'alter table webhook_endpoints add column disabled_at timestamptz',
  "alter table webhook_endpoints add column disabled_by text check (disabled_by in ('tenant', 'gone', 'failures'))",
  'alter table webhook_endpoints add column failing_since timestamptz',
  // Endpoints disabled before this migration were disabled by a 410; their time is their last change.
  "update webhook_endpoints set disabled_at = updated_at, disabled_by = 'gone' where status = 'disabled'",
  'alter table webhook_deliveries add column paused_at timestamptz',
  'create index webhook_deliveries_endpoint_idx on webhook_deliveries (endpoint_id, created_at)',
  'create index webhook_deliveries_paused_idx on webhook_deliveries (endpoint_id) where paused_at is not null',
]);
