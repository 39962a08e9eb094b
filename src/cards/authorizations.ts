// Card authorizations (decisions §11): the card processor asks about each purchase and waits at
// most 2 s for the answer, so the decision is made here, in the API process, in one PostgreSQL
// transaction — never behind a workflow's queue of slower operations. The card's row lock keeps
// its decisions in one serial order: each sees the balance, holds and daily total the one before
// it left. Checks, in the decided order: lock, channel, merchant category, per-transaction limit,
// daily limit (approved amounts since 00:00 Africa/Lagos, less what was reversed), funds (the
// card's balance, plus JIT funding from the wallet when the card has it). An approval holds the
// amount in the card's hold account; the processor later clears it (to the card processor's
// settlement account, the rest back to the card) or reverses it, each applied once.
import { type InferEntity, p } from '@mikro-orm/core';
import type { EntityManager, MikroORM } from '@mikro-orm/postgresql';
import { NEWEST_FIRST, tableEntity, timestamps } from '../db/columns.ts';
import { type Page, type Window, pageOf } from '../db/pages.ts';
import { recordEvent } from '../events/events.ts';
import { cardAccountCode, cardHoldAccountCode, openCardHoldAccount, postMovement } from '../ledger/ledger.ts';
import {
  cardAuthorizationClear,
  cardAuthorizationHold,
  cardAuthorizationRelease,
  cardFunding,
} from '../ledger/movements.ts';
import type { Currency } from '../ledger/money.ts';
import { Card, type CardRow, type FundingRow, insertFunding } from './store.ts';
import { fundingView } from './views.ts';

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

const decisionOf = (row: AuthorizationRow): AuthorizationDecision => ({
  authorization_id: row.id,
  decision: row.decision,
  reason: (row.reason as StoredDeclineReason | null) ?? null,
});

/** Approved amounts since 00:00 Africa/Lagos today: pending holds, and what cleared ones took. */
async function spentToday(tx: EntityManager, cardId: string): Promise<number> {
  const [row] = await tx.execute<{ spent: string | null }[]>(
    `select sum(case when status = 'pending' then amount_minor else cleared_minor end) as spent
       from card_authorizations
      where card_id = ? and status in ('pending', 'cleared')
        and created_at >= (date_trunc('day', now() at time zone 'Africa/Lagos') at time zone 'Africa/Lagos')`,
    [cardId],
  );
  return Number(row?.spent ?? 0);
}

/** The first decided check the purchase fails, or null when only funds remain to be checked. */
async function policyRefusal(tx: EntityManager, card: CardRow, request: AuthorizationRequest) {
  if (card.status === 'locked') return 'card_locked' as const;
  const channelOpen = { pos: card.channel_pos, web: card.channel_web, atm: card.channel_atm }[request.channel];
  if (!channelOpen) return 'channel_blocked' as const;
  if (card.blocked_merchant_categories.includes(request.merchantCategory)) return 'merchant_category_blocked' as const;
  const perTransaction = card.per_transaction_limit_minor ?? null;
  if (perTransaction !== null && request.amountMinor > perTransaction) return 'limit_exceeded' as const;
  const daily = card.daily_limit_minor ?? null;
  if (daily !== null && (await spentToday(tx, card.id)) + request.amountMinor > daily) return 'limit_exceeded' as const;
  return null;
}

/** A funding that is already done: JIT funding inside a decision (the processor is the one asking). */
async function recordJitFunding(
  tx: EntityManager,
  card: CardRow,
  authorizationId: string,
  amountMinor: number,
  knownAccounts: ReadonlyMap<string, string>,
) {
  const funding = await insertFunding(tx, {
    cardId: card.id,
    amountMinor,
    currency: card.currency,
    transactionReference: `authorization:${authorizationId}`,
    source: 'jit',
    done: true,
  });
  await postMovement(tx, card.tenant_id, cardFunding({ fundingId: funding.id, cardId: card.id, amountMinor }), {
    currency: card.currency as Currency,
    knownAccounts,
  });
  await recordEvent(tx, {
    tenantId: card.tenant_id,
    type: 'card.funded',
    sourceKey: `card-funding:${funding.id}:succeeded`,
    payload: { card_id: card.id, ...fundingView(funding) },
  });
}

/** Auto-reload's funding, once per drop below the threshold: handed to the card's workflow after commit. */
function recordAutoReload(tx: EntityManager, card: CardRow, authorizationId: string): Promise<FundingRow> {
  return insertFunding(tx, {
    cardId: card.id,
    amountMinor: card.auto_reload_amount_minor!,
    currency: card.currency,
    idempotencyKey: `auto-reload:${authorizationId}`,
    source: 'auto_reload',
  });
}

export interface AuthorizationOutcome {
  decision: AuthorizationDecision;
  /** An auto-reload funding to hand to the card's workflow, when this approval triggered one. */
  autoReload?: { card: CardRow; funding: FundingRow };
}

/** The card's balance, its holds and (for a JIT card) the wallet, locked in one statement in id order. */
async function lockAccounts(tx: EntityManager, card: CardRow) {
  const codes = [cardAccountCode(card.id), cardHoldAccountCode(card.id), ...(card.jit_funding ? ['wallet'] : [])];
  // Every posting locks its accounts in id order (postEntry); locking the same set in the same
  // order here means a decision never deadlocks with a funding, a clearing or a transfer.
  const lock = () =>
    tx.execute<{ id: string; code: string; balance_minor: string }[]>(
      `select id, code, balance_minor from ledger_accounts
        where tenant_id = ? and code in (${codes.map(() => '?').join(', ')}) order by id for update`,
      [card.tenant_id, ...codes],
    );
  let rows = await lock();
  if (!rows.some((row) => row.code === cardHoldAccountCode(card.id))) {
    // The card's first authorization opens its hold account.
    await openCardHoldAccount(tx, card.tenant_id, card.id, card.currency as Currency);
    rows = await lock();
  }
  const balance = (code: string) => Number(rows.find((row) => row.code === code)?.balance_minor ?? 0);
  return {
    card: balance(cardAccountCode(card.id)),
    wallet: card.jit_funding ? balance('wallet') : 0,
    ids: new Map(rows.map((row) => [row.code, row.id])),
  };
}

/**
 * Decides one authorization, once per authorization id: a repeat (the processor's retry) gets the
 * stored decision and places no second hold. About a dozen statements in one transaction: the
 * processor waits at most 2 s, and a card's decisions queue on its row lock.
 */
export async function decideAuthorization(orm: MikroORM, request: AuthorizationRequest): Promise<AuthorizationOutcome> {
  return orm.em.fork().transactional(async (tx) => {
    // One decision or reversal of this authorization id at a time (see settleAuthorization). The
    // statements after this one see whatever an earlier decision or reversal of the id committed.
    await lockAuthorizationId(tx, request.authorizationId, true);
    const [found] = await tx.execute<(Record<string, unknown> & { decided: boolean; voided: boolean })[]>(
      `select c.*,
              exists (select 1 from card_authorizations a where a.id = ?) as decided,
              exists (select 1 from card_authorization_voids v where v.id = ?) as voided
         from cards c where c.processor_reference = ? for update of c`,
      [request.authorizationId, request.authorizationId, request.cardReference],
    );
    if (!found) {
      return {
        decision: { authorization_id: request.authorizationId, decision: 'declined', reason: 'card_not_found' },
      };
    }
    const { decided, voided, ...columns } = found;
    if (decided) {
      return { decision: decisionOf(await tx.findOneOrFail(CardAuthorization, { id: request.authorizationId })) };
    }
    const card: CardRow = tx.map(Card, columns as never);
    const currency = card.currency as Currency;

    const balances = await lockAccounts(tx, card);
    let reason: StoredDeclineReason | null = voided ? 'timeout' : await policyRefusal(tx, card, request);
    let jitFundedMinor = 0;
    if (reason === null && balances.card < request.amountMinor) {
      const shortfall = request.amountMinor - balances.card;
      if (card.jit_funding && balances.wallet >= shortfall) {
        await recordJitFunding(tx, card, request.authorizationId, shortfall, balances.ids);
        jitFundedMinor = shortfall;
      } else {
        reason = 'insufficient_funds';
      }
    }

    const approved = reason === null;
    const [stamped] = await tx.execute<{ created_at: Date; updated_at: Date }[]>(
      `insert into card_authorizations (id, tenant_id, card_id, amount_minor, currency, merchant_name,
         merchant_category, channel, decision, reason, status, jit_funded_minor)
       values (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?) returning created_at, updated_at`,
      [
        request.authorizationId,
        card.tenant_id,
        card.id,
        request.amountMinor,
        card.currency,
        request.merchantName,
        request.merchantCategory,
        request.channel,
        approved ? 'approved' : 'declined',
        reason,
        approved ? 'pending' : 'declined',
        jitFundedMinor,
      ],
    );
    const stored: AuthorizationRow = {
      id: request.authorizationId,
      tenant_id: card.tenant_id,
      card_id: card.id,
      amount_minor: request.amountMinor,
      currency: card.currency,
      merchant_name: request.merchantName,
      merchant_category: request.merchantCategory,
      channel: request.channel,
      decision: approved ? 'approved' : 'declined',
      reason,
      status: approved ? 'pending' : 'declined',
      cleared_minor: 0,
      jit_funded_minor: jitFundedMinor,
      created_at: new Date(stamped!.created_at),
      updated_at: new Date(stamped!.updated_at),
    };
    let autoReload: AuthorizationOutcome['autoReload'];
    if (approved) {
      await postMovement(
        tx,
        card.tenant_id,
        cardAuthorizationHold({ authorizationId: stored.id, cardId: card.id, amountMinor: stored.amount_minor }),
        { currency, knownAccounts: balances.ids },
      );
      const before = balances.card + jitFundedMinor;
      // Once per drop: only the approval that takes the balance from at or above the threshold to below it.
      if (shouldAutoReload(card, before, before - stored.amount_minor)) {
        autoReload = { card, funding: await recordAutoReload(tx, card, stored.id) };
      }
    }
    await recordEvent(tx, {
      tenantId: card.tenant_id,
      type: approved ? 'card.authorization.approved' : 'card.authorization.declined',
      sourceKey: `card-authorization:${stored.id}:decided`,
      payload: authorizationView(stored),
    });
    return { decision: decisionOf(stored), ...(autoReload ? { autoReload } : {}) };
  });
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
 * Serialises the decision and the reversal of one authorization id (a transaction-scoped advisory
 * lock). `quiet`: the transaction's events send no notification (migration 0017): the fan-out's
 * poll delivers them within 200 ms, and PostgreSQL would otherwise serialise this commit with
 * every other notifying one.
 */
async function lockAuthorizationId(tx: EntityManager, authorizationId: string, quiet = false): Promise<void> {
  await tx.execute(
    `select pg_advisory_xact_lock(hashtextextended('card-authorization:' || ?, 0)), set_config('gateway.quiet_events', ?, true)`,
    [authorizationId, quiet ? 'on' : 'off'],
  );
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
