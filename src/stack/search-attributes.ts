// Registers the gateway's custom search attributes on a Temporal cluster if they are missing,
// so workflows can upsert them and operators can filter by them in the Web UI. The embedded dev
// server gets them through --search-attribute flags; external clusters through this.
import { Connection } from '@temporalio/client';
// @temporalio/proto is CommonJS whose named exports Node cannot detect statically.
import proto from '@temporalio/proto';
import { SEARCH_ATTRIBUTES } from './temporal-dev.ts';

const { temporal } = proto;

const TYPES = {
  Keyword: temporal.api.enums.v1.IndexedValueType.INDEXED_VALUE_TYPE_KEYWORD,
  Int: temporal.api.enums.v1.IndexedValueType.INDEXED_VALUE_TYPE_INT,
} as const;

/** Returns the names it added. */
export async function ensureSearchAttributes(address: string, namespace: string): Promise<string[]> {
  const connection = await Connection.connect({ address });
  try {
    const existing = await connection.operatorService.listSearchAttributes({ namespace });
    const known = new Set(Object.keys(existing.customAttributes ?? {}));
    const missing = Object.entries(SEARCH_ATTRIBUTES).filter(([name]) => !known.has(name));
    if (missing.length === 0) return [];
    await connection.operatorService.addSearchAttributes({
      namespace,
      searchAttributes: Object.fromEntries(missing.map(([name, type]) => [name, TYPES[type]])),
    });
    return missing.map(([name]) => name);
  } finally {
    await connection.close();
  }
}
