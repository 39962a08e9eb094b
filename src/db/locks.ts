// Transaction-scoped advisory locks by name: `lockFor(tx, 'webhook-endpoints', tenantId)` holds
// until the caller's transaction ends, and serialises only the transactions that name the same
// scope and key. (The card decision writes its lock into its own prepared statement instead:
// src/cards/authorizations.ts, authorizationIdLock.)
import type { EntityManager } from '@mikro-orm/postgresql';

export async function lockFor(tx: EntityManager, scope: string, key: string): Promise<void> {
  await tx.execute(`select pg_advisory_xact_lock(hashtextextended(? || ':' || ?, 0))`, [scope, key]);
}
