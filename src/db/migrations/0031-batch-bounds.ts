// Bounds on bulk transfers and name enquiries (decisions §18). A tenant holds at most 5 open
// batches per mode, and has at most BULK_ITEMS_PER_MINUTE items admitted per mode over a minute:
// the API counts both under a lock when it records a batch, on the two indexes below. Name enquiries run at most 16 at a time per connector
// across every API and worker process, shared fairly between tenants: `name_enquiry_slots` holds
// one row per slot and connector, taken (tenant, holder, lease) for one enquiry and given back when
// it ends, or lapsing at `expires_at` when its process died; `name_enquiry_waiters` holds a row per
// enquiry waiting for a slot, lapsing unless its process refreshes it, so that holders can see who
// else wants a share. See src/connectors/name-enquiry-slots.ts.
import { sqlMigration } from './sql-migration.ts';

export const Migration0031BatchBounds = sqlMigration('0031-batch-bounds', [
  `create index transfer_batches_open_idx on transfer_batches (tenant_id) where status = 'processing'`,
  // The items a tenant had admitted over the last minute, per mode (BULK_ITEMS_PER_MINUTE).
  'create index transfer_batches_admitted_idx on transfer_batches (tenant_id, mode, created_at)',
  `
      create table name_enquiry_slots (
        connector text not null,
        slot integer not null check (slot >= 0),
        tenant_id text,
        holder uuid,
        expires_at timestamptz,
        primary key (connector, slot),
        constraint name_enquiry_slots_taken check ((holder is null) = (expires_at is null))
      )
  `,
  `
      create table name_enquiry_waiters (
        id uuid primary key,
        connector text not null,
        tenant_id text not null,
        expires_at timestamptz not null
      )
  `,
  'create index name_enquiry_waiters_connector_idx on name_enquiry_waiters (connector, expires_at)',
]);
