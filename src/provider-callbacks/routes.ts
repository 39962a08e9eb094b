// POST /provider-callbacks/:provider — where banks tell us what happened. The signature and its
// timestamp are checked on the raw body before anything is parsed or stored (401 otherwise, and
// nothing applied). Each (provider, event id) is recorded, then dispatched once under a lease
// (src/provider-callbacks/dispatcher.ts): a repeat of a dispatched event only gets "duplicate",
// and one whose dispatch failed or was cut off by a crash is dispatched when the provider sends it
// again. The work itself happens in workflows; this route answers as soon as the fact is handed over.
// Hostile callers (decisions §16): a provider name is looked up in a Map, so `constructor` or
// `__proto__` are names like any other the deployment does not have (404); bodies are at most
// 64 KiB (413, before anything is read further or stored); and each refused request (unknown
// provider, bad signature) counts against its address on the unauthenticated budget, 429 with
// Retry-After once used up. Correctly signed callbacks never touch that budget: a card processor
// is not throttled by its own traffic.
import type { FastifyInstance } from 'fastify';
import type { MikroORM } from '@mikro-orm/postgresql';
import { z } from 'zod';
import { ApiError } from '../http/errors.ts';
import { ResourceErrorSchema, envelopeSchema, ok } from '../http/envelope.ts';
import { RETRY_AFTER_SECONDS } from '../http/deadlines.ts';
import type { RateLimitCheck } from '../http/rate-limits.ts';
import type { CallbackReceiver, NormalizedCallback } from '../connectors/types.ts';
import { CardAuthorizationDecision } from '../connectors/generic/contract.ts';
import { CallbackNotApplied, type CallbackDispatcher, dispatchOnce } from './dispatcher.ts';

/** The most a provider callback's body may hold; larger → 413 PAYLOAD_TOO_LARGE. */
export const CALLBACK_BODY_LIMIT_BYTES = 64 * 1024;

export interface CallbackRouteDeps {
  orm: MikroORM;
  /**
   * Each connector's receiver (signature check and body in our vocabulary), by the name in its
   * path; a name not listed here has no callback route.
   */
  receivers: ReadonlyMap<string, CallbackReceiver>;
  dispatcher: CallbackDispatcher;
  /**
   * Counts a refused request (unknown provider, bad signature) against its client address; throws
   * 429 once the address has used its budget (the unauthenticated one of src/http/rate-limits.ts).
   */
  refused?: RateLimitCheck;
}

/** What an answer may add to the response: the contract's card authorization decision (decisions §11). */
type AnswerFields = { authorization?: z.infer<typeof CardAuthorizationDecision> };

export function providerCallbackRoutes(app: FastifyInstance, deps: CallbackRouteDeps) {
  // A Map: a name is a provider only if the deployment configured it, never by inheritance.
  const receivers = deps.receivers;
  return app.register((scope, _options, done) => {
    // Keep the body as the provider sent it: the signature covers those exact bytes.
    scope.removeContentTypeParser('application/json');
    scope.addContentTypeParser('application/json', { parseAs: 'string' }, (_request, body, done) => done(null, body));

    scope.post(
      '/provider-callbacks/:provider',
      {
        config: { public: true, signed: true },
        bodyLimit: CALLBACK_BODY_LIMIT_BYTES,
        schema: {
          tags: ['providers'],
          summary: 'Signed callbacks from banks and providers (not for tenants)',
          params: z.object({ provider: z.string() }),
          response: {
            200: envelopeSchema(
              z.object({
                event_id: z.string(),
                status: z.enum(['accepted', 'duplicate']),
                authorization: CardAuthorizationDecision.optional(),
              }),
            ),
            // Public (no API key), yet refused 401 when the signature or its timestamp is wrong.
            401: ResourceErrorSchema,
            404: ResourceErrorSchema,
            413: ResourceErrorSchema,
            429: ResourceErrorSchema,
          },
        },
      },
      async (request, reply) => {
        const { provider } = request.params as { provider: string };
        const receiver = receivers.get(provider);
        if (receiver === undefined) {
          await deps.refused?.(request, reply);
          throw ApiError.notFound(`provider ${provider}`);
        }
        const raw = typeof request.body === 'string' ? request.body : '';
        const check = receiver.verify(raw, request.headers);
        if (!check.ok) {
          request.log.warn({ provider, reason: check.reason }, 'provider callback refused');
          // Throws 429 (with Retry-After) once this address has used its budget of refusals.
          await deps.refused?.(request, reply);
          throw new ApiError('unauthorized', `callback signature refused: ${check.reason}`);
        }
        const normalized = receiver.normalize(raw);
        if (!normalized.ok) throw ApiError.validation(normalized.issues);
        const parsed: NormalizedCallback = normalized.callback;

        // A type a feature answers while the provider waits (a card authorization request).
        const answerer = deps.dispatcher.answererOf(parsed.type);
        if (answerer) {
          const answer = await answerer({ provider, eventId: parsed.eventId, data: parsed.data, log: request.log });
          return ok(request, { event_id: parsed.eventId, status: 'accepted' as const, ...(answer as AnswerFields) });
        }

        // The record commits first; the dispatch holds no transaction or row lock while it calls Temporal.
        let outcome: 'accepted' | 'duplicate';
        try {
          outcome = await dispatchOnce(
            deps.orm,
            deps.dispatcher,
            {
              provider,
              eventId: parsed.eventId,
              type: parsed.type,
              occurredAt: parsed.occurredAt,
              data: parsed.data,
              log: request.log,
            },
            raw,
          );
        } catch (error) {
          if (!(error instanceof CallbackNotApplied)) throw error;
          if (error.code === 'dispatch_in_progress') {
            throw new ApiError('unavailable', 'callback is being applied; retry later', null, {
              headers: { 'retry-after': String(RETRY_AFTER_SECONDS) },
            });
          }
          request.log.error(
            { err: error.cause, provider, eventId: parsed.eventId },
            'provider callback dispatch failed',
          );
          throw new ApiError('unavailable', 'callback recorded but not yet applied; retry later', null, {
            headers: { 'retry-after': String(RETRY_AFTER_SECONDS) },
            cause: error.cause,
          });
        }
        request.log.info({ provider, eventId: parsed.eventId, type: parsed.type, outcome }, 'provider callback');
        return ok(request, { event_id: parsed.eventId, status: outcome });
      },
    );
    done();
  });
}
