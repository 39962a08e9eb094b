// Saved recipients (decisions §20): a tenant's bank accounts, per key mode (the tenant row of the
// mode), each once per bank and account, under the name its bank gave when it was saved.
import { sqlMigration } from './sql-migration.ts';

export const Migration0032Recipients = sqlMigration('0032-recipients', [
  `
      create table recipients (
        id uuid primary key,
        tenant_id uuid not null references tenants (id),
        bank_code text not null,
        bank_name text not null,
        account_number text not null,
        account_name text not null,
        label text,
        metadata jsonb,
        created_at timestamptz not null default now(),
        constraint recipients_account unique (tenant_id, bank_code, account_number)
      )
  `,
  'create index recipients_tenant_created_idx on recipients (tenant_id, created_at desc, id desc)',
  `create index transfers_paid_account_idx on transfers (tenant_id, recipient_bank_code, recipient_account, completed_at)
     where status = 'completed'`,
]);
