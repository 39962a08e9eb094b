// A key as the API shows it (decisions §19): never a secret but when it is made or rolled.
import type { ApiKeyRow } from '../tenants/tenants.ts';
import type { KeyView } from './schemas.ts';

export function keyView(row: ApiKeyRow): KeyView {
  return {
    id: row.id,
    name: row.name,
    prefix: row.prefix,
    scopes: row.scopes,
    allowed_ips: row.allowedIps,
    created_at: row.createdAt.toISOString(),
    last_used_at: row.lastUsedAt?.toISOString() ?? null,
    expires_at: row.expiresAt?.toISOString() ?? null,
    revoked_at: row.revokedAt?.toISOString() ?? null,
  };
}
