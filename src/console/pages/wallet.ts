// The wallet statement (decisions §15, §22): GET /api/v1/wallet/transactions as the person, paged
// and filtered as the API pages and filters it, and its CSV export, written by the one statement
// CSV writer the tenant and operator CLIs use (src/client/statement-csv.ts: oldest first, cells a
// spreadsheet would run as formulas neutralised).
import type { FastifyInstance } from 'fastify';
import { statementCsv, type StatementCsvItem } from '../../client/statement-csv.ts';
import { ApiRefusal, withQuery } from '../api.ts';
import type { ConsoleDeps } from '../plugin.ts';
import { sessionOf, withMode } from '../plugin.ts';
import { sendPage } from '../render.ts';
import { pageLinks, pageNumber } from './paging.ts';
import { consoleRoutes, queryOf } from '../routes.ts';

/** The most rows one CSV export holds: the API's lists are not read past an offset of 100,000. */
const CSV_PAGE = 100;
const CSV_MAX_PAGES = 1000;

interface Statement {
  data: {
    items: StatementCsvItem[];
    pagination: { page: number; pages: number; total: number; has_more: boolean };
    period: { from: string; to: string };
  };
}

/** The statement's filters from the query: dates or date-times as the API takes them (it checks them). */
function filtersOf(query: Record<string, string>) {
  return { from: query.from || undefined, to: query.to || undefined };
}

/** Where a movement's resource is in the console. */
function resourceLink(resource: { type: string; id: string }): string | null {
  switch (resource.type) {
    case 'transfer':
      return `/dashboard/transfers/${resource.id}`;
    case 'transfer_batch':
      return `/dashboard/batches/${resource.id}`;
    case 'virtual_account':
      return `/dashboard/virtual-accounts/${resource.id}`;
    case 'card':
      return `/dashboard/cards/${resource.id}`;
    default:
      return null;
  }
}

export function walletPages(scope: FastifyInstance, deps: ConsoleDeps): void {
  const route = consoleRoutes(scope);

  route.get('/wallet', async (request, reply) =>
    withMode(request, reply, deps, 'Wallet statement', 'wallet', async (frame, key) => {
      const query = queryOf(request);
      const filters = filtersOf(query);
      const page = pageNumber(query.page);
      const [wallet, statement] = await Promise.all([
        deps.api.ok<{ data: { available_minor: number; pending_minor: number } }>(
          request,
          key,
          'GET',
          '/api/v1/wallet',
        ),
        deps.api.ok<Statement>(request, key, 'GET', withQuery('/api/v1/wallet/transactions', { ...filters, page })),
      ]);
      const { pagination } = statement.data;
      return sendPage(reply, 'wallet/statement', frame, {
        wallet: wallet.data,
        items: statement.data.items.map((item) => ({ ...item, link: resourceLink(item.resource) })),
        pagination,
        period: statement.data.period,
        filters,
        csv: withQuery('/dashboard/wallet/statement.csv', filters),
        ...pageLinks('/dashboard/wallet', filters, page, pagination.has_more),
      });
    }),
  );

  route.get('/wallet/statement.csv', async (request, reply) => {
    const session = sessionOf(request);
    const key = await deps.api.keyOf(session);
    if (!key) throw new ApiRefusal(404, 'This tenant has no live mode yet.', 'not_found');
    const filters = filtersOf(queryOf(request));
    const items: StatementCsvItem[] = [];
    let period = { from: '', to: '' };
    for (let page = 1; page <= CSV_MAX_PAGES; page += 1) {
      const statement = await deps.api.ok<Statement>(
        request,
        key,
        'GET',
        withQuery('/api/v1/wallet/transactions', { ...filters, page, limit: CSV_PAGE }),
      );
      // Every page over the same period: `to` defaults to now, which must not move between pages.
      if (page === 1) {
        period = statement.data.period;
        filters.from = period.from;
        filters.to = period.to;
      }
      items.push(...statement.data.items);
      if (!statement.data.pagination.has_more) break;
    }
    const day = (iso: string) => iso.slice(0, 10);
    return reply
      .type('text/csv; charset=utf-8')
      .header(
        'content-disposition',
        `attachment; filename="statement-${session.mode}-${day(period.from)}-${day(period.to)}.csv"`,
      )
      .send(statementCsv(items));
  });
}
