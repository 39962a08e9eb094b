// Endpoints 1–3 and the single-account read, plus the sandbox inbound-credit route.
import type { FastifyInstance } from 'fastify';
import type { MikroORM } from '@mikro-orm/postgresql';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import { z } from 'zod';
import { tenantOf } from '../http/auth.ts';
import { idempotencyKeyOf } from '../http/idempotency.ts';
import { Metadata } from '../http/hostile-input.ts';
import { MAX_MOVEMENT_MINOR } from '../ledger/money.ts';
import { ResourceErrorSchema, envelopeSchema, ok } from '../http/envelope.ts';
import { PaginationQuery, refuseWrapperPayloads, windowOf } from '../http/pagination.ts';
import type { VirtualAccountService } from './service.ts';
import { SORTS } from './store.ts';

export const CreateVirtualAccountBody = z.object({
  customer_id: z.string({ error: 'is required' }).trim().min(1, 'is required').max(200),
  account_name: z.string({ error: 'is required' }).trim().min(1, 'is required').max(200),
  provider: z.string().min(1).max(50).optional(),
  account_type: z.string().min(1).max(50).optional(),
  metadata: Metadata.optional(),
  bvn: z
    .string()
    .regex(/^\d{11}$/, 'must be 11 digits')
    .optional(),
  country: z
    .string()
    .regex(/^[A-Z]{2}$/, 'must be an ISO 3166 alpha-2 code such as NG')
    .optional(),
  currency: z
    .string()
    .regex(/^[A-Z]{3}$/, 'must be an ISO 4217 code such as NGN')
    .optional(),
  request_id: z.string().min(1).max(200).optional(),
  preferred_bank: z.string().min(1).max(100).optional(),
});

const ListQuery = PaginationQuery.extend({
  customer_id: z.string().optional(),
  status: z.string().optional(),
  account_type: z.string().optional(),
  bank_code: z.string().optional(),
  sort: z
    .string()
    .refine((sort) => Object.hasOwn(SORTS, sort), `must be one of ${Object.keys(SORTS).join(', ')}`)
    .default('-created_at'),
});

const params = z.object({ id: z.string() });
const security = [{ apiKey: [] }];

export function virtualAccountRoutes(app: FastifyInstance, deps: { orm: MikroORM; accounts: VirtualAccountService }) {
  const typed = app.withTypeProvider<ZodTypeProvider>();

  typed.post(
    '/api/v1/virtual-accounts',
    {
      config: { reachesProvider: true, naturalKey: (body) => (body as { request_id?: string }).request_id },
      schema: {
        tags: ['virtual accounts'],
        summary: 'Create a virtual account for a customer',
        description:
          'Replay-safe by `request_id` and by the Idempotency-Key header: a repeat returns the same account (200).',
        security,
        body: CreateVirtualAccountBody,
        response: {
          200: envelopeSchema(z.unknown()),
          201: envelopeSchema(z.unknown()),
          400: ResourceErrorSchema,
          401: ResourceErrorSchema,
          422: ResourceErrorSchema,
        },
      },
    },
    async (request, reply) => {
      const result = await deps.accounts.create(tenantOf(request), request.body, idempotencyKeyOf(request));
      return reply.status(result.status).send(ok(request, result.body));
    },
  );

  typed.get(
    '/api/v1/virtual-accounts',
    {
      preValidation: refuseWrapperPayloads,
      schema: { tags: ['virtual accounts'], summary: 'List virtual accounts', security, querystring: ListQuery },
    },
    async (request) => {
      const { customer_id, status, account_type, bank_code, sort } = request.query;
      return ok(
        request,
        await deps.accounts.list(
          tenantOf(request).tenantId,
          {
            sort,
            ...(customer_id !== undefined ? { customer_id } : {}),
            ...(status !== undefined ? { status } : {}),
            ...(account_type !== undefined ? { account_type } : {}),
            ...(bank_code !== undefined ? { bank_code } : {}),
          },
          windowOf(request.query),
        ),
      );
    },
  );

  typed.get(
    '/api/v1/virtual-accounts/:id',
    { schema: { tags: ['virtual accounts'], summary: 'One virtual account', security, params } },
    async (request) => ok(request, await deps.accounts.get(tenantOf(request).tenantId, request.params.id)),
  );

  typed.post(
    '/api/v1/virtual-accounts/:id/close',
    {
      schema: {
        tags: ['virtual accounts'],
        summary: 'Close a virtual account (irreversible)',
        security,
        params,
        // The body is optional: absent, it arrives as null.
        body: z.object({ reason: z.string().max(500, 'must be at most 500 characters').optional() }).nullish(),
      },
    },
    async (request) =>
      ok(request, await deps.accounts.close(tenantOf(request).tenantId, request.params.id, request.body?.reason)),
  );

  typed.post(
    '/api/v1/sandbox/virtual-accounts/:id/credits',
    {
      schema: {
        tags: ['sandbox'],
        summary: 'Sandbox keys: make the sandbox bank send an inbound credit to this account',
        security,
        params,
        body: z.object({
          amount_minor: z
            .number({ error: 'is required' })
            .int('must be a whole number of kobo')
            .min(1, 'must be at least 1 kobo')
            .max(MAX_MOVEMENT_MINOR, `must be at most ${MAX_MOVEMENT_MINOR} kobo (₦1,000,000,000)`),
          sender_name: z.string().min(1).max(200).optional(),
          reference: z.string().min(1).max(100).optional(),
        }),
      },
    },
    async (request, reply) =>
      reply
        .status(202)
        .send(ok(request, await deps.accounts.sandboxCredit(tenantOf(request), request.params.id, request.body))),
  );
}
