// Card authorizations (decisions §11): the card processor asks about each purchase, and the
// gateway decides at once (src/cards/decision.ts). An approval holds the amount in the card's hold
// account; the processor later clears it (to the card processor's settlement account, the rest
// back to the card) or reverses it, each applied once (here), and operators list the holds left
// pending. This is the cards feature's store of authorizations: the only code that writes
// `card_authorizations` and `card_authorization_voids` (the decision's row as a step of its one
// statement, `insertAuthorizationStep`), and that reads a card's spending against its daily limit.
//
// Authorization ids are the processor's, per card (decisions §16): an authorization is its card
// and its id. The same id on two cards (of one tenant or two) is two authorizations, each decided,
// held, cleared, reversed and voided on its own card, under its own lock, journal keys and events;
// nothing about one card's ids changes what another card's purchase gets, or how fast.
import { type InferEntity, p } from '@mikro-orm/core';
import type { EntityManager } from '@mikro-orm/postgresql';
import { NEWEST_FIRST, tableEntity, timestamps } from '../db/columns.ts';
import { startOfLagosDay } from '../db/lagos-day.ts';
import { type SqlClient, prepared } from '../db/numbered-sql.ts';
import { type Page, type Window, pageOf } from '../db/pages.ts';
import type { WriteStep } from '../db/write-statement.ts';
import { recordEvent } from '../events/events.ts';
import { postMovement } from '../ledger/ledger.ts';
import { cardAuthorizationClear, cardAuthorizationRelease } from '../ledger/movements.ts';
import type { Currency } from '../lib/money.ts';
import type { CardRow } from './store.ts';

export const CardAuthorization = tableEntity('CardAuthorization', 'card_authorizations', {
  /** The processor's id: unique on its card only (the key is the card and the id, migration 0021). */
  id: p.string().primary(),
  tenant_id: p.uuid(),
  card_id: p.uuid().primary(),
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
  /**
   * The key modes whose cards the asking processor may act on (decisions §16): a card of another
   * mode is no card of this processor's, and is declined `card_not_found`.
   */
  modes: readonly ('test' | 'live')[];
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
 * the clearing or reversal of one authorization, as an SQL expression: `reference` stands for the
 * card's processor reference (the decision knows the card by it before it has read the card) and
 * `id` for the authorization id. Per card: another card's purchase under the same id never waits
 * on this one. The reference's length goes first, so no two (reference, id) pairs spell one key.
 */
export const authorizationIdLock = (reference: string, id: string) =>
  `pg_advisory_xact_lock(hashtextextended('card-authorization:' || length(${reference}) || ':' || ${reference} || ':' || ${id}, 0))`;

/** The key of an authorization's events and journal entries: its card and its id. */
export const authorizationKey = (cardId: string, authorizationId: string) =>
  `card:${cardId}:authorization:${authorizationId}`;

/** A decision's authorization row, as a step of the decision's one write statement. */
export function insertAuthorizationStep(row: AuthorizationRow): WriteStep {
  return {
    name: 'authorization_row',
    text: `insert into card_authorizations (id, tenant_id, card_id, amount_minor, currency, merchant_name,
      merchant_category, channel, decision, reason, status, jit_funded_minor)
    values ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12) returning 1`,
    values: [
      row.id,
      row.tenant_id,
      row.card_id,
      row.amount_minor,
      row.currency,
      row.merchant_name,
      row.merchant_category,
      row.channel,
      row.decision,
      row.reason ?? null,
      row.status,
      row.jit_funded_minor,
    ],
    rows: 1,
  };
}

/**
 * What the card has spent today, for its daily limit: approved amounts since 00:00 Africa/Lagos,
 * pending holds whole and cleared ones for what they took. On the decision's connection, as a named
 * prepared statement, after it has locked the card's accounts: a statement that waits for a lock
 * keeps the snapshot it started with for every row it did not lock, so read together with the
 * lock it would miss a reversal or clearing that committed while the decision waited (and decline
 * on a total already released).
 */
export async function spentToday(client: SqlClient, cardId: string): Promise<number> {
  const { rows } = await prepared(
    client,
    'card-authorizations-spent-today',
    `select coalesce(sum(case when status = 'pending' then amount_minor else cleared_minor end), 0)::text as spent
       from card_authorizations
      where card_id = $1 and status in ('pending', 'cleared') and created_at >= ${startOfLagosDay}`,
    [cardId],
  );
  return Number(rows[0]!.spent);
}

/**
 * How the processor names the authorization it clears or reverses: by its card (`cardReference`,
 * as the processor knows the card) and id. A message without the card (one queued before the
 * processor named cards) is applied when the id is on one card only. Operators and the sandbox name
 * the card by its id (`cardId`).
 */
export type SettlementTarget = {
  authorizationId: string;
  cardReference?: string;
  cardId?: string;
  /** The processor's: only cards of these key modes are its (an operator's release names none). */
  modes?: readonly string[];
};

/**
 * The processor's clearing (capture, possibly partial) or reversal of an authorization, applied
 * once. Anything else — an unknown card or authorization, one already cleared or released, a
 * declined one, a clearing above the hold — is refused and moves nothing; the description says
 * why, and is kept with the callback for operators.
 */
export async function settleAuthorization(
  em: EntityManager,
  action: SettlementTarget & ({ kind: 'clear'; amountMinor: number } | { kind: 'reverse' }),
): Promise<string> {
  return em.transactional(async (tx) => {
    const card = await settlementCard(tx, action);
    if (typeof card === 'string') return card;
    await tx.execute(`select ${authorizationIdLock('?', '?')}`, [
      card.processor_reference,
      card.processor_reference,
      action.authorizationId,
    ]);
    const [locked] = await tx.execute<{ id: string }[]>(
      'select id from card_authorizations where card_id = ? and id = ? for update',
      [card.id, action.authorizationId],
    );
    if (!locked) {
      // The processor reverses what it timed out on; the decision may still be running (or may never
      // come). The void makes a decision on this card that commits after it decline, so no hold is
      // left behind. Another card's purchase under the same id is not touched.
      if (action.kind === 'reverse') {
        await tx.execute('insert into card_authorization_voids (card_id, id) values (?, ?) on conflict do nothing', [
          card.id,
          action.authorizationId,
        ]);
      }
      return `refused: no authorization ${action.authorizationId}`;
    }
    const row = (await tx.findOne(
      CardAuthorization,
      { card_id: card.id, id: action.authorizationId },
      { refresh: true },
    ))!;
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
    await tx.execute(
      `update card_authorizations set status = ?, cleared_minor = ?, updated_at = now() where card_id = ? and id = ?`,
      [status, action.kind === 'clear' ? action.amountMinor : 0, row.card_id, row.id],
    );
    const stored = (await tx.findOne(CardAuthorization, { card_id: row.card_id, id: row.id }, { refresh: true }))!;
    await recordEvent(tx, {
      tenantId: row.tenant_id,
      type: `card.authorization.${status}`,
      sourceKey: `${authorizationKey(row.card_id, row.id)}:${status}`,
      payload: authorizationView(stored),
    });
    return `${status}: ${row.id}`;
  });
}

/** The card a settlement names, or why it is refused. */
async function settlementCard(
  tx: EntityManager,
  target: SettlementTarget,
): Promise<{ id: string; processor_reference: string } | string> {
  type CardKey = { id: string; processor_reference: string; mode: string };
  // A processor's message about a card of a mode it does not serve names no card of its own.
  const its = (card: CardKey | undefined) =>
    card && (target.modes === undefined || target.modes.includes(card.mode)) ? card : undefined;
  const withMode = 'select c.id, c.processor_reference, t.mode from cards c join tenants t on t.id = c.tenant_id';
  if (target.cardReference !== undefined) {
    const [card] = await tx.execute<CardKey[]>(`${withMode} where c.processor_reference = ?`, [target.cardReference]);
    return its(card) ?? `refused: no card ${target.cardReference}`;
  }
  if (target.cardId !== undefined) {
    const [card] = await tx.execute<CardKey[]>(`${withMode} where c.id = ?`, [target.cardId]);
    return its(card) ?? `refused: no card ${target.cardId}`;
  }
  const cards = (
    await tx.execute<CardKey[]>(`${withMode} join card_authorizations a on a.card_id = c.id where a.id = ? limit 2`, [
      target.authorizationId,
    ])
  ).filter((card) => its(card));
  if (cards.length === 0) return `refused: no authorization ${target.authorizationId}`;
  if (cards.length > 1) {
    const [count] = await tx.execute<{ n: number }[]>(
      'select count(*)::int as n from card_authorizations where id = ?',
      [target.authorizationId],
    );
    return `refused: authorization ${target.authorizationId} is on ${count!.n} cards and the message names none`;
  }
  return cards[0]!;
}

export async function listAuthorizations(
  em: EntityManager,
  cardId: string,
  window: Window,
): Promise<Page<AuthorizationRow>> {
  return pageOf(em, CardAuthorization, { card_id: cardId }, NEWEST_FIRST, window);
}

/**
 * The tenant's authorizations under this id: one per card that has it (optionally, on one card
 * only), at most `limit`. Only the tenant's own: another tenant's ids are never looked at.
 */
export async function findAuthorizations(
  em: EntityManager,
  scope: { tenantId?: string; cardId?: string },
  id: string,
  limit = 10,
): Promise<AuthorizationRow[]> {
  return em.find(
    CardAuthorization,
    {
      id,
      ...(scope.tenantId !== undefined ? { tenant_id: scope.tenantId } : {}),
      ...(scope.cardId !== undefined ? { card_id: scope.cardId } : {}),
    },
    { orderBy: { created_at: 'asc', card_id: 'asc' }, limit },
  );
}

/** Pending authorizations older than `olderThanMs`, oldest first, across every card: holds an operator may need to release. */
export async function pendingHolds(em: EntityManager, olderThanMs: number, limit = 100): Promise<AuthorizationRow[]> {
  return em.find(
    CardAuthorization,
    { status: 'pending', created_at: { $lt: new Date(Date.now() - olderThanMs) } },
    { orderBy: { created_at: 'asc', id: 'asc' }, limit },
  );
}
