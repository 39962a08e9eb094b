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
    prefix: p.string(),
    keyHash: p.string().fieldName('key_hash').unique(),
    createdAt: p
      .datetime()
      .fieldName('created_at')
      .onCreate(() => new Date()),
    revokedAt: p.datetime().fieldName('revoked_at').nullable(),
    /** Set when the key is rolled: it works until then (admin key roll). */
    expiresAt: p.datetime().fieldName('expires_at').nullable(),
  },
});
