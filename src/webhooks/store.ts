// The only code that touches the webhook tables: `webhook_endpoints`, `webhook_deliveries` (one per
// event and endpoint) and `webhook_attempts`. Rows come typed from the MikroORM entities below;
// properties are named as their columns. Every status change is conditional on the status it
// leaves, so a retried activity or a racing request changes a delivery or an endpoint once.
import { createHash } from 'node:crypto';
import { type InferEntity, type FilterQuery, LockMode, p, raw } from '@mikro-orm/core';
import type { EntityManager } from '@mikro-orm/postgresql';
import { NEWEST_FIRST, keyMode, tableEntity, tenantOwned, timestamps } from '../db/columns.ts';
import { type Page, type Window, oneSnapshot, pageOf } from '../db/pages.ts';
import { entityColumns } from '../db/prepared.ts';
import { lockFor } from '../db/locks.ts';

/** What disables an endpoint (decisions §21): its tenant, its receiver's 410, or failing for too long. */
export const DISABLED_BY = ['tenant', 'gone', 'failures'] as const;
export type DisabledBy = (typeof DISABLED_BY)[number];

export const WebhookEndpoint = tableEntity('WebhookEndpoint', 'webhook_endpoints', {
  ...tenantOwned(),
  url: p.string(),
  mode: keyMode(),
  events: p.array(),
  secret_ciphertext: p.string(),
  status: p.enum(['listening', 'disabled', 'deleted'] as const),
  disabled_reason: p.string().nullable(),
  /** The secret a rotation replaced, still signing beside the new one until `previous_secret_expires_at`. */
  previous_secret_ciphertext: p.string().nullable(),
  previous_secret_expires_at: p.datetime().nullable(),
  disabled_at: p.datetime().nullable(),
  /** What disabled it: its tenant or its failures (its deliveries wait), or a 410 (its deliveries end). */
  disabled_by: p.enum(DISABLED_BY).nullable(),
  /** When the first attempt failed of the unbroken run of failures up to now; null after a success. */
  failing_since: p.datetime().nullable(),
  ...timestamps(),
});
export type EndpointRow = InferEntity<typeof WebhookEndpoint>;

export const DELIVERY_STATUSES = ['queued', 'retrying', 'succeeded', 'failed'] as const;

export const WebhookDelivery = tableEntity('WebhookDelivery', 'webhook_deliveries', {
  ...tenantOwned(),
  event_id: p.uuid(),
  endpoint_id: p.uuid(),
  event_type: p.string(),
  status: p.enum(DELIVERY_STATUSES),
  attempt_count: p.integer().default(0),
  signature: p.string().nullable(),
  replay_id: p.string().nullable(),
  /** The delivery of a test event: left out of the webhook metrics. */
  test: p.boolean().default(false),
  /** Since when the delivery has been waiting for its disabled endpoint to be enabled again. */
  paused_at: p.datetime().nullable(),
  ...timestamps(),
});
export type DeliveryRow = InferEntity<typeof WebhookDelivery>;
export type DeliveryStatus = DeliveryRow['status'];

export const WebhookAttempt = tableEntity('WebhookAttempt', 'webhook_attempts', {
  id: p.bigint('number').primary().autoincrement(),
  delivery_id: p.uuid(),
  number: p.integer(),
  attempted_at: p.datetime(),
  status_code: p.integer().nullable(),
  error: p.string().nullable(),
  duration_ms: p.integer(),
  response_body: p.string().nullable(),
  replay_id: p.string().nullable(),
});
export type AttemptRow = InferEntity<typeof WebhookAttempt>;

export const webhookEntities = [WebhookEndpoint, WebhookDelivery, WebhookAttempt];

export async function insertEndpoint(
  em: EntityManager,
  endpoint: Omit<
    EndpointRow,
    | 'disabled_reason'
    | 'previous_secret_ciphertext'
    | 'previous_secret_expires_at'
    | 'disabled_at'
    | 'disabled_by'
    | 'failing_since'
    | 'created_at'
    | 'updated_at'
  >,
): Promise<EndpointRow> {
  await em.insert(WebhookEndpoint, endpoint);
  return em.findOneOrFail(WebhookEndpoint, { id: endpoint.id }, { refresh: true });
}

/** At most this many endpoints per tenant (decisions §16); deleted ones do not count, disabled ones do. */
export const MAX_ENDPOINTS_PER_TENANT = 20;

/**
 * Takes the tenant's endpoint-registration lock for the rest of the transaction (registrations of
 * one tenant then count and insert one at a time; other tenants are not held up) and answers how
 * many endpoints the tenant has that count towards the limit: every one not deleted.
 */
export async function lockAndCountEndpoints(em: EntityManager, tenantId: string): Promise<number> {
  await lockFor(em, 'webhook-endpoints', tenantId);
  return em.count(WebhookEndpoint, { tenant_id: tenantId, status: { $ne: 'deleted' } });
}

export async function findEndpoint(em: EntityManager, id: string): Promise<EndpointRow | null> {
  return em.findOne(WebhookEndpoint, { id }, { refresh: true });
}

/** The tenant's endpoint, locked for the rest of the caller's transaction; null if it has none of this id. */
export async function lockEndpoint(em: EntityManager, id: string, tenantId: string): Promise<EndpointRow | null> {
  return em.findOne(
    WebhookEndpoint,
    { id, tenant_id: tenantId },
    { refresh: true, lockMode: LockMode.PESSIMISTIC_WRITE },
  );
}

/** The tenant's endpoints, deleted ones left out, newest first. */
export async function listEndpoints(em: EntityManager, tenantId: string, window: Window): Promise<Page<EndpointRow>> {
  return pageOf(em, WebhookEndpoint, { tenant_id: tenantId, status: { $ne: 'deleted' } }, NEWEST_FIRST, window);
}

/** What a fan-out pass owes its events: their tenants' listening endpoints, and the deliveries they have. */
export interface FanoutTargets {
  /** By tenant: each listening endpoint's id and the event types it subscribes to. */
  endpoints: Map<string, Pick<EndpointRow, 'id' | 'events'>[]>;
  /** By event: the endpoints an earlier pass queued a delivery to. */
  queued: Map<string, string[]>;
}

/**
 * A fan-out pass's targets for its whole batch, in one statement (its tenants' listening endpoints
 * and its events' existing deliveries, each aggregated in a subquery).
 */
export async function fanoutTargets(
  em: EntityManager,
  tenantIds: readonly string[],
  eventIds: readonly string[],
): Promise<FanoutTargets> {
  const [row] = await em.execute<
    {
      endpoints: { id: string; tenant_id: string; events: string[] }[] | null;
      queued: { event_id: string; endpoint_id: string }[] | null;
    }[]
  >(
    `select (select json_agg(json_build_object('id', e.id, 'tenant_id', e.tenant_id, 'events', e.events))
               from webhook_endpoints e where e.tenant_id = any(?::uuid[]) and e.status = 'listening') as endpoints,
            (select json_agg(json_build_object('event_id', d.event_id, 'endpoint_id', d.endpoint_id))
               from webhook_deliveries d where d.event_id = any(?::uuid[])) as queued`,
    [`{${[...new Set(tenantIds)].join(',')}}`, `{${[...new Set(eventIds)].join(',')}}`],
  );
  const endpoints = new Map<string, Pick<EndpointRow, 'id' | 'events'>[]>(tenantIds.map((id) => [id, []]));
  for (const endpoint of row?.endpoints ?? []) {
    endpoints.get(endpoint.tenant_id)?.push({ id: endpoint.id, events: endpoint.events });
  }
  const queued = new Map<string, string[]>(eventIds.map((id) => [id, []]));
  for (const delivery of row?.queued ?? []) queued.get(delivery.event_id)?.push(delivery.endpoint_id);
  return { endpoints, queued };
}

/**
 * Moves a tenant's endpoint out of `from`: deleted by the tenant, or disabled with the reason (by
 * the tenant, when its receiver answers 410, or after failing for too long), or enabled again by
 * the tenant (its reason, time and run of failures forgotten). Null if it was not in one of `from`.
 */
export async function changeEndpointStatus(
  em: EntityManager,
  id: string,
  change:
    | { from: EndpointRow['status'][]; to: 'deleted'; tenantId?: string }
    | { from: EndpointRow['status'][]; to: 'disabled'; tenantId?: string; by: DisabledBy; reason: string }
    | { from: ['disabled']; to: 'listening'; tenantId: string },
): Promise<EndpointRow | null> {
  const changed = await em.nativeUpdate(
    WebhookEndpoint,
    { id, status: { $in: change.from }, ...(change.tenantId ? { tenant_id: change.tenantId } : {}) },
    {
      status: change.to,
      updated_at: raw('now()'),
      ...(change.to === 'disabled'
        ? { disabled_reason: change.reason, disabled_by: change.by, disabled_at: raw('now()') }
        : {}),
      ...(change.to === 'listening'
        ? { disabled_reason: null, disabled_by: null, disabled_at: null, failing_since: null }
        : {}),
    },
  );
  return changed > 0 ? findEndpoint(em, id) : null;
}

/**
 * A tenant's change of an endpoint's URL or events (deleted ones are not changed). A new URL
 * starts its run of failures afresh: what failed was the old one. Null if there is no such endpoint.
 */
export async function updateEndpoint(
  em: EntityManager,
  id: string,
  tenantId: string,
  change: { url?: string | undefined; events?: string[] | undefined },
): Promise<EndpointRow | null> {
  const changed = await em.nativeUpdate(
    WebhookEndpoint,
    { id, tenant_id: tenantId, status: { $ne: 'deleted' } },
    {
      updated_at: raw('now()'),
      ...(change.url !== undefined ? { url: change.url, failing_since: null } : {}),
      ...(change.events !== undefined ? { events: change.events } : {}),
    },
  );
  return changed > 0 ? findEndpoint(em, id) : null;
}

/**
 * Replaces an endpoint's signing secret. In one statement, so that two rotations cannot interleave:
 * the secret it replaces signs beside the new one for `overlapHours` (none for 0), and a secret
 * kept from an earlier rotation, the oldest, is dropped. Null if there is no such endpoint.
 */
export async function rotateEndpointSecret(
  em: EntityManager,
  id: string,
  tenantId: string,
  rotation: { secretCiphertext: string; overlapHours: number },
): Promise<EndpointRow | null> {
  const kept = rotation.overlapHours > 0;
  const changed = await em.nativeUpdate(
    WebhookEndpoint,
    { id, tenant_id: tenantId, status: { $ne: 'deleted' } },
    {
      // The right-hand sides read the row as it was: the previous secret is the one replaced.
      previous_secret_ciphertext: kept ? raw('secret_ciphertext') : null,
      previous_secret_expires_at: kept ? raw(`now() + ? * interval '1 hour'`, [rotation.overlapHours]) : null,
      secret_ciphertext: rotation.secretCiphertext,
      updated_at: raw('now()'),
    },
  );
  return changed > 0 ? findEndpoint(em, id) : null;
}

/**
 * Notes an attempt's outcome on its endpoint: a success ends its run of failures; a failure starts
 * one (at the attempt's start) or extends it. Answers when the run began if it is now older than
 * `disableAfterMs` while the endpoint still listens (every attempt since has failed for that
 * long, and the endpoint is to be disabled), else null.
 */
export async function noteEndpointOutcome(
  em: EntityManager,
  id: string,
  outcome: { succeeded: boolean; attemptedAt: Date; disableAfterMs: number },
): Promise<Date | null> {
  if (outcome.succeeded) {
    await em.nativeUpdate(WebhookEndpoint, { id, failing_since: { $ne: null } }, { failing_since: null });
    return null;
  }
  // One statement, so that the run's start and the judgement read the same row.
  const [row] = await em.execute<{ failing_since: Date | string; overdue: boolean }[]>(
    `update webhook_endpoints set failing_since = coalesce(failing_since, ?)
      where id = ?
      returning failing_since,
                status = 'listening' and failing_since <= now() - ? * interval '1 millisecond' as overdue`,
    [outcome.attemptedAt, id, outcome.disableAfterMs],
  );
  return row?.overdue ? new Date(row.failing_since) : null;
}

export interface DeliveryFilter {
  tenantId: string;
  id?: string | undefined;
  eventId?: string | undefined;
  endpointId?: string | undefined;
  status?: string | undefined;
}

/** A delivery in a list carries at most this many of its attempts, the latest (decisions §16). */
export const LISTED_ATTEMPTS = 20;

/**
 * The attempts of these deliveries in order, at most the latest `latest` of each when given: read
 * backwards along (delivery_id, number) and stopped there, however many a delivery has.
 */
async function attemptsOf(em: EntityManager, deliveryIds: string[], latest: number | undefined): Promise<AttemptRow[]> {
  if (latest === undefined) {
    return em.find(WebhookAttempt, { delivery_id: { $in: deliveryIds } }, { orderBy: { number: 'asc' } });
  }
  const rows = await em.execute<Record<string, unknown>[]>(
    `select ${entityColumns(em, WebhookAttempt, 'a').join(', ')}
       from (values ${deliveryIds.map(() => '(?::uuid)').join(', ')}) as d (id)
       cross join lateral (
         select * from webhook_attempts w where w.delivery_id = d.id order by w.number desc limit ?
       ) a
      order by a.delivery_id, a.number`,
    [...deliveryIds, latest],
  );
  return rows.map((row) => em.map(WebhookAttempt, row));
}

/**
 * A page of deliveries, newest first, each with its endpoint's status and its attempts in order:
 * all of them, or only the latest `latestAttempts` of each (lists).
 */
export async function deliveryPage(
  em: EntityManager,
  filter: DeliveryFilter,
  window: Window,
  options: { latestAttempts?: number } = {},
): Promise<Page<DeliveryRow & { endpoint_state: EndpointRow['status']; attempts: AttemptRow[] }>> {
  const where: FilterQuery<DeliveryRow> = { tenant_id: filter.tenantId };
  if (filter.id !== undefined) where.id = filter.id;
  if (filter.eventId !== undefined) where.event_id = filter.eventId;
  if (filter.endpointId !== undefined) where.endpoint_id = filter.endpointId;
  if (filter.status !== undefined) where.status = filter.status as DeliveryStatus;
  // One snapshot for the page, its endpoints and its attempts: an attempt and the delivery status
  // it set commit together, and separate reads could show the attempt beside the status before it.
  return em.transactional(async (tx) => {
    const { rows, total } = await pageOf(tx, WebhookDelivery, where, NEWEST_FIRST, window);
    if (rows.length === 0) return { rows: [], total };
    const endpoints = await tx.find(WebhookEndpoint, {
      id: { $in: [...new Set(rows.map((row) => row.endpoint_id))] },
    });
    const attempts = await attemptsOf(
      tx,
      rows.map((row) => row.id),
      options.latestAttempts,
    );
    return {
      rows: rows.map((row) => ({
        ...row,
        endpoint_state: endpoints.find((endpoint) => endpoint.id === row.endpoint_id)!.status,
        attempts: attempts.filter((attempt) => attempt.delivery_id === row.id),
      })),
      total,
    };
  }, oneSnapshot());
}

/** An endpoint's deliveries created in [since, until), of one status if given, oldest first. */
export async function deliveriesCreatedBetween(
  em: EntityManager,
  endpointId: string,
  window: { since: Date; until: Date; status?: DeliveryStatus | undefined },
): Promise<DeliveryRow[]> {
  return em.find(
    WebhookDelivery,
    {
      endpoint_id: endpointId,
      created_at: { $gte: window.since, $lt: window.until },
      ...(window.status !== undefined ? { status: window.status } : {}),
    },
    { orderBy: { created_at: 'asc', id: 'asc' } },
  );
}

export async function findDelivery(em: EntityManager, id: string): Promise<DeliveryRow | null> {
  return em.findOne(WebhookDelivery, { id }, { refresh: true });
}

/** The delivery id of an (event, endpoint) pair: a UUID drawn from their hash, the same every time. */
export function deliveryIdFor(eventId: string, endpointId: string): string {
  const hex = createHash('sha256').update(`${eventId}:${endpointId}`).digest('hex');
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-5${hex.slice(13, 16)}-a${hex.slice(17, 20)}-${hex.slice(20, 32)}`;
}

/** The delivery of an event to an endpoint, once per pair: true when this call queued it. */
export async function queueDelivery(
  em: EntityManager,
  delivery: Pick<DeliveryRow, 'id' | 'tenant_id' | 'event_id' | 'endpoint_id' | 'event_type'> & { test?: boolean },
): Promise<boolean> {
  const inserted = await em
    .createQueryBuilder(WebhookDelivery)
    .insert({ ...delivery, status: 'queued' })
    .onConflict(['event_id', 'endpoint_id'])
    .ignore()
    .execute<{ affectedRows: number }>('run');
  return inserted.affectedRows > 0;
}

/** An attempt, once per (delivery, number), and the delivery's state after it. */
export async function recordAttempt(
  em: EntityManager,
  attempt: Omit<AttemptRow, 'id'>,
  delivery: { status: DeliveryStatus; signature: string | null },
): Promise<void> {
  await em
    .createQueryBuilder(WebhookAttempt)
    .insert(attempt)
    .onConflict(['delivery_id', 'number'])
    .ignore()
    .execute('run');
  await em.nativeUpdate(
    WebhookDelivery,
    { id: attempt.delivery_id },
    {
      status: delivery.status,
      attempt_count: raw('greatest(attempt_count, ?)', [attempt.number]),
      signature: delivery.signature,
      ...(attempt.replay_id ? { replay_id: attempt.replay_id } : {}),
      updated_at: raw('now()'),
    },
  );
}

/**
 * A delivery's status. A delivery that succeeded keeps its status when its retries end; it fails
 * only when an attempt finds its endpoint gone (`evenIfSucceeded`: a replay to a removed endpoint).
 */
export async function setDeliveryStatus(
  em: EntityManager,
  id: string,
  status: DeliveryStatus,
  options: { evenIfSucceeded: boolean },
): Promise<void> {
  await em.nativeUpdate(
    WebhookDelivery,
    { id, ...(options.evenIfSucceeded ? {} : { status: { $ne: 'succeeded' as const } }) },
    { status, updated_at: raw('now()') },
  );
}

/** A delivery found its endpoint disabled: it waits (once marked, its first time is kept). */
export async function pauseDelivery(em: EntityManager, id: string): Promise<void> {
  await em.nativeUpdate(WebhookDelivery, { id, paused_at: null }, { paused_at: raw('now()') });
}

/** A delivery found its endpoint listening again: it waits no more. */
export async function unpauseDelivery(em: EntityManager, id: string): Promise<void> {
  await em.nativeUpdate(WebhookDelivery, { id, paused_at: { $ne: null } }, { paused_at: null });
}

/** Deliveries waiting for an endpoint to be enabled, by id after `afterId`, `limit` of them. */
export async function pausedDeliveries(
  em: EntityManager,
  endpointId: string,
  page: { afterId?: string | undefined; limit: number },
): Promise<Pick<DeliveryRow, 'id' | 'event_id' | 'endpoint_id'>[]> {
  return em.find(
    WebhookDelivery,
    { endpoint_id: endpointId, paused_at: { $ne: null }, ...(page.afterId ? { id: { $gt: page.afterId } } : {}) },
    { fields: ['id', 'event_id', 'endpoint_id'], orderBy: { id: 'asc' }, limit: page.limit },
  );
}

/**
 * Deliveries still marked waiting although their endpoint has listened again for `graceMs` or more
 * (an enable whose wake-up was lost or is not finished): the longest waiting `limit` of them.
 */
export async function pausedDeliveriesOfListeningEndpoints(
  em: EntityManager,
  page: { graceMs: number; limit: number },
): Promise<Pick<DeliveryRow, 'id' | 'event_id' | 'endpoint_id'>[]> {
  return em.execute(
    `select d.id, d.event_id, d.endpoint_id
       from webhook_deliveries d join webhook_endpoints e on e.id = d.endpoint_id
      where d.paused_at is not null and e.status = 'listening'
        and e.updated_at < now() - ? * interval '1 millisecond'
      order by d.paused_at, d.id limit ?`,
    [page.graceMs, page.limit],
  );
}

/**
 * The deliveries of an endpoint created in [since, until) that have not succeeded and were
 * attempted: failed, or retrying after a failed attempt (what recover-since delivers again).
 */
export async function unsucceededDeliveries(
  em: EntityManager,
  endpointId: string,
  window: { since: Date; until: Date },
): Promise<DeliveryRow[]> {
  return em.find(
    WebhookDelivery,
    {
      endpoint_id: endpointId,
      created_at: { $gte: window.since, $lt: window.until },
      status: { $in: ['failed', 'retrying'] },
    },
    { orderBy: { created_at: 'asc', id: 'asc' } },
  );
}

export async function setReplayId(em: EntityManager, id: string, replayId: string): Promise<void> {
  await em.nativeUpdate(WebhookDelivery, { id }, { replay_id: replayId, updated_at: raw('now()') });
}
