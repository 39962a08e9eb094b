// The columns most tables share, for the entities: a uuid key, the owning tenant, and times set by
// the database's clock. Each call gives fresh property builders.
import { defineEntity, p } from '@mikro-orm/core';

/** `id` (uuid, primary) and `tenant_id`. */
export function tenantOwned() {
  return { id: p.uuid().primary(), tenant_id: p.uuid() };
}

/** `created_at`, set by the database on insert. */
export function createdAt() {
  return { created_at: p.datetime().defaultRaw('now()') };
}

/** `created_at` and `updated_at`, set by the database on insert (updates set `updated_at`). */
export function timestamps() {
  return { ...createdAt(), updated_at: p.datetime().defaultRaw('now()') };
}

/** The API key mode a row belongs to (decisions §16): `test` (the sandbox) or `live`. */
export function keyMode() {
  return p.enum(['test', 'live'] as const);
}

/** Every list's order: newest first, the id breaking ties so that pages never overlap. */
export const NEWEST_FIRST = { created_at: 'desc', id: 'desc' } as const;

/** An entity for a table: its class name, its table, its properties (named as the columns). */
export function tableEntity<
  const TName extends string,
  const TTableName extends string,
  const TProperties extends Record<string, unknown>,
>(name: TName, tableName: TTableName, properties: TProperties) {
  return defineEntity({ name, tableName, properties });
}
