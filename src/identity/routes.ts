// Identity customers over HTTP: POST to create (replay-safe by external_reference), GET one.
import type { FastifyInstance } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import { routeSchemasOf } from '../http/route-docs.ts';
import { z } from 'zod';
import { tenantOf } from '../http/auth.ts';
import { ResourceErrorSchema, envelopeSchema, ok } from '../http/envelope.ts';
import { CreateCustomerBody, CustomerView } from './schemas.ts';
import type { IdentityService } from './service.ts';

const doc = routeSchemasOf('identity');

export function identityRoutes(app: FastifyInstance, deps: { identity: IdentityService }) {
  const typed = app.withTypeProvider<ZodTypeProvider>();
  const errors = { 400: ResourceErrorSchema, 401: ResourceErrorSchema, 403: ResourceErrorSchema };

  typed.post(
    '/api/v1/identity/customers',
    {
      schema: doc('Create an identity customer (tenant feature identity_customers)', {
        body: CreateCustomerBody,
        response: { 200: envelopeSchema(CustomerView), 201: envelopeSchema(CustomerView), ...errors },
      }),
    },
    async (request, reply) => {
      const { status, customer } = await deps.identity.create(tenantOf(request), request.body);
      return reply.status(status).send(ok(request, customer));
    },
  );

  typed.get(
    '/api/v1/identity/customers/:id',
    {
      schema: doc('One identity customer', {
        params: z.object({ id: z.string() }),
        response: { 200: envelopeSchema(CustomerView), ...errors, 404: ResourceErrorSchema },
      }),
    },
    async (request) => ok(request, await deps.identity.get(tenantOf(request), request.params.id)),
  );
}
