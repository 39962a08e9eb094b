// Tenants, API keys and the double-entry journal. Money columns are bigint kobo. The database
// itself refuses what must never happen: a non-negative account going below zero, a journal
// entry whose postings do not sum to zero (checked at commit), and edits to posted history.
import { CREATED_AT, ID, TENANT_OWNED, TIMESTAMPS } from './columns.ts';
import { sqlMigration } from './sql-migration.ts';

export const Migration0001Platform = sqlMigration('0001-platform', [
  `
      create table tenants (
        ${ID},
        name text not null check (length(name) between 1 and 200),
        features text[] not null default '{}',
        daily_transfer_limit_minor bigint not null default 500000000 check (daily_transfer_limit_minor >= 0),
        allowed_account_types text[] not null default '{standard,dedicated,temporary}',
        ${TIMESTAMPS}
      )`,
  `
      create table api_keys (
        ${TENANT_OWNED},
        mode text not null check (mode in ('test', 'live')),
        prefix text not null,
        key_hash text not null unique,
        ${CREATED_AT},
        revoked_at timestamptz
      )`,
  'create index api_keys_prefix_idx on api_keys (prefix)',
  'create index api_keys_tenant_idx on api_keys (tenant_id)',
  `
      create table ledger_accounts (
        ${ID},
        tenant_id uuid references tenants (id),
        code text not null,
        currency char(3) not null,
        balance_minor bigint not null default 0,
        allow_negative boolean not null default false,
        ${TIMESTAMPS},
        constraint ledger_accounts_non_negative check (allow_negative or balance_minor >= 0),
        constraint ledger_accounts_owner_code unique nulls not distinct (tenant_id, code, currency)
      )`,
  `
      create table journal_entries (
        ${ID},
        tenant_id uuid references tenants (id),
        kind text not null,
        idempotency_key text not null unique,
        description text,
        metadata jsonb,
        ${CREATED_AT}
      )`,
  'create index journal_entries_tenant_idx on journal_entries (tenant_id, created_at)',
  `
      create table postings (
        id bigint generated always as identity primary key,
        entry_id uuid not null references journal_entries (id),
        account_id uuid not null references ledger_accounts (id),
        amount_minor bigint not null check (amount_minor <> 0),
        balance_after_minor bigint not null,
        ${CREATED_AT}
      )`,
  'create index postings_account_idx on postings (account_id, id)',
  'create index postings_entry_idx on postings (entry_id)',
  // An entry must balance when its transaction commits: deferred, so postings can be inserted
  // one by one inside the transaction.
  `
      create function journal_entry_must_balance() returns trigger language plpgsql as $$
      declare
        total numeric;
        lines integer;
      begin
        select coalesce(sum(amount_minor), 0), count(*) into total, lines
          from postings where entry_id = new.entry_id;
        if total <> 0 or lines < 2 then
          raise exception 'journal entry % does not balance (sum %, % postings)', new.entry_id, total, lines
            using errcode = 'check_violation';
        end if;
        return null;
      end $$`,
  `
      create constraint trigger postings_balanced after insert on postings
        deferrable initially deferred for each row execute function journal_entry_must_balance()`,
  `
      create function ledger_history_is_append_only() returns trigger language plpgsql as $$
      begin
        raise exception '% is append-only', tg_table_name using errcode = 'insufficient_privilege';
      end $$`,
  `
      create trigger postings_append_only before update or delete on postings
        for each row execute function ledger_history_is_append_only()`,
  `
      create trigger journal_entries_append_only before update or delete on journal_entries
        for each row execute function ledger_history_is_append_only()`,
  // Platform-wide accounts (no tenant). external_funding is where operator wallet top-ups come
  // from; it goes negative by design, as the mirror of money held for tenants.
  `
      insert into ledger_accounts (id, tenant_id, code, currency, allow_negative) values
        (gen_random_uuid(), null, 'external_funding', 'NGN', true),
        (gen_random_uuid(), null, 'bank_settlement', 'NGN', false),
        (gen_random_uuid(), null, 'fee_revenue', 'NGN', false),
        (gen_random_uuid(), null, 'inbound_clearing', 'NGN', true)`,
]);
