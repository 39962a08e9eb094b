// Events (decisions §22): the tenant's events, newest first, by type, and one event's payload.
import type { FastifyInstance } from 'fastify';
import { ApiRefusal, withQuery } from '../api.ts';
import type { ConsoleDeps } from '../plugin.ts';
import { withMode } from '../plugin.ts';
import { sendPage } from '../render.ts';
import { consoleRoutes, pathId, queryOf } from '../routes.ts';
import { type ApiList, pageParam, pagerOf } from './paging.ts';

interface Event {
  id: string;
  type: string;
  created_at: string;
  data: Record<string, unknown>;
}

export function eventPages(scope: FastifyInstance, deps: ConsoleDeps): void {
  const route = consoleRoutes(scope);

  route.get('/events', async (request, reply) =>
    withMode(request, reply, deps, 'Events', 'events', async (frame, key) => {
      const query = queryOf(request);
      const filters = { type: query.type && query.type.length <= 100 ? query.type : undefined };
      const page = pageParam(query.page);
      const [list, types] = await Promise.all([
        deps.api.ok<ApiList<Event>>(request, key, 'GET', withQuery('/api/v1/events', { ...filters, page })),
        deps.api.ok<{ data: { items: { type: string }[] } }>(request, key, 'GET', '/api/v1/event-types'),
      ]);
      return sendPage(reply, 'events/index', frame, {
        events: list.data.items,
        filters,
        types: types.data.items.map((item) => item.type),
        pager: pagerOf('/dashboard/events', filters, list.data.pagination),
      });
    }),
  );

  route.get('/events/:id', async (request, reply) =>
    withMode(request, reply, deps, 'Event', 'events', async (frame, key) => {
      const id = pathId((request.params as { id?: string }).id);
      if (!id) throw new ApiRefusal(404, 'There is no such event.', 'not_found');
      const event = await deps.api.ok<{ data: Event }>(request, key, 'GET', `/api/v1/events/${id}`);
      const deliveries = await deps.api.ok<ApiList<{ id: string; endpoint_id: string; status: string }>>(
        request,
        key,
        'GET',
        withQuery('/api/v1/webhook-deliveries', { event_id: id, limit: 100 }),
      );
      return sendPage(reply, 'events/event', frame, { event: event.data, deliveries: deliveries.data.items });
    }),
  );
}
