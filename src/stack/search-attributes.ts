// Registers the gateway's custom search attributes on a Temporal cluster if they are missing,
// so workflows can upsert them and operators can filter by them in the Web UI. The embedded dev
// server gets them through --search-attribute flags; external clusters through this.
import { Connection } from '@temporalio/client';
// @temporalio/proto is CommonJS whose named exports Node cannot detect statically.
import proto from '@temporalio/proto';
import { SEARCH_ATTRIBUTES } from './temporal-dev.ts';

const { temporal } = proto;

export const INDEXED_VALUE_TYPES = {
  Keyword: temporal.api.enums.v1.IndexedValueType.INDEXED_VALUE_TYPE_KEYWORD,
  Int: temporal.api.enums.v1.IndexedValueType.INDEXED_VALUE_TYPE_INT,
} as const;

/** Registers the missing ones over an open connection; returns the names it added. */
export async function registerSearchAttributes(connection: Connection, namespace: string): Promise<string[]> {
  const existing = await connection.operatorService.listSearchAttributes({ namespace });
  const known = new Set(Object.keys(existing.customAttributes ?? {}));
  const missing = Object.entries(SEARCH_ATTRIBUTES).filter(([name]) => !known.has(name));
  if (missing.length === 0) return [];
  await connection.operatorService.addSearchAttributes({
    namespace,
    searchAttributes: Object.fromEntries(missing.map(([name, type]) => [name, INDEXED_VALUE_TYPES[type]])),
  });
  return missing.map(([name]) => name);
}

/** The add request for every attribute, for servers that cannot list them (the time-skipping test server). */
export function allSearchAttributes(): Record<string, (typeof INDEXED_VALUE_TYPES)[keyof typeof INDEXED_VALUE_TYPES]> {
  return Object.fromEntries(Object.entries(SEARCH_ATTRIBUTES).map(([name, type]) => [name, INDEXED_VALUE_TYPES[type]]));
}

/** Connects to `address` and registers the missing search attributes; returns the names it added. */
export async function ensureSearchAttributes(address: string, namespace: string): Promise<string[]> {
  const connection = await Connection.connect({ address });
  try {
    return await registerSearchAttributes(connection, namespace);
  } finally {
    await connection.close();
  }
}
