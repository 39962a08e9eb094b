// Identity customers over HTTP: POST to create (replay-safe by external_reference), GET one, and
// POST a BVN verification (202; the outcome arrives on the customer and as events).
import type { FastifyInstance } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import { routeSchemasOf } from '../http/route-docs.ts';
import { tenantOf } from '../http/auth.ts';
import { ResourceErrorSchema, envelopeSchema, ok } from '../http/envelope.ts';
import {
  BvnVerificationAccepted,
  BvnVerificationBody,
  CreateCustomerBody,
  CustomerParams,
  CustomerView,
} from './schemas.ts';
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
        params: CustomerParams,
        response: { 200: envelopeSchema(CustomerView), ...errors, 404: ResourceErrorSchema },
      }),
    },
    async (request) => ok(request, await deps.identity.get(tenantOf(request), request.params.id)),
  );

  typed.post(
    '/api/v1/identity/customers/:id/bvn-verification',
    {
      config: {
        reachesProvider: 'identity',
        // The stored Idempotency-Key record keeps a keyed fingerprint of the BVN, never a plain digest.
        fingerprint: (body) => ({ bvn: deps.identity.bvnFingerprint((body as BvnVerificationBody).bvn) }),
      },
      schema: doc(
        'Verify a customer by BVN (accepted asynchronously: the customer’s kyc_status becomes verified or verification_failed)',
        {
          params: CustomerParams,
          body: BvnVerificationBody,
          response: {
            202: envelopeSchema(BvnVerificationAccepted),
            ...errors,
            404: ResourceErrorSchema,
            409: ResourceErrorSchema,
            422: ResourceErrorSchema,
          },
        },
      ),
    },
    async (request, reply) => {
      const accepted = await deps.identity.requestBvnVerification(tenantOf(request), request.params.id, request.body);
      return reply.status(202).send(ok(request, accepted));
    },
  );
}
