// The audit log (decisions §19, §22): who did what in the mode, newest first, by action. The API
// asks keys:write to read it.
import type { FastifyInstance } from 'fastify';
import { withQuery } from '../api.ts';
import { AUDIT_ACTIONS } from '../../audit/log.ts';
import type { ConsoleDeps } from '../plugin.ts';
import { withMode } from '../plugin.ts';
import { sendPage } from '../render.ts';
import { consoleRoutes, queryOf } from '../routes.ts';
import { type ApiList, pageParam, pagerOf } from './paging.ts';

interface AuditEntry {
  id: string;
  action: string;
  actor: { type: string; id: string; name: string };
  target: { type: string; id: string };
  ip: string | null;
  details: Record<string, unknown>;
  created_at: string;
}

export function auditPages(scope: FastifyInstance, deps: ConsoleDeps): void {
  const route = consoleRoutes(scope);

  route.get('/audit-log', async (request, reply) =>
    withMode(request, reply, deps, 'Audit log', 'audit', async (frame, key) => {
      const query = queryOf(request);
      const filters = {
        action: (AUDIT_ACTIONS as readonly string[]).includes(query.action ?? '') ? query.action : undefined,
      };
      const page = pageParam(query.page);
      const list = await deps.api.ok<ApiList<AuditEntry>>(
        request,
        key,
        'GET',
        withQuery('/api/v1/audit-log', { ...filters, page }),
      );
      return sendPage(reply, 'audit/index', frame, {
        entries: list.data.items,
        actions: AUDIT_ACTIONS,
        filters,
        pager: pagerOf('/dashboard/audit-log', filters, list.data.pagination),
      });
    }),
  );
}
