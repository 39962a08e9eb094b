// Batches (decisions §14, §22): the tenant's batches newest first, and one batch with its totals,
// its items by outcome, and its items paged as the API pages them.
import type { FastifyInstance } from 'fastify';
import { ApiRefusal, withQuery } from '../api.ts';
import type { ConsoleDeps } from '../plugin.ts';
import { withMode } from '../plugin.ts';
import { sendPage } from '../render.ts';
import { pageLinks } from './paging.ts';
import { consoleRoutes, pathId, queryOf } from '../routes.ts';

interface Paged {
  data: Record<string, unknown>[];
  pagination: { page: number; total: number; totalPages: number };
}

/** The Newer/Older links of a transfers-style pagination, keeping the page's other parameters. */
export function pagerOf(base: string, pagination: Paged['pagination'], query: Record<string, string | undefined>) {
  const page = pagination.page;
  return {
    page,
    pages: pagination.totalPages,
    total: pagination.total,
    ...pageLinks(base, query, page, page < pagination.totalPages),
  };
}

export function batchPages(scope: FastifyInstance, deps: ConsoleDeps): void {
  const route = consoleRoutes(scope);

  route.get('/batches', async (request, reply) =>
    withMode(request, reply, deps, 'Batches', 'batches', async (frame, key) => {
      const query = queryOf(request);
      const approval = ['required', 'approved', 'rejected', 'expired'].includes(query.approval ?? '')
        ? query.approval
        : undefined;
      const list = await deps.api.ok<Paged>(
        request,
        key,
        'GET',
        withQuery('/api/v1/transfers/bulk', { page: query.page, approval }),
      );
      return sendPage(reply, 'batches/list', frame, {
        batches: list.data,
        approval,
        pager: pagerOf('/dashboard/batches', list.pagination, { approval }),
      });
    }),
  );

  route.get('/batches/:id', async (request, reply) =>
    withMode(request, reply, deps, 'Batch', 'batches', async (frame, key) => {
      const id = pathId((request.params as { id?: unknown }).id);
      if (!id) throw new ApiRefusal(404, 'There is no such batch.', 'not_found');
      const query = queryOf(request);
      const batch = await deps.api.ok<{ data: Record<string, unknown> }>(
        request,
        key,
        'GET',
        `/api/v1/transfers/bulk/${id}`,
      );
      const items = await deps.api.ok<Paged>(
        request,
        key,
        'GET',
        withQuery(`/api/v1/transfers/bulk/${id}/items`, { page: query.page }),
      );
      return sendPage(reply, 'batches/show', frame, {
        batch: batch.data,
        items: items.data,
        pager: pagerOf(`/dashboard/batches/${id}`, items.pagination, {}),
        refresh: batch.data.status === 'processing' ? 5 : undefined,
      });
    }),
  );
}
