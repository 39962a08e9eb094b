// Virtual accounts and their inbound credits (decisions §22), through the API's own routes:
// GET /api/v1/virtual-accounts (paged, filtered), GET /api/v1/virtual-accounts/:id and its credits.
import type { FastifyInstance } from 'fastify';
import { ApiRefusal, withQuery } from '../api.ts';
import type { ConsoleDeps } from '../plugin.ts';
import { withMode } from '../plugin.ts';
import { sendPage } from '../render.ts';
import { consoleRoutes, pathId, queryOf } from '../routes.ts';

const STATUSES = ['active', 'frozen', 'closed', 'expired'];

export function virtualAccountPages(scope: FastifyInstance, deps: ConsoleDeps): void {
  const route = consoleRoutes(scope);

  route.get('/virtual-accounts', async (request, reply) =>
    withMode(request, reply, deps, 'Virtual accounts', 'virtual-accounts', async (frame, key) => {
      const query = queryOf(request);
      const filters = {
        status: STATUSES.includes(query.status ?? '') ? query.status : undefined,
        customer_id: query.customer_id || undefined,
      };
      const page = Number(query.page) >= 1 ? Math.floor(Number(query.page)) : 1;
      const list = await deps.api.ok<{ data: { items: unknown[]; pagination: Record<string, number | boolean> } }>(
        request,
        key,
        'GET',
        withQuery('/api/v1/virtual-accounts', { ...filters, page }),
      );
      const { pagination } = list.data;
      return sendPage(reply, 'virtual-accounts/list', frame, {
        accounts: list.data.items,
        pagination,
        filters,
        statuses: STATUSES,
        newer: page > 1 ? withQuery('/dashboard/virtual-accounts', { ...filters, page: page - 1 }) : null,
        older: pagination.has_more ? withQuery('/dashboard/virtual-accounts', { ...filters, page: page + 1 }) : null,
      });
    }),
  );

  route.get('/virtual-accounts/:id', async (request, reply) => {
    const id = pathId((request.params as { id?: string }).id);
    if (!id) throw new ApiRefusal(404, 'There is no such virtual account.', 'not_found');
    return withMode(request, reply, deps, 'Virtual account', 'virtual-accounts', async (frame, key) => {
      const query = queryOf(request);
      const page = Number(query.page) >= 1 ? Math.floor(Number(query.page)) : 1;
      const account = await deps.api.ok<{ data: Record<string, unknown> }>(
        request,
        key,
        'GET',
        `/api/v1/virtual-accounts/${id}`,
      );
      const credits = await deps.api.ok<{ data: { items: unknown[]; pagination: Record<string, number | boolean> } }>(
        request,
        key,
        'GET',
        withQuery(`/api/v1/virtual-accounts/${id}/credits`, { page }),
      );
      const base = `/dashboard/virtual-accounts/${id}`;
      return sendPage(reply, 'virtual-accounts/show', frame, {
        account: account.data,
        credits: credits.data.items,
        pagination: credits.data.pagination,
        newer: page > 1 ? withQuery(base, { page: page - 1 }) : null,
        older: credits.data.pagination.has_more ? withQuery(base, { page: page + 1 }) : null,
      });
    });
  });
}
