// Tenants and their keys: what the operator CLI manages and what the auth plugin resolves.
// A tenant is created together with its ledger accounts and first key, in one transaction.
//
// Test and live are separate worlds (decisions §16, migration 0020): the tenant's own row is its
// test mode, and its live mode is a row of its own, made with its ledger accounts when its first
// live key is issued. Keys point at their mode's row, so `tenantId` as the auth hook resolves it
// (and as every store scopes by) is the id of the key's mode: a live key sees and moves only live
// objects. Settings (name, features, daily limit, account types) are the tenant's, written to
// both rows together.
import { randomUUID } from 'node:crypto';
import { type InferEntity } from '@mikro-orm/core';
import type { EntityManager } from '@mikro-orm/postgresql';
import { Refusal } from '../lib/refusal.ts';
import { ApiKey, ApiKeySecret, Tenant } from './entities.ts';
import type { KeyResolution } from '../http/auth.ts';
import { type Page, type Window, pageOf } from '../db/pages.ts';
import { executeNumbered } from '../db/numbered-sql.ts';
import { openTenantAccounts } from '../ledger/ledger.ts';
import { type KeyMode, generateApiKey, hashApiKey, keyPrefix, parseApiKey } from './api-keys.ts';

export const DEFAULT_DAILY_LIMIT_MINOR = 500_000_000; // ₦5,000,000
export const ACCOUNT_TYPES = ['standard', 'dedicated', 'temporary'] as const;
/** Feature flags a tenant can have switched on. */
export const FEATURES = ['identity_customers'] as const;
export type Feature = (typeof FEATURES)[number];

export interface TenantView {
  tenant_id: string;
  /** The id of the tenant's live mode (what live records and workflows carry), once it has one. */
  live_tenant_id: string | null;
  name: string;
  features: string[];
  daily_transfer_limit_minor: number;
  allowed_account_types: string[];
  created_at: string;
  updated_at: string;
}

type TenantRow = InferEntity<typeof Tenant>;

export function tenantView(tenant: TenantRow, liveTenantId: string | null): TenantView {
  return {
    tenant_id: tenant.ownerId,
    live_tenant_id: liveTenantId,
    name: tenant.name,
    features: [...tenant.features].sort(),
    daily_transfer_limit_minor: tenant.dailyTransferLimitMinor,
    allowed_account_types: tenant.allowedAccountTypes,
    created_at: tenant.createdAt.toISOString(),
    updated_at: tenant.updatedAt.toISOString(),
  };
}

export interface IssuedKey {
  key_id: string;
  api_key: string;
  key_prefix: string;
  name: string;
  scopes: string[];
  allowed_ips: string[];
  mode: KeyMode;
  /** The tenant. */
  tenant_id: string;
  /** The id of the key's mode: the tenant's id for a test key, its live id for a live key. */
  mode_tenant_id: string;
}

export interface CreateTenantInput {
  name: string;
  features?: string[];
  dailyTransferLimitMinor?: number;
  allowedAccountTypes?: string[];
  mode?: KeyMode;
}

export type TenantErrorCode =
  | 'unknown_tenant'
  | 'no_live_mode'
  | 'unknown_feature'
  | 'overlap_out_of_range'
  | 'key_prefix_too_short'
  | 'unknown_key'
  | 'ambiguous_key_prefix';

/** Tenants and keys are managed by operators only: what they are refused is an operator refusal. */
export class TenantError extends Refusal<TenantErrorCode> {
  override readonly name = 'TenantError';
}

function checkFeatures(features: string[]): void {
  const unknown = features.filter((feature) => !(FEATURES as readonly string[]).includes(feature));
  if (unknown.length)
    throw new TenantError('unknown_feature', `unknown feature ${unknown.join(', ')} (known: ${FEATURES.join(', ')})`);
}

export async function createTenant(
  em: EntityManager,
  input: CreateTenantInput,
): Promise<{ tenant: TenantView; key: IssuedKey }> {
  checkFeatures(input.features ?? []);
  return em.transactional(async (tx) => {
    const id = randomUUID();
    const tenant = tx.create(Tenant, {
      id,
      ownerId: id,
      mode: 'test',
      name: input.name,
      features: [...new Set(input.features ?? [])],
      dailyTransferLimitMinor: input.dailyTransferLimitMinor ?? DEFAULT_DAILY_LIMIT_MINOR,
      allowedAccountTypes: input.allowedAccountTypes ?? [...ACCOUNT_TYPES],
    });
    await tx.flush();
    await openTenantAccounts(tx, tenant.id);
    const key = await issueKey(tx, tenant.id, input.mode ?? 'test');
    return { tenant: tenantView(tenant, key.mode === 'live' ? key.mode_tenant_id : null), key };
  });
}

/**
 * The row of a tenant's mode, given the id of the tenant or of either of its modes: the tenant's own
 * row for test; for live, its live row, which `create` makes (with its ledger accounts, settings
 * copied from the tenant) when the tenant has none yet. Null when there is no such tenant, or no
 * live mode and `create` is off.
 */
export async function tenantMode(
  em: EntityManager,
  tenantId: string,
  mode: KeyMode,
  options: { create?: boolean } = {},
): Promise<TenantRow | null> {
  const given = await em.findOne(Tenant, { id: tenantId });
  if (!given) return null;
  const owner = given.ownerId;
  const existing = await em.findOne(Tenant, { ownerId: owner, mode }, { refresh: true });
  if (existing || mode === 'test' || !options.create) return existing;
  return em.transactional(async (tx) => {
    // Under the tenant's row lock, as updateTenant takes it: the live mode copies settings that no
    // update is changing meanwhile. Two operators issuing the first live key at once make one.
    await lockTenant(tx, owner);
    await tx.execute(
      `insert into tenants (id, owner_id, mode, name, features, daily_transfer_limit_minor, allowed_account_types)
       select ?, id, 'live', name, features, daily_transfer_limit_minor, allowed_account_types from tenants where id = ?
       on conflict (owner_id, mode) do nothing`,
      [randomUUID(), owner],
    );
    const live = (await tx.findOne(Tenant, { ownerId: owner, mode: 'live' }, { refresh: true }))!;
    await openTenantAccounts(tx, live.id);
    return live;
  });
}

/** The key mode whose world the tenant row is (what every record scoped by its id belongs to). */
export async function modeOf(em: EntityManager, tenantId: string): Promise<KeyMode | undefined> {
  return (await em.findOne(Tenant, { id: tenantId }, { fields: ['mode'] }))?.mode;
}

/** The ids of a tenant's live mode, by tenant id, for the tenants that have one. */
async function liveModeIds(em: EntityManager, ownerIds: string[]): Promise<Map<string, string>> {
  if (ownerIds.length === 0) return new Map();
  const rows = await em.find(Tenant, { ownerId: { $in: ownerIds }, mode: 'live' });
  return new Map(rows.map((row) => [row.ownerId, row.id]));
}

/** Every tenant, oldest first, with how many of its keys (of both modes) are not revoked (the operator's list). */
export async function listTenants(em: EntityManager): Promise<(TenantView & { active_keys: number })[]> {
  const tenants = await em.find(Tenant, { mode: 'test' }, { orderBy: { createdAt: 'asc', id: 'asc' } });
  const live = await liveModeIds(
    em,
    tenants.map((tenant) => tenant.id),
  );
  const active = await em.find(ApiKey, { revokedAt: null }, { populate: ['tenant'] });
  return tenants.map((tenant) => ({
    ...tenantView(tenant, live.get(tenant.id) ?? null),
    active_keys: active.filter((key) => key.tenant.ownerId === tenant.id).length,
  }));
}

/** A tenant's keys of both modes by prefix, oldest first: never the keys, which are not stored. */
export async function listKeys(em: EntityManager, tenantId: string) {
  const tenant = await em.findOne(Tenant, { id: tenantId });
  if (!tenant) throw new TenantError('unknown_tenant', `no tenant ${tenantId}`);
  const keys = await em.find(
    ApiKey,
    { tenant: { ownerId: tenant.ownerId } },
    { orderBy: { createdAt: 'asc', id: 'asc' } },
  );
  return keys.map((key) => ({
    key_id: key.id,
    key_prefix: key.prefix,
    name: key.name,
    mode: key.mode,
    scopes: key.scopes,
    allowed_ips: key.allowedIps,
    created_at: key.createdAt.toISOString(),
    revoked_at: key.revokedAt?.toISOString() ?? null,
    expires_at: key.expiresAt?.toISOString() ?? null,
  }));
}

/** What a key is made with (decisions §19); the operator's defaults: 'default', every scope, any address. */
export interface KeyOptions {
  name?: string;
  /** Checked by the caller (src/http/scopes.ts). */
  scopes?: string[];
  /** Normalised by the caller (src/http/ip-allow-list.ts). */
  allowedIps?: string[];
  expiresAt?: Date | null;
}

/**
 * A new key of `mode` for the tenant (given by the id of the tenant or of either of its modes); the
 * first live key makes the tenant's live mode.
 */
export async function issueKey(
  em: EntityManager,
  tenantId: string,
  mode: KeyMode,
  options: KeyOptions = {},
): Promise<IssuedKey> {
  const tenant = await tenantMode(em, tenantId, mode, { create: true });
  if (!tenant) throw new TenantError('unknown_tenant', `no tenant ${tenantId}`);
  const apiKey = generateApiKey(mode);
  const row = em.create(ApiKey, {
    id: randomUUID(),
    tenant,
    mode,
    prefix: keyPrefix(apiKey),
    name: options.name ?? 'default',
    scopes: options.scopes ?? ['*'],
    allowedIps: options.allowedIps ?? [],
    revokedAt: null,
    expiresAt: options.expiresAt ?? null,
    lastUsedAt: null,
  });
  em.create(ApiKeySecret, { keyHash: hashApiKey(apiKey), key: row, prefix: row.prefix, expiresAt: null });
  await em.flush();
  return {
    key_id: row.id,
    api_key: apiKey,
    key_prefix: row.prefix,
    name: row.name,
    scopes: row.scopes,
    allowed_ips: row.allowedIps,
    mode,
    tenant_id: tenant.ownerId,
    mode_tenant_id: tenant.id,
  };
}

export type ApiKeyRow = InferEntity<typeof ApiKey>;

/** A page of a tenant mode's keys (`tenantId`: the mode's row), newest first. */
export async function listModeKeys(em: EntityManager, tenantId: string, window: Window): Promise<Page<ApiKeyRow>> {
  return pageOf(em, ApiKey, { tenant: tenantId }, { createdAt: 'desc', id: 'desc' }, window);
}

/** The tenant mode's key with this id (a uuid); null for another tenant's or mode's. */
export async function modeKeyById(em: EntityManager, tenantId: string, id: string): Promise<ApiKeyRow | null> {
  return em.findOne(ApiKey, { id, tenant: tenantId }, { refresh: true });
}

/** The keys of the tenant mode that hold `keys:write` (or `*`) and still work, besides `except`. */
async function otherKeyAdmins(em: EntityManager, tenantId: string, except: string): Promise<number> {
  const [row] = await em.execute<{ n: string }[]>(
    `select count(*) as n from api_keys
      where tenant_id = ? and id <> ? and revoked_at is null and (expires_at is null or expires_at > now())
        and scopes && array['keys:write', '*']`,
    [tenantId, except],
  );
  return Number(row?.n ?? 0);
}

/** How many working keys of the tenant mode hold `keys:write` (or `*`) and have an IP allow-list. */
export async function listedKeyAdmins(em: EntityManager, tenantId: string): Promise<number> {
  const [row] = await em.execute<{ n: string }[]>(
    `select count(*) as n from api_keys
      where tenant_id = ? and revoked_at is null and (expires_at is null or expires_at > now())
        and scopes && array['keys:write', '*'] and cardinality(allowed_ips) > 0`,
    [tenantId],
  );
  return Number(row?.n ?? 0);
}

/**
 * Revokes the tenant mode's key at once, unless it is the last working key holding keys:write (the
 * tenant would lock itself out of its keys; the operator CLI can still revoke it). Under the mode
 * row's lock, so two revocations at once cannot both see the other key still working. Runs in the
 * caller's transaction. `already`: it was revoked before (the row as it is).
 */
export async function revokeModeKey(
  em: EntityManager,
  tenantId: string,
  id: string,
): Promise<
  | { outcome: 'not_found' }
  | { outcome: 'last_key_admin' }
  | { outcome: 'revoked'; row: ApiKeyRow }
  | { outcome: 'already'; row: ApiKeyRow }
> {
  if (!(await lockTenant(em, tenantId))) return { outcome: 'not_found' };
  const row = await modeKeyById(em, tenantId, id);
  if (!row) return { outcome: 'not_found' };
  if (row.revokedAt) return { outcome: 'already', row };
  const admin = row.scopes.includes('*') || row.scopes.includes('keys:write');
  if (admin && (await otherKeyAdmins(em, tenantId, id)) === 0) return { outcome: 'last_key_admin' };
  await em.execute('update api_keys set revoked_at = now() where id = ? and tenant_id = ?', [id, tenantId]);
  return { outcome: 'revoked', row: (await modeKeyById(em, tenantId, id))! };
}

/** The longest overlap an API roll may give a key's old secret (decisions §19). */
export const MAX_SECRET_OVERLAP_HOURS = 168;

/**
 * Gives the tenant mode's key a new secret; its secrets still working keep working for
 * `overlapHours` more (an earlier expiry stays), judged by the database's clock. The key keeps its
 * id, name, scopes and allow-list. Runs in the caller's transaction, under the key's row lock.
 */
export async function rollKeySecret(
  em: EntityManager,
  tenantId: string,
  id: string,
  overlapHours: number,
): Promise<
  | { outcome: 'not_found' }
  | { outcome: 'not_working' }
  | { outcome: 'rolled'; row: ApiKeyRow; secret: string; previousPrefix: string; previousExpiresAt: string | null }
> {
  const [locked] = await em.execute<{ id: string; prefix: string; working: boolean }[]>(
    `select id, prefix, revoked_at is null and (expires_at is null or expires_at > now()) as working
       from api_keys where id = ? and tenant_id = ? for update`,
    [id, tenantId],
  );
  if (!locked) return { outcome: 'not_found' };
  if (!locked.working) return { outcome: 'not_working' };
  const expiring = await em.execute<{ expires_at: Date }[]>(
    `update api_key_secrets set expires_at = least(coalesce(expires_at, 'infinity'), now() + ? * interval '1 hour')
      where key_id = ? and (expires_at is null or expires_at > now())
      returning expires_at`,
    [overlapHours, id],
  );
  const row = (await modeKeyById(em, tenantId, id))!;
  const secret = generateApiKey(row.mode);
  em.create(ApiKeySecret, { keyHash: hashApiKey(secret), key: row, prefix: keyPrefix(secret), expiresAt: null });
  row.prefix = keyPrefix(secret);
  await em.flush();
  const latest = expiring.map((secretRow) => new Date(secretRow.expires_at).getTime()).sort((a, b) => b - a)[0];
  return {
    outcome: 'rolled',
    row,
    secret,
    previousPrefix: locked.prefix,
    previousExpiresAt: latest === undefined ? null : new Date(latest).toISOString(),
  };
}

/**
 * Records that these keys were used now: once a minute at most per key (the caller throttles; the
 * statement skips a key written less than a minute ago by another replica).
 */
export async function markKeysUsed(em: EntityManager, ids: readonly string[]): Promise<void> {
  if (ids.length === 0) return;
  await executeNumbered(
    em,
    `update api_keys set last_used_at = now()
      where id = any($1::uuid[]) and (last_used_at is null or last_used_at < now() - interval '1 minute')`,
    [ids],
  );
}

/** The longest overlap a roll may give the keys it replaces. */
export const MAX_ROLL_OVERLAP_MS = 30 * 86_400_000;

/**
 * Rolls the tenant's keys of one mode: a new key now, and every key of that mode still working
 * expires after `overlapMs` (one that already expires sooner keeps its earlier time), so that
 * clients can move to the new key without a moment of refusals. Expiry is judged by the
 * database's clock.
 */
export async function rollKeys(
  em: EntityManager,
  tenantId: string,
  mode: KeyMode,
  overlapMs: number,
): Promise<{ key: IssuedKey; expiring: { key_id: string; key_prefix: string; expires_at: string }[] }> {
  if (!Number.isSafeInteger(overlapMs) || overlapMs < 0 || overlapMs > MAX_ROLL_OVERLAP_MS) {
    throw new TenantError(
      'overlap_out_of_range',
      `the overlap must be between 0 and ${MAX_ROLL_OVERLAP_MS / 86_400_000} days`,
    );
  }
  return em.transactional(async (tx) => {
    const world = await tenantMode(tx, tenantId, mode, { create: true });
    if (!world || !(await lockTenant(tx, world.id))) throw new TenantError('unknown_tenant', `no tenant ${tenantId}`);
    const expiring = await tx.execute<{ id: string; prefix: string; expires_at: Date }[]>(
      `update api_keys set expires_at = least(coalesce(expires_at, 'infinity'), now() + ? * interval '1 millisecond')
        where tenant_id = ? and mode = ? and revoked_at is null and (expires_at is null or expires_at > now())
        returning id, prefix, expires_at`,
      [overlapMs, world.id, mode],
    );
    const key = await issueKey(tx, world.id, mode);
    return {
      key,
      expiring: expiring.map((row) => ({
        key_id: row.id,
        key_prefix: row.prefix,
        expires_at: new Date(row.expires_at).toISOString(),
      })),
    };
  });
}

export interface UpdateTenantInput {
  dailyTransferLimitMinor?: number;
  enable?: string[];
  disable?: string[];
}

export async function updateTenant(em: EntityManager, tenantId: string, input: UpdateTenantInput): Promise<TenantView> {
  checkFeatures([...(input.enable ?? []), ...(input.disable ?? [])]);
  return em.transactional(async (tx) => {
    const given = await tx.findOne(Tenant, { id: tenantId });
    const tenant = given ? await lockTenant(tx, given.ownerId) : null;
    if (!tenant) throw new TenantError('unknown_tenant', `no tenant ${tenantId}`);
    if (input.dailyTransferLimitMinor !== undefined) tenant.dailyTransferLimitMinor = input.dailyTransferLimitMinor;
    const features = new Set(tenant.features);
    for (const feature of input.enable ?? []) features.add(feature);
    for (const feature of input.disable ?? []) features.delete(feature);
    tenant.features = [...features];
    await tx.flush();
    // The live mode takes the tenant's settings with them (its daily limit counts live transfers only).
    const liveId = (await liveModeIds(tx, [tenant.id])).get(tenant.id);
    const live = liveId ? await lockTenant(tx, liveId) : null;
    if (live) {
      live.features = tenant.features;
      live.dailyTransferLimitMinor = tenant.dailyTransferLimitMinor;
      live.allowedAccountTypes = tenant.allowedAccountTypes;
      await tx.flush();
    }
    return tenantView(tenant, live?.id ?? null);
  });
}

/** Revokes the one active key whose prefix starts with `prefix`. */
export async function revokeKey(
  em: EntityManager,
  prefix: string,
): Promise<{
  key_id: string;
  key_prefix: string;
  name: string;
  mode: KeyMode;
  tenant_id: string;
  mode_tenant_id: string;
  revoked_at: string;
}> {
  if (prefix.length < 12)
    throw new TenantError('key_prefix_too_short', '--key-prefix needs at least 12 characters, e.g. sk_test_AbCd');
  const matches = await em.find(
    ApiKey,
    { prefix: { $like: `${prefix.slice(0, 16).replace(/[%_\\]/g, '\\$&')}%` }, revokedAt: null },
    { populate: ['tenant'] },
  );
  const exact = matches.filter((key) => key.prefix.startsWith(prefix) || prefix.startsWith(key.prefix));
  if (exact.length === 0) throw new TenantError('unknown_key', `no active key with prefix ${prefix}`);
  if (exact.length > 1)
    throw new TenantError(
      'ambiguous_key_prefix',
      `${exact.length} active keys start with ${prefix}; give more characters`,
    );
  const key = exact[0]!;
  key.revokedAt = new Date();
  await em.flush();
  return {
    key_id: key.id,
    key_prefix: key.prefix,
    name: key.name,
    mode: key.mode,
    tenant_id: key.tenant.ownerId,
    mode_tenant_id: key.tenant.id,
    revoked_at: key.revokedAt.toISOString(),
  };
}

export type { KeyResolution, ResolvedKey } from '../http/auth.ts';
import type { ResolvedKey } from '../http/auth.ts';

export async function resolveApiKey(em: EntityManager, apiKey: string): Promise<KeyResolution> {
  const mode = parseApiKey(apiKey);
  if (!mode) return { ok: false, reason: 'malformed' };
  // One statement: the secret, its key, the key's tenant mode and that mode's transfer policy.
  // A secret has expired when its own overlap has ended (an API roll) or its key has (an operator's).
  const [row] = await em.execute<
    {
      id: string;
      mode: KeyMode;
      revoked_at: Date | null;
      expired: boolean;
      key_name: string;
      scopes: string[];
      allowed_ips: string[];
      tenant_id: string;
      name: string;
      features: string[];
      daily_transfer_limit_minor: string;
      allowed_account_types: string[];
      live_keys_need_ip_allow_list: boolean;
    }[]
  >(
    `select k.id, k.mode, k.revoked_at,
            coalesce(k.expires_at <= now(), false) or coalesce(s.expires_at <= now(), false) as expired,
            k.name as key_name, k.scopes, k.allowed_ips, t.id as tenant_id,
            t.name, t.features, t.daily_transfer_limit_minor, t.allowed_account_types,
            coalesce(p.live_keys_need_ip_allow_list, false) as live_keys_need_ip_allow_list
       from api_key_secrets s
       join api_keys k on k.id = s.key_id
       join tenants t on t.id = k.tenant_id and t.mode = k.mode
       left join transfer_policies p on p.tenant_id = t.id
      where s.key_hash = ?`,
    [hashApiKey(apiKey)],
  );
  if (!row) return { ok: false, reason: 'unknown' };
  if (row.revoked_at) return { ok: false, reason: 'revoked' };
  if (row.expired) return { ok: false, reason: 'expired' };
  return {
    ok: true,
    key: {
      keyId: row.id,
      mode: row.mode,
      tenantId: row.tenant_id,
      tenantName: row.name,
      features: row.features,
      dailyTransferLimitMinor: Number(row.daily_transfer_limit_minor),
      allowedAccountTypes: row.allowed_account_types,
      keyName: row.key_name,
      scopes: row.scopes,
      allowedIps: row.allowed_ips,
      liveKeysNeedIpAllowList: row.live_keys_need_ip_allow_list,
    },
  };
}

/**
 * What a person of the tenant's console acts as in a mode (decisions §22): the mode's row as a key
 * resolution, with the person's scopes (from their role), no allow-list and the person named as the
 * key. Undefined when the tenant has no such mode (no live mode before its first live key).
 */
export async function consoleKeyOf(
  em: EntityManager,
  tenantId: string,
  mode: KeyMode,
  user: { id: string; email: string; role: string; scopes: string[] },
): Promise<ResolvedKey | undefined> {
  const [row] = await em.execute<
    {
      id: string;
      name: string;
      features: string[];
      daily_transfer_limit_minor: string;
      allowed_account_types: string[];
    }[]
  >(
    `select t.id, t.name, t.features, t.daily_transfer_limit_minor, t.allowed_account_types
       from tenants t join tenants o on o.id = ? where t.owner_id = o.owner_id and t.mode = ?`,
    [tenantId, mode],
  );
  if (!row) return undefined;
  return {
    keyId: user.id,
    mode,
    tenantId: row.id,
    tenantName: row.name,
    features: row.features,
    dailyTransferLimitMinor: Number(row.daily_transfer_limit_minor),
    allowedAccountTypes: row.allowed_account_types,
    keyName: user.email,
    scopes: user.scopes,
    allowedIps: [],
    liveKeysNeedIpAllowList: false,
    user: { id: user.id, email: user.email, role: user.role },
  };
}

/**
 * Locks the tenant's row for the caller's transaction: reservations (and the create path settling
 * one) take it first, so a tenant's reservations run one at a time and the daily limit holds.
 * `for no key update`, not `for update`: the holders still wait on each other, but a row that names
 * the tenant by foreign key (an entry, an event, a transfer) is written beside it without waiting,
 * as its key check only shares the key. With `for update`, a transfer's settlement that held its
 * ledger accounts and then wrote its entry waited on a reservation that held the tenant and waited
 * on those accounts: a deadlock.
 */
export async function lockTenant(em: EntityManager, tenantId: string): Promise<TenantRow | null> {
  const [row] = await em.execute<Record<string, unknown>[]>('select * from tenants where id = ? for no key update', [
    tenantId,
  ]);
  return row ? em.map(Tenant, row) : null;
}

/** The tenant's daily transfer limit as it stands, read without a lock; undefined for no such tenant. */
export async function dailyTransferLimitOf(em: EntityManager, tenantId: string): Promise<number | undefined> {
  return (await em.findOne(Tenant, { id: tenantId }, { fields: ['dailyTransferLimitMinor'], refresh: true }))
    ?.dailyTransferLimitMinor;
}
