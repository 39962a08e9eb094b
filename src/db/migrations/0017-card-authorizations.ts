// Card authorizations (decisions §11): the card processor asks about each purchase and the gateway
// decides at once. One row per processor authorization id, written with the decision; an approval
// holds the amount in the card's hold account (`card-hold:<card_id>`) until the processor clears
// it (to the platform's `card_settlement` account) or reverses it. A reversal that arrives for an
// authorization not decided yet (the processor timed out while the decision was still running)
// leaves a void, so that decision declines instead of holding money nobody will release.
// Fundings say what caused them. A transaction may set gateway.quiet_events to keep its events'
// notification back (a card decision: PostgreSQL serialises the commits of every transaction that
// notifies, which costs the processor's 2 s budget far more than a fan-out by the 200 ms poll).
import { EVENTS_CHANNEL } from './0011-event-notify.ts';
import { CREATED_AT, TENANT_ID, TIMESTAMPS } from './columns.ts';
import { sqlMigration } from './sql-migration.ts';

export const Migration0017CardAuthorizations = sqlMigration('0017-card-authorizations', [
  `
      create table card_authorizations (
        id text primary key,
        ${TENANT_ID},
        card_id uuid not null references cards (id),
        amount_minor bigint not null check (amount_minor > 0),
        currency char(3) not null,
        merchant_name text not null,
        merchant_category text not null,
        channel text not null check (channel in ('pos', 'web', 'atm')),
        decision text not null check (decision in ('approved', 'declined')),
        reason text,
        status text not null check (status in ('pending', 'cleared', 'reversed', 'declined')),
        cleared_minor bigint not null default 0 check (cleared_minor >= 0 and cleared_minor <= amount_minor),
        jit_funded_minor bigint not null default 0 check (jit_funded_minor >= 0),
        ${TIMESTAMPS},
        check ((decision = 'declined') = (status = 'declined'))
      )`,
  'create index card_authorizations_card_idx on card_authorizations (card_id, created_at desc, id desc)',
  // The processor names its card by its reference: each decision finds and locks the card by it.
  'create unique index cards_processor_reference_idx on cards (processor_reference)',
  `
      create table card_authorization_voids (
        id text primary key,
        ${CREATED_AT}
      )`,
  `insert into ledger_accounts (id, tenant_id, code, currency, allow_negative)
     values (gen_random_uuid(), null, 'card_settlement', 'NGN', false)`,
  `
      create or replace function notify_gateway_events() returns trigger language plpgsql as $$
      begin
        if coalesce(current_setting('gateway.quiet_events', true), '') <> 'on' then
          perform pg_notify('${EVENTS_CHANNEL}', '');
        end if;
        return null;
      end $$`,
  `alter table card_fundings add column source text not null default 'api'
     check (source in ('api', 'jit', 'auto_reload'))`,
]);
