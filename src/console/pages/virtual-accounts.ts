// Virtual accounts and their inbound credits (decisions §22), through the API's own routes:
// GET /api/v1/virtual-accounts (paged, filtered), GET /api/v1/virtual-accounts/:id and its credits,
// and a credit's return (decisions §21) through POST …/credits/:credit_id/return.
import type { FastifyInstance } from 'fastify';
import { ApiRefusal, refusalOf, withQuery } from '../api.ts';
import type { ConsoleDeps } from '../plugin.ts';
import { withMode } from '../plugin.ts';
import { sendPage } from '../render.ts';
import { pageLinks, pageNumber } from './paging.ts';
import { consoleRoutes, formOf, pathId, queryOf } from '../routes.ts';

const STATUSES = ['active', 'frozen', 'closed', 'expired'];

const NOTICES = {
  'credit-returned':
    'The return is on its way: a transfer to the sender, listed under Transfers (it may wait for an approval).',
};

const noAccount = () => new ApiRefusal(404, 'There is no such virtual account.', 'not_found');

/**
 * Kobo from what a person types in naira (`1500`, `1,500.50`); undefined for nothing typed (all
 * that is left), and a refusal naming the field for anything else. Exact: digits, never a float.
 */
function koboOf(typed: string | undefined): number | undefined {
  const text = (typed ?? '').replaceAll(',', '').trim();
  if (text === '') return undefined;
  const match = /^(\d{1,11})(?:\.(\d{1,2}))?$/.exec(text);
  if (!match) {
    throw new ApiRefusal(400, 'The amount must be in naira, such as 1500 or 1500.50.', 'validation_error');
  }
  return Number(match[1]) * 100 + Number((match[2] ?? '').padEnd(2, '0'));
}

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
        notices: NOTICES,
        ...pageLinks(base, {}, page, credits.data.pagination.has_more === true),
      });
    });
  });

  route.post('/virtual-accounts/:id/credits/:creditId/return', async (request, reply) => {
    const params = request.params as { id?: string; creditId?: string };
    const id = pathId(params.id);
    const creditId = pathId(params.creditId);
    if (!id || !creditId) throw noAccount();
    return withMode(request, reply, deps, 'Virtual account', 'virtual-accounts', async (_frame, key) => {
      const form = formOf(request);
      const amount = koboOf(form.amount);
      const reason = form.reason?.trim();
      const answer = await deps.api.call(
        request,
        key,
        'POST',
        `/api/v1/virtual-accounts/${id}/credits/${creditId}/return`,
        {
          ...(amount !== undefined ? { amount_minor: amount } : {}),
          ...(reason ? { reason } : {}),
        },
      );
      if (answer.status >= 400) throw refusalOf(answer);
      return reply.redirect(`/dashboard/virtual-accounts/${id}?notice=credit-returned`, 303);
    });
  });
}
