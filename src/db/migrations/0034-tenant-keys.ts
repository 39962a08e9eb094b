// Keys the tenant manages (decisions §19) and the transfer policy (§20): a key has a name, scopes
// and an allow-list of addresses, fixed when it is made, and when it was last used. Its secrets
// move to a table of their own, so that rolling a key keeps its id while its old secret works until
// the overlap ends (`api_key_secrets.expires_at`); a key's own `expires_at` (an operator's
// `key roll`, or the expiry it was made with) still ends every secret of it. Keys made before this
// are named 'default' and hold every scope ('*'), as they could do everything. The audit log records
// what was done to a tenant mode's keys, policy and approvals; the transfer policy is one row per
// tenant mode, all off when there is none.
import { sqlMigration } from './sql-migration.ts';

export const Migration0034TenantKeys = sqlMigration('0034-tenant-keys', [
  `alter table api_keys
     add column name text not null default 'default',
     add column scopes text[] not null default '{*}',
     add column allowed_ips text[] not null default '{}',
     add column last_used_at timestamptz`,
  'alter table api_keys alter column name drop default, alter column scopes drop default',
  `
      create table api_key_secrets (
        key_hash text primary key,
        key_id uuid not null references api_keys (id),
        prefix text not null,
        created_at timestamptz not null default now(),
        expires_at timestamptz
      )`,
  'create index api_key_secrets_key_idx on api_key_secrets (key_id)',
  `insert into api_key_secrets (key_hash, key_id, prefix, created_at)
     select key_hash, id, prefix, created_at from api_keys`,
  'alter table api_keys drop column key_hash',
  `
      create table audit_log (
        id uuid primary key,
        tenant_id uuid not null references tenants (id),
        action text not null,
        actor_type text not null check (actor_type in ('key', 'user', 'operator')),
        actor_id text not null,
        actor_name text not null,
        target_type text not null,
        target_id text not null,
        ip text,
        request_id text,
        details jsonb not null default '{}',
        created_at timestamptz not null default now()
      )`,
  'create index audit_log_tenant_created_idx on audit_log (tenant_id, created_at desc, id desc)',
  `
      create table transfer_policies (
        tenant_id uuid primary key references tenants (id),
        above_minor bigint check (above_minor >= 0),
        new_recipient boolean not null default false,
        every_transfer boolean not null default false,
        approval_expires_in_hours integer not null default 24 check (approval_expires_in_hours between 1 and 72),
        saved_recipients_only boolean not null default false,
        live_keys_need_ip_allow_list boolean not null default false,
        updated_at timestamptz not null default now()
      )`,
]);
