// The approvals queue (decisions §20, §22): held transfers and held batches awaiting a decision,
// each with Approve and Reject for a person whose role holds transfers:approve. The decision is the
// API's own route, called as the person, so the API checks the scope, refuses the maker, and writes
// the audit entry naming the person. In live mode a decision also needs a fresh authenticator code,
// checked here before the API is called (a code is taken once: the sign-in's cannot be reused).
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { ResolvedKey } from '../../http/auth.ts';
import { ApiRefusal, refusalOf, withQuery } from '../api.ts';
import type { ConsoleDeps } from '../plugin.ts';
import { sessionOf, withMode } from '../plugin.ts';
import { type PageFrame, sendPage } from '../render.ts';
import { consoleRoutes, formOf, pathId, queryOf } from '../routes.ts';
import { totpCounter } from '../secrets.ts';
import { useTotpCounter } from '../store.ts';
import { pageLinks } from './paging.ts';

const NOTICES = {
  approved: 'Approved: it goes on to the bank.',
  rejected: 'Rejected: its amount and fee are back in the wallet.',
};

/**
 * The live-mode step-up: undefined when `code` is a valid authenticator code of the person, never
 * used before (it is marked used now); otherwise the message to show. Test mode needs none.
 */
export async function checkStepUp(
  deps: ConsoleDeps,
  request: FastifyRequest,
  mode: 'test' | 'live',
  code: string | undefined,
): Promise<string | undefined> {
  if (mode !== 'live') return undefined;
  const session = sessionOf(request);
  if (!session.totp_secret) return 'A live decision needs an authenticator: set one up first.';
  if (!code) return 'Enter the code from your authenticator app to decide a live payout.';
  const counter = totpCounter(deps.open(session.totp_secret), code, session.totp_last_counter);
  if (counter === null) return 'That authenticator code is wrong or was already used: enter a new one.';
  if (!(await useTotpCounter(deps.em(), session.user_id, counter))) {
    return 'That authenticator code was already used: enter a new one.';
  }
  return undefined;
}

interface Pagination {
  page: number;
  totalPages: number;
  total: number;
}

function pagerOf(pagination: Pagination, query: Record<string, string | undefined>, name: string) {
  const base = '/dashboard/approvals';
  const page = pagination.page;
  return {
    total: pagination.total,
    page,
    pages: pagination.totalPages,
    ...pageLinks(base, query, page, page < pagination.totalPages, name),
  };
}

async function renderQueue(
  request: FastifyRequest,
  reply: FastifyReply,
  deps: ConsoleDeps,
  frame: PageFrame,
  key: ResolvedKey,
  error?: string,
  status = 200,
): Promise<FastifyReply> {
  const query = queryOf(request);
  const keep = { page: query.page, batch_page: query.batch_page };
  const transfers = await deps.api.ok<{ data: Record<string, unknown>[]; pagination: Pagination }>(
    request,
    key,
    'GET',
    withQuery('/api/v1/transfers', { approval: 'required', expand: 'details', page: query.page }),
  );
  const batches = await deps.api.ok<{ data: Record<string, unknown>[]; pagination: Pagination }>(
    request,
    key,
    'GET',
    withQuery('/api/v1/transfers/bulk', { approval: 'required', page: query.batch_page }),
  );
  return sendPage(
    reply,
    'approvals/queue',
    frame,
    {
      transfers: transfers.data,
      batches: batches.data,
      transferPager: pagerOf(transfers.pagination, keep, 'page'),
      batchPager: pagerOf(batches.pagination, keep, 'batch_page'),
      error,
      notices: NOTICES,
    },
    status,
  );
}

export function approvalPages(scope: FastifyInstance, deps: ConsoleDeps): void {
  const route = consoleRoutes(scope);

  route.get('/approvals', async (request, reply) =>
    withMode(request, reply, deps, 'Approvals', 'approvals', async (frame, key) =>
      renderQueue(request, reply, deps, frame, key),
    ),
  );

  const decide = (what: 'transfers' | 'batches', decision: 'approve' | 'reject') =>
    route.post(`/${what}/:id/${decision}`, async (request, reply) =>
      withMode(request, reply, deps, 'Approvals', 'approvals', async (frame, key) => {
        const id = pathId((request.params as { id?: unknown }).id);
        if (!id)
          throw new ApiRefusal(404, `There is no such ${what === 'transfers' ? 'transfer' : 'batch'}.`, 'not_found');
        const form = formOf(request);
        const refused = await checkStepUp(deps, request, frame.mode, form.code);
        if (refused) return renderQueue(request, reply, deps, frame, key, refused, 403);
        const base = what === 'transfers' ? `/api/v1/transfers/${id}` : `/api/v1/transfers/bulk/${id}`;
        const body = decision === 'reject' && form.reason ? { reason: form.reason } : {};
        const answer = await deps.api.call(request, key, 'POST', `${base}/${decision}`, body);
        if (answer.status >= 400) throw refusalOf(answer);
        return reply.redirect(`/dashboard/approvals?notice=${decision === 'approve' ? 'approved' : 'rejected'}`, 303);
      }),
    );
  decide('transfers', 'approve');
  decide('transfers', 'reject');
  decide('batches', 'approve');
  decide('batches', 'reject');
}
