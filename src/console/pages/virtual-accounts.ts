// Virtual accounts and their inbound credits (decisions §22), through the API's own routes:
// GET /api/v1/virtual-accounts (paged, filtered), GET /api/v1/virtual-accounts/:id and its credits.
import type { FastifyInstance } from 'fastify';
import { ApiRefusal, withQuery } from '../api.ts';
import type { ConsoleDeps } from '../plugin.ts';
import { withMode } from '../plugin.ts';
import { sendPage } from '../render.ts';
import { pageLinks, pageNumber } from './paging.ts';
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
      const page = pageNumber(query.page);
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
        ...pageLinks('/dashboard/virtual-accounts', filters, page, pagination.has_more === true),
      });
    }),
  );

  route.get('/virtual-accounts/:id', async (request, reply) => {
    const id = pathId((request.params as { id?: string }).id);
    if (!id) throw new ApiRefusal(404, 'There is no such virtual account.', 'not_found');
    return withMode(request, reply, deps, 'Virtual account', 'virtual-accounts', async (frame, key) => {
      const query = queryOf(request);
      const page = pageNumber(query.page);
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
        ...pageLinks(base, {}, page, credits.data.pagination.has_more === true),
      });
    });
  });
}
