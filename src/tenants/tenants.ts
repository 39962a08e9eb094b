// Tenants and their keys: what the operator CLI manages and what the auth plugin resolves.
// A tenant is created together with its ledger accounts and first key, in one transaction.
import { randomUUID } from 'node:crypto';
import { type InferEntity, LockMode } from '@mikro-orm/core';
import type { EntityManager } from '@mikro-orm/postgresql';
import { ApiKey, Tenant } from '../db/entities.ts';
import { openTenantAccounts } from '../ledger/ledger.ts';
import { type KeyMode, generateApiKey, hashApiKey, keyPrefix, parseApiKey } from './api-keys.ts';

export const DEFAULT_DAILY_LIMIT_MINOR = 500_000_000; // ₦5,000,000
export const ACCOUNT_TYPES = ['standard', 'dedicated', 'temporary'] as const;
/** Feature flags a tenant can have switched on. */
export const FEATURES = ['identity_customers'] as const;
export type Feature = (typeof FEATURES)[number];

export interface TenantView {
  tenant_id: string;
  name: string;
  features: string[];
  daily_transfer_limit_minor: number;
  allowed_account_types: string[];
  created_at: string;
  updated_at: string;
}

type TenantRow = InferEntity<typeof Tenant>;

export function tenantView(tenant: TenantRow): TenantView {
  return {
    tenant_id: tenant.id,
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
  mode: KeyMode;
}

export interface CreateTenantInput {
  name: string;
  features?: string[];
  dailyTransferLimitMinor?: number;
  allowedAccountTypes?: string[];
  mode?: KeyMode;
}

export class TenantError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'TenantError';
  }
}

function checkFeatures(features: string[]): void {
  const unknown = features.filter((feature) => !(FEATURES as readonly string[]).includes(feature));
  if (unknown.length) throw new TenantError(`unknown feature ${unknown.join(', ')} (known: ${FEATURES.join(', ')})`);
}

export async function createTenant(
  em: EntityManager,
  input: CreateTenantInput,
): Promise<{ tenant: TenantView; key: IssuedKey }> {
  checkFeatures(input.features ?? []);
  return em.transactional(async (tx) => {
    const tenant = tx.create(Tenant, {
      id: randomUUID(),
      name: input.name,
      features: [...new Set(input.features ?? [])],
      dailyTransferLimitMinor: input.dailyTransferLimitMinor ?? DEFAULT_DAILY_LIMIT_MINOR,
      allowedAccountTypes: input.allowedAccountTypes ?? [...ACCOUNT_TYPES],
    });
    await tx.flush();
    await openTenantAccounts(tx, tenant.id);
    const key = await issueKey(tx, tenant.id, input.mode ?? 'test');
    return { tenant: tenantView(tenant), key };
  });
}

/** Every tenant, oldest first, with how many of its keys are not revoked (the operator's list). */
export async function listTenants(em: EntityManager): Promise<(TenantView & { active_keys: number })[]> {
  const tenants = await em.find(Tenant, {}, { orderBy: { createdAt: 'asc', id: 'asc' } });
  const active = await em.find(ApiKey, { revokedAt: null });
  return tenants.map((tenant) => ({
    ...tenantView(tenant),
    active_keys: active.filter((key) => key.tenant.id === tenant.id).length,
  }));
}

/** A tenant's keys by prefix, oldest first: never the keys, which are not stored. */
export async function listKeys(em: EntityManager, tenantId: string) {
  if (!(await em.findOne(Tenant, { id: tenantId }))) throw new TenantError(`no tenant ${tenantId}`);
  const keys = await em.find(ApiKey, { tenant: tenantId }, { orderBy: { createdAt: 'asc', id: 'asc' } });
  return keys.map((key) => ({
    key_id: key.id,
    key_prefix: key.prefix,
    mode: key.mode,
    created_at: key.createdAt.toISOString(),
    revoked_at: key.revokedAt?.toISOString() ?? null,
    expires_at: key.expiresAt?.toISOString() ?? null,
  }));
}

export async function issueKey(em: EntityManager, tenantId: string, mode: KeyMode): Promise<IssuedKey> {
  const tenant = await em.findOne(Tenant, { id: tenantId });
  if (!tenant) throw new TenantError(`no tenant ${tenantId}`);
  const apiKey = generateApiKey(mode);
  const row = em.create(ApiKey, {
    id: randomUUID(),
    tenant,
    mode,
    prefix: keyPrefix(apiKey),
    keyHash: hashApiKey(apiKey),
    revokedAt: null,
    expiresAt: null,
  });
  await em.flush();
  return { key_id: row.id, api_key: apiKey, key_prefix: row.prefix, mode };
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
    throw new TenantError(`the overlap must be between 0 and ${MAX_ROLL_OVERLAP_MS / 86_400_000} days`);
  }
  return em.transactional(async (tx) => {
    if (!(await lockTenant(tx, tenantId))) throw new TenantError(`no tenant ${tenantId}`);
    const expiring = await tx.execute<{ id: string; prefix: string; expires_at: Date }[]>(
      `update api_keys set expires_at = least(coalesce(expires_at, 'infinity'), now() + ? * interval '1 millisecond')
        where tenant_id = ? and mode = ? and revoked_at is null and (expires_at is null or expires_at > now())
        returning id, prefix, expires_at`,
      [overlapMs, tenantId, mode],
    );
    const key = await issueKey(tx, tenantId, mode);
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
    const tenant = await lockTenant(tx, tenantId);
    if (!tenant) throw new TenantError(`no tenant ${tenantId}`);
    if (input.dailyTransferLimitMinor !== undefined) tenant.dailyTransferLimitMinor = input.dailyTransferLimitMinor;
    const features = new Set(tenant.features);
    for (const feature of input.enable ?? []) features.add(feature);
    for (const feature of input.disable ?? []) features.delete(feature);
    tenant.features = [...features];
    await tx.flush();
    return tenantView(tenant);
  });
}

/** Revokes the one active key whose prefix starts with `prefix`. */
export async function revokeKey(
  em: EntityManager,
  prefix: string,
): Promise<{ key_id: string; key_prefix: string; tenant_id: string; revoked_at: string }> {
  if (prefix.length < 12) throw new TenantError('--key-prefix needs at least 12 characters, e.g. sk_test_AbCd');
  const matches = await em.find(
    ApiKey,
    { prefix: { $like: `${prefix.slice(0, 16).replace(/[%_\\]/g, '\\$&')}%` }, revokedAt: null },
    { populate: ['tenant'] },
  );
  const exact = matches.filter((key) => key.prefix.startsWith(prefix) || prefix.startsWith(key.prefix));
  if (exact.length === 0) throw new TenantError(`no active key with prefix ${prefix}`);
  if (exact.length > 1) throw new TenantError(`${exact.length} active keys start with ${prefix}; give more characters`);
  const key = exact[0]!;
  key.revokedAt = new Date();
  await em.flush();
  return { key_id: key.id, key_prefix: key.prefix, tenant_id: key.tenant.id, revoked_at: key.revokedAt.toISOString() };
}

export interface ResolvedKey {
  keyId: string;
  mode: KeyMode;
  tenantId: string;
  tenantName: string;
  features: string[];
  dailyTransferLimitMinor: number;
  allowedAccountTypes: string[];
}

export type KeyResolution =
  { ok: true; key: ResolvedKey } | { ok: false; reason: 'malformed' | 'unknown' | 'revoked' | 'expired' };

export async function resolveApiKey(em: EntityManager, apiKey: string): Promise<KeyResolution> {
  const mode = parseApiKey(apiKey);
  if (!mode) return { ok: false, reason: 'malformed' };
  const [row] = await em.execute<
    {
      id: string;
      mode: KeyMode;
      revoked_at: Date | null;
      expired: boolean;
      tenant_id: string;
      name: string;
      features: string[];
      daily_transfer_limit_minor: string;
      allowed_account_types: string[];
    }[]
  >(
    `select k.id, k.mode, k.revoked_at, coalesce(k.expires_at <= now(), false) as expired, t.id as tenant_id, t.name, t.features, t.daily_transfer_limit_minor,
            t.allowed_account_types
       from api_keys k join tenants t on t.id = k.tenant_id where k.key_hash = ?`,
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
    },
  };
}

/**
 * Locks the tenant's row for the caller's transaction: reservations (and the create path settling
 * one) take it first, so a tenant's reservations run one at a time and the daily limit holds.
 */
export async function lockTenant(em: EntityManager, tenantId: string) {
  return em.findOne(Tenant, { id: tenantId }, { lockMode: LockMode.PESSIMISTIC_WRITE, refresh: true });
}
