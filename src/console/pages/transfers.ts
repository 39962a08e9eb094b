// Transfers (decisions §22): the list with its filters, and one transfer's page with its timeline
// (created, the approval, settled, failed or reversed, and each webhook delivery of its events), all read
// through the API's own routes as the person.
import type { FastifyInstance } from 'fastify';
import { ApiRefusal, withQuery } from '../api.ts';
import type { ConsoleDeps } from '../plugin.ts';
import { withMode } from '../plugin.ts';
import { sendPage, when } from '../render.ts';
import { pageLinks, pageNumber } from './paging.ts';
import { consoleRoutes, pathId, queryOf } from '../routes.ts';

interface Approval {
  status: 'required' | 'approved' | 'rejected' | 'expired';
  expires_at: string;
  decided_by: { type: string; id: string; name: string } | null;
  decided_at: string | null;
}

interface Transfer {
  id: string;
  reference: string;
  amount_minor: number;
  fee_minor?: number;
  total_minor?: number;
  status: 'pending' | 'successful' | 'failed';
  bankCode: string;
  accountNumber: string;
  accountName: string;
  recipient_bank?: string;
  narration?: string;
  metadata?: Record<string, unknown>;
  created_by_key_id?: string | null;
  createdAt: string;
  completedAt?: string;
  failure_reason?: string;
  /** Set once the bank's reversal of the paid-out transfer was applied (decisions §21). */
  reversed_at?: string;
  approval: Approval | null;
}

interface Pagination {
  page: number;
  limit: number;
  total: number;
  totalPages: number;
}

interface EventItem {
  id: string;
  type: string;
  created_at: string;
  data: Record<string, unknown>;
}

interface Delivery {
  id: string;
  event_id: string;
  event_type: string;
  status: string;
  attempt_count: number;
  endpoint_id: string;
  created_at: string;
}

/** One line of a transfer's timeline. */
export interface TimelineEntry {
  kind: string;
  at: string;
  text: string;
  href?: string;
  status?: string;
}

const FILTERS = ['status', 'from', 'to', 'reference', 'recipient'] as const;

/** The timeline's lines, in time order, from the transfer, its events and their deliveries. */
export function timelineOf(transfer: Transfer, events: EventItem[], deliveries: Delivery[]): TimelineEntry[] {
  const entries: TimelineEntry[] = [{ kind: 'created', at: transfer.createdAt, text: 'Created' }];
  for (const event of events) {
    const data = event.data as { approval?: Approval | null; failure_reason?: string };
    const by = data.approval?.decided_by;
    const who = by ? ` by ${by.name} (${by.type})` : '';
    switch (event.type) {
      case 'transfer.approval_required':
        entries.push({
          kind: 'approval_required',
          at: event.created_at,
          text: data.approval?.expires_at
            ? `Held for approval until ${when(data.approval.expires_at)} (Lagos time)`
            : 'Held for approval',
        });
        break;
      case 'transfer.approved':
        entries.push({ kind: 'approved', at: event.created_at, text: `Approved${who}` });
        entries.push({ kind: 'submitted', at: event.created_at, text: 'Submitted to the bank' });
        break;
      case 'transfer.rejected': {
        const expired = data.approval?.status === 'expired';
        entries.push({
          kind: expired ? 'expired' : 'rejected',
          at: event.created_at,
          text: expired ? 'Approval expired undecided' : `Rejected${who}`,
        });
        break;
      }
      case 'transfer.settled':
        entries.push({ kind: 'settled', at: event.created_at, text: 'The bank paid it out: settled' });
        break;
      case 'transfer.failed':
        entries.push({
          kind: 'failed',
          at: event.created_at,
          text: `Failed: ${data.failure_reason ?? transfer.failure_reason ?? 'failed'}`,
        });
        break;
      case 'transfer.reversed':
        entries.push({
          kind: 'reversed',
          at: (event.data as { reversed_at?: string }).reversed_at ?? event.created_at,
          text: 'Reversed by the bank after it paid out: amount and fee back in the wallet',
        });
        break;
      default:
        break;
    }
  }
  // Its reversal as the transfer shows it, when its event is not (yet) in the log.
  if (transfer.reversed_at && !entries.some((entry) => entry.kind === 'reversed')) {
    entries.push({
      kind: 'reversed',
      at: transfer.reversed_at,
      text: 'Reversed by the bank after it paid out: amount and fee back in the wallet',
    });
  }
  // A transfer the policy did not hold goes to its bank when it is created.
  if (!transfer.approval)
    entries.splice(1, 0, { kind: 'submitted', at: transfer.createdAt, text: 'Submitted to the bank' });
  // The approval as the transfer shows it, when its event is not (yet) in the log.
  const approval = transfer.approval;
  if (approval && !entries.some((entry) => entry.kind === 'approval_required')) {
    entries.push({
      kind: 'approval_required',
      at: transfer.createdAt,
      text: `Held for approval until ${when(approval.expires_at)} (Lagos time)`,
    });
  }
  for (const delivery of deliveries) {
    entries.push({
      kind: 'webhook_delivery',
      at: delivery.created_at,
      text: `Webhook ${delivery.event_type}: ${delivery.status}, ${delivery.attempt_count} attempt${delivery.attempt_count === 1 ? '' : 's'}`,
      href: `/dashboard/webhooks/deliveries/${encodeURIComponent(delivery.id)}`,
      status: delivery.status,
    });
  }
  const order = (entry: TimelineEntry) => Date.parse(entry.at);
  return entries
    .map((entry, index) => ({ entry, index }))
    .sort((a, b) => order(a.entry) - order(b.entry) || a.index - b.index)
    .map(({ entry }) => entry);
}

export function transferPages(scope: FastifyInstance, deps: ConsoleDeps): void {
  const route = consoleRoutes(scope);

  route.get('/transfers', async (request, reply) =>
    withMode(request, reply, deps, 'Transfers', 'transfers', async (frame, key) => {
      const query = queryOf(request);
      const filters: Record<string, string> = {};
      for (const name of FILTERS) if (query[name]) filters[name] = query[name].trim();
      const page = pageNumber(query.page);
      const list = await deps.api.ok<{ data: Transfer[]; pagination: Pagination }>(
        request,
        key,
        'GET',
        withQuery('/api/v1/transfers', {
          page,
          limit: 20,
          expand: 'details',
          status: filters.status,
          from: filters.from,
          to: filters.to,
          reference: filters.reference,
          recipient_account: filters.recipient,
        }),
      );
      const { pagination } = list;
      return sendPage(reply, 'transfers/list', frame, {
        transfers: list.data,
        pagination,
        filters,
        ...pageLinks('/dashboard/transfers', filters, pagination.page, pagination.page < pagination.totalPages),
      });
    }),
  );

  route.get('/transfers/:id', async (request, reply) =>
    withMode(request, reply, deps, 'Transfer', 'transfers', async (frame, key) => {
      const id = pathId((request.params as { id?: string }).id);
      if (!id) throw new ApiRefusal(404, 'There is no such transfer.', 'not_found');
      const transfer = (
        await deps.api.ok<{ data: Transfer }>(
          request,
          key,
          'GET',
          withQuery(`/api/v1/transfers/${id}`, { expand: 'details' }),
        )
      ).data;
      const events = (
        await deps.api.ok<{ data: { items: EventItem[] } }>(
          request,
          key,
          'GET',
          withQuery('/api/v1/events', { data_id: transfer.id, limit: 100 }),
        )
      ).data.items;
      const deliveries: Delivery[] = [];
      for (const event of events) {
        const page = await deps.api.ok<{ data: { items: Delivery[] } }>(
          request,
          key,
          'GET',
          withQuery('/api/v1/webhook-deliveries', { event_id: event.id, limit: 100 }),
        );
        deliveries.push(...page.data.items);
      }
      return sendPage(reply, 'transfers/show', frame, {
        transfer,
        timeline: timelineOf(transfer, events, deliveries),
        ...(transfer.status === 'pending' ? { refresh: 5 } : {}),
        notices: { approved: 'Approved: the transfer goes on to its bank.', rejected: 'Rejected.' },
      });
    }),
  );
}
