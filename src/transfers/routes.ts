// Endpoints 4–6: create, list and get transfers, in the transfer envelope styles.
import type { FastifyInstance } from 'fastify';
import type { MikroORM } from '@mikro-orm/postgresql';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import { z } from 'zod';
import { tenantOf } from '../http/auth.ts';
import { TransferErrorSchema } from '../http/error-docs.ts';
import { Metadata } from '../http/hostile-input.ts';
import { MAX_PAGE } from '../http/pagination.ts';
import { idempotencyKeyOf } from '../http/idempotency.ts';
import { MAX_TRANSFER_MINOR, MIN_TRANSFER_MINOR } from './fees.ts';
import type { TransferService } from './service.ts';

export const CreateTransferBody = z.object({
  amount_minor: z
    .number({ error: 'is required and must be a whole number of kobo' })
    .int('must be a whole number of kobo')
    .min(MIN_TRANSFER_MINOR, `must be at least ${MIN_TRANSFER_MINOR} kobo (₦1)`)
    .max(MAX_TRANSFER_MINOR, `must be at most ${MAX_TRANSFER_MINOR} kobo (₦10,000,000)`),
  recipient_account: z.string({ error: 'is required' }).regex(/^\d{10}$/, 'must be exactly 10 digits'),
  recipient_bank_code: z.string({ error: 'is required' }).min(1, 'is required').max(10),
  narration: z.string({ error: 'is required' }).min(1, 'is required').max(100, 'must be at most 100 characters'),
  reference: z
    .string()
    .regex(/^[A-Za-z0-9_-]{1,64}$/, 'must be 1 to 64 of A-Z, a-z, 0-9, _ and -')
    .optional(),
  currency: z.literal('NGN', { error: 'only NGN is supported' }).optional(),
  metadata: Metadata.optional(),
});

// Any valid ISO 8601 instant between 1970 and 9999; the service hands PostgreSQL its UTC form.
const EARLIEST = Date.parse('1970-01-01T00:00:00Z');
const LATEST = Date.parse('9999-12-31T23:59:59Z');
const isoDate = z.iso
  .datetime({ offset: true, error: 'must be an ISO 8601 date-time' })
  .or(z.iso.date())
  .refine((value) => {
    const at = Date.parse(value);
    return at >= EARLIEST && at <= LATEST;
  }, 'must be a date between 1970 and 9999');

export const ListTransfersQuery = z.object({
  page: z.coerce.number().int().min(1, 'must be 1 or more').max(MAX_PAGE, `must be at most ${MAX_PAGE}`).default(1),
  limit: z.coerce.number().int().min(1, 'must be 1 or more').max(100, 'must be at most 100').default(20),
  status: z.enum(['pending', 'successful', 'failed'], { error: 'must be pending, successful or failed' }).optional(),
  from: isoDate.optional(),
  to: isoDate.optional(),
  reference: z.string().min(1).max(64).optional(),
});

const CreateView = z.object({
  id: z.string(),
  amount_minor: z.number().int(),
  fee_minor: z.number().int(),
  total_minor: z.number().int(),
  recipient_account: z.string(),
  recipient_name: z.string(),
  recipient_bank: z.string(),
  recipient_bank_code: z.string(),
  status: z.enum(['pending', 'processing', 'completed', 'failed']),
  reference: z.string(),
  narration: z.string(),
  session_id: z.string(),
  currency: z.string(),
  metadata: z.record(z.string(), z.unknown()),
  created_at: z.string(),
});
const Item = z.object({
  id: z.string(),
  reference: z.string(),
  amount_minor: z.number().int(),
  currency: z.string(),
  status: z.enum(['pending', 'successful', 'failed']),
  bankCode: z.string(),
  accountNumber: z.string(),
  accountName: z.string(),
  createdAt: z.string(),
  completedAt: z.string().optional(),
});

export function transferRoutes(app: FastifyInstance, deps: { orm: MikroORM; transfers: TransferService }) {
  const typed = app.withTypeProvider<ZodTypeProvider>();

  typed.post(
    '/api/v1/transfers',
    {
      config: { reachesProvider: true, naturalKey: (body) => (body as { reference?: string }).reference },
      schema: {
        tags: ['transfers'],
        summary: 'Send naira to a bank account (returns once funds are reserved)',
        description:
          'Reserves amount_minor + fee_minor from the wallet and returns `pending`; the bank outcome follows ' +
          '(GET the transfer, or the transfer.settled / transfer.failed webhook). A repeat with the same ' +
          '`reference` and body returns the original (200); another body → 409 duplicate_reference. ' +
          'Supports the Idempotency-Key header.',
        security: [{ apiKey: [] }],
        body: CreateTransferBody,
        response: {
          200: z.object({ success: z.literal(true), data: CreateView }),
          201: z.object({ success: z.literal(true), data: CreateView }),
          400: TransferErrorSchema,
          401: TransferErrorSchema,
          409: TransferErrorSchema,
          422: TransferErrorSchema,
        },
      },
    },
    async (request, reply) => {
      const result = await deps.transfers.create(tenantOf(request).tenantId, request.body, idempotencyKeyOf(request));
      return reply.status(result.status).send(result.body);
    },
  );

  typed.get(
    '/api/v1/transfers',
    {
      schema: {
        tags: ['transfers'],
        summary: 'List transfers, newest first',
        security: [{ apiKey: [] }],
        querystring: ListTransfersQuery,
        response: {
          200: z.object({
            status: z.literal('success'),
            data: z.array(Item),
            pagination: z.object({ page: z.number(), limit: z.number(), total: z.number(), totalPages: z.number() }),
          }),
          400: TransferErrorSchema,
          401: TransferErrorSchema,
        },
      },
    },
    async (request) => {
      const query = request.query;
      const { items, pagination } = await deps.transfers.list(tenantOf(request).tenantId, {
        page: query.page,
        limit: query.limit,
        ...(query.status ? { status: query.status } : {}),
        ...(query.from ? { from: query.from } : {}),
        ...(query.to ? { to: query.to } : {}),
        ...(query.reference ? { reference: query.reference } : {}),
      });
      return { status: 'success' as const, data: items, pagination };
    },
  );

  typed.get(
    '/api/v1/transfers/:id',
    {
      schema: {
        tags: ['transfers'],
        summary: 'One transfer, by the id returned at creation',
        security: [{ apiKey: [] }],
        params: z.object({ id: z.string() }),
        response: {
          200: z.object({ status: z.literal('success'), data: Item }),
          401: TransferErrorSchema,
          404: TransferErrorSchema,
        },
      },
    },
    async (request) => ({
      status: 'success' as const,
      data: await deps.transfers.get(tenantOf(request).tenantId, request.params.id),
    }),
  );
}
