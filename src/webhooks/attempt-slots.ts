// The per-tenant bound on webhook attempts in flight (WEBHOOK_TENANT_CONCURRENCY, decisions §16):
// one tenant's failing endpoints cannot take every webhook worker slot, however many deliveries it
// has. Before an attempt, its delivery takes one of its tenant's slots, or is queued for one and its
// workflow waits on a timer-guarded condition for a `slot` signal: a waiting delivery holds no
// worker slot and no activity. After the attempt, the slot goes to the tenant's longest-waiting
// delivery, whose workflow is then signalled (the attempt activity, activities/webhooks/webhooks.ts, does
// both; the workflow's side is in workflows/webhooks/webhook-delivery.ts).
//
// Every change for a tenant runs under that tenant's transaction-scoped advisory lock, so the
// count and the grant cannot race; other tenants are not held up. A granted slot lapses after
// `leaseMs` (its worker died mid-attempt, or a signalled workflow never came): lapsed slots count
// as free, and a waiting workflow asks again now and then, so no delivery waits for ever on a lost
// signal.
import type { EntityManager } from '@mikro-orm/postgresql';
import { lockFor } from '../db/locks.ts';

export interface SlotBounds {
  /** Attempts of one tenant in flight at once. */
  perTenant: number;
  /** How long a granted slot holds without being given back. */
  leaseMs: number;
}

export interface SlotHolder {
  tenantId: string;
  deliveryId: string;
  workflowId: string;
}

function lockTenant(em: EntityManager, tenantId: string): Promise<void> {
  return lockFor(em, 'webhook-attempt-slots', tenantId);
}

async function grantedCount(em: EntityManager, tenantId: string): Promise<number> {
  const [row] = await em.execute<{ n: string }[]>(
    `select count(*) as n from webhook_attempt_slots
      where tenant_id = ? and state = 'granted' and expires_at > clock_timestamp()`,
    [tenantId],
  );
  return Number(row?.n ?? 0);
}

/**
 * Takes a slot of the tenant for this delivery's attempt: true if it holds one now (already granted
 * to it, or free), false if it is queued for one (its place in the queue is kept across calls).
 */
export async function takeSlot(em: EntityManager, holder: SlotHolder, bounds: SlotBounds): Promise<boolean> {
  return em.transactional(async (tx) => {
    await lockTenant(tx, holder.tenantId);
    const [own] = await tx.execute<{ state: string; live: boolean }[]>(
      `select state, coalesce(expires_at > clock_timestamp(), false) as live
         from webhook_attempt_slots where delivery_id = ?`,
      [holder.deliveryId],
    );
    // Granted to it (a signal said so, or it asks again after a restart): it is its own, for a full lease.
    const mine = own?.state === 'granted' && own.live;
    if (mine || (await grantedCount(tx, holder.tenantId)) < bounds.perTenant) {
      await tx.execute(
        `insert into webhook_attempt_slots (delivery_id, tenant_id, workflow_id, state, expires_at)
         values (?, ?, ?, 'granted', clock_timestamp() + ? * interval '1 millisecond')
         on conflict (delivery_id) do update set state = 'granted', expires_at = excluded.expires_at`,
        [holder.deliveryId, holder.tenantId, holder.workflowId, bounds.leaseMs],
      );
      return true;
    }
    // Queued, or still queued: a lapsed grant goes back to the queue at its old place.
    await tx.execute(
      `insert into webhook_attempt_slots (delivery_id, tenant_id, workflow_id, state)
       values (?, ?, ?, 'waiting')
       on conflict (delivery_id) do update set state = 'waiting', expires_at = null`,
      [holder.deliveryId, holder.tenantId, holder.workflowId],
    );
    return false;
  });
}

/**
 * Gives this delivery's slot back (or its place in the queue), and grants the tenant's free slots
 * to its longest-waiting deliveries: answers those, whose workflows are to be told.
 */
export async function releaseSlot(
  em: EntityManager,
  holder: Pick<SlotHolder, 'tenantId' | 'deliveryId'>,
  bounds: SlotBounds,
): Promise<SlotHolder[]> {
  return em.transactional(async (tx) => {
    await lockTenant(tx, holder.tenantId);
    await tx.execute(`delete from webhook_attempt_slots where delivery_id = ?`, [holder.deliveryId]);
    const free = bounds.perTenant - (await grantedCount(tx, holder.tenantId));
    if (free <= 0) return [];
    const granted = await tx.execute<{ delivery_id: string; workflow_id: string }[]>(
      `update webhook_attempt_slots s
          set state = 'granted', expires_at = clock_timestamp() + ? * interval '1 millisecond'
         from (select delivery_id from webhook_attempt_slots
                where tenant_id = ? and (state = 'waiting' or expires_at <= clock_timestamp())
                order by queued_at, delivery_id
                limit ?) next
        where s.delivery_id = next.delivery_id
        returning s.delivery_id, s.workflow_id`,
      [bounds.leaseMs, holder.tenantId, free],
    );
    return granted.map((row) => ({
      tenantId: holder.tenantId,
      deliveryId: row.delivery_id,
      workflowId: row.workflow_id,
    }));
  });
}
