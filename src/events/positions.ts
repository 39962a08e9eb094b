// Where events stand in the stream (migration 0027): each at (the id of the transaction that
// recorded it, its number), read in that order and only once every older transaction has ended
// (`txid` below the snapshot's xmin). Under that rule an event can never appear behind a position
// a reader has passed, so "everything after this position" is exact: nothing lost, nothing twice.
// Test events are never streamed.
import type { EntityManager } from '@mikro-orm/postgresql';
import { executeNumbered } from '../db/numbered-sql.ts';

// Types, not interfaces: rows of executeNumbered are records.
export type StreamPosition = {
  /** A PostgreSQL xid8, as text (64 bits: never a JS number). */
  txid: string;
  /** As text, for the same reason. */
  seq: string;
};

export type StreamedEvent = {
  id: string;
  tenant_id: string;
  type: string;
  payload: Record<string, unknown>;
  created_at: Date;
  position: StreamPosition;
};

/** Events of the stream: released (older than every running transaction), after $1/$2, in order. */
const RELEASED = `txid < pg_snapshot_xmin(pg_current_snapshot()) and not test and (txid, seq) > ($1::xid8, $2::bigint)`;
// The positions as text (64 bits); ordered by the columns themselves, never by these texts ('10' < '9').
const COLUMNS = 'id, tenant_id, type, payload, created_at, txid::text as txid, seq::text as seq';

type Row = Omit<StreamedEvent, 'position'> & StreamPosition;
const streamed = (rows: Row[]): StreamedEvent[] =>
  rows.map(({ txid, seq, ...event }) => ({
    ...event,
    created_at: new Date(event.created_at),
    position: { txid, seq },
  }));

/** The last released position: a stream that starts now starts after it. */
export async function streamTail(em: EntityManager): Promise<StreamPosition> {
  const [row] = await executeNumbered<StreamPosition[]>(
    em,
    `select txid::text as txid, seq::text as seq from events
      where txid < pg_snapshot_xmin(pg_current_snapshot()) order by events.txid desc, events.seq desc limit 1`,
    [],
  );
  return row ?? { txid: '0', seq: '0' };
}

/** Every tenant's released events after `after`, in stream order, at most `limit`. */
export async function releasedEvents(em: EntityManager, after: StreamPosition, limit: number) {
  return streamed(
    await executeNumbered<Row[]>(
      em,
      `select ${COLUMNS} from events where ${RELEASED} order by events.txid, events.seq limit $3`,
      [after.txid, after.seq, limit],
    ),
  );
}

/** One tenant's released events after `after`, in stream order, at most `limit`. */
export async function releasedTenantEvents(em: EntityManager, tenantId: string, after: StreamPosition, limit: number) {
  return streamed(
    await executeNumbered<Row[]>(
      em,
      `select ${COLUMNS} from events where tenant_id = $4 and ${RELEASED} order by events.txid, events.seq limit $3`,
      [after.txid, after.seq, limit, tenantId],
    ),
  );
}

/** The position of one of the tenant's streamed events, by its id; null when it has none such. */
export async function positionOf(em: EntityManager, tenantId: string, eventId: string): Promise<StreamPosition | null> {
  const [row] = await executeNumbered<StreamPosition[]>(
    em,
    `select txid::text as txid, seq::text as seq from events where id = $1 and tenant_id = $2 and not test`,
    [eventId, tenantId],
  );
  return row ?? null;
}

/** Whether `a` comes after `b` in the stream. */
export function isAfter(a: StreamPosition, b: StreamPosition): boolean {
  const [ta, tb] = [BigInt(a.txid), BigInt(b.txid)];
  return ta !== tb ? ta > tb : BigInt(a.seq) > BigInt(b.seq);
}
