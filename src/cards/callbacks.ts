// The card processor's callbacks: its authorization requests, answered with the decision while it
// waits, and its clearings and reversals, each applied once (src/cards/authorizations.ts).
import type { MikroORM } from '@mikro-orm/postgresql';
import type { CallbackDispatcher } from '../provider-callbacks/dispatcher.ts';
import { settleAuthorization } from './authorizations.ts';

export function registerCardCallbacks(dispatcher: CallbackDispatcher, deps: { orm: MikroORM }) {
  const idOf = (data: Record<string, unknown>) =>
    typeof data.authorization_id === 'string' && data.authorization_id.length > 0 ? data.authorization_id : undefined;

  dispatcher.on('card.authorization.cleared', async (callback) => {
    const authorizationId = idOf(callback.data);
    const amountMinor = Number(callback.data.amount_minor);
    if (!authorizationId) return 'ignored: clearing without authorization_id';
    const result = await settleAuthorization(deps.orm.em.fork(), { kind: 'clear', authorizationId, amountMinor });
    if (result.startsWith('refused')) callback.log.warn({ authorizationId, result }, 'card clearing refused');
    return result;
  });

  dispatcher.on('card.authorization.reversed', async (callback) => {
    const authorizationId = idOf(callback.data);
    if (!authorizationId) return 'ignored: reversal without authorization_id';
    const result = await settleAuthorization(deps.orm.em.fork(), { kind: 'reverse', authorizationId });
    if (result.startsWith('refused')) callback.log.warn({ authorizationId, result }, 'card reversal refused');
    return result;
  });
}
