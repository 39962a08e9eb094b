// Cards, the operations their workflows apply (lock, unlock, fund), and fundings. A card's money
// is a ledger account of its own (`card:<id>`), opened with the card.
import { CREATED_AT, ID, TENANT_OWNED, TIMESTAMPS } from './columns.ts';
import { sqlMigration } from './sql-migration.ts';

export const Migration0006Cards = sqlMigration('0006-cards', [
  `
      create table cards (
        ${TENANT_OWNED},
        customer_id text not null,
        status text not null check (status in ('active', 'locked')),
        last4 text not null,
        currency char(3) not null default 'NGN',
        metadata jsonb,
        processor_reference text not null,
        ${TIMESTAMPS}
      )`,
  'create index cards_tenant_idx on cards (tenant_id, created_at desc)',
  `
      create table card_operations (
        ${ID},
        card_id uuid not null references cards (id),
        action text not null check (action in ('lock', 'unlock', 'fund')),
        status text not null check (status in ('accepted', 'applied', 'unchanged', 'failed')),
        idempotency_key text,
        reason text,
        ${CREATED_AT},
        completed_at timestamptz,
        constraint card_operations_key unique (card_id, action, idempotency_key)
      )`,
  `
      create table card_fundings (
        ${ID},
        card_id uuid not null references cards (id),
        operation_id uuid not null references card_operations (id),
        amount_minor bigint not null check (amount_minor > 0),
        currency char(3) not null,
        status text not null check (status in ('pending', 'succeeded', 'failed')),
        transaction_reference text,
        idempotency_key text,
        failure_reason text,
        ${CREATED_AT},
        completed_at timestamptz,
        constraint card_fundings_key unique (card_id, idempotency_key),
        constraint card_fundings_reference unique (card_id, transaction_reference)
      )`,
  'create index card_fundings_card_idx on card_fundings (card_id, created_at desc)',
]);
