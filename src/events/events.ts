// The tenant event log, and the only code that touches the `events` table. Events are written in
// the same transaction as the state change that causes them, keyed by what caused them
// (`source_key`), so a retried activity writes each once: `recordEvent` in the caller's ORM
// transaction, or `recordEventsStep` as a step of a caller's one write statement (the card
// decision, src/db/write-statement.ts), both by the one insert below. Webhook delivery fans out
// from this table under claims (below): raw SQL there, because the claim statement is the rule that
// lets several fan-out loops share the table without a transaction held open.
import { randomUUID } from 'node:crypto';
import { type InferEntity, p, raw } from '@mikro-orm/core';
import { context, propagation } from '@opentelemetry/api';
import type { EntityManager } from '@mikro-orm/postgresql';
import { NEWEST_FIRST, createdAt, tableEntity, tenantOwned } from '../db/columns.ts';
import { executeNumbered } from '../db/numbered-sql.ts';
import { type Page, type Window, pageOf } from '../db/pages.ts';
import type { WriteStep } from '../db/write-statement.ts';
import { type EventData, type EventType, parseEventData } from './catalog.ts';

export const Event = tableEntity('Event', 'events', {
  ...tenantOwned(),
  type: p.string(),
  source_key: p.string(),
  payload: p.json<Record<string, unknown>>(),
  ...createdAt(),
  fanned_out_at: p.datetime().nullable(),
  fanout_claimed_by: p.string().nullable(),
  fanout_claimed_until: p.datetime().nullable(),
  fanout_attempts: p.integer().default(0),
  next_fanout_at: p.datetime().nullable(),
  last_fanout_error: p.string().nullable(),
  /** The W3C traceparent of the span the event was recorded in; null when tracing is off. */
  traceparent: p.string().nullable(),
  /** A test event (decisions §15): delivered to the one endpoint it was sent to, never fanned out or streamed. */
  test: p.boolean().default(false),
});
export type EventRow = InferEntity<typeof Event>;

/**
 * An event of one of the types T, its payload typed by that type's catalog schema (catalog.ts): a
 * union over T, so that a call site's type and payload must agree.
 */
export type NewEvent<T extends EventType = EventType> = {
  [Type in T]: {
    type: Type;
    /** What caused the event, e.g. `transfer:<id>:settled`; unique. */
    sourceKey: string;
    payload: EventData<Type>;
  };
}[T];

export type EventInput<T extends EventType = EventType> = NewEvent<T> & { tenantId: string };

/** The active span's W3C traceparent; none when tracing is off (OpenTelemetry's propagator is a no-op). */
function activeTraceparent(): string | null {
  const carrier: { traceparent?: string } = {};
  propagation.inject(context.active(), carrier);
  return carrier.traceparent ?? null;
}

/**
 * The tenant's ($1) events, each unless one with its source key exists, keeping the trace ($2) they
 * were recorded in, where their webhook deliveries then start: the ids of those inserted.
 *
 * An event no listening endpoint of its tenant subscribes to as it is recorded is owed no delivery,
 * and is written fanned out already: the fan-out never claims or marks it (two row writes an event,
 * most events: a card decision's, any tenant's with no endpoint). An endpoint receives the events
 * recorded once it listens (docs/webhooks.md#which-events-an-endpoint-receives). Whether one does is
 * the database's `webhook_endpoint_listens` (migration 0046): `subscribes` over the tenant's
 * listening endpoints.
 */
const INSERT_EVENTS = `insert into events (id, tenant_id, type, source_key, payload, traceparent, fanned_out_at)
    select v.id, $1, v.type, v.source_key, v.payload, $2,
           case when webhook_endpoint_listens($1, v.type) then null else now() end
      from unnest($3::uuid[], $4::text[], $5::text[], $6::jsonb[]) as v (id, type, source_key, payload)
    on conflict (source_key) do nothing returning id`;

// Each payload is recorded as its type's catalog schema parses it, so the catalog describes exactly
// what is stored and sent (a payload that does not fit throws, and nothing is written).
function insertEventsValues(
  tenantId: string,
  events: readonly { type: EventType; sourceKey: string; payload: unknown }[],
) {
  return [
    tenantId,
    activeTraceparent(),
    events.map(() => randomUUID()),
    events.map((event) => event.type),
    events.map((event) => event.sourceKey),
    events.map((event) => JSON.stringify(parseEventData(event.type, event.payload))),
  ];
}

/** One tenant's events in one insert (a batch's items), each unless one with its source key exists. */
export async function recordEvents<T extends EventType>(
  em: EntityManager,
  tenantId: string,
  events: readonly NewEvent<T>[],
): Promise<void> {
  if (events.length === 0) return;
  await executeNumbered(em, INSERT_EVENTS, insertEventsValues(tenantId, events));
}

/** Inserts the event unless one with the same source key exists; returns its id either way. */
export async function recordEvent<T extends EventType>(em: EntityManager, input: EventInput<T>): Promise<string> {
  const [inserted] = await executeNumbered<{ id: string }[]>(
    em,
    INSERT_EVENTS,
    insertEventsValues(input.tenantId, [input]),
  );
  if (inserted) return inserted.id;
  return (await em.findOneOrFail(Event, { source_key: input.sourceKey }, { fields: ['id'] })).id;
}

/**
 * The tenant's events as a step of the caller's one write statement: every one of them new (a
 * source key already recorded writes fewer rows than declared, and the write throws).
 */
export function recordEventsStep<T extends EventType>(tenantId: string, events: readonly NewEvent<T>[]): WriteStep {
  return { name: 'recorded', text: INSERT_EVENTS, values: insertEventsValues(tenantId, events), rows: events.length };
}

/**
 * A test event (decisions §15), in the caller's transaction, which queues its one delivery: the
 * fan-out starts that delivery and owes it no other (worker/webhook-fanout.ts), and no stream or
 * list shows it.
 */
export async function recordTestEvent(
  em: EntityManager,
  input: { tenantId: string; type: EventType; payload: unknown },
): Promise<EventRow> {
  const [row] = await executeNumbered<EventRow[]>(
    em,
    `insert into events (id, tenant_id, type, source_key, payload, traceparent, test)
     values ($1, $2, $3, $4, $5, $6, true) returning *`,
    [
      randomUUID(),
      input.tenantId,
      input.type,
      `test-event:${randomUUID()}`,
      JSON.stringify(parseEventData(input.type, input.payload)),
      activeTraceparent(),
    ],
  );
  return { ...row!, created_at: new Date(row!.created_at) };
}

export async function findEvent(em: EntityManager, tenantId: string, id: string): Promise<EventRow | null> {
  return em.findOne(Event, { id, tenant_id: tenantId });
}

/** The tenant's events (test events aside), newest first, of one type and about one object (data.id) if given. */
export async function listEvents(
  em: EntityManager,
  tenantId: string,
  type: string | undefined,
  window: Window,
  dataId?: string,
): Promise<Page<EventRow>> {
  return pageOf(
    em,
    Event,
    {
      tenant_id: tenantId,
      test: false,
      ...(type ? { type } : {}),
      ...(dataId ? { payload: { id: dataId } } : {}),
    },
    NEWEST_FIRST,
    window,
  );
}

/** An event claimed for fan-out. */
export interface ClaimedEvent {
  id: string;
  tenant_id: string;
  type: string;
  fanout_attempts: number;
  created_at: string;
  traceparent: string | null;
  /** A test event: owed only the delivery it was sent with. */
  test: boolean;
}

/**
 * Claims up to `limit` due events under `token` for `leaseMs`, oldest first, in one short
 * statement (no transaction stays open): skipped when another loop holds them, due again when a
 * claim runs out.
 */
export async function claimDueEvents(
  em: EntityManager,
  token: string,
  limit: number,
  leaseMs: number,
): Promise<ClaimedEvent[]> {
  const events = await em.execute<ClaimedEvent[]>(
    `with due as materialized (
       select id from events
        where fanned_out_at is null
          and (next_fanout_at is null or next_fanout_at <= now())
          and (fanout_claimed_until is null or fanout_claimed_until <= now())
        order by created_at
        limit ?
        for update skip locked)
     update events set fanout_claimed_by = ?, fanout_claimed_until = now() + ? * interval '1 millisecond'
       from due where events.id = due.id
     returning events.id, events.tenant_id, events.type, events.fanout_attempts, events.created_at,
               events.traceparent, events.test`,
    [limit, token, leaseMs],
  );
  // `returning` keeps no order.
  return events.sort((a, b) => Date.parse(a.created_at) - Date.parse(b.created_at));
}

/** Gives back what a pass claimed and did not finish. */
export async function releaseClaims(em: EntityManager, token: string): Promise<void> {
  await em.execute(
    'update events set fanout_claimed_by = null, fanout_claimed_until = null where fanout_claimed_by = ?',
    [token],
  );
}

/** Marks events fanned out (their deliveries handed over, or none owed), in one statement. */
export async function markFannedOut(em: EntityManager, ids: readonly string[]): Promise<void> {
  if (ids.length === 0) return;
  await em.nativeUpdate(
    Event,
    { id: { $in: [...ids] }, fanned_out_at: null },
    { fanned_out_at: raw('now()'), fanout_claimed_by: null, fanout_claimed_until: null },
  );
}

/** A failed fan-out, recorded by the claim's holder, and the event due again after `retryInMs`. */
export async function postponeFanout(
  em: EntityManager,
  id: string,
  token: string,
  failure: { message: string; retryInMs: number },
): Promise<void> {
  await em.execute(
    `update events set fanout_attempts = fanout_attempts + 1, last_fanout_error = ?,
            next_fanout_at = now() + ? * interval '1 millisecond',
            fanout_claimed_by = null, fanout_claimed_until = null
      where id = ? and fanout_claimed_by = ? and fanned_out_at is null`,
    [failure.message.slice(0, 1_000), failure.retryInMs, id, token],
  );
}
