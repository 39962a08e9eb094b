// The platform's tenants and their API keys (decisions §16): a tenant's row per key mode, the
// live one owned by the test one.
import { defineEntity, p } from '@mikro-orm/core';
import { keyMode } from '../db/columns.ts';

export const Tenant = defineEntity({
  name: 'Tenant',
  tableName: 'tenants',
  properties: {
    id: p.uuid().primary(),
    name: p.string(),
    features: p.array().default([]),
    dailyTransferLimitMinor: p.bigint('number').fieldName('daily_transfer_limit_minor'),
    allowedAccountTypes: p.array().fieldName('allowed_account_types'),
    /** The key mode this row is the world of (decisions §16): the tenant's own row is its test mode. */
    mode: keyMode().default('test'),
    /** The tenant this mode belongs to: the row itself for test, the tenant's row for live. */
    ownerId: p.uuid().fieldName('owner_id'),
    createdAt: p
      .datetime()
      .fieldName('created_at')
      .onCreate(() => new Date()),
    updatedAt: p
      .datetime()
      .fieldName('updated_at')
      .onCreate(() => new Date())
      .onUpdate(() => new Date()),
  },
});

export const ApiKey = defineEntity({
  name: 'ApiKey',
  tableName: 'api_keys',
  properties: {
    id: p.uuid().primary(),
    tenant: () => p.manyToOne(Tenant).fieldName('tenant_id'),
    mode: keyMode(),
    /** The prefix of its newest secret. */
    prefix: p.string(),
    name: p.string(),
    /** What it may do (src/http/scopes.ts), fixed when it is made. */
    scopes: p.array(),
    /** The addresses and ranges it may be used from (src/http/ip-allow-list.ts); empty: anywhere. */
    allowedIps: p.array().fieldName('allowed_ips'),
    createdAt: p
      .datetime()
      .fieldName('created_at')
      .onCreate(() => new Date()),
    revokedAt: p.datetime().fieldName('revoked_at').nullable(),
    /** Set when the key is rolled: it works until then (admin key roll). */
    expiresAt: p.datetime().fieldName('expires_at').nullable(),
    /** Written at most about once a minute (src/tenants/key-usage.ts). */
    lastUsedAt: p.datetime().fieldName('last_used_at').nullable(),
  },
});

/**
 * A key's secrets, by their SHA-256: one when it is made, one more each time it is rolled, the
 * older working until its `expires_at` (migration 0034).
 */
export const ApiKeySecret = defineEntity({
  name: 'ApiKeySecret',
  tableName: 'api_key_secrets',
  properties: {
    keyHash: p.string().fieldName('key_hash').primary(),
    key: () => p.manyToOne(ApiKey).fieldName('key_id'),
    prefix: p.string(),
    createdAt: p
      .datetime()
      .fieldName('created_at')
      .onCreate(() => new Date()),
    expiresAt: p.datetime().fieldName('expires_at').nullable(),
  },
});
