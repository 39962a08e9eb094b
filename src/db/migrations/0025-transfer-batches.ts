// Bulk transfers (decisions §14). A batch is the tenant's request as it came (one row, unique per
// tenant by batch_reference) and its items in index order. An item is `queued` until its batch
// workflow decides it: `refused` with a code, or `accepted` with the transfer it became, whose own
// row then says how it ends. An item keeps what its name enquiry answered until it is decided.
// An atomic batch reserves every amount and fee in one journal entry
// (`transfer-batch:<id>:reserve`) when it is accepted; its items' transfers draw on it instead of
// reserving each, and an item refused after that gets its share back (`…:item:<index>:release`).
import { CREATED_AT, TENANT_OWNED } from './columns.ts';
import { sqlMigration } from './sql-migration.ts';

export const Migration0025TransferBatches = sqlMigration('0025-transfer-batches', [
  `
      create table transfer_batches (
        ${TENANT_OWNED},
        batch_reference text not null,
        request_hash text not null,
        atomic boolean not null,
        mode text not null check (mode in ('test', 'live')),
        total_count integer not null check (total_count between 1 and 1000),
        total_amount_minor bigint not null check (total_amount_minor > 0),
        total_fee_minor bigint not null check (total_fee_minor >= 0),
        metadata jsonb not null default '{}',
        status text not null default 'processing' check (status in ('processing', 'completed')),
        ${CREATED_AT},
        completed_at timestamptz,
        constraint transfer_batches_tenant_reference unique (tenant_id, batch_reference)
      )`,
  'create index transfer_batches_tenant_created_idx on transfer_batches (tenant_id, created_at desc, id desc)',
  `
      create table transfer_batch_items (
        batch_id uuid not null references transfer_batches (id),
        index integer not null check (index between 0 and 999),
        reference text not null,
        amount_minor bigint not null check (amount_minor between 100 and 1000000000),
        fee_minor bigint not null check (fee_minor >= 0),
        recipient_account text not null,
        recipient_bank_code text not null,
        recipient_bank text not null,
        narration text not null,
        metadata jsonb not null default '{}',
        request_hash text not null,
        status text not null default 'queued' check (status in ('queued', 'refused', 'accepted')),
        recipient_name text,
        name_enquiry_session_id text,
        connector text,
        transfer_id uuid unique,
        error_code text,
        error_message text,
        decided_at timestamptz,
        primary key (batch_id, index),
        constraint transfer_batch_items_reference unique (batch_id, reference),
        constraint transfer_batch_items_decided check (
          (status = 'queued' and transfer_id is null and error_code is null)
          or (status = 'refused' and transfer_id is null and error_code is not null)
          or (status = 'accepted' and transfer_id is not null and error_code is null))
      )`,
  // The daily limit counts an atomic batch's items that are not transfers yet (src/transfers/store.ts).
  `create index transfer_batch_items_queued_idx on transfer_batch_items (batch_id) where status = 'queued'`,
]);
