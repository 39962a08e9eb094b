// Test and live are separate worlds, even inside one tenant (decisions §16). A tenant's row is its
// test mode; its live mode is a row of its own (`mode = 'live'`, `owner_id` the tenant's row),
// made when its first live key is issued. Every tenant-scoped record already belongs to one row by
// its `tenant_id` — wallet, ledger accounts, transfers, virtual accounts, cards, customers,
// endpoints, events, deliveries, idempotency keys — so it belongs to one mode, and every query
// scoped by tenant_id is scoped by mode too. Keys point at their mode's row, and the database
// refuses a key whose mode is not its row's. Existing rows stay test (they are the tenants' own
// rows); a tenant that already had live keys gets its live row, with an empty wallet, and its live
// keys and the webhook endpoints they registered (endpoints record their key's mode) move there.
import { sqlMigration } from './sql-migration.ts';

export const Migration0020Modes = sqlMigration('0020-modes', [
  `alter table tenants add column mode text not null default 'test' check (mode in ('test', 'live'))`,
  'alter table tenants add column owner_id uuid references tenants (id)',
  'update tenants set owner_id = id',
  'alter table tenants alter column owner_id set not null',
  // The test mode is the tenant's own row; a live mode belongs to a tenant's row, at most one each.
  `alter table tenants add constraint tenants_mode_owner check ((mode = 'test') = (owner_id = id))`,
  'create unique index tenants_owner_mode_idx on tenants (owner_id, mode)',
  'alter table tenants add constraint tenants_id_mode unique (id, mode)',
  `insert into tenants (id, name, features, daily_transfer_limit_minor, allowed_account_types, mode, owner_id)
     select gen_random_uuid(), t.name, t.features, t.daily_transfer_limit_minor, t.allowed_account_types, 'live', t.id
       from tenants t
      where exists (select 1 from api_keys k where k.tenant_id = t.id and k.mode = 'live')`,
  `insert into ledger_accounts (id, tenant_id, code, currency, allow_negative)
     select gen_random_uuid(), t.id, c.code, 'NGN', false
       from tenants t cross join (values ('wallet'), ('in_flight')) as c (code)
      where t.mode = 'live'
     on conflict on constraint ledger_accounts_owner_code do nothing`,
  `update api_keys k set tenant_id = t.id from tenants t
    where k.mode = 'live' and t.owner_id = k.tenant_id and t.mode = 'live'`,
  // Webhook endpoints record the mode of the key that registered them: a live key's go to the live
  // mode, so that a tenant's production receiver is never sent sandbox events.
  `update webhook_endpoints e set tenant_id = t.id, updated_at = now() from tenants t
    where e.mode = 'live' and t.owner_id = e.tenant_id and t.mode = 'live'`,
  // A key works only in its own mode's world.
  `alter table api_keys add constraint api_keys_tenant_mode foreign key (tenant_id, mode) references tenants (id, mode)`,
]);
