// API keys (decisions §19, §22): the mode's keys, making a restricted one (its secret shown once, in
// the answer to the form), rolling and revoking. The API asks keys:write for every one of them, the
// list too: a role without it sees the API's refusal.
import type { FastifyInstance } from 'fastify';
import { ApiRefusal, refusalOf, withQuery } from '../api.ts';
import { SCOPES } from '../../http/scopes.ts';
import type { ConsoleDeps } from '../plugin.ts';
import { withMode } from '../plugin.ts';
import { sendPage } from '../render.ts';
import { consoleRoutes, formList, formOf, pathId, queryOf } from '../routes.ts';
import { type ApiList, pageParam, pagerOf } from './paging.ts';

interface Key {
  id: string;
  name: string;
  prefix: string;
  scopes: string[];
  allowed_ips: string[];
  created_at: string;
  last_used_at: string | null;
  expires_at: string | null;
  revoked_at: string | null;
  secret?: string | null;
  previous_secret_expires_at?: string | null;
}

const NOTICES = { 'key-revoked': 'The key was revoked: it works no more.' };

const noKey = () => new ApiRefusal(404, 'There is no such API key.', 'not_found');

function statusOf(key: Key, now: number): string {
  if (key.revoked_at) return 'revoked';
  if (key.expires_at && Date.parse(key.expires_at) <= now) return 'expired';
  return 'active';
}

export function keyPages(scope: FastifyInstance, deps: ConsoleDeps): void {
  const route = consoleRoutes(scope);

  route.get('/keys', async (request, reply) =>
    withMode(request, reply, deps, 'API keys', 'keys', async (frame, key) => {
      const page = pageParam(queryOf(request).page);
      const list = await deps.api.ok<ApiList<Key>>(request, key, 'GET', withQuery('/api/v1/api-keys', { page }));
      const now = Date.now();
      return sendPage(reply, 'keys/index', frame, {
        keys: list.data.items.map((item) => ({ ...item, status: statusOf(item, now) })),
        scopes: SCOPES,
        pager: pagerOf('/dashboard/keys', {}, list.data.pagination),
        notices: NOTICES,
      });
    }),
  );

  route.post('/keys', async (request, reply) =>
    withMode(request, reply, deps, 'Key made', 'keys', async (frame, key) => {
      const form = formOf(request);
      const allowed = (form.allowed_ips ?? '')
        .split(/[\s,]+/)
        .map((line) => line.trim())
        .filter((line) => line !== '');
      const answer = await deps.api.call(request, key, 'POST', '/api/v1/api-keys', {
        name: form.name ?? '',
        scopes: formList(request, 'scopes'),
        ...(allowed.length > 0 ? { allowed_ips: allowed } : {}),
      });
      if (answer.status >= 400) throw refusalOf(answer);
      const made = (answer.body as { data: Key }).data;
      return sendPage(reply, 'keys/secret', frame, { key: made, rolled: false }, 201);
    }),
  );

  route.post('/keys/:id/roll', async (request, reply) =>
    withMode(request, reply, deps, 'Key rolled', 'keys', async (frame, key) => {
      const id = pathId((request.params as { id?: string }).id);
      if (!id) throw noKey();
      const answer = await deps.api.call(request, key, 'POST', `/api/v1/api-keys/${id}/roll`, {});
      if (answer.status >= 400) throw refusalOf(answer);
      const rolled = (answer.body as { data: Key }).data;
      return sendPage(reply, 'keys/secret', frame, { key: rolled, rolled: true }, 201);
    }),
  );

  route.post('/keys/:id/revoke', async (request, reply) =>
    withMode(request, reply, deps, 'API keys', 'keys', async (_frame, key) => {
      const id = pathId((request.params as { id?: string }).id);
      if (!id) throw noKey();
      const answer = await deps.api.call(request, key, 'DELETE', `/api/v1/api-keys/${id}`);
      if (answer.status >= 400) throw refusalOf(answer);
      return reply.redirect('/dashboard/keys?notice=key-revoked', 303);
    }),
  );
}
