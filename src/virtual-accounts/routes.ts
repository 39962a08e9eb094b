// Endpoints 1–3 and the single-account read, plus the sandbox inbound-credit route.
import type { FastifyInstance } from 'fastify';
import type { MikroORM } from '@mikro-orm/postgresql';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import { routeSchemasOf, tenantRouteSchema } from '../http/route-docs.ts';
import { tenantOf } from '../http/auth.ts';
import { idempotencyKeyOf } from '../http/idempotency.ts';
import { ResourceErrorSchema, envelopeSchema, ok } from '../http/envelope.ts';
import { PaginationQuery, refuseWrapperPayloads, windowOf } from '../http/pagination.ts';
import {
  CloseVirtualAccountBody,
  CreateVirtualAccountBody,
  CreditParams,
  ReturnCreditBody,
  ReturnedCreditView,
  InboundCreditList,
  ListVirtualAccountsQuery,
  SandboxCreditBody,
  SandboxCreditView,
  VirtualAccountList,
  VirtualAccountParams,
  VirtualAccountView,
} from './schemas.ts';
import type { VirtualAccountService } from './service.ts';

const params = VirtualAccountParams;

const doc = routeSchemasOf('virtual accounts');

export function virtualAccountRoutes(app: FastifyInstance, deps: { orm: MikroORM; accounts: VirtualAccountService }) {
  const typed = app.withTypeProvider<ZodTypeProvider>();

  typed.post(
    '/api/v1/virtual-accounts',
    {
      config: {
        reachesProvider: 'virtual_accounts',
        naturalKey: (body) => (body as { request_id?: string }).request_id,
        // The stored request hash covers a keyed fingerprint of a BVN, never a plain digest of it.
        fingerprint: (body) => {
          const { bvn, ...rest } = body as CreateVirtualAccountBody;
          return bvn === undefined ? rest : { ...rest, bvn: deps.accounts.bvnFingerprint(bvn) };
        },
      },
      schema: doc('Create a virtual account for a customer', {
        description:
          'Replay-safe by `request_id` and by the Idempotency-Key header: a repeat returns the same account (200).',
        body: CreateVirtualAccountBody,
        response: {
          200: envelopeSchema(VirtualAccountView),
          201: envelopeSchema(VirtualAccountView),
          400: ResourceErrorSchema,
          401: ResourceErrorSchema,
          422: ResourceErrorSchema,
        },
      }),
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
      schema: doc('List virtual accounts', {
        querystring: ListVirtualAccountsQuery,
        response: { 200: envelopeSchema(VirtualAccountList) },
      }),
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
    {
      schema: doc('One virtual account', { params, response: { 200: envelopeSchema(VirtualAccountView) } }),
    },
    async (request) => ok(request, await deps.accounts.get(tenantOf(request).tenantId, request.params.id)),
  );

  typed.get(
    '/api/v1/virtual-accounts/:id/credits',
    {
      preValidation: refuseWrapperPayloads,
      schema: doc("A virtual account's inbound credits, newest first", {
        description:
          'Every credit the account received: what the sender paid (`amount_minor`), what the provider kept ' +
          "(`fee_minor`), the sender (with its account and bank when the provider gave them), the bank's " +
          'transaction reference, its `status` (applied, returned, partially_returned, or held: reached a ' +
          'closed or expired account from an unknown sender) and `returned_minor`. Paginated as every list.',
        params,
        querystring: PaginationQuery,
        response: { 200: envelopeSchema(InboundCreditList) },
      }),
    },
    async (request) =>
      ok(request, await deps.accounts.credits(tenantOf(request).tenantId, request.params.id, windowOf(request.query))),
  );

  typed.post(
    '/api/v1/virtual-accounts/:id/credits/:credit_id/return',
    {
      config: { reachesProvider: 'transfers' },
      schema: doc("Send a credit back to its sender's account", {
        description:
          'Sends `amount_minor` (all that is left of the credit when absent) back to the account the credit ' +
          'came from, as an ordinary transfer from the wallet (fee as for any transfer; the daily limit and ' +
          "the tenant's transfer policy apply, so it may be held for approval) whose views carry `return_of`. " +
          '201 with the credit as it now stands and the transfer. 422 FAILED_PRECONDITION when the credit does ' +
          "not carry its sender's account, is held in suspense (operators decide those), or when more than is " +
          'left is asked (`details: {returnable_minor}`). Supports the Idempotency-Key header.',
        params: CreditParams,
        body: ReturnCreditBody,
        response: {
          200: envelopeSchema(ReturnedCreditView),
          201: envelopeSchema(ReturnedCreditView),
          400: ResourceErrorSchema,
          404: ResourceErrorSchema,
          422: ResourceErrorSchema,
        },
      }),
    },
    async (request, reply) => {
      const result = await deps.accounts.returnCredit(
        tenantOf(request),
        request.params.id,
        request.params.credit_id,
        request.body,
        idempotencyKeyOf(request),
      );
      return reply.status(result.status).send(ok(request, result.body));
    },
  );

  typed.post(
    '/api/v1/virtual-accounts/:id/close',
    {
      config: { reachesProvider: 'virtual_accounts' },
      schema: doc('Close a virtual account (irreversible)', {
        params,
        // The body is optional: absent, it arrives as null.
        body: CloseVirtualAccountBody,
        response: { 200: envelopeSchema(VirtualAccountView) },
      }),
    },
    async (request) =>
      ok(request, await deps.accounts.close(tenantOf(request).tenantId, request.params.id, request.body?.reason)),
  );

  typed.post(
    '/api/v1/sandbox/virtual-accounts/:id/credits',
    {
      schema: tenantRouteSchema(
        'sandbox',
        'Sandbox keys: make the sandbox bank send an inbound credit to this account',
        {
          params,
          body: SandboxCreditBody,
          response: { 202: envelopeSchema(SandboxCreditView) },
        },
      ),
    },
    async (request, reply) =>
      reply
        .status(202)
        .send(ok(request, await deps.accounts.sandboxCredit(tenantOf(request), request.params.id, request.body))),
  );
}
