// A card's durable policy (decisions §11): JIT funding from the wallet (off by default), security
// settings applied at authorization (limits, channels, blocked merchant categories) and
// auto-reload. Unlike lock, these are settings a tenant replaces whole, not operations.
import { sqlMigration } from './sql-migration.ts';

export const Migration0016CardPolicies = sqlMigration('0016-card-policies', [
  'alter table cards add column jit_funding boolean not null default false',
  'alter table cards add column per_transaction_limit_minor bigint check (per_transaction_limit_minor > 0)',
  'alter table cards add column daily_limit_minor bigint check (daily_limit_minor > 0)',
  'alter table cards add column channel_pos boolean not null default true',
  'alter table cards add column channel_web boolean not null default true',
  'alter table cards add column channel_atm boolean not null default true',
  "alter table cards add column blocked_merchant_categories text[] not null default '{}'",
  'alter table cards add column auto_reload_enabled boolean not null default false',
  'alter table cards add column auto_reload_threshold_minor bigint not null default 0 check (auto_reload_threshold_minor >= 0)',
  'alter table cards add column auto_reload_amount_minor bigint check (auto_reload_amount_minor > 0)',
]);
