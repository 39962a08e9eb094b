// Webhooks (decisions §22): the tenant's endpoints (add, edit its URL and events, disable and enable,
// rotate its secret, recover what it missed, send a test event, delete; decisions §21), their
// deliveries with every attempt and what the tenant's server answered, and replay. Every form calls
// the API's own route as the person.
import { randomBytes } from 'node:crypto';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { ApiRefusal, refusalOf, withQuery } from '../api.ts';
import type { ConsoleDeps } from '../plugin.ts';
import { withMode } from '../plugin.ts';
import { sendPage } from '../render.ts';
import { consoleRoutes, formList, formOf, pathId, queryOf } from '../routes.ts';
import { type ApiList, pageParam, pagerOf } from './paging.ts';

interface Endpoint {
  id: string;
  url: string;
  events: string[];
  status: string;
  enabled: boolean;
  disabled_reason?: string;
  disabled_at?: string;
  failing_since?: string;
  previous_secret_expires_at?: string;
  created_at: string;
}

interface Delivery {
  id: string;
  event_id: string;
  endpoint_id: string;
  event_type: string;
  status: string;
  attempt_count: number;
  endpoint_status: number | null;
  attempts: unknown[];
  created_at: string;
  updated_at: string;
}

const DELIVERY_STATUSES = ['queued', 'retrying', 'succeeded', 'failed'];

const NOTICES: Record<string, string> = {
  'endpoint-deleted': 'The endpoint was deleted: nothing more is delivered to it.',
  'test-sent': 'A test event is on its way to this endpoint: its delivery is listed below.',
  replayed: 'The event is being delivered again, with the same webhook-id.',
  'endpoint-updated': 'The endpoint was changed: the next deliveries use its new URL and events.',
  'endpoint-disabled':
    'The endpoint is disabled: nothing is attempted and nothing fails; its deliveries wait until you enable it.',
  'endpoint-enabled': 'The endpoint is enabled: the deliveries that waited are on their way.',
};

/** A datetime-local field's value (Lagos time, UTC+1 all year) as an ISO time; anything else as given, for the API to refuse. */
function lagosInstant(value: string): string {
  return /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}$/.test(value) ? `${value}:00+01:00` : value;
}

/** The form's event checkboxes: none, or `*` among them, is every event. */
function eventsOf(request: FastifyRequest): string[] {
  const picked = formList(request, 'events');
  return picked.length === 0 || picked.includes('*') ? ['*'] : picked;
}

const noEndpoint = () => new ApiRefusal(404, 'There is no such webhook endpoint.', 'not_found');
const noDelivery = () => new ApiRefusal(404, 'There is no such delivery.', 'not_found');

/** A Standard Webhooks secret: whsec_ and 32 random bytes in base64. */
function newSigningSecret(): string {
  return `whsec_${randomBytes(32).toString('base64')}`;
}

export function webhookPages(scope: FastifyInstance, deps: ConsoleDeps): void {
  const route = consoleRoutes(scope);

  route.get('/webhooks', async (request, reply) =>
    withMode(request, reply, deps, 'Webhooks', 'webhooks', async (frame, key) => {
      const query = queryOf(request);
      const page = pageParam(query.page);
      const [list, types] = await Promise.all([
        deps.api.ok<ApiList<Endpoint>>(request, key, 'GET', withQuery('/api/v1/webhook-endpoints', { page })),
        deps.api.ok<{ data: { items: { type: string; description: string }[] } }>(
          request,
          key,
          'GET',
          '/api/v1/event-types',
        ),
      ]);
      return sendPage(reply, 'webhooks/index', frame, {
        endpoints: list.data.items,
        pager: pagerOf('/dashboard/webhooks', {}, list.data.pagination),
        eventTypes: types.data.items.map((item) => item.type),
        notices: NOTICES,
      });
    }),
  );

  route.post('/webhooks/endpoints', async (request, reply) =>
    withMode(request, reply, deps, 'Endpoint added', 'webhooks', async (frame, key) => {
      const form = formOf(request);
      const events = eventsOf(request);
      const made = form.signing_secret ? undefined : newSigningSecret();
      const answer = await deps.api.call(request, key, 'POST', '/api/v1/webhook-endpoints', {
        url: form.url ?? '',
        events,
        signing_secret: form.signing_secret || made,
      });
      if (answer.status >= 400) throw refusalOf(answer);
      const endpoint = (answer.body as { data: Endpoint }).data;
      return sendPage(reply, 'webhooks/created', frame, { endpoint, secret: made }, 201);
    }),
  );

  route.get('/webhooks/endpoints/:id', async (request, reply) =>
    withMode(request, reply, deps, 'Webhook endpoint', 'webhooks', async (frame, key) => {
      const id = pathId((request.params as { id?: string }).id);
      if (!id) throw noEndpoint();
      const endpoint = await deps.api.ok<{ data: Endpoint }>(request, key, 'GET', `/api/v1/webhook-endpoints/${id}`);
      const [deliveries, types] = await Promise.all([
        deps.api.ok<ApiList<Delivery>>(
          request,
          key,
          'GET',
          withQuery('/api/v1/webhook-deliveries', { endpoint_id: id, limit: 20 }),
        ),
        deps.api.ok<{ data: { items: { type: string }[] } }>(request, key, 'GET', '/api/v1/event-types'),
      ]);
      const recovering = /^\d{1,9}$/.exec(queryOf(request).recovering ?? '')?.[0];
      return sendPage(reply, 'webhooks/endpoint', frame, {
        endpoint: endpoint.data,
        deliveries: deliveries.data.items,
        total: deliveries.data.pagination.total,
        eventTypes: types.data.items.map((item) => item.type),
        notices: {
          ...NOTICES,
          ...(recovering !== undefined
            ? {
                recovering: `Delivering again: ${recovering} ${recovering === '1' ? 'delivery' : 'deliveries'} since then that had not succeeded (same webhook-ids).`,
              }
            : {}),
        },
      });
    }),
  );

  route.post('/webhooks/endpoints/:id/test', async (request, reply) =>
    withMode(request, reply, deps, 'Webhook endpoint', 'webhooks', async (_frame, key) => {
      const id = pathId((request.params as { id?: string }).id);
      if (!id) throw noEndpoint();
      const answer = await deps.api.call(request, key, 'POST', `/api/v1/webhook-endpoints/${id}/test`, {});
      if (answer.status >= 400) throw refusalOf(answer);
      return reply.redirect(`/dashboard/webhooks/endpoints/${id}?notice=test-sent`, 303);
    }),
  );

  /** A form that changes the endpoint through the API, then goes back to its page with a notice. */
  const endpointAction = (
    action: string,
    call: (id: string, request: FastifyRequest) => { method: 'PATCH' | 'POST'; url: string; body: unknown },
    notice: (answer: unknown) => string,
  ) =>
    route.post(`/webhooks/endpoints/:id/${action}`, async (request, reply) =>
      withMode(request, reply, deps, 'Webhook endpoint', 'webhooks', async (_frame, key) => {
        const id = pathId((request.params as { id?: string }).id);
        if (!id) throw noEndpoint();
        const { method, url, body } = call(id, request);
        const answer = await deps.api.call(request, key, method, url, body);
        if (answer.status >= 400) throw refusalOf(answer);
        return reply.redirect(`/dashboard/webhooks/endpoints/${id}?${notice(answer.body)}`, 303);
      }),
    );

  endpointAction(
    'edit',
    (id, request) => ({
      method: 'PATCH',
      url: `/api/v1/webhook-endpoints/${id}`,
      body: { url: formOf(request).url ?? '', events: eventsOf(request) },
    }),
    () => 'notice=endpoint-updated',
  );
  endpointAction(
    'disable',
    (id) => ({ method: 'PATCH', url: `/api/v1/webhook-endpoints/${id}`, body: { enabled: false } }),
    () => 'notice=endpoint-disabled',
  );
  endpointAction(
    'enable',
    (id) => ({ method: 'PATCH', url: `/api/v1/webhook-endpoints/${id}`, body: { enabled: true } }),
    () => 'notice=endpoint-enabled',
  );
  endpointAction(
    'recover',
    (id, request) => ({
      method: 'POST',
      url: `/api/v1/webhook-endpoints/${id}/recover`,
      body: { since: lagosInstant(formOf(request).since ?? '') },
    }),
    (answer) => `notice=recovering&recovering=${(answer as { data: { recovering: number } }).data.recovering}`,
  );

  // A new secret is made here and shown once, as when an endpoint is added without one.
  route.post('/webhooks/endpoints/:id/rotate', async (request, reply) =>
    withMode(request, reply, deps, 'Signing secret rotated', 'webhooks', async (frame, key) => {
      const id = pathId((request.params as { id?: string }).id);
      if (!id) throw noEndpoint();
      const hours = formOf(request).overlap_hours ?? '';
      const secret = newSigningSecret();
      const answer = await deps.api.call(request, key, 'POST', `/api/v1/webhook-endpoints/${id}/rotate-secret`, {
        signing_secret: secret,
        // A whole number as the API takes it; anything else as typed, for the API to refuse naming the field.
        overlap_hours: /^\d{1,3}$/.test(hours) ? Number(hours) : hours === '' ? undefined : hours,
      });
      if (answer.status >= 400) throw refusalOf(answer);
      const endpoint = (answer.body as { data: Endpoint }).data;
      return sendPage(reply, 'webhooks/rotated', frame, { endpoint, secret });
    }),
  );

  route.post('/webhooks/endpoints/:id/delete', async (request, reply) =>
    withMode(request, reply, deps, 'Webhook endpoint', 'webhooks', async (_frame, key) => {
      const id = pathId((request.params as { id?: string }).id);
      if (!id) throw noEndpoint();
      const answer = await deps.api.call(request, key, 'DELETE', `/api/v1/webhook-endpoints/${id}`);
      if (answer.status >= 400) throw refusalOf(answer);
      return reply.redirect('/dashboard/webhooks?notice=endpoint-deleted', 303);
    }),
  );

  route.get('/webhooks/deliveries', async (request, reply) =>
    withMode(request, reply, deps, 'Webhook deliveries', 'webhooks', async (frame, key) => {
      const query = queryOf(request);
      const filters = {
        endpoint_id: pathId(query.endpoint_id),
        status: DELIVERY_STATUSES.includes(query.status ?? '') ? query.status : undefined,
      };
      const page = pageParam(query.page);
      const list = await deps.api.ok<ApiList<Delivery>>(
        request,
        key,
        'GET',
        withQuery('/api/v1/webhook-deliveries', { ...filters, page }),
      );
      return sendPage(reply, 'webhooks/deliveries', frame, {
        deliveries: list.data.items,
        filters,
        statuses: DELIVERY_STATUSES,
        pager: pagerOf('/dashboard/webhooks/deliveries', filters, list.data.pagination),
      });
    }),
  );

  route.get('/webhooks/deliveries/:id', async (request, reply) =>
    withMode(request, reply, deps, 'Webhook delivery', 'webhooks', async (frame, key) => {
      const id = pathId((request.params as { id?: string }).id);
      if (!id) throw noDelivery();
      const delivery = await deps.api.ok<{ data: Delivery }>(request, key, 'GET', `/api/v1/webhook-deliveries/${id}`);
      return sendPage(reply, 'webhooks/delivery', frame, { delivery: delivery.data, notices: NOTICES });
    }),
  );

  route.post('/webhooks/deliveries/:id/replay', async (request, reply) =>
    withMode(request, reply, deps, 'Webhook delivery', 'webhooks', async (_frame, key) => {
      const id = pathId((request.params as { id?: string }).id);
      if (!id) throw noDelivery();
      const answer = await deps.api.call(request, key, 'POST', `/api/v1/webhook-deliveries/${id}/replay`);
      if (answer.status >= 400) throw refusalOf(answer);
      return reply.redirect(`/dashboard/webhooks/deliveries/${id}?notice=replayed`, 303);
    }),
  );
}
