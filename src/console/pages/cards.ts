// Cards (decisions §22), through the API's own routes: GET /api/v1/cards (paged, filtered), and a
// card with its security settings, auto-reload, balance, authorizations and funding history.
import type { FastifyInstance } from 'fastify';
import { ApiRefusal, withQuery } from '../api.ts';
import type { ConsoleDeps } from '../plugin.ts';
import { withMode } from '../plugin.ts';
import { sendPage } from '../render.ts';
import { pageLinks, pageNumber } from './paging.ts';
import { consoleRoutes, pathId, queryOf } from '../routes.ts';

const STATUSES = ['active', 'locked'];

type Listed = { data: { items: unknown[]; pagination: Record<string, number | boolean> } };

/** A page number from the query (1 when absent or not one). */
export function cardPages(scope: FastifyInstance, deps: ConsoleDeps): void {
  const route = consoleRoutes(scope);

  route.get('/cards', async (request, reply) =>
    withMode(request, reply, deps, 'Cards', 'cards', async (frame, key) => {
      const query = queryOf(request);
      const filters = {
        status: STATUSES.includes(query.status ?? '') ? query.status : undefined,
        customer_id: query.customer_id || undefined,
      };
      const page = pageNumber(query.page);
      const list = await deps.api.ok<Listed>(request, key, 'GET', withQuery('/api/v1/cards', { ...filters, page }));
      const { pagination } = list.data;
      return sendPage(reply, 'cards/list', frame, {
        cards: list.data.items,
        pagination,
        filters,
        statuses: STATUSES,
        ...pageLinks('/dashboard/cards', filters, page, pagination.has_more === true),
      });
    }),
  );

  route.get('/cards/:id', async (request, reply) => {
    const id = pathId((request.params as { id?: string }).id);
    if (!id) throw new ApiRefusal(404, 'There is no such card.', 'not_found');
    return withMode(request, reply, deps, 'Card', 'cards', async (frame, key) => {
      const query = queryOf(request);
      const authPage = pageNumber(query.auth_page);
      const fundingPage = pageNumber(query.funding_page);
      // The card first: another tenant's (or no) card is the API's 404 before anything else is read.
      const card = await deps.api.ok<{ data: Record<string, unknown> }>(request, key, 'GET', `/api/v1/cards/${id}`);
      const get = <T>(path: string) => deps.api.ok<T>(request, key, 'GET', path);
      const [security, autoReload, balance, authorizations, fundings] = await Promise.all([
        get<{ data: Record<string, unknown> }>(`/api/v1/cards/${id}/security-settings`),
        get<{ data: Record<string, unknown> }>(`/api/v1/cards/${id}/auto-reload`),
        get<{ data: Record<string, unknown> }>(`/api/v1/cards/${id}/balance`),
        get<Listed>(withQuery(`/api/v1/cards/${id}/authorizations`, { page: authPage })),
        get<Listed>(withQuery(`/api/v1/cards/${id}/funding/history`, { page: fundingPage })),
      ]);
      const base = `/dashboard/cards/${id}`;
      const link = (auth: number, funding: number) =>
        withQuery(base, { auth_page: auth > 1 ? auth : undefined, funding_page: funding > 1 ? funding : undefined });
      return sendPage(reply, 'cards/show', frame, {
        card: card.data,
        security: security.data,
        autoReload: autoReload.data,
        balance: balance.data,
        authorizations: authorizations.data.items,
        authPagination: authorizations.data.pagination,
        authNewer: authPage > 1 ? link(authPage - 1, fundingPage) : null,
        authOlder: authorizations.data.pagination.has_more ? link(authPage + 1, fundingPage) : null,
        fundings: fundings.data.items,
        fundingPagination: fundings.data.pagination,
        fundingNewer: fundingPage > 1 ? link(authPage, fundingPage - 1) : null,
        fundingOlder: fundings.data.pagination.has_more ? link(authPage, fundingPage + 1) : null,
      });
    });
  });
}
