// Endpoints 4–6: create, list and get transfers, in the transfer envelope styles.
import type { FastifyInstance } from 'fastify';
import type { MikroORM } from '@mikro-orm/postgresql';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import { routeSchemasOf } from '../http/route-docs.ts';
import { tenantOf } from '../http/auth.ts';
import { TransferErrorSchema } from '../http/error-docs.ts';
import { ApiError } from '../http/errors.ts';
import { idempotencyKeyOf } from '../http/idempotency.ts';
import {
  CreateTransferBody,
  CreatedTransferResponse,
  ListTransfersQuery,
  TransferListResponse,
  TransferParams,
  TransferResponse,
} from './schemas.ts';
import type { TransferService } from './service.ts';

const doc = routeSchemasOf('transfers');

export function transferRoutes(app: FastifyInstance, deps: { orm: MikroORM; transfers: TransferService }) {
  const typed = app.withTypeProvider<ZodTypeProvider>();

  typed.post(
    '/api/v1/transfers',
    {
      config: { reachesProvider: 'transfers', naturalKey: (body) => (body as { reference?: string }).reference },
      schema: doc('Send naira to a bank account (returns once funds are reserved)', {
        description:
          'Reserves amount_minor + fee_minor from the wallet and returns `pending`; the bank outcome follows ' +
          '(GET the transfer, or the transfer.settled / transfer.failed webhook). A repeat with the same ' +
          '`reference` and body returns the original (200); another body → 409 duplicate_reference. ' +
          'Supports the Idempotency-Key header.',
        body: CreateTransferBody,
        response: {
          200: CreatedTransferResponse,
          201: CreatedTransferResponse,
          400: TransferErrorSchema,
          401: TransferErrorSchema,
          409: TransferErrorSchema,
          422: TransferErrorSchema,
        },
      }),
    },
    async (request, reply) => {
      const started = performance.now();
      const seconds = () => (performance.now() - started) / 1000;
      try {
        const { tenantId, mode } = tenantOf(request);
        const result = await deps.transfers.create(tenantId, request.body, idempotencyKeyOf(request), mode);
        app.metrics.observeCreate(result.status === 201 ? 'created' : 'repeated', seconds());
        return await reply.status(result.status).send(result.body);
      } catch (error) {
        app.metrics.observeCreate(error instanceof ApiError && error.status < 500 ? 'refused' : 'error', seconds());
        throw error;
      }
    },
  );

  typed.get(
    '/api/v1/transfers',
    {
      schema: doc('List transfers, newest first', {
        querystring: ListTransfersQuery,
        response: {
          200: TransferListResponse,
          400: TransferErrorSchema,
          401: TransferErrorSchema,
        },
      }),
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
      schema: doc('One transfer, by the id returned at creation', {
        params: TransferParams,
        response: {
          200: TransferResponse,
          401: TransferErrorSchema,
          404: TransferErrorSchema,
        },
      }),
    },
    async (request) => ({
      status: 'success' as const,
      data: await deps.transfers.get(tenantOf(request).tenantId, request.params.id),
    }),
  );
}
