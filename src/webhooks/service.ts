// Webhook endpoints, deliveries and the event log, as tenants see them. Every query is scoped to
// the calling tenant; another tenant's id is simply not found.
import { randomUUID } from 'node:crypto';
import type { EntityManager, MikroORM } from '@mikro-orm/postgresql';
import type { Client } from '@temporalio/client';
import type { EventType } from '../events/event-types.ts';
import { type EventRow, findEvent, listEvents, recordEvent, recordTestEvent } from '../events/events.ts';
import { ApiError } from '../http/errors.ts';
import { type Window, paginationView } from '../http/pagination.ts';
import type { ResolvedKey } from '../tenants/tenants.ts';
import {
  DELIVERY_WORKFLOW_TYPE,
  type DeliveryInput,
  deliveryWorkflowId,
  replaySignal,
} from '../../workflows/webhooks/definitions.ts';
import type { webhookDeliveryWorkflow } from '../../workflows/webhooks/webhook-delivery.ts';
import { DestinationRefused, type EgressPolicy, checkDestination } from './destinations.ts';
import { encryptSecret } from './secrets.ts';
import { isUuid } from '../http/ids.ts';
import type { DeliveryView, EndpointView, EventView, RegisterEndpointBody } from './schemas.ts';
import {
  type DeliveryFilter,
  type EndpointRow,
  changeEndpointStatus,
  deliveryIdFor,
  deliveryPage,
  findEndpoint,
  LISTED_ATTEMPTS,
  MAX_ENDPOINTS_PER_TENANT,
  insertEndpoint,
  listEndpoints,
  lockAndCountEndpoints,
  queueDelivery,
  setReplayId,
} from './store.ts';
import { testEventData } from '../events/test-events.ts';

export interface WebhookServiceDeps {
  orm: MikroORM;
  client: Client;
  taskQueue: string;
  encryptionKey: Buffer;
  scheduleMs: number[];
  egress: EgressPolicy;
}

export function endpointView(row: EndpointRow): EndpointView {
  return {
    id: row.id,
    url: row.url,
    events: row.events,
    status: row.status,
    ...(row.disabled_reason ? { disabled_reason: row.disabled_reason } : {}),
    created_at: row.created_at.toISOString(),
    updated_at: row.updated_at.toISOString(),
  };
}

export function eventView(row: EventRow): EventView {
  return { id: row.id, type: row.type, created_at: row.created_at.toISOString(), data: row.payload };
}

export class WebhookService {
  private readonly deps: WebhookServiceDeps;

  constructor(deps: WebhookServiceDeps) {
    this.deps = deps;
  }

  async register(tenant: ResolvedKey, body: RegisterEndpointBody) {
    try {
      await checkDestination(body.url, tenant.mode, this.deps.egress);
    } catch (error) {
      if (error instanceof DestinationRefused) throw ApiError.validation([{ path: 'url', message: error.message }]);
      throw error;
    }
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
    return { items: rows.map(endpointView), pagination: paginationView(window, total) };
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
    return endpointView(row);
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
