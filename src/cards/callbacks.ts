// The card processor's callbacks: its authorization requests, answered with the decision while it
// waits, and its clearings and reversals, each applied once (src/cards/authorizations.ts). A
// clearing or reversal names the authorization by its card (`card_reference`) and id, since ids
// are the processor's per card; one without `card_reference` (queued before the processor named
// cards) applies only when the id is on one card.
import type { MikroORM } from '@mikro-orm/postgresql';
import type { CallbackDispatcher } from '../provider-callbacks/dispatcher.ts';
import type { Providers } from '../connectors/registry.ts';
import { type SettlementTarget, settleAuthorization } from './authorizations.ts';
import { callbackModesOf } from '../connectors/registry.ts';

export function registerCardCallbacks(
  dispatcher: CallbackDispatcher,
  deps: { orm: MikroORM; providers: Pick<Providers, 'callbackModes'> },
) {
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
