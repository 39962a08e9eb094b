// The tenant mode's transfer policy over HTTP (decisions §20): GET it (the defaults when none was
// saved), PUT it whole. Both need keys:write (src/http/scopes.ts).
import type { FastifyInstance } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import { requestActor } from '../audit/log.ts';
import { tenantOf } from '../http/auth.ts';
import { ResourceErrorSchema, envelopeSchema, ok } from '../http/envelope.ts';
import { routeSchemasOf } from '../http/route-docs.ts';
import { TransferPolicyBody, TransferPolicyView } from './schemas.ts';
import type { TransferPolicyService } from './service.ts';

const doc = routeSchemasOf('transfer policy');

export function transferPolicyRoutes(app: FastifyInstance, deps: { policies: TransferPolicyService }) {
  const typed = app.withTypeProvider<ZodTypeProvider>();
  const errors = { 400: ResourceErrorSchema, 401: ResourceErrorSchema, 403: ResourceErrorSchema };

  typed.get(
    '/api/v1/transfer-policy',
    {
      schema: doc("The key mode's transfer policy (all off until saved)", {
        response: { 200: envelopeSchema(TransferPolicyView), ...errors },
      }),
    },
    async (request) => ok(request, await deps.policies.get(tenantOf(request))),
  );

  typed.put(
    '/api/v1/transfer-policy',
    {
      schema: doc('Replace the transfer policy (the whole object; recorded in the audit log)', {
        description:
          'Which transfers are held for a second key to approve (`approval`), how long a held one waits ' +
          '(`approval_expires_in_hours`, 1 to 72), whether only saved recipients may be paid, and whether ' +
          'every live key must have an IP allow-list (refused 422 `FAILED_PRECONDITION` when no live key ' +
          'holding `keys:write` has one).',
        body: TransferPolicyBody,
        response: { 200: envelopeSchema(TransferPolicyView), ...errors, 422: ResourceErrorSchema },
      }),
    },
    async (request) => ok(request, await deps.policies.replace(tenantOf(request), request.body, requestActor(request))),
  );
}
