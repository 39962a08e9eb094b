// Fields many resource views share, as the API shows them: the times a store's timestamps() keeps
// (src/db/columns.ts), and the metadata a tenant gave with the resource. Each call gives fresh
// schemas, so that no two fields share one.
import { z } from 'zod';

/** `created_at` and `updated_at`, as ISO 8601 strings. */
export function timestampFields() {
  return { created_at: z.string(), updated_at: z.string() };
}

/** The object the tenant gave as the resource's metadata, or null. */
export function metadataField() {
  return z.record(z.string(), z.unknown()).nullable();
}
