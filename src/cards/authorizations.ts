// Card authorizations (decisions §11): the card processor asks about each purchase, and the
// gateway decides at once (src/cards/decision.ts). An approval holds the amount in the card's hold
// account; the processor later clears it (to the card processor's settlement account, the rest
// back to the card) or reverses it, each applied once (here), and operators list the holds left
// pending.
import { type InferEntity, p } from '@mikro-orm/core';
import type { EntityManager } from '@mikro-orm/postgresql';
import { NEWEST_FIRST, tableEntity, timestamps } from '../db/columns.ts';
import { type Page, type Window, pageOf } from '../db/pages.ts';
import { recordEvent } from '../events/events.ts';
import { postMovement } from '../ledger/ledger.ts';
import { cardAuthorizationClear, cardAuthorizationRelease } from '../ledger/movements.ts';
import type { Currency } from '../ledger/money.ts';
import type { CardRow } from './store.ts';

export const CardAuthorization = tableEntity('CardAuthorization', 'card_authorizations', {
  id: p.string().primary(),
  tenant_id: p.uuid(),
  card_id: p.uuid(),
  amount_minor: p.bigint('number'),
  currency: p.string(),
  merchant_name: p.string(),
  merchant_category: p.string(),
  channel: p.enum(['pos', 'web', 'atm'] as const),
  decision: p.enum(['approved', 'declined'] as const),
  reason: p.string().nullable(),
  status: p.enum(['pending', 'cleared', 'reversed', 'declined'] as const),
  cleared_minor: p.bigint('number').default(0),
  jit_funded_minor: p.bigint('number').default(0),
  ...timestamps(),
});
export type AuthorizationRow = InferEntity<typeof CardAuthorization>;

export const DECLINE_REASONS = [
  'card_locked',
  'channel_blocked',
  'merchant_category_blocked',
  'limit_exceeded',
  'insufficient_funds',
] as const;
export type DeclineReason = (typeof DECLINE_REASONS)[number];
/** As stored and listed: `timeout` marks a decision the processor had already given up on (reversed first). */
export type StoredDeclineReason = DeclineReason | 'timeout';

/** What the processor asks: one purchase on one of its cards. */
export interface AuthorizationRequest {
  authorizationId: string;
  cardReference: string;
  amountMinor: number;
  currency: string;
  merchantName: string;
  merchantCategory: string;
  channel: 'pos' | 'web' | 'atm';
}

/** The gateway's answer to the processor. `card_not_found`: the processor's card is no card of ours. */
export interface AuthorizationDecision {
  authorization_id: string;
  decision: 'approved' | 'declined';
  reason: StoredDeclineReason | 'card_not_found' | null;
}

export function authorizationView(row: AuthorizationRow) {
  return {
    id: row.id,
    card_id: row.card_id,
    amount_minor: row.amount_minor,
    currency: row.currency,
    merchant_name: row.merchant_name,
    merchant_category: row.merchant_category,
    channel: row.channel,
    decision: row.decision,
    reason: row.reason ?? null,
    status: row.status,
    cleared_minor: row.cleared_minor,
    jit_funded_minor: row.jit_funded_minor,
    created_at: row.created_at.toISOString(),
    updated_at: row.updated_at.toISOString(),
  };
}

/** Auto-reload fires when the card's available balance crosses from at or above its threshold to below it. */
export function shouldAutoReload(
  card: Pick<CardRow, 'auto_reload_enabled' | 'auto_reload_threshold_minor' | 'auto_reload_amount_minor'>,
  beforeMinor: number,
  afterMinor: number,
): boolean {
  const threshold = card.auto_reload_threshold_minor;
  return (
    card.auto_reload_enabled &&
    (card.auto_reload_amount_minor ?? null) !== null &&
    beforeMinor >= threshold &&
    afterMinor < threshold
  );
}

/**
 * The transaction-scoped advisory lock that serialises the decision (src/cards/decision.ts) and
 * the reversal of one authorization id, as an SQL expression: `placeholder` stands for the id.
 */
export const authorizationIdLock = (placeholder: string) =>
  `pg_advisory_xact_lock(hashtextextended('card-authorization:' || ${placeholder}, 0))`;

async function lockAuthorizationId(tx: EntityManager, authorizationId: string): Promise<void> {
  await tx.execute(`select ${authorizationIdLock('?')}`, [authorizationId]);
}

/**
 * The processor's clearing (capture, possibly partial) or reversal of an authorization, applied
 * once. Anything else — an unknown authorization, one already cleared or released, a declined one,
 * a clearing above the hold — is refused and moves nothing; the description says why, and is kept
 * with the callback for operators.
 */
export async function settleAuthorization(
  em: EntityManager,
  action:
    { kind: 'clear'; authorizationId: string; amountMinor: number } | { kind: 'reverse'; authorizationId: string },
): Promise<string> {
  return em.transactional(async (tx) => {
    await lockAuthorizationId(tx, action.authorizationId);
    const [locked] = await tx.execute<{ id: string }[]>('select id from card_authorizations where id = ? for update', [
      action.authorizationId,
    ]);
    if (!locked) {
      // The processor reverses what it timed out on; the decision may still be running (or may never
      // come). The void makes a decision that commits after it decline, so no hold is left behind.
      if (action.kind === 'reverse') {
        await tx.execute('insert into card_authorization_voids (id) values (?) on conflict do nothing', [
          action.authorizationId,
        ]);
      }
      return `refused: no authorization ${action.authorizationId}`;
    }
    const row = (await tx.findOne(CardAuthorization, { id: action.authorizationId }, { refresh: true }))!;
    if (row.status !== 'pending') return `refused: authorization ${row.id} is ${row.status}`;
    const amounts = { authorizationId: row.id, cardId: row.card_id, amountMinor: row.amount_minor };
    const currency = row.currency as Currency;
    if (action.kind === 'clear') {
      if (
        !Number.isSafeInteger(action.amountMinor) ||
        action.amountMinor <= 0 ||
        action.amountMinor > row.amount_minor
      ) {
        return `refused: clearing of ${action.amountMinor} for a hold of ${row.amount_minor}`;
      }
      await postMovement(tx, row.tenant_id, cardAuthorizationClear({ ...amounts, clearedMinor: action.amountMinor }), {
        currency,
      });
    } else {
      await postMovement(tx, row.tenant_id, cardAuthorizationRelease(amounts), { currency });
    }
    const status = action.kind === 'clear' ? ('cleared' as const) : ('reversed' as const);
    await tx.execute(`update card_authorizations set status = ?, cleared_minor = ?, updated_at = now() where id = ?`, [
      status,
      action.kind === 'clear' ? action.amountMinor : 0,
      row.id,
    ]);
    const stored = (await tx.findOne(CardAuthorization, { id: row.id }, { refresh: true }))!;
    await recordEvent(tx, {
      tenantId: row.tenant_id,
      type: `card.authorization.${status}`,
      sourceKey: `card-authorization:${row.id}:${status}`,
      payload: authorizationView(stored),
    });
    return `${status}: ${row.id}`;
  });
}

export async function listAuthorizations(
  em: EntityManager,
  cardId: string,
  window: Window,
): Promise<Page<AuthorizationRow>> {
  return pageOf(em, CardAuthorization, { card_id: cardId }, NEWEST_FIRST, window);
}

export async function findAuthorization(
  em: EntityManager,
  tenantId: string,
  id: string,
): Promise<AuthorizationRow | null> {
  return em.findOne(CardAuthorization, { id, tenant_id: tenantId });
}

/** Pending authorizations older than `olderThanMs`, oldest first, across every card: holds an operator may need to release. */
export async function pendingHolds(em: EntityManager, olderThanMs: number, limit = 100): Promise<AuthorizationRow[]> {
  return em.find(
    CardAuthorization,
    { status: 'pending', created_at: { $lt: new Date(Date.now() - olderThanMs) } },
    { orderBy: { created_at: 'asc', id: 'asc' }, limit },
  );
}
