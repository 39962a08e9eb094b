// Transfers (the read projection the API serves, kept by the transfer workflow's activities),
// the tenant event log, stored Idempotency-Key responses, and the audit of operator resolutions.
import { CREATED_AT, ID, TENANT_ID, TENANT_OWNED, TIMESTAMPS } from './columns.ts';
import { sqlMigration } from './sql-migration.ts';

export const Migration0003Transfers = sqlMigration('0003-transfers', [
  `
      create table transfers (
        ${TENANT_OWNED},
        reference text not null,
        request_hash text not null,
        amount_minor bigint not null check (amount_minor between 100 and 1000000000),
        fee_minor bigint not null check (fee_minor >= 0),
        currency char(3) not null default 'NGN',
        recipient_account text not null,
        recipient_bank_code text not null,
        recipient_bank text not null,
        recipient_name text not null,
        narration text not null,
        metadata jsonb not null default '{}',
        status text not null check (status in ('pending', 'processing', 'completed', 'failed')),
        name_enquiry_session_id text,
        session_id text,
        provider_code text,
        failure_reason text,
        stuck_since timestamptz,
        ${TIMESTAMPS},
        completed_at timestamptz,
        constraint transfers_tenant_reference unique (tenant_id, reference)
      )`,
  'create index transfers_tenant_created_idx on transfers (tenant_id, created_at desc, id desc)',
  'create index transfers_tenant_status_idx on transfers (tenant_id, status, created_at desc)',
  `
      create table events (
        ${TENANT_OWNED},
        type text not null,
        source_key text not null unique,
        payload jsonb not null,
        ${CREATED_AT}
      )`,
  'create index events_tenant_created_idx on events (tenant_id, created_at desc)',
  `
      create table idempotency_keys (
        ${TENANT_ID},
        key text not null,
        method text not null,
        path text not null,
        request_hash text not null,
        state text not null check (state in ('processing', 'completed')),
        response_status integer,
        response_body jsonb,
        ${CREATED_AT},
        expires_at timestamptz not null,
        primary key (tenant_id, key)
      )`,
  `
      create table transfer_resolutions (
        ${ID},
        transfer_id uuid not null references transfers (id),
        outcome text not null check (outcome in ('successful', 'failed')),
        note text not null,
        operator text not null,
        ${CREATED_AT}
      )`,
]);
