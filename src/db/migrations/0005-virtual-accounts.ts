// Virtual accounts (with their running inbound totals), the inbound credits applied to them (one
// row per provider transaction reference: what makes a credit count once), and identity customers.
import { CREATED_AT, ID, TENANT_OWNED, TIMESTAMPS } from './columns.ts';
import { sqlMigration } from './sql-migration.ts';

export const Migration0005VirtualAccounts = sqlMigration('0005-virtual-accounts', [
  `
      create table virtual_accounts (
        ${TENANT_OWNED},
        customer_id text not null,
        account_number text not null,
        account_name text not null,
        bank_code text not null,
        bank_name text not null,
        provider text not null,
        provider_reference text not null,
        status text not null check (status in ('active', 'frozen', 'closed', 'expired')),
        account_type text not null,
        total_received_minor bigint not null default 0 check (total_received_minor >= 0),
        transaction_count integer not null default 0 check (transaction_count >= 0),
        metadata jsonb,
        request_id text,
        expires_at timestamptz,
        closure_reason text,
        closed_at timestamptz,
        ${TIMESTAMPS},
        constraint virtual_accounts_provider_number unique (provider, account_number),
        constraint virtual_accounts_request unique (tenant_id, request_id)
      )`,
  'create index virtual_accounts_tenant_idx on virtual_accounts (tenant_id, created_at desc)',
  `
      create table inbound_credits (
        ${ID},
        provider text not null,
        transaction_reference text not null,
        virtual_account_id uuid references virtual_accounts (id),
        amount_minor bigint not null check (amount_minor > 0),
        sender_name text,
        status text not null check (status in ('applied', 'refused')),
        refusal_reason text,
        ${CREATED_AT},
        constraint inbound_credits_reference unique (provider, transaction_reference)
      )`,
  `
      create table identity_customers (
        ${TENANT_OWNED},
        external_reference text not null,
        first_name text not null,
        last_name text not null,
        email text,
        phone text,
        country char(2) not null,
        metadata jsonb,
        kyc_status text not null default 'unverified',
        ${TIMESTAMPS},
        constraint identity_customers_reference unique (tenant_id, external_reference)
      )`,
]);
