// Where events stand in the stream (migration 0027): each at (the id of the transaction that
// recorded it, its number), read in that order and only once every older transaction has ended
// (`txid` below the snapshot's xmin). Under that rule an event can never appear behind a position
// a reader has passed, so "everything after this position" is exact: nothing lost, nothing twice.
// Test events are never streamed.
//
// Every read of events also says which of the streams' API keys may still read them, judged in the
// same statement, so in the same snapshot: a snapshot that sees an event committed after a key's
// revocation (or expiry) sees that revocation too, so no stream is sent an event recorded after its
// key stopped working.
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

type Row = Omit<StreamedEvent, 'position'> & StreamPosition;

/** A page of released events, and which of the keys asked about may still read them. */
export type ReleasedPage = {
  events: StreamedEvent[];
  /** The keys asked about that were neither revoked nor expired in the snapshot the events were read in. */
  liveKeys: Set<string>;
};

/**
 * One statement: the keys among `$keys` still working (expiry by the clock as the statement runs,
 * after its snapshot was taken), beside a page of events chosen by `where` (one row with no event
 * when there is none). The positions come out as text (64 bits), ordered by the columns themselves,
 * never by these texts ('10' < '9').
 */
const pageWithKeys = (where: string, keys: string) =>
  `select k.live_keys, e.id, e.tenant_id, e.type, e.payload, e.created_at, e.txid::text as txid, e.seq::text as seq
     from (select array(select id::text from api_keys
                         where id = any(${keys}::uuid[]) and revoked_at is null
                           and (expires_at is null or expires_at > clock_timestamp())) as live_keys) k
     left join lateral (
       select id, tenant_id, type, payload, created_at, txid, seq from events
        where ${where} order by events.txid, events.seq limit $3) e on true
    order by e.txid, e.seq`;

type PageRow = { live_keys: string[] } & { [K in keyof Row]: Row[K] | null };

const released = (rows: PageRow[]): ReleasedPage => ({
  liveKeys: new Set(rows[0]?.live_keys ?? []),
  events: rows.flatMap(({ id, tenant_id, type, payload, created_at, txid, seq }) =>
    id === null
      ? []
      : [
          {
            id,
            tenant_id: tenant_id!,
            type: type!,
            payload: payload!,
            created_at: new Date(created_at!),
            position: { txid: txid!, seq: seq! },
          },
        ],
  ),
});

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

/** Every tenant's released events after `after`, in stream order, at most `limit`; and which of `keyIds` still work. */
export async function releasedEvents(
  em: EntityManager,
  after: StreamPosition,
  limit: number,
  keyIds: readonly string[],
): Promise<ReleasedPage> {
  return released(
    await executeNumbered<PageRow[]>(em, pageWithKeys(RELEASED, '$4'), [after.txid, after.seq, limit, keyIds]),
  );
}

/** One tenant's released events after `after`, in stream order, at most `limit`; and whether `keyId` still works. */
export async function releasedTenantEvents(
  em: EntityManager,
  tenantId: string,
  after: StreamPosition,
  limit: number,
  keyId: string,
): Promise<ReleasedPage> {
  return released(
    await executeNumbered<PageRow[]>(em, pageWithKeys(`tenant_id = $4 and ${RELEASED}`, '$5'), [
      after.txid,
      after.seq,
      limit,
      tenantId,
      [keyId],
    ]),
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
