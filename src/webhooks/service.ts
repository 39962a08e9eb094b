// Webhook endpoints, deliveries and the event log, as tenants see them. Every query is scoped to
// the calling tenant; another tenant's id is simply not found.
import { randomUUID } from 'node:crypto';
import type { EntityManager, MikroORM } from '@mikro-orm/postgresql';
import { type Client, WorkflowNotFoundError } from '@temporalio/client';
import type { EventType } from '../events/event-types.ts';
import { type EventRow, findEvent, listEvents, recordEvent, recordTestEvent } from '../events/events.ts';
import { ApiError } from '../http/errors.ts';
import { type Window, paginationView } from '../http/pagination.ts';
import type { ResolvedKey } from '../tenants/tenants.ts';
import {
  DELIVERY_WORKFLOW_TYPE,
  type DeliveryInput,
  deliveryWorkflowId,
  endpointEnabledSignal,
  replaySignal,
} from '../../workflows/webhooks/definitions.ts';
import type { webhookDeliveryWorkflow } from '../../workflows/webhooks/webhook-delivery.ts';
import { DestinationRefused, type EgressPolicy, checkDestination } from './destinations.ts';
import { encryptSecret } from './secrets.ts';
import { isUuid } from '../http/ids.ts';
import {
  type DeliveryView,
  type EventView,
  RECOVER_MAX_DAYS,
  type RecoverBody,
  type RegisterEndpointBody,
  type RotateSecretBody,
  type UpdateEndpointBody,
} from './schemas.ts';
import {
  type DeliveryFilter,
  changeEndpointStatus,
  deliveryIdFor,
  deliveryPage,
  findEndpoint,
  LISTED_ATTEMPTS,
  MAX_ENDPOINTS_PER_TENANT,
  insertEndpoint,
  listEndpoints,
  lockAndCountEndpoints,
  lockEndpoint,
  pausedDeliveries,
  queueDelivery,
  rotateEndpointSecret,
  setReplayId,
  unpauseDelivery,
  unsucceededDeliveries,
  updateEndpoint,
} from './store.ts';
import { DISABLED_BY_TENANT, disableEndpoint, endpointView } from './lifecycle.ts';
import { testEventData } from '../events/test-events.ts';

export interface WebhookServiceDeps {
  orm: MikroORM;
  client: Client;
  taskQueue: string;
  encryptionKey: Buffer;
  scheduleMs: number[];
  egress: EgressPolicy;
}

export function eventView(row: EventRow): EventView {
  return { id: row.id, type: row.type, created_at: row.created_at.toISOString(), data: row.payload };
}

export class WebhookService {
  private readonly deps: WebhookServiceDeps;

  constructor(deps: WebhookServiceDeps) {
    this.deps = deps;
  }

  /** A URL an endpoint may have: 400 naming `url` if its tenant's mode may not send there. */
  private async checkUrl(url: string, mode: ResolvedKey['mode']): Promise<void> {
    try {
      await checkDestination(url, mode, this.deps.egress);
    } catch (error) {
      if (error instanceof DestinationRefused) throw ApiError.validation([{ path: 'url', message: error.message }]);
      throw error;
    }
  }

  async register(tenant: ResolvedKey, body: RegisterEndpointBody) {
    await this.checkUrl(body.url, tenant.mode);
    const id = randomUUID();
    return this.deps.orm.em.fork().transactional(async (tx) => {
      // Counted under the tenant's lock, so concurrent registrations cannot both take the last place.
      const endpoints = await lockAndCountEndpoints(tx, tenant.tenantId);
      if (endpoints >= MAX_ENDPOINTS_PER_TENANT) {
        throw new ApiError(
          'failed_precondition',
          `a tenant may have at most ${MAX_ENDPOINTS_PER_TENANT} webhook endpoints and this one has ${endpoints} ` +
            '(disabled ones count, deleted ones do not): delete one before registering another',
          { limit: MAX_ENDPOINTS_PER_TENANT, endpoints },
        );
      }
      const row = await insertEndpoint(tx, {
        id,
        tenant_id: tenant.tenantId,
        url: body.url,
        mode: tenant.mode,
        events: [...new Set(body.events)],
        secret_ciphertext: encryptSecret(this.deps.encryptionKey, body.signing_secret),
        status: 'listening',
      });
      const eventId = await recordEvent(tx, {
        tenantId: tenant.tenantId,
        type: 'webhook.endpoint.created',
        sourceKey: `webhook_endpoint:${id}:created`,
        payload: endpointView(row),
      });
      return {
        id,
        url: row.url,
        events: row.events,
        status: row.status,
        event_id: eventId,
        created_at: row.created_at.toISOString(),
      };
    });
  }

  async listEndpoints(tenantId: string, window: Window) {
    const { rows, total } = await listEndpoints(this.deps.orm.em.fork(), tenantId, window);
    return { items: rows.map((row) => endpointView(row)), pagination: paginationView(window, total) };
  }

  /** One of the tenant's endpoints (a deleted one is not found, as in the list). */
  async getEndpoint(tenantId: string, id: string) {
    const row = isUuid(id) ? await findEndpoint(this.deps.orm.em.fork(), id) : null;
    if (!row || row.tenant_id !== tenantId || row.status === 'deleted') {
      throw ApiError.notFound(`webhook endpoint ${id}`);
    }
    return endpointView(row);
  }

  async deleteEndpoint(tenantId: string, id: string) {
    const row = isUuid(id)
      ? await changeEndpointStatus(this.deps.orm.em.fork(), id, {
          from: ['listening', 'disabled'],
          to: 'deleted',
          tenantId,
        })
      : null;
    if (!row) throw ApiError.notFound(`webhook endpoint ${id}`);
    // Deliveries that waited for it to be enabled end now (their attempt finds it deleted); a
    // wake-up cut short (Temporal away) is finished by the webhook feature's sweep, not refused.
    await wakePausedDeliveries(this.deps, id).catch(() => 0);
    return endpointView(row);
  }

  /**
   * PATCH (decisions §21): a new URL (checked as at registration), new events, or enabled. A
   * disable records `webhook.endpoint.disabled`; its deliveries wait. An enable wakes them.
   */
  async updateEndpoint(tenant: ResolvedKey, id: string, body: UpdateEndpointBody) {
    const notFound = () => ApiError.notFound(`webhook endpoint ${id}`);
    if (!isUuid(id)) throw notFound();
    if (body.url !== undefined) await this.checkUrl(body.url, tenant.mode);
    let enabled = false;
    const row = await this.deps.orm.em.fork().transactional(async (tx) => {
      // Locked, so that the changes below apply to the endpoint as read here, all or none.
      const current = await lockEndpoint(tx, id, tenant.tenantId);
      if (!current || current.status === 'deleted') throw notFound();
      if (body.url !== undefined || body.events !== undefined) {
        await updateEndpoint(tx, id, tenant.tenantId, {
          url: body.url,
          events: body.events && [...new Set(body.events)],
        });
      }
      // An endpoint already disabled keeps its reason (a 410, its failures) and records nothing.
      if (body.enabled === false) await disableEndpoint(tx, id, { by: 'tenant', reason: DISABLED_BY_TENANT });
      if (body.enabled === true) {
        enabled =
          (await changeEndpointStatus(tx, id, { from: ['disabled'], to: 'listening', tenantId: tenant.tenantId })) !==
          null;
      }
      return (await findEndpoint(tx, id))!;
    });
    // After the commit, so that a woken delivery finds its endpoint listening. The change is made
    // whatever happens next: a wake-up cut short (Temporal away) is finished by the webhook
    // feature's sweep, and the deliveries' own recheck.
    if (enabled) await wakePausedDeliveries(this.deps, id).catch(() => 0);
    return endpointView(row);
  }

  /**
   * Replaces the endpoint's signing secret (decisions §21); the secret replaced keeps signing beside
   * it for `overlap_hours`, and one kept from an earlier rotation is dropped.
   */
  async rotateSecret(tenantId: string, id: string, body: RotateSecretBody) {
    const row = isUuid(id)
      ? await rotateEndpointSecret(this.deps.orm.em.fork(), id, tenantId, {
          secretCiphertext: encryptSecret(this.deps.encryptionKey, body.signing_secret),
          overlapHours: body.overlap_hours,
        })
      : null;
    if (!row) throw ApiError.notFound(`webhook endpoint ${id}`);
    return endpointView(row);
  }

  /**
   * Recover since (decisions §21): delivers again now, as a replay does, every delivery of the
   * endpoint created since `since` that has not succeeded and was attempted (failed, or retrying
   * after a failed attempt). Answers how many.
   */
  async recover(tenantId: string, id: string, body: RecoverBody) {
    const since = new Date(body.since);
    const now = new Date();
    if (since.getTime() < now.getTime() - RECOVER_MAX_DAYS * 24 * 60 * 60 * 1000) {
      throw ApiError.validation([{ path: 'since', message: `must be at most ${RECOVER_MAX_DAYS} days ago` }]);
    }
    if (since > now) throw ApiError.validation([{ path: 'since', message: 'must not be in the future' }]);
    const em = this.deps.orm.em.fork();
    const endpoint = isUuid(id) ? await findEndpoint(em, id) : null;
    if (!endpoint || endpoint.tenant_id !== tenantId || endpoint.status === 'deleted') {
      throw ApiError.notFound(`webhook endpoint ${id}`);
    }
    if (endpoint.status !== 'listening') {
      throw new ApiError(
        'failed_precondition',
        `the endpoint ${id} is ${endpoint.status}: enable it (PATCH {"enabled": true}) before recovering its deliveries`,
      );
    }
    const rows = await unsucceededDeliveries(em, id, { since, until: now });
    await inBatches(rows, RECOVER_CONCURRENCY, (row) => replayDelivery(this.deps, em.fork(), row));
    return { recovering: rows.length };
  }

  /** A page of deliveries with their endpoint's state and their attempts, and the total. */
  private async deliveryRows(
    filter: DeliveryFilter,
    window: Window,
    options: { latestAttempts?: number } = {},
  ): Promise<{ items: DeliveryView[]; total: number }> {
    const { rows, total } = await deliveryPage(this.deps.orm.em.fork(), filter, window, options);
    const items = rows.map((row) => ({
      id: row.id,
      event_id: row.event_id,
      endpoint_id: row.endpoint_id,
      event_type: row.event_type,
      status: row.status,
      attempt_count: row.attempt_count,
      // The HTTP status the endpoint answered to the latest attempt; null without an answer.
      endpoint_status: row.attempts.at(-1)?.status_code ?? null,
      endpoint_state: row.endpoint_state,
      signature: row.signature ?? null,
      replay_id: row.replay_id ?? null,
      attempts: row.attempts.map((attempt) => ({
        number: attempt.number,
        attempted_at: attempt.attempted_at.toISOString(),
        status_code: attempt.status_code ?? null,
        error: attempt.error ?? null,
        duration_ms: attempt.duration_ms,
        response_body: attempt.response_body ?? null,
        replay_id: attempt.replay_id ?? null,
      })),
      created_at: row.created_at.toISOString(),
      updated_at: row.updated_at.toISOString(),
    }));
    return { items, total };
  }

  async listDeliveries(
    tenantId: string,
    filters: { event_id?: string | undefined; endpoint_id?: string | undefined; status?: string | undefined },
    window: Window,
  ) {
    // An id that is not a UUID matches no delivery.
    for (const value of [filters.event_id, filters.endpoint_id]) {
      if (value !== undefined && !isUuid(value)) return { items: [], pagination: paginationView(window, 0) };
    }
    const { items, total } = await this.deliveryRows(
      { tenantId, eventId: filters.event_id, endpointId: filters.endpoint_id, status: filters.status || undefined },
      window,
      // A listed delivery carries its latest attempts only; GET …/{id} has them all.
      { latestAttempts: LISTED_ATTEMPTS },
    );
    return { items, pagination: paginationView(window, total) };
  }

  async getDelivery(tenantId: string, id: string) {
    const [delivery] = isUuid(id) ? (await this.deliveryRows({ tenantId, id }, { limit: 1, offset: 0 })).items : [];
    if (!delivery) throw ApiError.notFound(`webhook delivery ${id}`);
    return delivery;
  }

  /** Delivers the event again now, with the same webhook-id; starts a new run if the delivery had ended. */
  async replay(tenantId: string, id: string) {
    const delivery = await this.getDelivery(tenantId, id);
    if (delivery.endpoint_state !== 'listening') {
      throw new ApiError(
        'failed_precondition',
        `the endpoint of delivery ${id} is ${delivery.endpoint_state}: nothing can be delivered to it`,
      );
    }
    return replayDelivery(this.deps, this.deps.orm.em.fork(), { ...delivery, tenant_id: tenantId });
  }

  /**
   * A test event to one of the tenant's endpoints (decisions §15): `webhook.endpoint.test`, or a
   * sample of `type`, marked `"test": true`, delivered to that endpoint only, at once (the fan-out
   * starts its delivery). It moves no money and counts in no statement, stream or metric.
   */
  async sendTestEvent(tenantId: string, endpointId: string, type: EventType | undefined) {
    const em = this.deps.orm.em.fork();
    const endpoint = isUuid(endpointId) ? await findEndpoint(em, endpointId) : null;
    if (!endpoint || endpoint.tenant_id !== tenantId || endpoint.status === 'deleted') {
      throw ApiError.notFound(`webhook endpoint ${endpointId}`);
    }
    if (endpoint.status !== 'listening') {
      throw new ApiError(
        'failed_precondition',
        `the endpoint ${endpointId} is ${endpoint.status}: nothing can be delivered to it`,
      );
    }
    const { type: eventType, payload } = testEventData(type, endpoint);
    return em.transactional(async (tx) => {
      const event = await recordTestEvent(tx, { tenantId, type: eventType, payload });
      const deliveryId = deliveryIdFor(event.id, endpoint.id);
      await queueDelivery(tx, {
        id: deliveryId,
        tenant_id: tenantId,
        event_id: event.id,
        endpoint_id: endpoint.id,
        event_type: eventType,
        test: true,
      });
      return { event_id: event.id, delivery_id: deliveryId };
    });
  }

  async listEvents(
    tenantId: string,
    filters: { type?: string | undefined; data_id?: string | undefined },
    window: Window,
  ) {
    const { rows, total } = await listEvents(
      this.deps.orm.em.fork(),
      tenantId,
      filters.type || undefined,
      window,
      filters.data_id || undefined,
    );
    return { items: rows.map(eventView), pagination: paginationView(window, total) };
  }

  async getEvent(tenantId: string, id: string) {
    const row = isUuid(id) ? await findEvent(this.deps.orm.em.fork(), tenantId, id) : null;
    if (!row) throw ApiError.notFound(`event ${id}`);
    return eventView(row);
  }
}

/** Replays of one recover request made at once. */
const RECOVER_CONCURRENCY = 8;
/** Deliveries woken per page, and signals sent at once, when an endpoint is enabled again. */
const WAKE_PAGE = 500;
const WAKE_CONCURRENCY = 16;

/** Runs `act` on every item, at most `concurrency` at once, and waits for all (the first failure is thrown). */
async function inBatches<T>(items: readonly T[], concurrency: number, act: (item: T) => Promise<unknown>) {
  let next = 0;
  const worker = async () => {
    while (next < items.length) await act(items[next++]!);
  };
  await Promise.all(Array.from({ length: Math.min(concurrency, items.length) }, worker));
}

/**
 * Tells the deliveries waiting for this endpoint that it changed (enabled again, or deleted): each
 * tries its attempt again at once. Page by page, a bounded number of signals at once, however many
 * there are; a delivery whose workflow has ended is passed over. Answers how many were signalled.
 */
export async function wakePausedDeliveries(deps: { orm: MikroORM; client: Client }, endpointId: string) {
  let afterId: string | undefined;
  let woken = 0;
  for (;;) {
    const rows = await pausedDeliveries(deps.orm.em.fork(), endpointId, { afterId, limit: WAKE_PAGE });
    if (rows.length === 0) break;
    await inBatches(rows, WAKE_CONCURRENCY, async (row) => {
      if (await signalWaitingDelivery(deps, row)) woken += 1;
    });
    afterId = rows.at(-1)!.id;
  }
  return woken;
}

/**
 * Signals one waiting delivery's workflow that its endpoint changed. False if the workflow has
 * ended (terminated by an operator): nothing waits any more, and the mark is cleared.
 */
export async function signalWaitingDelivery(
  deps: { orm: MikroORM; client: Client },
  delivery: { id: string; event_id: string; endpoint_id: string },
): Promise<boolean> {
  try {
    await deps.client.workflow
      .getHandle(deliveryWorkflowId(delivery.event_id, delivery.endpoint_id))
      .signal(endpointEnabledSignal);
    return true;
  } catch (error) {
    if (!(error instanceof WorkflowNotFoundError)) throw error;
    await unpauseDelivery(deps.orm.em.fork(), delivery.id);
    return false;
  }
}

/**
 * Delivers an event to an endpoint again now, with the same webhook-id: signals the delivery's
 * workflow, or starts a new run if it had ended. The API's replay and the operators' bulk replay.
 */
export async function replayDelivery(
  deps: { client: Client; taskQueue: string; scheduleMs: number[] },
  em: EntityManager,
  delivery: { id: string; tenant_id: string; event_id: string; endpoint_id: string; attempt_count: number },
): Promise<{ delivery_id: string; replay_id: string }> {
  const replayId = `rpl_${randomUUID().replaceAll('-', '')}`;
  const input: DeliveryInput = {
    deliveryId: delivery.id,
    tenantId: delivery.tenant_id,
    eventId: delivery.event_id,
    endpointId: delivery.endpoint_id,
    scheduleMs: deps.scheduleMs,
    jitter: 0.2,
    previousAttempts: delivery.attempt_count,
  };
  await deps.client.workflow.signalWithStart<typeof webhookDeliveryWorkflow, [{ replayId: string }]>(
    DELIVERY_WORKFLOW_TYPE,
    {
      workflowId: deliveryWorkflowId(delivery.event_id, delivery.endpoint_id),
      taskQueue: deps.taskQueue,
      args: [input],
      signal: replaySignal,
      signalArgs: [{ replayId }],
      workflowIdReusePolicy: 'ALLOW_DUPLICATE',
    },
  );
  await setReplayId(em, delivery.id, replayId);
  return { delivery_id: delivery.id, replay_id: replayId };
}
