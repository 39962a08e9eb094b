// The open event streams of each API key, counted across every API process (STREAM_MAX_PER_KEY,
// decisions §15): a stream opens only if it can take a lease under its key, its process renews the
// leases of its open streams (./stream.ts) and deletes each when its stream ends. A process that
// dies without a word leaves its leases to lapse at `expires_at`, after which they no longer count.
//
// Taking a lease runs under the key's transaction-scoped advisory lock, so two requests on two
// replicas cannot both take the last place; other keys are not held up. A process that cannot renew
// for a whole lease (the database away that long) may see its streams' places lapse and be taken:
// the key then holds more open streams than its places until some of them end.
import { randomUUID } from 'node:crypto';
import type { EntityManager } from '@mikro-orm/postgresql';
import { lockFor } from '../db/locks.ts';
import { executeNumbered } from '../db/numbered-sql.ts';

export interface LeaseBounds {
  /** Leases one key may hold at once. */
  perKey: number;
  /** How long a lease holds unless renewed. */
  leaseMs: number;
}

/** Takes one of the key's places: the lease's id, or undefined when every place is held. */
export async function takeStreamLease(
  em: EntityManager,
  holder: { keyId: string; tenantId: string },
  bounds: LeaseBounds,
): Promise<string | undefined> {
  return em.transactional(async (tx) => {
    await lockFor(tx, 'event-stream-leases', holder.keyId);
    await tx.execute('delete from event_stream_leases where api_key_id = ? and expires_at <= clock_timestamp()', [
      holder.keyId,
    ]);
    const [held] = await tx.execute<{ n: string }[]>(
      'select count(*) as n from event_stream_leases where api_key_id = ?',
      [holder.keyId],
    );
    if (Number(held?.n ?? 0) >= bounds.perKey) return undefined;
    const id = randomUUID();
    await tx.execute(
      `insert into event_stream_leases (id, api_key_id, tenant_id, expires_at)
       values (?, ?, ?, clock_timestamp() + ? * interval '1 millisecond')`,
      [id, holder.keyId, holder.tenantId, bounds.leaseMs],
    );
    return id;
  });
}

/** Extends the leases of streams still open by another `leaseMs`. */
export async function renewStreamLeases(em: EntityManager, ids: string[], leaseMs: number): Promise<void> {
  if (ids.length === 0) return;
  await executeNumbered(
    em,
    `update event_stream_leases set expires_at = clock_timestamp() + $1 * interval '1 millisecond'
      where id = any($2::uuid[])`,
    [leaseMs, ids],
  );
}

/** Gives places back: the streams holding them have ended. */
export async function dropStreamLeases(em: EntityManager, ids: string[]): Promise<void> {
  if (ids.length === 0) return;
  await executeNumbered(em, 'delete from event_stream_leases where id = any($1::uuid[])', [ids]);
}
