// Cards (decisions §6, §11 and endpoints 7–11): create, list, get, lock, unlock, JIT and direct fund, balance and
// funding history. Operations answer 202 once the card's workflow has accepted them.
import type { FastifyInstance } from 'fastify';
import type { MikroORM } from '@mikro-orm/postgresql';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import { routeSchemasOf } from '../http/route-docs.ts';
import { tenantOf } from '../http/auth.ts';
import { idempotencyKeyOf } from '../http/idempotency.ts';
import { ResourceErrorSchema, envelopeSchema, ok } from '../http/envelope.ts';
import { PaginationQuery, refuseWrapperPayloads, windowOf } from '../http/pagination.ts';
import { tenantRouteSchema } from '../http/route-docs.ts';
import {
  AuthorizationList,
  AuthorizationParams,
  AutoReloadSettings,
  AutoReloadView,
  CardBalance,
  CardList,
  CardParams,
  CardView,
  CreateCardBody,
  FundCardBody,
  FundingHistory,
  ListCardsQuery,
  LockCardBody,
  OperationAccepted,
  SandboxClearBody,
  SandboxPurchaseBody,
  SandboxPurchaseView,
  SandboxReverseBody,
  SandboxSettlementView,
  SecuritySettings,
  UpdateCardBody,
} from './schemas.ts';
import type { CardService } from './service.ts';

const params = CardParams;
const accepted = { 202: envelopeSchema(OperationAccepted) };

const doc = routeSchemasOf('cards');

export function cardRoutes(app: FastifyInstance, deps: { orm: MikroORM; cards: CardService }) {
  const typed = app.withTypeProvider<ZodTypeProvider>();

  typed.post(
    '/api/v1/cards',
    {
      config: { reachesProvider: 'cards' },
      schema: doc('Issue a card for a customer', {
        body: CreateCardBody,
        response: { 201: envelopeSchema(CardView), 400: ResourceErrorSchema, 401: ResourceErrorSchema },
      }),
    },
    async (request, reply) => {
      return reply
        .status(201)
        .send(ok(request, await deps.cards.create(tenantOf(request), request.body, idempotencyKeyOf(request))));
    },
  );

  typed.get(
    '/api/v1/cards',
    {
      schema: doc('List cards', { querystring: ListCardsQuery, response: { 200: envelopeSchema(CardList) } }),
    },
    async (request) =>
      ok(
        request,
        await deps.cards.list(
          tenantOf(request).tenantId,
          { customer_id: request.query.customer_id, status: request.query.status },
          windowOf(request.query),
        ),
      ),
  );

  typed.get(
    '/api/v1/cards/:card_id',
    { schema: doc('One card', { params, response: { 200: envelopeSchema(CardView) } }) },
    async (request) => ok(request, await deps.cards.get(tenantOf(request).tenantId, request.params.card_id)),
  );

  typed.patch(
    '/api/v1/cards/:card_id',
    {
      schema: doc('Turn JIT funding from the wallet on or off', {
        params,
        body: UpdateCardBody,
        response: { 200: envelopeSchema(CardView) },
      }),
    },
    async (request) =>
      ok(request, await deps.cards.update(tenantOf(request).tenantId, request.params.card_id, request.body)),
  );

  typed.get(
    '/api/v1/cards/:card_id/security-settings',
    {
      schema: doc('The card security settings applied at authorization', {
        params,
        response: { 200: envelopeSchema(SecuritySettings) },
      }),
    },
    async (request) =>
      ok(request, await deps.cards.securitySettings(tenantOf(request).tenantId, request.params.card_id)),
  );

  typed.put(
    '/api/v1/cards/:card_id/security-settings',
    {
      schema: doc('Replace the card security settings (limits, channels, blocked merchant categories)', {
        params,
        body: SecuritySettings,
        response: { 200: envelopeSchema(SecuritySettings) },
      }),
    },
    async (request) =>
      ok(
        request,
        await deps.cards.putSecuritySettings(tenantOf(request).tenantId, request.params.card_id, request.body),
      ),
  );

  typed.get(
    '/api/v1/cards/:card_id/auto-reload',
    { schema: doc('The card auto-reload settings', { params, response: { 200: envelopeSchema(AutoReloadView) } }) },
    async (request) => ok(request, await deps.cards.autoReload(tenantOf(request).tenantId, request.params.card_id)),
  );

  typed.put(
    '/api/v1/cards/:card_id/auto-reload',
    {
      schema: doc('Replace the card auto-reload settings', {
        params,
        body: AutoReloadSettings,
        response: { 200: envelopeSchema(AutoReloadView) },
      }),
    },
    async (request) =>
      ok(request, await deps.cards.putAutoReload(tenantOf(request).tenantId, request.params.card_id, request.body)),
  );

  typed.post(
    '/api/v1/cards/:card_id/lock',
    {
      config: { reachesProvider: 'cards' },
      schema: doc('Lock a card (accepted asynchronously)', { params, body: LockCardBody, response: accepted }),
    },
    async (request, reply) => {
      const body = request.body ?? {};
      const result = await deps.cards.setLocked(tenantOf(request).tenantId, request.params.card_id, 'lock', {
        idempotencyKey: body.idempotency_key ?? body.request_id ?? idempotencyKeyOf(request),
        reason: body.reason,
      });
      return reply.status(202).send(ok(request, result));
    },
  );

  typed.post(
    '/api/v1/cards/:card_id/unlock',
    {
      config: { reachesProvider: 'cards' },
      schema: doc('Unlock a card (accepted asynchronously; no body)', { params, response: accepted }),
    },
    async (request, reply) =>
      reply.status(202).send(
        ok(
          request,
          await deps.cards.setLocked(tenantOf(request).tenantId, request.params.card_id, 'unlock', {
            idempotencyKey: idempotencyKeyOf(request),
          }),
        ),
      ),
  );

  // Direct funding (decisions §11) is jit-fund under its own name: the same body, rules,
  // idempotency (one funding per key on the card, whichever of the two paths it came by), 202 answer
  // and events.
  for (const [path, summary] of [
    ['jit-fund', 'Move money from the wallet to the card (accepted asynchronously)'],
    ['fund', 'Top the card up from the wallet now (direct funding; same as jit-fund)'],
  ] as const) {
    typed.post(
      `/api/v1/cards/:card_id/${path}`,
      {
        config: {
          reachesProvider: 'cards',
          naturalKey: (body) => {
            const { idempotency_key: key, transaction_reference: reference } = body as Record<
              string,
              string | undefined
            >;
            return key !== undefined ? `key:${key}` : reference !== undefined ? `reference:${reference}` : undefined;
          },
        },
        schema: doc(summary, { params, body: FundCardBody, response: accepted }),
      },
      async (request, reply) =>
        reply.status(202).send(
          ok(
            request,
            await deps.cards.fund(tenantOf(request).tenantId, request.params.card_id, {
              ...request.body,
              // The header keys the funding too, so a retry after a lost answer funds once.
              idempotency_key: request.body.idempotency_key ?? idempotencyKeyOf(request),
            }),
          ),
        ),
    );
  }

  typed.get(
    '/api/v1/cards/:card_id/balance',
    {
      schema: doc('Card balance', { params, response: { 200: envelopeSchema(CardBalance) } }),
    },
    async (request) => ok(request, await deps.cards.balance(tenantOf(request).tenantId, request.params.card_id)),
  );

  typed.get(
    '/api/v1/cards/:card_id/funding/history',
    {
      // Paginated like the virtual-account list (decisions §16), wrapper payloads refused alike.
      preValidation: refuseWrapperPayloads,
      schema: doc('Card funding history, newest first', {
        params,
        querystring: PaginationQuery,
        response: { 200: envelopeSchema(FundingHistory) },
      }),
    },
    async (request) =>
      ok(
        request,
        await deps.cards.history(tenantOf(request).tenantId, request.params.card_id, windowOf(request.query)),
      ),
  );

  typed.get(
    '/api/v1/cards/:card_id/authorizations',
    {
      preValidation: refuseWrapperPayloads,
      schema: doc('Card authorizations (purchases the processor asked about), newest first', {
        params,
        querystring: PaginationQuery,
        response: { 200: envelopeSchema(AuthorizationList) },
      }),
    },
    async (request) =>
      ok(
        request,
        await deps.cards.authorizations(tenantOf(request).tenantId, request.params.card_id, windowOf(request.query)),
      ),
  );

  typed.post(
    '/api/v1/sandbox/cards/:card_id/purchases',
    {
      config: { reachesProvider: 'cards' },
      schema: tenantRouteSchema(
        'sandbox',
        'Sandbox keys: the sandbox card processor asks the gateway to authorize a purchase on this card',
        { params, body: SandboxPurchaseBody, response: { 200: envelopeSchema(SandboxPurchaseView) } },
      ),
    },
    async (request) =>
      ok(request, await deps.cards.sandboxPurchase(tenantOf(request), request.params.card_id, request.body)),
  );

  typed.post(
    '/api/v1/sandbox/card-authorizations/:authorization_id/clear',
    {
      config: { reachesProvider: 'cards' },
      schema: tenantRouteSchema(
        'sandbox',
        'Sandbox keys: the card processor clears (captures) an authorization (card_id when two of your cards have its id)',
        {
          params: AuthorizationParams,
          body: SandboxClearBody,
          response: { 202: envelopeSchema(SandboxSettlementView) },
        },
      ),
    },
    async (request, reply) =>
      reply
        .status(202)
        .send(
          ok(
            request,
            await deps.cards.sandboxSettle(
              tenantOf(request),
              { authorizationId: request.params.authorization_id, cardId: request.body.card_id },
              { kind: 'clear', amountMinor: request.body.amount_minor },
            ),
          ),
        ),
  );

  typed.post(
    '/api/v1/sandbox/card-authorizations/:authorization_id/reverse',
    {
      config: { reachesProvider: 'cards' },
      schema: tenantRouteSchema(
        'sandbox',
        'Sandbox keys: the card processor reverses an authorization (no body, or card_id when two of your cards have its id)',
        {
          params: AuthorizationParams,
          body: SandboxReverseBody,
          response: { 202: envelopeSchema(SandboxSettlementView) },
        },
      ),
    },
    async (request, reply) =>
      reply
        .status(202)
        .send(
          ok(
            request,
            await deps.cards.sandboxSettle(
              tenantOf(request),
              { authorizationId: request.params.authorization_id, cardId: request.body?.card_id },
              { kind: 'reverse' },
            ),
          ),
        ),
  );
}
