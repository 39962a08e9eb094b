// Operator commands for tenants and their keys (`tenant …`, `key …`), and how a command finds the
// tenant mode that --tenant and --live name.
import type { EntityManager } from '@mikro-orm/postgresql';
import type { OperatorCommand } from '../admin/command.ts';
import { UsageError } from '../admin/errors.ts';
import { type Flags, atMost, duration, flag, kobo, uuid } from '../admin/flags.ts';
import { Tenant } from './entities.ts';
import { type AuditActor, recordAuditEntry } from '../audit/log.ts';
import { MAX_ALLOWED_IPS, normaliseIpEntry } from '../http/ip-allow-list.ts';
import { isScope } from '../http/scopes.ts';
import { fundWallet, walletView } from '../wallet/service.ts';
import {
  MAX_ROLL_OVERLAP_MS,
  TenantError,
  createTenant,
  issueKey,
  listKeys,
  listTenants,
  revokeKey,
  rollKeys,
  tenantMode,
  updateTenant,
} from './tenants.ts';

/** --tenant: a tenant's id; with --live, commands that take it act on the tenant's live mode. */
export const TENANT = flag.required('ID', "the tenant's id (tenant_id)");
const tenantId = uuid('a tenant id');
const DAILY_LIMIT = 'the most its transfers may total in a Lagos day, in kobo';
const keyMode = (flags: Flags) => (flags.on('live') ? 'live' : 'test');

/**
 * The tenant's mode that --live picks (its test mode without it); the live one only if it exists.
 * A live mode's own id (as `cards holds` and `transfers show` print it) needs --live: without it the
 * command would quietly act on the tenant's test mode instead.
 */
export async function tenantModeOf(em: EntityManager, flags: Flags) {
  const id = flags.get('tenant', tenantId);
  const given = await em.findOne(Tenant, { id });
  if (!given) throw new TenantError('unknown_tenant', `no tenant ${id}`);
  if (given.mode === 'live' && !flags.on('live')) {
    throw new UsageError(`${id} is the live mode of tenant ${given.ownerId}: add --live`);
  }
  const row = await tenantMode(em, id, keyMode(flags));
  if (row) return row;
  throw new TenantError(
    'no_live_mode',
    `tenant ${id} has no live mode yet: issue it a live key first (key create --tenant ${id} --live)`,
  );
}

/** The operator as admin_audit records them: the actor of the tenant's audit entries the CLI writes. */
const operatorActor = (flags: Flags): AuditActor => ({
  type: 'operator',
  id: flags.operator(),
  name: flags.operator(),
});

/** --scopes: a comma list of scopes (src/http/scopes.ts). */
function scopesOf(raw: string): string[] {
  const scopes = [...new Set(raw.split(',').map((scope) => scope.trim()))];
  const unknown = scopes.filter((scope) => !isScope(scope));
  if (unknown.length || scopes.length === 0) {
    throw new UsageError(`--scopes: unknown scope ${unknown.join(', ') || "''"}`);
  }
  return scopes;
}

/** --allowed-ips: a comma list of at most 20 addresses or CIDR ranges, normalised. */
function allowedIpsOf(raw: string): string[] {
  const entries = raw
    .split(',')
    .map((entry) => entry.trim())
    .filter(Boolean);
  if (entries.length > MAX_ALLOWED_IPS) throw new UsageError(`--allowed-ips: at most ${MAX_ALLOWED_IPS} entries`);
  return [
    ...new Set(
      entries.map((entry) => {
        const normalised = normaliseIpEntry(entry);
        if (normalised === undefined) throw new UsageError(`--allowed-ips: '${entry}' is not an address or CIDR range`);
        return normalised;
      }),
    ),
  ];
}

export const tenantCommands: OperatorCommand[] = [
  {
    name: 'tenant create',
    description: 'A new tenant with its ledger accounts and a first key (printed once)',
    mutates: true,
    flags: {
      name: flag.required('N', 'its name (at most 200 characters)'),
      'wallet-minor': flag.optional('N', "kobo to fund the wallet of the first key's mode with, as wallet fund does"),
      'daily-limit-minor': flag.optional('N', `${DAILY_LIMIT} (else 500000000: ₦5,000,000)`),
      feature: flag.repeated('F', 'a feature to switch on (identity_customers)'),
      live: flag.boolean('the first key is live (sk_live_…), which opens the live mode with its own wallet'),
    },
    async run(em, flags) {
      const name = flags.get('name', atMost(200));
      const walletMinor = flags.optional('wallet-minor', kobo({ min: 0 }));
      const dailyLimit = flags.optional('daily-limit-minor', kobo({ min: 0 }));
      const { tenant, key } = await createTenant(em, {
        name,
        features: flags.list('feature'),
        ...(dailyLimit !== undefined ? { dailyTransferLimitMinor: dailyLimit } : {}),
        mode: keyMode(flags),
      });
      // The wallet of the first key's mode (an audited funding, like wallet fund).
      if (walletMinor) await fundWallet(em, key.mode_tenant_id, walletMinor, 'initial');
      return {
        ...tenant,
        api_key: key.api_key,
        key_id: key.key_id,
        key_prefix: key.key_prefix,
        mode: key.mode,
        wallet: await walletView(em, key.mode_tenant_id),
      };
    },
  },
  {
    name: 'tenant update',
    description: "Changes a tenant's daily transfer limit and feature flags (both modes alike)",
    mutates: true,
    flags: {
      tenant: TENANT,
      'daily-limit-minor': flag.optional('N', `the new daily limit: ${DAILY_LIMIT}`),
      feature: flag.repeated('F', 'a feature to switch on'),
      'no-feature': flag.repeated('F', 'a feature to switch off'),
    },
    async run(em, flags) {
      const id = flags.get('tenant', tenantId);
      const dailyLimit = flags.optional('daily-limit-minor', kobo({ min: 0 }));
      const enable = flags.list('feature');
      const disable = flags.list('no-feature');
      if (dailyLimit === undefined && !enable.length && !disable.length) {
        throw new UsageError('nothing to update: give --daily-limit-minor, --feature or --no-feature');
      }
      return updateTenant(em, id, {
        enable,
        disable,
        ...(dailyLimit !== undefined ? { dailyTransferLimitMinor: dailyLimit } : {}),
      });
    },
  },
  {
    name: 'tenant list',
    description: 'Every tenant with its limit, features, live_tenant_id and active keys of both modes',
    flags: {},
    async run(em) {
      const tenants = await listTenants(em);
      return { count: tenants.length, tenants };
    },
  },
  {
    name: 'key create',
    description: 'Another key for the tenant, printed once',
    mutates: true,
    flags: {
      tenant: TENANT,
      live: flag.boolean("a live key (the first live key opens the tenant's live mode, with its own wallet)"),
      name: flag.optional('N', 'its name (at most 100 characters)', 'default'),
      scopes: flag.optional('S', 'its scopes, a comma list (read, transfers:write, …, keys:write, *)', '*'),
      'allowed-ips': flag.optional('IPS', 'addresses or CIDR ranges it may be used from, a comma list (at most 20)'),
    },
    async run(em, flags) {
      const name = flags.get('name', atMost(100)).trim();
      if (!name) throw new UsageError('--name must not be empty');
      const scopes = flags.get('scopes', scopesOf);
      const allowedIps = flags.optional('allowed-ips', allowedIpsOf) ?? [];
      return em.transactional(async (tx) => {
        const key = await issueKey(tx, flags.get('tenant', tenantId), keyMode(flags), { name, scopes, allowedIps });
        await recordAuditEntry(tx, {
          tenantId: key.mode_tenant_id,
          action: 'api_key.created',
          actor: operatorActor(flags),
          target: { type: 'api_key', id: key.key_id },
          ip: null,
          requestId: null,
          details: { name, prefix: key.key_prefix, scopes, allowed_ips: allowedIps, expires_at: null },
        });
        return key;
      });
    },
  },
  {
    name: 'key revoke',
    description: 'Revokes the one active key that starts with the prefix',
    mutates: true,
    flags: { 'key-prefix': flag.required('P', "the key's first characters (at least 12; key_prefix shows 16)") },
    async run(em, flags) {
      return em.transactional(async (tx) => {
        const revoked = await revokeKey(tx, flags.get('key-prefix'));
        await recordAuditEntry(tx, {
          tenantId: revoked.mode_tenant_id,
          action: 'api_key.revoked',
          actor: operatorActor(flags),
          target: { type: 'api_key', id: revoked.key_id },
          ip: null,
          requestId: null,
          details: { name: revoked.name, prefix: revoked.key_prefix },
        });
        return revoked;
      });
    },
  },
  {
    name: 'key roll',
    description: "A new key; the tenant's other keys of that mode work until the overlap ends, then answer 401",
    mutates: true,
    flags: {
      tenant: TENANT,
      'expire-old-in': flag.optional('D', 'how long the old keys keep working: 0s to 30d', '24h'),
      live: flag.boolean('roll the live keys (else the test keys)'),
    },
    async run(em, flags) {
      const id = flags.get('tenant', tenantId);
      const overlapMs = flags.get('expire-old-in', duration);
      if (overlapMs > MAX_ROLL_OVERLAP_MS) {
        throw new UsageError(`--expire-old-in must be at most 30d, got '${flags.get('expire-old-in')}'`);
      }
      return em.transactional(async (tx) => {
        const rolled = await rollKeys(tx, id, keyMode(flags), overlapMs);
        // One entry: the new key, and the keys it replaces with when each stops working.
        await recordAuditEntry(tx, {
          tenantId: rolled.key.mode_tenant_id,
          action: 'api_key.rolled',
          actor: operatorActor(flags),
          target: { type: 'api_key', id: rolled.key.key_id },
          ip: null,
          requestId: null,
          details: { prefix: rolled.key.key_prefix, expire_old_in_ms: overlapMs, expiring: rolled.expiring },
        });
        return { ...rolled.key, expiring: rolled.expiring };
      });
    },
  },
  {
    name: 'key list',
    description: "A tenant's keys of both modes by prefix, mode, created, revoked and expiry (never the keys)",
    flags: { tenant: TENANT },
    async run(em, flags) {
      const id = flags.get('tenant', tenantId);
      return { tenant_id: id, keys: await listKeys(em, id) };
    },
  },
];
