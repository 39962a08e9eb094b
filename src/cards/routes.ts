// Cards (decisions §6, §11 and endpoints 7–11): create, list, get, lock, unlock, JIT and direct fund, balance and
// funding history. Operations answer 202 once the card's workflow has accepted them.
import type { FastifyInstance } from 'fastify';
import type { MikroORM } from '@mikro-orm/postgresql';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import type { z } from 'zod';
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

  // A card's settings, each read and replaced whole. Fastify cannot resolve the reply type of a
  // schema that is a type parameter, so the handlers' types are checked against `View` and `Body`
  // here instead; the body was validated with `schemas.body` before the handler runs.
  const setting = <View, Body>(
    path: string,
    summaries: { read: string; replace: string },
    schemas: { view: z.ZodType<View>; body: z.ZodType<Body> },
    service: {
      read: (tenantId: string, cardId: string) => Promise<View>;
      replace: (tenantId: string, cardId: string, body: Body) => Promise<View>;
    },
  ) => {
    const response = { 200: envelopeSchema(schemas.view) };
    typed.get(
      `/api/v1/cards/:card_id/${path}`,
      { schema: doc(summaries.read, { params, response }) },
      async (request) => ok(request, await service.read(tenantOf(request).tenantId, request.params.card_id)) as never,
    );
    typed.put(
      `/api/v1/cards/:card_id/${path}`,
      { schema: doc(summaries.replace, { params, body: schemas.body, response }) },
      async (request) =>
        ok(
          request,
          await service.replace(tenantOf(request).tenantId, request.params.card_id, request.body as Body),
        ) as never,
    );
  };
  setting(
    'security-settings',
    {
      read: 'The card security settings applied at authorization',
      replace: 'Replace the card security settings (limits, channels, blocked merchant categories)',
    },
    { view: SecuritySettings, body: SecuritySettings },
    {
      read: (tenantId, cardId) => deps.cards.securitySettings(tenantId, cardId),
      replace: (tenantId, cardId, body) => deps.cards.putSecuritySettings(tenantId, cardId, body),
    },
  );
  setting(
    'auto-reload',
    { read: 'The card auto-reload settings', replace: 'Replace the card auto-reload settings' },
    { view: AutoReloadView, body: AutoReloadSettings },
    {
      read: (tenantId, cardId) => deps.cards.autoReload(tenantId, cardId),
      replace: (tenantId, cardId, body) => deps.cards.putAutoReload(tenantId, cardId, body),
    },
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
    { schema: doc('Card balance', { params, response: { 200: envelopeSchema(CardBalance) } }) },
    async (request) => ok(request, await deps.cards.balance(tenantOf(request).tenantId, request.params.card_id)),
  );

  // A card's lists, newest first: paginated like the virtual-account list (decisions §16), wrapper
  // payloads refused alike.
  const cardList = <Page>(
    path: string,
    summary: string,
    page: z.ZodType<Page>,
    read: (tenantId: string, cardId: string, window: ReturnType<typeof windowOf>) => Promise<Page>,
  ) =>
    typed.get(
      `/api/v1/cards/:card_id/${path}`,
      {
        preValidation: refuseWrapperPayloads,
        schema: doc(summary, { params, querystring: PaginationQuery, response: { 200: envelopeSchema(page) } }),
      },
      async (request) =>
        ok(request, await read(tenantOf(request).tenantId, request.params.card_id, windowOf(request.query))) as never,
    );
  cardList('funding/history', 'Card funding history, newest first', FundingHistory, (tenantId, cardId, window) =>
    deps.cards.history(tenantId, cardId, window),
  );
  cardList(
    'authorizations',
    'Card authorizations (purchases the processor asked about), newest first',
    AuthorizationList,
    (tenantId, cardId, window) => deps.cards.authorizations(tenantId, cardId, window),
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

  // The processor's word on an authorization, cleared (captured) or reversed: 202 with its settlement.
  const settlement = <Body>(
    action: 'clear' | 'reverse',
    summary: string,
    body: z.ZodType<Body>,
    settle: (body: Body) => { cardId: string | undefined; how: Parameters<CardService['sandboxSettle']>[2] },
  ) =>
    typed.post(
      `/api/v1/sandbox/card-authorizations/:authorization_id/${action}`,
      {
        config: { reachesProvider: 'cards' },
        schema: tenantRouteSchema('sandbox', summary, {
          params: AuthorizationParams,
          body,
          response: { 202: envelopeSchema(SandboxSettlementView) },
        }),
      },
      async (request, reply) => {
        const { cardId, how } = settle(request.body as Body);
        const authorization = { authorizationId: request.params.authorization_id, cardId };
        return reply
          .status(202)
          .send(ok(request, await deps.cards.sandboxSettle(tenantOf(request), authorization, how)));
      },
    );
  settlement(
    'clear',
    'Sandbox keys: the card processor clears (captures) an authorization (card_id when two of your cards have its id)',
    SandboxClearBody,
    (body) => ({ cardId: body.card_id, how: { kind: 'clear', amountMinor: body.amount_minor } }),
  );
  settlement(
    'reverse',
    'Sandbox keys: the card processor reverses an authorization (no body, or card_id when two of your cards have its id)',
    SandboxReverseBody,
    (body) => ({ cardId: body?.card_id, how: { kind: 'reverse' } }),
  );
}
