// Endpoints 4–6: create, list and get transfers, in the transfer envelope styles.
import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { z } from 'zod';
import type { MikroORM } from '@mikro-orm/postgresql';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import { routeSchemasOf } from '../http/route-docs.ts';
import { tenantOf } from '../http/auth.ts';
import { TransferErrorSchema } from '../http/error-docs.ts';
import { ApiError } from '../http/errors.ts';
import { idempotencyKeyOf } from '../http/idempotency.ts';
import {
  BatchItemsQuery,
  CreateBulkTransferBody,
  CreatedBatchResponse,
  TransferBatchItemsResponse,
  TransferBatchResponse,
  CreateTransferBody,
  CreatedTransferResponse,
  GetTransferQuery,
  ListTransfersQuery,
  TransferListResponse,
  TransferParams,
  TransferResponse,
  ListBatchesQuery,
  TransferBatchListResponse,
  ApproveBody,
  RejectBody,
} from './schemas.ts';
import type { TransferService } from './service.ts';
import type { TransferBatchService } from './batches.ts';
import type { ApprovalService, DecisionRequest } from './approval-service.ts';

/**
 * `<base>/approve` and `<base>/reject` (decisions §20): a held payout decided by a key with
 * transfers:approve other than the one that made it. Both answer 200 with the payout as GET shows it.
 */
function decisionRoutes(
  app: FastifyInstance,
  base: '/api/v1/transfers/:id' | '/api/v1/transfers/bulk/:id',
  what: 'transfer' | 'batch',
  answer: (
    request: FastifyRequest<{ Params: { id: string } }>,
    decision: DecisionRequest,
  ) => Promise<z.infer<typeof TransferResponse> | z.infer<typeof TransferBatchResponse>>,
): void {
  const response = {
    200: what === 'transfer' ? TransferResponse : TransferBatchResponse,
    400: TransferErrorSchema,
    401: TransferErrorSchema,
    403: TransferErrorSchema,
    404: TransferErrorSchema,
    409: TransferErrorSchema,
    422: TransferErrorSchema,
    503: TransferErrorSchema,
  };
  const rules =
    'Needs the transfers:approve scope and a key other than the one that made it (that key → 403 forbidden). ' +
    'Not held → 422 failed_precondition; already approved, rejected or expired → 409 already_decided with ' +
    '`details: {status}`. Answers 200 once the decision is recorded.';
  const held = what === 'transfer' ? 'held transfer' : 'held batch (every item at once)';
  const typed = app.withTypeProvider<ZodTypeProvider>();
  typed.post(
    `${base}/approve`,
    {
      schema: doc(`Approve a ${held}: it goes on to its bank (decisions §20)`, {
        description: rules,
        params: TransferParams,
        body: ApproveBody.nullish(),
        response,
      }),
    },
    async (request) => answer(request, { decision: 'approve', ip: request.ip, requestId: request.id }),
  );
  typed.post(
    `${base}/reject`,
    {
      schema: doc(`Reject a ${held}: it fails with amount and fee returned (failure_reason \`rejected\`)`, {
        description: rules,
        params: TransferParams,
        body: RejectBody.nullish(),
        response,
      }),
    },
    async (request) =>
      answer(request, {
        decision: 'reject',
        ...(request.body?.reason !== undefined ? { reason: request.body.reason } : {}),
        ip: request.ip,
        requestId: request.id,
      }),
  );
}

const doc = routeSchemasOf('transfers');

/** 1,000 items with metadata: larger than the API's default body limit, bounded all the same. */
export const BULK_BODY_LIMIT_BYTES = 4 * 1024 * 1024;

export function transferRoutes(
  app: FastifyInstance,
  deps: { orm: MikroORM; transfers: TransferService; batches: TransferBatchService; approvals: ApprovalService },
) {
  const typed = app.withTypeProvider<ZodTypeProvider>();

  // Registered before /api/v1/transfers/:id, which would otherwise not see them (Fastify prefers
  // the static segment either way; the order only keeps the file reading top to bottom).
  typed.post(
    '/api/v1/transfers/bulk',
    {
      config: { reachesProvider: 'transfers' },
      bodyLimit: BULK_BODY_LIMIT_BYTES,
      schema: doc('Send up to 1,000 transfers as one batch (decisions §14)', {
        description:
          'Validates the whole batch (any malformed item → 400 naming `transfers[i].field`; nothing is created), ' +
          'each item naming `recipient_id` (a saved recipient) or `recipient_account` + `recipient_bank_code`, as a ' +
          "single create does; an item whose saved recipient's bank now gives another name is refused invalid_account. " +
          'records it and answers 202; each item then becomes an ordinary transfer (same fees, limits, events). ' +
          'With `atomic: true` every amount and fee is reserved before the answer, or 422 with the batch totals. ' +
          'The same `batch_reference` and body → 200 with the same batch; another body → 409 duplicate_reference. ' +
          'At most 5 batches of a tenant and mode are open (not completed) at once: another → 429 rate_limited ' +
          'with `details: {limit: 5, open}` and Retry-After; and at most 30,000 items a minute (BULK_ITEMS_PER_MINUTE), ' +
          'held as 5,000 in any 10 seconds, are accepted per tenant and mode: a batch past it → 429 rate_limited with ' +
          '`details: {limit, window_seconds: 10, admitted}` and Retry-After.',
        body: CreateBulkTransferBody,
        response: {
          200: CreatedBatchResponse,
          202: CreatedBatchResponse,
          400: TransferErrorSchema,
          401: TransferErrorSchema,
          409: TransferErrorSchema,
          413: TransferErrorSchema,
          422: TransferErrorSchema,
          503: TransferErrorSchema,
        },
      }),
    },
    async (request, reply) => {
      const { tenantId, mode, keyId } = tenantOf(request);
      const result = await deps.batches.create(tenantId, request.body, mode, keyId);
      return reply.status(result.status).send(result.body);
    },
  );

  typed.get(
    '/api/v1/transfers/bulk',
    {
      schema: doc('List batches, newest first', {
        description: '`approval=required`: only held batches awaiting a decision (decisions §20).',
        querystring: ListBatchesQuery,
        response: { 200: TransferBatchListResponse, 400: TransferErrorSchema, 401: TransferErrorSchema },
      }),
    },
    async (request) => {
      const { items, pagination } = await deps.batches.list(tenantOf(request).tenantId, {
        page: request.query.page,
        limit: request.query.limit,
        ...(request.query.approval ? { approval: request.query.approval } : {}),
      });
      return { status: 'success' as const, data: items, pagination };
    },
  );

  typed.get(
    '/api/v1/transfers/bulk/:id',
    {
      schema: doc('One batch, with its items by outcome', {
        params: TransferParams,
        response: { 200: TransferBatchResponse, 401: TransferErrorSchema, 404: TransferErrorSchema },
      }),
    },
    async (request) => ({
      status: 'success' as const,
      data: await deps.batches.get(tenantOf(request).tenantId, request.params.id),
    }),
  );

  decisionRoutes(app, '/api/v1/transfers/bulk/:id', 'batch', async (request, decision) => {
    const key = tenantOf(request);
    await deps.approvals.decideBatch(key, request.params.id, decision);
    return { status: 'success' as const, data: await deps.batches.get(key.tenantId, request.params.id) };
  });

  typed.get(
    '/api/v1/transfers/bulk/:id/items',
    {
      schema: doc("A batch's items in index order: refused with their code, or their transfer's status", {
        params: TransferParams,
        querystring: BatchItemsQuery,
        response: {
          200: TransferBatchItemsResponse,
          400: TransferErrorSchema,
          401: TransferErrorSchema,
          404: TransferErrorSchema,
        },
      }),
    },
    async (request) => {
      const { items, pagination } = await deps.batches.listItems(tenantOf(request).tenantId, request.params.id, {
        page: request.query.page,
        limit: request.query.limit,
      });
      return { status: 'success' as const, data: items, pagination };
    },
  );

  typed.post(
    '/api/v1/transfers',
    {
      config: { reachesProvider: 'transfers', naturalKey: (body) => (body as { reference?: string }).reference },
      schema: doc('Send naira to a bank account (returns once funds are reserved)', {
        description:
          'Reserves amount_minor + fee_minor from the wallet and returns `pending`; the bank outcome follows ' +
          '(GET the transfer, or the transfer.settled / transfer.failed webhook). A repeat with the same ' +
          '`reference` and body returns the original (200); another body → 409 duplicate_reference. ' +
          'Supports the Idempotency-Key header. The payee is `recipient_id` (a saved recipient) or ' +
          '`recipient_account` + `recipient_bank_code`: both, or neither, → 400 naming the field; a `recipient_id` ' +
          "that is not a saved recipient of the key's tenant and mode → 400 naming it. A saved recipient is paid " +
          'under the name it was saved with, after a name enquiry that must still give that name (case and ' +
          'spacing aside): otherwise 422 invalid_account with `details: {saved_name, current_name}`.',
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
        const { tenantId, mode, keyId } = tenantOf(request);
        const result = await deps.transfers.create(tenantId, request.body, idempotencyKeyOf(request), mode, keyId);
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
        ...(query.recipient_account ? { recipient_account: query.recipient_account } : {}),
        ...(query.approval ? { approval: query.approval } : {}),
        ...(query.expand ? { expand: query.expand } : {}),
      });
      return { status: 'success' as const, data: items, pagination };
    },
  );

  decisionRoutes(app, '/api/v1/transfers/:id', 'transfer', async (request, decision) => {
    const key = tenantOf(request);
    await deps.approvals.decideTransfer(key, request.params.id, decision);
    return { status: 'success' as const, data: await deps.transfers.get(key.tenantId, request.params.id) };
  });

  typed.get(
    '/api/v1/transfers/:id',
    {
      schema: doc('One transfer, by the id returned at creation', {
        params: TransferParams,
        querystring: GetTransferQuery,
        response: {
          200: TransferResponse,
          401: TransferErrorSchema,
          404: TransferErrorSchema,
        },
      }),
    },
    async (request) => ({
      status: 'success' as const,
      data: await deps.transfers.get(tenantOf(request).tenantId, request.params.id, request.query.expand),
    }),
  );
}
