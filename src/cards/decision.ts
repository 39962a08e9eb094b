// The decision on a card authorization (decisions §11). The processor waits at most 2 s for it, so
// it is made here, in the API process, in one PostgreSQL transaction: never behind a workflow's
// queue of slower operations. The card's row lock keeps its decisions in one serial order: each
// sees the balance, holds and daily total the one before it left. Checks, in the decided order:
// lock, channel, merchant category, per-transaction limit, daily limit (approved amounts since
// 00:00 Africa/Lagos, less what was reversed), funds (the card's balance, plus JIT funding from
// the wallet when the card has it). An approval holds the amount in the card's hold account.
//
// It is the gateway's hottest path, so it runs on a connection of the ORM's own pool, in two round
// trips. The first sends, in one query: `begin`; the authorization's advisory lock (its card and
// id); the card, locked, with its stored decision of this id; and the card's accounts, locked in id
// order (its balance, its holds, and the wallet when it is JIT-funded; src/ledger,
// lockAccountsNamedBy). PostgreSQL runs them in order, each with a snapshot taken once the locks
// before it are held, so the card's statement sees what an earlier decision of this id committed and
// the accounts are those of the card as locked. The second sends the one statement that writes
// everything and the `commit`, in one query. More only when needed: the card's first authorization
// opens its hold account (two more, once per card), a daily limit reads today's total after the
// locks (one more), and a repeat or a card not found ends with a plain `commit`. Its locks are held
// across those round trips, and each waits its turn on this process's event loop: under load that
// wait, not the locks, is most of a decision's time (docs/performance.md), so the fewer round trips
// the better. Each locking statement reports how long PostgreSQL took, from the query's arrival,
// until its locks were held (DecisionTiming). It writes no table of its own: the one statement is composed
// (src/db/write-statement.ts) of each table's owner's steps — the authorization (./authorizations.ts),
// the journal (src/ledger: the movements of src/ledger/movements.ts, worked out on the locked
// accounts by planEntriesOnLockedAccounts, each account changed only while its balance is still
// the one locked and by postEntry's own guard), the fundings (./store.ts) and the events
// (src/events) — and a step that writes another count than it declared rolls the decision back.
//
// An authorization is its card and its id (decisions §16): the lock, the stored decision, the void,
// the journal keys and the events are all the card's own. A purchase under an id another card has
// already used is decided on its card like any fresh one, in the same statements and round trips:
// nothing in its answer or its timing depends on the other card.
import { randomUUID } from 'node:crypto';
import type { EntityManager, MikroORM } from '@mikro-orm/postgresql';
import type pg from 'pg';
import {
  type Answered,
  type NamedStatement,
  type Part,
  type PooledTiming,
  inPooledTransaction,
} from '../db/numbered-sql.ts';
import { entityColumns } from '../db/prepared.ts';
import { writePart } from '../db/write-statement.ts';
import { type NewEvent, recordEventsStep } from '../events/events.ts';
import {
  cardAccountCode,
  cardHoldAccountCode,
  lockAccountsNamedBy,
  lockTenantAccountsTimed,
  lockedAccountsFrom,
  planEntriesOnLockedAccounts,
  postPlanSteps,
} from '../ledger/ledger.ts';
import type { Currency } from '../lib/money.ts';
import { type Movement, cardAuthorizationHold, cardFunding } from '../ledger/movements.ts';
import {
  type AuthorizationDecision,
  type AuthorizationRequest,
  type AuthorizationRow,
  type StoredDeclineReason,
  authorizationIdLock,
  authorizationKey,
  authorizationView,
  insertAuthorizationStep,
  shouldAutoReload,
  spentToday,
} from './authorizations.ts';
import { Card, type CardRow, type FundingRow, insertFundingsSteps } from './store.ts';
import { fundingView } from './views.ts';

export interface AuthorizationOutcome {
  decision: AuthorizationDecision;
  /** An auto-reload funding to hand to the card's workflow, when this approval triggered one. */
  autoReload?: { card: CardRow; funding: FundingRow };
}

/**
 * Where a decision's time went, for the metrics (src/metrics/metrics.ts): waiting for a connection
 * of the pool; in PostgreSQL until its locks were held (the authorization's advisory lock, the
 * card's row, its accounts: each locking statement's time from its start in the server until its
 * last lock was held, so lock waits plus well under a millisecond of work, never the network or
 * this process); and the transaction from connection to commit, those lock waits included.
 */
export interface DecisionTiming {
  connectionWaitMs: number;
  lockWaitMs: number;
  transactionMs: number;
}

/**
 * Decides one authorization, once per card and authorization id: a repeat on the card (the
 * processor's retry) gets the stored decision and places no second hold.
 */
export async function decideAuthorization(
  orm: MikroORM,
  request: AuthorizationRequest,
): Promise<AuthorizationOutcome & { timing: DecisionTiming }> {
  const pooled: PooledTiming = {};
  const locks = { waitedMs: 0 };
  // One decision or reversal of this card's id at a time (settleAuthorization takes the same lock),
  // and this decision's events send no notification (migration 0017): the fan-out's poll delivers
  // them within 200 ms, and PostgreSQL would otherwise serialise this commit with every notifying
  // one. The clock is read in the outer select, after the subquery (kept apart by `offset 0`) has
  // the lock. Then the card and its accounts, locked, in the same round trip.
  const opening = (client: pg.PoolClient): Part[] => [
    `select ${SINCE_STATEMENT_START_MS} as "locked_after_ms"
       from (select ${authorizationIdLock(`${client.escapeLiteral(request.cardReference)}::text`, `${client.escapeLiteral(request.authorizationId)}::text`)},
                    set_config('gateway.quiet_events', 'on', true) offset 0) as locked`,
    cardStatement(orm.em, request),
    cardAccountsStatement(request),
  ];
  const outcome = await inPooledTransaction(
    orm,
    (client, em, opened, commitWith) => {
      // Every statement of the round trip is timed from the query's arrival: the last lock's time
      // is the round trip's lock waits (and well under a millisecond of work).
      locks.waitedMs += Math.max(
        0,
        ...opened.flatMap((result) => result.rows.map((row) => Number(row.locked_after_ms))),
      );
      return decide(client, em, request, locks, opened, commitWith);
    },
    { timing: pooled, opening },
  );
  return {
    ...outcome,
    timing: {
      connectionWaitMs: pooled.connectionWaitMs ?? 0,
      lockWaitMs: locks.waitedMs,
      transactionMs: pooled.transactionMs ?? 0,
    },
  };
}

/** The milliseconds from a statement's start in the server until now: read after its locks are held. */
const SINCE_STATEMENT_START_MS = '1000 * extract(epoch from clock_timestamp() - statement_timestamp())::float8';

let cardStatementText: string | undefined;

/**
 * The card by its processor reference, locked; with its stored decision of this id and its void of
 * it, if any (a void recorded before ids were per card names no card, and voids the id on any).
 */
function cardStatement(em: EntityManager, request: AuthorizationRequest): NamedStatement {
  // Materialized, so that the outer select reads the clock only once the card's row is locked.
  cardStatementText ??= `with locked as materialized (
    select ${entityColumns(em, Card, 'c').join(', ')},
        a.decision as "decided_decision", a.reason as "decided_reason",
        exists (select 1 from card_authorization_voids v
                 where v.id = $1 and (v.card_id = c.id or v.card_id is null)) as "voided",
        floor(extract(epoch from now()) * 1000)::text as "now_ms"
      from cards c left join card_authorizations a on a.card_id = c.id and a.id = $1
     where c.processor_reference = $2
       -- only a card of a mode the asking processor serves is its card (decisions §16)
       and exists (select 1 from tenants t where t.id = c.tenant_id and t.mode = any($3::text[]))
       for update of c)
    select locked.*, ${SINCE_STATEMENT_START_MS} as "locked_after_ms" from locked`;
  return {
    name: 'card-decision-card',
    text: cardStatementText,
    values: [request.authorizationId, request.cardReference, request.modes],
  };
}

/**
 * The card's accounts, locked in id order, named by the same card (its reference and the modes, as
 * cardStatement finds it): its balance, its holds, and the wallet when it is JIT-funded. Sent right
 * after cardStatement, so it reads the card as locked. The codes are built by the ledger's own
 * functions (their prefixes as values), so that they cannot drift from the accounts' names.
 */
function cardAccountsStatement(request: AuthorizationRequest): NamedStatement {
  return lockAccountsNamedBy(
    'card-decision-accounts',
    `select c.tenant_id, c.currency,
            array[$3 || c.id::text, $4 || c.id::text]
              || case when c.jit_funding then array[$5::text] else array[]::text[] end as codes
       from cards c
      where c.processor_reference = $1
        and exists (select 1 from tenants t where t.id = c.tenant_id and t.mode = any($2::text[]))`,
    [request.cardReference, request.modes, cardAccountCode(''), cardHoldAccountCode(''), WALLET],
  );
}

const WALLET = 'wallet';

/** The first decided check the purchase fails, or null when only funds remain to be checked. */
export function policyRefusal(
  card: CardRow,
  request: Pick<AuthorizationRequest, 'channel' | 'merchantCategory' | 'amountMinor'>,
  spentTodayMinor: number,
): StoredDeclineReason | null {
  if (card.status === 'locked') return 'card_locked';
  const channelOpen = { pos: card.channel_pos, web: card.channel_web, atm: card.channel_atm }[request.channel];
  if (!channelOpen) return 'channel_blocked';
  if (card.blocked_merchant_categories.includes(request.merchantCategory)) return 'merchant_category_blocked';
  const perTransaction = card.per_transaction_limit_minor ?? null;
  if (perTransaction !== null && request.amountMinor > perTransaction) return 'limit_exceeded';
  const daily = card.daily_limit_minor ?? null;
  if (daily !== null && spentTodayMinor + request.amountMinor > daily) return 'limit_exceeded';
  return null;
}

async function decide(
  client: pg.PoolClient,
  em: EntityManager,
  request: AuthorizationRequest,
  locks: { waitedMs: number },
  opened: Answered[],
  commitWith: (parts: readonly Part[]) => Promise<Answered[]>,
) {
  const id = request.authorizationId;
  const row = opened[1]!.rows[0];
  if (!row) return { decision: { authorization_id: id, decision: 'declined', reason: 'card_not_found' } } as const;
  const {
    decided_decision: decided,
    decided_reason: decidedReason,
    voided,
    now_ms: nowMs,
    locked_after_ms: _lockedAfterMs,
    ...columns
  } = row;
  if (decided) {
    return {
      decision: {
        authorization_id: id,
        decision: decided as AuthorizationDecision['decision'],
        reason: (decidedReason as StoredDeclineReason | null) ?? null,
      },
    };
  }
  const card: CardRow = em.map(Card, columns as never);
  const now = new Date(Number(nowMs));

  // The card's balance, its holds and (for a JIT card) the wallet, locked in the first round trip;
  // the card's first authorization opens its hold account, and locks them again with it.
  const codes = [cardAccountCode(card.id), cardHoldAccountCode(card.id), ...(card.jit_funding ? [WALLET] : [])];
  let accounts = lockedAccountsFrom(opened[2]!.rows);
  if (codes.some((code) => !accounts.has(code))) {
    const opening = await lockTenantAccountsTimed(client, {
      tenantId: card.tenant_id,
      currency: card.currency as Currency,
      codes,
      openMissing: [cardHoldAccountCode(card.id)],
    });
    accounts = opening.accounts;
    locks.waitedMs += opening.lockedAfterMs;
  }
  const spent = (card.daily_limit_minor ?? null) !== null ? await spentToday(client, card.id) : 0;
  const cardBalance = accounts.get(cardAccountCode(card.id))!.balanceMinor;
  const walletBalance = accounts.get(WALLET)?.balanceMinor ?? 0;

  let reason: StoredDeclineReason | null = voided ? 'timeout' : policyRefusal(card, request, spent);
  let jitFundedMinor = 0;
  if (reason === null && cardBalance < request.amountMinor) {
    const shortfall = request.amountMinor - cardBalance;
    if (card.jit_funding && walletBalance >= shortfall) jitFundedMinor = shortfall;
    else reason = 'insufficient_funds';
  }
  const approved = reason === null;
  const stored: AuthorizationRow = {
    id,
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
    created_at: now,
    updated_at: now,
  };

  const movements: Movement[] = [];
  const fundings: FundingRow[] = [];
  const events: NewEvent<'card.funded' | 'card.authorization.approved' | 'card.authorization.declined'>[] = [];
  let autoReload: AuthorizationOutcome['autoReload'];
  if (jitFundedMinor > 0) {
    // A funding that is done as it is recorded: the processor is the one asking.
    const jit = fundingRow(card, now, {
      amountMinor: jitFundedMinor,
      status: 'succeeded',
      transactionReference: `authorization:${id}`,
      idempotencyKey: null,
      source: 'jit',
    });
    fundings.push(jit);
    movements.push(cardFunding({ fundingId: jit.id, cardId: card.id, amountMinor: jitFundedMinor }));
    events.push({
      type: 'card.funded',
      sourceKey: `card-funding:${jit.id}:succeeded`,
      payload: { card_id: card.id, ...fundingView(jit) },
    });
  }
  if (approved) {
    movements.push(cardAuthorizationHold({ authorizationId: id, cardId: card.id, amountMinor: request.amountMinor }));
    const before = cardBalance + jitFundedMinor;
    // Once per drop: only the approval that takes the balance from at or above the threshold to below it.
    if (shouldAutoReload(card, before, before - request.amountMinor)) {
      // Handed to the card's workflow after commit (the caller); the worker's sweep hands it over
      // again if that is lost.
      const funding = fundingRow(card, now, {
        amountMinor: card.auto_reload_amount_minor!,
        status: 'pending',
        transactionReference: null,
        idempotencyKey: `auto-reload:${id}`,
        source: 'auto_reload',
      });
      fundings.push(funding);
      autoReload = { card, funding };
    }
  }
  events.push({
    type: approved ? 'card.authorization.approved' : 'card.authorization.declined',
    sourceKey: `${authorizationKey(card.id, id)}:decided`,
    payload: authorizationView(stored),
  });

  // Under the locks no step's count can differ; if one ever does, PostgreSQL fails the statement,
  // the commit sent with it does not run, and the throw closes the connection (inPooledTransaction):
  // nothing of the decision is kept.
  await commitWith([
    writePart('card-decision-write', `authorization ${id}`, [
      insertAuthorizationStep(stored),
      ...postPlanSteps(card.tenant_id, planEntriesOnLockedAccounts(movements, accounts)),
      ...insertFundingsSteps(card, fundings),
      recordEventsStep(card.tenant_id, events),
    ]),
  ]);
  const decision: AuthorizationDecision = { authorization_id: id, decision: stored.decision, reason };
  return autoReload ? { decision, autoReload } : { decision };
}

function fundingRow(
  card: CardRow,
  now: Date,
  funding: Pick<FundingRow, 'status' | 'source'> & {
    amountMinor: number;
    transactionReference: string | null;
    idempotencyKey: string | null;
  },
): FundingRow {
  return {
    id: randomUUID(),
    card_id: card.id,
    operation_id: randomUUID(),
    amount_minor: funding.amountMinor,
    currency: card.currency,
    status: funding.status,
    transaction_reference: funding.transactionReference,
    idempotency_key: funding.idempotencyKey,
    failure_reason: null,
    source: funding.source,
    unrecovered_minor: 0,
    created_at: now,
    completed_at: funding.status === 'succeeded' ? now : null,
  };
}
