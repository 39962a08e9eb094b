// Webhooks (decisions §22): the tenant's endpoints (add, delete, send a test event), their
// deliveries with every attempt and what the tenant's server answered, and replay. Editing,
// rotating a secret, disabling and recovering an endpoint come with issue #42.
import { randomBytes } from 'node:crypto';
import type { FastifyInstance } from 'fastify';
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
  disabled_reason?: string;
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

const NOTICES = {
  'endpoint-deleted': 'The endpoint was deleted: nothing more is delivered to it.',
  'test-sent': 'A test event is on its way to this endpoint: its delivery is listed below.',
  replayed: 'The event is being delivered again, with the same webhook-id.',
};

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
      const picked = formList(request, 'events');
      const events = picked.length === 0 || picked.includes('*') ? ['*'] : picked;
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
      const deliveries = await deps.api.ok<ApiList<Delivery>>(
        request,
        key,
        'GET',
        withQuery('/api/v1/webhook-deliveries', { endpoint_id: id, limit: 20 }),
      );
      return sendPage(reply, 'webhooks/endpoint', frame, {
        endpoint: endpoint.data,
        deliveries: deliveries.data.items,
        total: deliveries.data.pagination.total,
        notices: NOTICES,
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
