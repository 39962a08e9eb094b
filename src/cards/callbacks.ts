// The card processor's callbacks: its authorization requests, answered with the decision while it
// waits, and its clearings and reversals, each applied once (src/cards/authorizations.ts). A
// clearing or reversal names the authorization by its card (`card_reference`) and id, since ids
// are the processor's per card; one without `card_reference` (queued before the processor named
// cards) applies only when the id is on one card.
import type { MikroORM } from '@mikro-orm/postgresql';
import { CardAuthorizationRequestData } from '../connectors/generic/contract.ts';
import { ApiError } from '../http/errors.ts';
import type { CallbackDispatcher } from '../provider-callbacks/dispatcher.ts';
import type { Providers } from '../connectors/registry.ts';
import { type SettlementTarget, settleAuthorization } from './authorizations.ts';
import { callbackModesOf } from '../connectors/registry.ts';
import type { CardService } from './service.ts';

/**
 * A card processor's authorization request (decisions §11), answered with the decision itself; its
 * data and the decision are the generic bank contract's (src/connectors/generic/contract.ts).
 */
export const AUTHORIZATION_REQUEST = 'card.authorization.request';

export function registerCardCallbacks(
  dispatcher: CallbackDispatcher,
  deps: { orm: MikroORM; providers: Pick<Providers, 'callbackModes'>; cards: Pick<CardService, 'authorize'> },
) {
  // Decided while the processor waits (at most 2 s): the authorization's own row, keyed by its id,
  // is the record, and a repeat gets the stored decision.
  dispatcher.answer(AUTHORIZATION_REQUEST, async ({ provider, data, log }) => {
    const parsed = CardAuthorizationRequestData.safeParse(data);
    if (!parsed.success) {
      throw ApiError.validation(
        parsed.error.issues.map((issue) => ({ path: ['data', ...issue.path].join('.'), message: issue.message })),
      );
    }
    const request = parsed.data;
    const authorization = await deps.cards.authorize(
      {
        authorizationId: request.authorization_id,
        cardReference: request.card_reference,
        amountMinor: request.amount_minor,
        currency: request.currency,
        merchantName: request.merchant_name,
        merchantCategory: request.merchant_category,
        channel: request.channel,
        modes: callbackModesOf(deps.providers, provider),
      },
      (error, fundingId) =>
        log.error({ err: error, fundingId }, 'auto-reload not handed to the card workflow; the sweep will retry'),
    );
    log.info(
      { provider, authorizationId: authorization.authorization_id, decision: authorization.decision },
      'card authorization',
    );
    return { authorization };
  });

  const text = (value: unknown) => (typeof value === 'string' && value.length > 0 ? value : undefined);
  const targetOf = (provider: string, data: Record<string, unknown>): SettlementTarget | undefined => {
    const authorizationId = text(data.authorization_id);
    if (!authorizationId) return undefined;
    const cardReference = text(data.card_reference);
    // Only the cards of the modes this sender serves are its (the sandbox bank's: test cards).
    const modes = callbackModesOf(deps.providers, provider);
    return cardReference !== undefined ? { authorizationId, cardReference, modes } : { authorizationId, modes };
  };

  dispatcher.on('card.authorization.cleared', async (callback) => {
    const target = targetOf(callback.provider, callback.data);
    const amountMinor = Number(callback.data.amount_minor);
    if (!target) return 'ignored: clearing without authorization_id';
    const result = await settleAuthorization(deps.orm.em.fork(), { ...target, kind: 'clear', amountMinor });
    if (result.startsWith('refused')) callback.log.warn({ ...target, result }, 'card clearing refused');
    return result;
  });

  dispatcher.on('card.authorization.reversed', async (callback) => {
    const target = targetOf(callback.provider, callback.data);
    if (!target) return 'ignored: reversal without authorization_id';
    const result = await settleAuthorization(deps.orm.em.fork(), { ...target, kind: 'reverse' });
    if (result.startsWith('refused')) callback.log.warn({ ...target, result }, 'card reversal refused');
    return result;
  });
}
