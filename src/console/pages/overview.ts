// The overview (decisions §22): both modes' wallets, and today's transfers (Lagos's day) in the
// session's mode: how many, their volume, what they took from the wallet with fees, and how many
// failed. Everything through the API's own routes as the person (./../api.ts).
import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { ResolvedKey } from '../../http/auth.ts';
import { withQuery } from '../api.ts';
import type { ConsoleDeps } from '../plugin.ts';
import { sessionOf, withMode } from '../plugin.ts';
import { sendPage } from '../render.ts';
import { consoleRoutes } from '../routes.ts';

/** How many pages of 100 the overview reads of today's transfers or statement (beyond: "at least"). */
const MAX_PAGES = 5;

interface Wallet {
  available_minor: number;
  pending_minor: number;
  updated_at: string;
}

/** Today's date in Lagos (UTC+1 all year) and the instant its day began. */
export function lagosToday(now = new Date()): { date: string; start: string } {
  const date = new Date(now.getTime() + 3_600_000).toISOString().slice(0, 10);
  return { date, start: `${date}T00:00:00+01:00` };
}

async function todaysTransfers(deps: ConsoleDeps, request: FastifyRequest, key: ResolvedKey, start: string) {
  let count = 0;
  let volume = 0n;
  let read = 0;
  for (let page = 1; page <= MAX_PAGES; page += 1) {
    const answer = await deps.api.ok<{
      data: { amount_minor: number }[];
      pagination: { total: number; totalPages: number };
    }>(request, key, 'GET', withQuery('/api/v1/transfers', { from: start, limit: 100, page }));
    count = answer.pagination.total;
    for (const item of answer.data) volume += BigInt(item.amount_minor);
    read += answer.data.length;
    if (page >= answer.pagination.totalPages || answer.data.length === 0) break;
  }
  return { count, volume: volume.toString(), complete: read >= count };
}

/** What today's transfers reserved from the wallet (amounts and fees), from the statement. */
async function todaysReserved(deps: ConsoleDeps, request: FastifyRequest, key: ResolvedKey, date: string) {
  let reserved = 0n;
  let complete = false;
  for (let page = 1; page <= MAX_PAGES; page += 1) {
    const answer = await deps.api.ok<{
      data: { items: { type: string; amount_minor: number }[]; pagination: { has_more: boolean } };
    }>(request, key, 'GET', withQuery('/api/v1/wallet/transactions', { from: date, limit: 100, page }));
    for (const item of answer.data.items) {
      if (item.type === 'transfer_reserve' || item.type === 'transfer_batch_reserve') {
        reserved -= BigInt(item.amount_minor);
      }
    }
    if (!answer.data.pagination.has_more) {
      complete = true;
      break;
    }
  }
  return { reserved: reserved.toString(), complete };
}

export function overviewPages(scope: FastifyInstance, deps: ConsoleDeps): void {
  const route = consoleRoutes(scope);
  route.get('/', async (request, reply) =>
    withMode(request, reply, deps, 'Overview', 'overview', async (frame, key) => {
      const session = sessionOf(request);
      const balances: Record<'test' | 'live', Wallet | null> = { test: null, live: null };
      for (const mode of ['test', 'live'] as const) {
        const modeKey = mode === session.mode ? key : await deps.api.keyOf({ ...session, mode });
        if (!modeKey) continue;
        balances[mode] = (await deps.api.ok<{ data: Wallet }>(request, modeKey, 'GET', '/api/v1/wallet')).data;
      }
      const today = lagosToday();
      const [transfers, reserved, failed] = await Promise.all([
        todaysTransfers(deps, request, key, today.start),
        todaysReserved(deps, request, key, today.date),
        deps.api.ok<{ pagination: { total: number } }>(
          request,
          key,
          'GET',
          withQuery('/api/v1/transfers', { status: 'failed', from: today.start, limit: 1 }),
        ),
      ]);
      return sendPage(reply, 'overview', frame, {
        balances,
        today: {
          date: today.date,
          ...transfers,
          reserved: reserved.reserved,
          reservedComplete: reserved.complete,
          failed: failed.pagination.total,
          failedLink: withQuery('/dashboard/transfers', { status: 'failed', from: today.date }),
        },
      });
    }),
  );
}
