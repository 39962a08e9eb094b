// The tenant console (decisions §22): the tenant's people, their invitations, their sessions and
// the failed sign-ins that limit guessing. A person belongs to one tenant (`tenant_id`, the tenant's
// own row: the test mode's id) and signs in with an email that no other active person has. A
// password is stored as scrypt's output with its parameters and salt; a TOTP secret sealed with the
// deployment's encryption key. An invitation and a session are stored only as the SHA-256 of their
// secret, so that neither a database read nor a backup gives a working link or cookie.
import { sqlMigration } from './sql-migration.ts';

export const Migration0036Console = sqlMigration('0036-console', [
  `
      create table console_users (
        id uuid primary key,
        tenant_id uuid not null references tenants (id),
        email text not null,
        role text not null check (role in ('owner', 'developer', 'approver', 'viewer')),
        password_hash text not null,
        totp_secret text,
        totp_last_counter bigint,
        failed_attempts integer not null default 0,
        locked_until timestamptz,
        last_signed_in_at timestamptz,
        created_at timestamptz not null default now(),
        updated_at timestamptz not null default now(),
        removed_at timestamptz
      )`,
  'create unique index console_users_email_idx on console_users (lower(email)) where removed_at is null',
  'create index console_users_tenant_idx on console_users (tenant_id, created_at)',
  `
      create table console_invitations (
        id uuid primary key,
        tenant_id uuid not null references tenants (id),
        email text not null,
        role text not null check (role in ('owner', 'developer', 'approver', 'viewer')),
        token_hash text not null unique,
        invited_by text not null,
        totp_secret text,
        expires_at timestamptz not null,
        accepted_at timestamptz,
        created_at timestamptz not null default now()
      )`,
  'create index console_invitations_tenant_idx on console_invitations (tenant_id, created_at desc)',
  `
      create table console_sessions (
        id uuid primary key,
        token_hash text not null unique,
        user_id uuid not null references console_users (id),
        csrf_token text not null,
        mode text not null default 'test' check (mode in ('test', 'live')),
        ip text,
        user_agent text,
        created_at timestamptz not null default now(),
        last_seen_at timestamptz not null default now(),
        revoked_at timestamptz
      )`,
  'create index console_sessions_user_idx on console_sessions (user_id) where revoked_at is null',
  `
      create table console_sign_in_failures (
        id bigserial primary key,
        ip text not null,
        email text not null,
        at timestamptz not null default now()
      )`,
  'create index console_sign_in_failures_ip_idx on console_sign_in_failures (ip, at)',
]);
