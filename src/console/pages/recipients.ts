// Saved recipients (decisions §20, §22): name, account, bank and when each was last paid, paged as
// the API pages them.
import type { FastifyInstance } from 'fastify';
import { withQuery } from '../api.ts';
import type { ConsoleDeps } from '../plugin.ts';
import { withMode } from '../plugin.ts';
import { sendPage } from '../render.ts';
import { pageLinks } from './paging.ts';
import { consoleRoutes, queryOf } from '../routes.ts';

interface RecipientPage {
  data: {
    items: Record<string, unknown>[];
    pagination: { page: number; pages: number; total: number; has_more: boolean };
  };
}

export function recipientPages(scope: FastifyInstance, deps: ConsoleDeps): void {
  const route = consoleRoutes(scope);
  route.get('/recipients', async (request, reply) =>
    withMode(request, reply, deps, 'Recipients', 'recipients', async (frame, key) => {
      const query = queryOf(request);
      const list = await deps.api.ok<RecipientPage>(
        request,
        key,
        'GET',
        withQuery('/api/v1/recipients', { page: query.page }),
      );
      const { page, pages, total, has_more: hasMore } = list.data.pagination;
      return sendPage(reply, 'recipients/list', frame, {
        recipients: list.data.items,
        pager: {
          page,
          pages,
          total,
          ...pageLinks('/dashboard/recipients', {}, page, hasMore),
        },
      });
    }),
  );
}
