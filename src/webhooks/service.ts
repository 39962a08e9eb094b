// Webhook endpoints, deliveries and the event log, as tenants see them. Every query is scoped to
// the calling tenant; another tenant's id is simply not found.
import { Filter, pageOf } from '../db/sql-pages.ts';
import { randomUUID } from 'node:crypto';
import type { EntityManager, MikroORM } from '@mikro-orm/postgresql';
import type { Client } from '@temporalio/client';
import { recordEvent } from '../events/events.ts';
import { ApiError } from '../http/errors.ts';
import { type Window, paginationView } from '../http/pagination.ts';
import type { ResolvedKey } from '../tenants/tenants.ts';
import {
  DELIVERY_WORKFLOW_TYPE,
  type DeliveryInput,
  deliveryWorkflowId,
  replaySignal,
} from '../../workflows/webhook-delivery-definitions.ts';
import type { webhookDeliveryWorkflow } from '../../workflows/webhook-delivery.ts';
import { DestinationRefused, type EgressPolicy, checkDestination } from './destinations.ts';
import { encryptSecret } from './secrets.ts';
import { isUuid } from '../http/ids.ts';

export interface WebhookServiceDeps {
  orm: MikroORM;
  client: Client;
  taskQueue: string;
  encryptionKey: Buffer;
  scheduleMs: number[];
  egress: EgressPolicy;
}

interface EndpointRow {
  id: string;
  tenant_id: string;
  url: string;
  events: string[];
  status: string;
  disabled_reason: string | null;
  created_at: Date;
  updated_at: Date;
}

interface DeliveryRow {
  id: string;
  tenant_id: string;
  event_id: string;
  endpoint_id: string;
  event_type: string;
  status: string;
  attempt_count: number;
  signature: string | null;
  replay_id: string | null;
  endpoint_state: string;
  created_at: Date;
  updated_at: Date;
}

interface EventRow {
  id: string;
  type: string;
  payload: Record<string, unknown>;
  created_at: Date;
}

const iso = (value: Date) => new Date(value).toISOString();

export function endpointView(row: EndpointRow) {
  return {
    id: row.id,
    url: row.url,
    events: row.events,
    status: row.status,
    ...(row.disabled_reason ? { disabled_reason: row.disabled_reason } : {}),
    created_at: iso(row.created_at),
    updated_at: iso(row.updated_at),
  };
}

export function eventView(row: EventRow) {
  return { id: row.id, type: row.type, created_at: iso(row.created_at), data: row.payload };
}

export class WebhookService {
  private readonly deps: WebhookServiceDeps;

  constructor(deps: WebhookServiceDeps) {
    this.deps = deps;
  }

  async register(tenant: ResolvedKey, body: { url: string; events: string[]; signing_secret: string }) {
    try {
      await checkDestination(body.url, tenant.mode, this.deps.egress);
    } catch (error) {
      if (error instanceof DestinationRefused) throw ApiError.validation([{ path: 'url', message: error.message }]);
      throw error;
    }
    const id = randomUUID();
    return this.deps.orm.em.fork().transactional(async (tx) => {
      const [row] = await tx.execute<EndpointRow[]>(
        `insert into webhook_endpoints (id, tenant_id, url, mode, events, secret_ciphertext, status)
         values (?, ?, ?, ?, array(select jsonb_array_elements_text(?::jsonb)), ?, 'listening') returning *`,
        [
          id,
          tenant.tenantId,
          body.url,
          tenant.mode,
          JSON.stringify([...new Set(body.events)]),
          encryptSecret(this.deps.encryptionKey, body.signing_secret),
        ],
      );
      const eventId = await recordEvent(tx, {
        tenantId: tenant.tenantId,
        type: 'webhook.endpoint.created',
        sourceKey: `webhook_endpoint:${id}:created`,
        payload: endpointView(row!),
      });
      return {
        id,
        url: row!.url,
        events: row!.events,
        status: row!.status,
        event_id: eventId,
        created_at: iso(row!.created_at),
      };
    });
  }

  async listEndpoints(tenantId: string, window: Window) {
    const { rows, total } = await pageOf<EndpointRow>(this.deps.orm.em.fork(), {
      from: 'webhook_endpoints',
      filter: new Filter('tenant_id = ?', tenantId).where(`status <> 'deleted'`),
      orderBy: 'created_at desc, id desc',
      window,
    });
    return { items: rows.map(endpointView), pagination: paginationView(window, total) };
  }

  async deleteEndpoint(tenantId: string, id: string) {
    const [row] = isUuid(id)
      ? await this.deps.orm.em.fork().execute<EndpointRow[]>(
          `update webhook_endpoints set status = 'deleted', updated_at = now()
              where id = ? and tenant_id = ? and status <> 'deleted' returning *`,
          [id, tenantId],
        )
      : [];
    if (!row) throw ApiError.notFound(`webhook endpoint ${id}`);
    return endpointView(row);
  }

  /** A page of deliveries with their endpoint's state and their attempts, and the total. */
  private async deliveryRows(filter: Filter, window: Window) {
    const em = this.deps.orm.em.fork();
    const { rows, total } = await pageOf<DeliveryRow>(em, {
      columns: 'd.*, w.status as endpoint_state',
      from: 'webhook_deliveries d join webhook_endpoints w on w.id = d.endpoint_id',
      filter,
      orderBy: 'd.created_at desc, d.id desc',
      window,
    });
    return { items: await this.withAttempts(em, rows), total };
  }

  private async withAttempts(em: EntityManager, rows: DeliveryRow[]) {
    if (rows.length === 0) return [];
    const placeholders = rows.map(() => '?').join(', ');
    const attempts = await em.execute<
      {
        delivery_id: string;
        number: number;
        attempted_at: Date;
        status_code: number | null;
        error: string | null;
        duration_ms: number;
        response_body: string | null;
        replay_id: string | null;
      }[]
    >(
      `select * from webhook_attempts where delivery_id in (${placeholders}) order by number`,
      rows.map((row) => row.id),
    );
    return rows.map((row) => {
      const own = attempts.filter((attempt) => attempt.delivery_id === row.id);
      return {
        id: row.id,
        event_id: row.event_id,
        endpoint_id: row.endpoint_id,
        event_type: row.event_type,
        status: row.status,
        attempt_count: row.attempt_count,
        // The HTTP status the endpoint answered to the latest attempt; null without an answer.
        endpoint_status: own.at(-1)?.status_code ?? null,
        endpoint_state: row.endpoint_state,
        signature: row.signature,
        replay_id: row.replay_id,
        attempts: own.map((attempt) => ({
          number: attempt.number,
          attempted_at: iso(attempt.attempted_at),
          status_code: attempt.status_code,
          error: attempt.error,
          duration_ms: attempt.duration_ms,
          response_body: attempt.response_body,
          replay_id: attempt.replay_id,
        })),
        created_at: iso(row.created_at),
        updated_at: iso(row.updated_at),
      };
    });
  }

  async listDeliveries(
    tenantId: string,
    filters: { event_id?: string | undefined; endpoint_id?: string | undefined; status?: string | undefined },
    window: Window,
  ) {
    const filter = new Filter('d.tenant_id = ?', tenantId);
    for (const [column, value] of [
      ['d.event_id', filters.event_id],
      ['d.endpoint_id', filters.endpoint_id],
    ] as const) {
      if (value === undefined) continue;
      if (!isUuid(value)) return { items: [], pagination: paginationView(window, 0) };
      filter.where(`${column} = ?`, value);
    }
    const { items, total } = await this.deliveryRows(filter.equals('d.status', filters.status || undefined), window);
    return { items, pagination: paginationView(window, total) };
  }

  async getDelivery(tenantId: string, id: string) {
    const [delivery] = isUuid(id)
      ? (await this.deliveryRows(new Filter('d.id = ? and d.tenant_id = ?', id, tenantId), { limit: 1, offset: 0 }))
          .items
      : [];
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
    const replayId = `rpl_${randomUUID().replaceAll('-', '')}`;
    const input: DeliveryInput = {
      deliveryId: delivery.id,
      tenantId,
      eventId: delivery.event_id,
      endpointId: delivery.endpoint_id,
      scheduleMs: this.deps.scheduleMs,
      jitter: 0.2,
      previousAttempts: delivery.attempt_count,
    };
    await this.deps.client.workflow.signalWithStart<typeof webhookDeliveryWorkflow, [{ replayId: string }]>(
      DELIVERY_WORKFLOW_TYPE,
      {
        workflowId: deliveryWorkflowId(delivery.event_id, delivery.endpoint_id),
        taskQueue: this.deps.taskQueue,
        args: [input],
        signal: replaySignal,
        signalArgs: [{ replayId }],
        workflowIdReusePolicy: 'ALLOW_DUPLICATE',
      },
    );
    await this.deps.orm.em
      .fork()
      .execute('update webhook_deliveries set replay_id = ?, updated_at = now() where id = ?', [replayId, delivery.id]);
    return { delivery_id: delivery.id, replay_id: replayId };
  }

  async listEvents(tenantId: string, filters: { type?: string | undefined }, window: Window) {
    const { rows, total } = await pageOf<EventRow>(this.deps.orm.em.fork(), {
      columns: 'id, type, payload, created_at',
      from: 'events',
      filter: new Filter('tenant_id = ?', tenantId).equals('type', filters.type || undefined),
      orderBy: 'created_at desc, id desc',
      window,
    });
    return { items: rows.map(eventView), pagination: paginationView(window, total) };
  }

  async getEvent(tenantId: string, id: string) {
    const [row] = isUuid(id)
      ? await this.deps.orm.em
          .fork()
          .execute<EventRow[]>('select id, type, payload, created_at from events where id = ? and tenant_id = ?', [
            id,
            tenantId,
          ])
      : [];
    if (!row) throw ApiError.notFound(`event ${id}`);
    return eventView(row);
  }
}
