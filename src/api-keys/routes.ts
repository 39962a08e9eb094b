// Keys the tenant manages, over HTTP (decisions §19): list, make (its secret shown once), roll (a
// new secret, the old one working for the overlap), revoke. All need keys:write (src/http/scopes.ts).
import type { FastifyInstance } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import { requestActor } from '../audit/log.ts';
import { tenantOf } from '../http/auth.ts';
import { ResourceErrorSchema, envelopeSchema, ok } from '../http/envelope.ts';
import { PaginationQuery, windowOf } from '../http/pagination.ts';
import { routeSchemasOf } from '../http/route-docs.ts';
import { CreateKeyBody, KeyList, KeyParams, KeyView, KeyWithSecret, RollKeyBody, RolledKey } from './schemas.ts';
import type { ApiKeyService } from './service.ts';

const doc = routeSchemasOf('API keys');

/**
 * A key's secret is never stored (only its hash): the copy an Idempotency-Key keeps of the answer
 * has `secret: null`, so a repeat answers the key it made without it (roll it if it was lost).
 */
function withoutSecret(answer: unknown): unknown {
  const data = (answer as { data?: unknown } | null)?.data;
  if (!data || typeof data !== 'object' || !('secret' in data)) return answer;
  return { ...(answer as object), data: { ...data, secret: null } };
}

export function apiKeyRoutes(app: FastifyInstance, deps: { keys: ApiKeyService }) {
  const typed = app.withTypeProvider<ZodTypeProvider>();
  const errors = { 400: ResourceErrorSchema, 401: ResourceErrorSchema, 403: ResourceErrorSchema };

  typed.get(
    '/api/v1/api-keys',
    {
      schema: doc("The keys of the caller's tenant and mode, newest first (never their secrets)", {
        querystring: PaginationQuery,
        response: { 200: envelopeSchema(KeyList), ...errors },
      }),
    },
    async (request) => ok(request, await deps.keys.list(tenantOf(request), windowOf(request.query))),
  );

  typed.post(
    '/api/v1/api-keys',
    {
      config: { storedAnswer: withoutSecret },
      schema: doc('Make a key of the caller’s mode; its secret is in this answer only', {
        description:
          'Its scopes must be within the caller’s (a `*` key may give any). `allowed_ips`: at most 20 IPv4 or ' +
          'IPv6 addresses or CIDR ranges it may be used from. A live key without one, when the transfer ' +
          'policy requires it: 422 `FAILED_PRECONDITION`. A repeat with the same Idempotency-Key answers ' +
          'the key it made with `secret: null` (secrets are never stored).',
        body: CreateKeyBody,
        response: { 201: envelopeSchema(KeyWithSecret), ...errors, 422: ResourceErrorSchema },
      }),
    },
    async (request, reply) => {
      const key = await deps.keys.create(tenantOf(request), request.body, requestActor(request));
      return reply.status(201).send(ok(request, key));
    },
  );

  typed.post(
    '/api/v1/api-keys/:id/roll',
    {
      config: { storedAnswer: withoutSecret },
      schema: doc('Roll a key: a new secret now, the old one working for `expires_in_hours` (0 to 168, default 24)', {
        description: 'The key keeps its id, name, scopes and allow-list. A revoked or expired key: 422.',
        params: KeyParams,
        body: RollKeyBody,
        response: {
          201: envelopeSchema(RolledKey),
          ...errors,
          404: ResourceErrorSchema,
          422: ResourceErrorSchema,
        },
      }),
    },
    async (request, reply) => {
      const key = await deps.keys.roll(tenantOf(request), request.params.id, request.body, requestActor(request));
      return reply.status(201).send(ok(request, key));
    },
  );

  typed.delete(
    '/api/v1/api-keys/:id',
    {
      schema: doc('Revoke a key at once (its event streams end too)', {
        description:
          'The last working key of the tenant and mode that holds `keys:write` cannot be revoked here: 422 ' +
          '`FAILED_PRECONDITION` (the operator CLI can).',
        params: KeyParams,
        response: {
          200: envelopeSchema(KeyView),
          ...errors,
          404: ResourceErrorSchema,
          422: ResourceErrorSchema,
        },
      }),
    },
    async (request) => ok(request, await deps.keys.revoke(tenantOf(request), request.params.id, requestActor(request))),
  );
}
