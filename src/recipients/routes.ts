// Saved recipients over HTTP (decisions §20): POST to save one (after a name enquiry; the same
// bank and account again answers 200 with the one saved), GET a page or one, DELETE one.
import type { FastifyInstance } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import { tenantOf } from '../http/auth.ts';
import { ResourceErrorSchema, envelopeSchema, ok } from '../http/envelope.ts';
import { PaginationQuery, windowOf } from '../http/pagination.ts';
import { routeSchemasOf } from '../http/route-docs.ts';
import { CreateRecipientBody, RecipientList, RecipientParams, RecipientView } from './schemas.ts';
import type { RecipientService } from './service.ts';

const doc = routeSchemasOf('recipients');

export function recipientRoutes(app: FastifyInstance, deps: { recipients: RecipientService }) {
  const typed = app.withTypeProvider<ZodTypeProvider>();
  const errors = { 400: ResourceErrorSchema, 401: ResourceErrorSchema, 403: ResourceErrorSchema };

  typed.post(
    '/api/v1/recipients',
    {
      config: { reachesProvider: 'transfers' },
      schema: doc('Save a recipient (a bank account, after a name enquiry)', {
        description:
          'The account is looked up at its bank and saved under the name the bank gives. The same bank and ' +
          'account again answers 200 with the recipient already saved, with no enquiry. No such account: 422 ' +
          '`INVALID_ACCOUNT`. Bank unreachable: 503 `UNAVAILABLE` with Retry-After.',
        body: CreateRecipientBody,
        response: {
          200: envelopeSchema(RecipientView),
          201: envelopeSchema(RecipientView),
          ...errors,
          422: ResourceErrorSchema,
          503: ResourceErrorSchema,
        },
      }),
    },
    async (request, reply) => {
      const { status, recipient } = await deps.recipients.create(tenantOf(request), request.body);
      return reply.status(status).send(ok(request, recipient));
    },
  );

  typed.get(
    '/api/v1/recipients',
    {
      schema: doc('List saved recipients, newest first', {
        querystring: PaginationQuery,
        response: { 200: envelopeSchema(RecipientList), ...errors },
      }),
    },
    async (request) => ok(request, await deps.recipients.list(tenantOf(request), windowOf(request.query))),
  );

  typed.get(
    '/api/v1/recipients/:id',
    {
      schema: doc('One saved recipient', {
        params: RecipientParams,
        response: { 200: envelopeSchema(RecipientView), ...errors, 404: ResourceErrorSchema },
      }),
    },
    async (request) => ok(request, await deps.recipients.get(tenantOf(request), request.params.id)),
  );

  typed.delete(
    '/api/v1/recipients/:id',
    {
      schema: doc('Delete a saved recipient (answers it as it was)', {
        params: RecipientParams,
        response: { 200: envelopeSchema(RecipientView), ...errors, 404: ResourceErrorSchema },
      }),
    },
    async (request) => ok(request, await deps.recipients.delete(tenantOf(request), request.params.id)),
  );
}
