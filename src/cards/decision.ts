// The decision on a card authorization (decisions §11). The processor waits at most 2 s for it, so
// it is made here, in the API process, in one PostgreSQL transaction: never behind a workflow's
// queue of slower operations. The card's row lock keeps its decisions in one serial order: each
// sees the balance, holds and daily total the one before it left. Checks, in the decided order:
// lock, channel, merchant category, per-transaction limit, daily limit (approved amounts since
// 00:00 Africa/Lagos, less what was reversed), funds (the card's balance, plus JIT funding from
// the wallet when the card has it). An approval holds the amount in the card's hold account.
//
// It is the gateway's hottest path, so it runs on a connection of the ORM's own pool, as named
// prepared statements (parsed and planned once per connection), in six round trips: begin; the
// authorization's advisory lock (its card and id); the card, locked; its accounts, locked in id
// order; one statement that writes everything; commit (seven with a daily limit: today's total, read after
// the locks). What it writes follows the same rules as every other
// movement: the movements come from src/ledger/movements.ts, worked out on the locked accounts by
// planEntriesOnLockedAccounts, and each account changes only if its balance is still the one
// locked (a count that differs rolls the whole decision back).
//
// An authorization is its card and its id (decisions §16): the lock, the stored decision, the void,
// the journal keys and the events are all the card's own. A purchase under an id another card has
// already used is decided on its card like any fresh one, in the same statements and round trips:
// nothing in its answer or its timing depends on the other card.
import { randomUUID } from 'node:crypto';
import type { EntityManager, MikroORM } from '@mikro-orm/postgresql';
import type pg from 'pg';
import { entityColumns } from '../db/prepared.ts';
import { activeTraceparent } from '../events/events.ts';
import {
  type LockedAccount,
  type PlannedEntries,
  cardAccountCode,
  cardHoldAccountCode,
  planEntriesOnLockedAccounts,
} from '../ledger/ledger.ts';
import { type Movement, cardAuthorizationHold, cardFunding } from '../ledger/movements.ts';
import {
  type AuthorizationDecision,
  type AuthorizationRequest,
  type AuthorizationRow,
  type StoredDeclineReason,
  authorizationIdLock,
  authorizationKey,
  authorizationView,
  shouldAutoReload,
} from './authorizations.ts';
import { Card, type CardRow, type FundingRow } from './store.ts';
import { fundingView } from './views.ts';

export interface AuthorizationOutcome {
  decision: AuthorizationDecision;
  /** An auto-reload funding to hand to the card's workflow, when this approval triggered one. */
  autoReload?: { card: CardRow; funding: FundingRow };
}

/** An event to insert with the decision. */
interface EventRow {
  type: string;
  sourceKey: string;
  payload: Record<string, unknown>;
}

/** A card operation and its funding to insert with the decision (a JIT funding, or auto-reload's). */
interface FundingInsert {
  operationKey: string;
  funding: FundingRow;
}

/**
 * Decides one authorization, once per card and authorization id: a repeat on the card (the
 * processor's retry) gets the stored decision and places no second hold.
 */
export async function decideAuthorization(orm: MikroORM, request: AuthorizationRequest): Promise<AuthorizationOutcome> {
  const em = orm.em.fork();
  const pool = await em.getConnection().getNativeClient();
  const client = await pool.connect();
  try {
    await client.query('begin');
    const outcome = await decide(client, em, request);
    await client.query('commit');
    client.release();
    return outcome;
  } catch (error) {
    // Closed, not rolled back and reused: after a statement timed out on our side, or a failed
    // begin or commit, the connection's state is unknown, and the next borrower must never find
    // itself inside this transaction. Closing it rolls back whatever is open.
    client.release(error instanceof Error ? error : new Error(String(error)));
    throw error;
  }
}

const prepared = (client: pg.PoolClient, name: string, text: string, values: unknown[]) =>
  client.query<Record<string, unknown>>({ name, text, values });

let cardStatement: string | undefined;

/**
 * The card by its processor reference, locked; with its stored decision of this id and its void of
 * it, if any (a void recorded before ids were per card names no card, and voids the id on any).
 */
function cardStatementText(em: EntityManager): string {
  if (cardStatement === undefined) {
    cardStatement = `select ${entityColumns(em, Card, 'c').join(', ')},
        a.decision as "decided_decision", a.reason as "decided_reason",
        exists (select 1 from card_authorization_voids v
                 where v.id = $1 and (v.card_id = c.id or v.card_id is null)) as "voided",
        floor(extract(epoch from now()) * 1000)::text as "now_ms"
      from cards c left join card_authorizations a on a.card_id = c.id and a.id = $1
     where c.processor_reference = $2
       -- only a card of a mode the asking processor serves is its card (decisions §16)
       and exists (select 1 from tenants t where t.id = c.tenant_id and t.mode = any($3::text[]))
       for update of c`;
  }
  return cardStatement;
}

/** The card's accounts (and the wallet, for a JIT card), locked in id order, as every posting locks them. */
const ACCOUNTS = `select id, code, balance_minor::text as balance_minor from ledger_accounts
   where tenant_id = $1 and code = any($2::text[]) order by id for update`;

/**
 * What the card has spent today, for its daily limit: approved amounts since 00:00 Africa/Lagos,
 * pending holds whole and cleared ones for what they took. Its own statement, after the accounts
 * are locked: a statement that waits for a lock keeps the snapshot it started with for every row
 * it did not lock, so read together with the lock it would miss a reversal or clearing that
 * committed while this decision waited (and decline on a total already released).
 */
const SPENT_TODAY = `select coalesce(sum(case when status = 'pending' then amount_minor else cleared_minor end), 0)::text as spent
    from card_authorizations
   where card_id = $1 and status in ('pending', 'cleared')
     and created_at >= (date_trunc('day', now() at time zone 'Africa/Lagos') at time zone 'Africa/Lagos')`;

const OPEN_HOLD_ACCOUNT = `insert into ledger_accounts (id, tenant_id, code, currency, allow_negative)
  values ($1, $2, $3, $4, false) on conflict on constraint ledger_accounts_owner_code do nothing`;

/**
 * Everything the decision writes, in one statement: the authorization; the journal entries, their
 * postings and each account's net change (only where the balance is still the one locked); the
 * card operations and fundings (JIT, auto-reload); the events. It answers how many rows of each it
 * wrote, which the caller checks.
 */
const WRITE = `with
  authorization_row as (
    insert into card_authorizations (id, tenant_id, card_id, amount_minor, currency, merchant_name,
      merchant_category, channel, decision, reason, status, jit_funded_minor)
    values ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12) returning 1),
  entries as (
    insert into journal_entries (id, tenant_id, kind, idempotency_key, description)
    select e.id, $2, e.kind, e.key, e.description
      from unnest($13::uuid[], $14::text[], $15::text[], $16::text[]) as e (id, kind, key, description)
    on conflict (idempotency_key) do nothing returning 1),
  moved as (
    update ledger_accounts a set balance_minor = a.balance_minor + m.delta, updated_at = now()
      from unnest($17::uuid[], $18::bigint[], $19::bigint[]) as m (id, before, delta)
     where a.id = m.id and a.balance_minor = m.before returning 1),
  posted as (
    insert into postings (entry_id, account_id, amount_minor, balance_after_minor)
    select * from unnest($20::uuid[], $21::uuid[], $22::bigint[], $23::bigint[]) returning 1),
  operations as (
    insert into card_operations (id, card_id, action, status, idempotency_key, completed_at)
    select o.id, $3, 'fund', o.status, o.key, case when o.status = 'applied' then now() end
      from unnest($24::uuid[], $25::text[], $26::text[]) as o (id, status, key) returning 1),
  fundings as (
    insert into card_fundings (id, card_id, operation_id, amount_minor, currency, status,
      transaction_reference, idempotency_key, source, completed_at)
    select f.id, $3, f.operation_id, f.amount, $5, f.status, f.reference, f.key, f.source,
           case when f.status = 'succeeded' then now() end
      from unnest($27::uuid[], $28::uuid[], $29::bigint[], $30::text[], $31::text[], $32::text[], $33::text[])
        as f (id, operation_id, amount, status, reference, key, source) returning 1),
  recorded as (
    insert into events (id, tenant_id, type, source_key, payload, traceparent)
    select v.id, $2, v.type, v.source_key, v.payload, $34
      from unnest($35::uuid[], $36::text[], $37::text[], $38::jsonb[]) as v (id, type, source_key, payload)
    on conflict (source_key) do nothing returning 1)
  select (select count(*) from authorization_row)::int as "authorizations",
         (select count(*) from entries)::int as "entries",
         (select count(*) from moved)::int as "moved",
         (select count(*) from posted)::int as "posted",
         (select count(*) from operations)::int as "operations",
         (select count(*) from fundings)::int as "fundings",
         (select count(*) from recorded)::int as "events"`;

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

async function decide(client: pg.PoolClient, em: EntityManager, request: AuthorizationRequest) {
  const id = request.authorizationId;
  // One decision or reversal of this card's id at a time (settleAuthorization takes the same lock),
  // and this decision's events send no notification (migration 0017): the fan-out's poll delivers
  // them within 200 ms, and PostgreSQL would otherwise serialise this commit with every notifying
  // one. Each statement after this one sees what an earlier decision or reversal of it committed.
  await prepared(
    client,
    'card-decision-lock-per-card',
    `select ${authorizationIdLock('$2::text', '$1::text')}, set_config('gateway.quiet_events', 'on', true)`,
    [id, request.cardReference],
  );
  const found = await prepared(client, 'card-decision-card', cardStatementText(em), [
    id,
    request.cardReference,
    request.modes,
  ]);
  const row = found.rows[0];
  if (!row) return { decision: { authorization_id: id, decision: 'declined', reason: 'card_not_found' } } as const;
  const { decided_decision: decided, decided_reason: decidedReason, voided, now_ms: nowMs, ...columns } = row;
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

  const { accounts, spentToday } = await lockAccounts(client, card);
  const cardBalance = accounts.get(cardAccountCode(card.id))!.balanceMinor;
  const walletBalance = accounts.get('wallet')?.balanceMinor ?? 0;

  let reason: StoredDeclineReason | null = voided ? 'timeout' : policyRefusal(card, request, spentToday);
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
  const fundings: FundingInsert[] = [];
  const events: EventRow[] = [];
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
    fundings.push({ operationKey: `reference:${jit.transaction_reference}`, funding: jit });
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
      fundings.push({ operationKey: `key:${funding.idempotency_key}`, funding });
      autoReload = { card, funding };
    }
  }
  events.push({
    type: approved ? 'card.authorization.approved' : 'card.authorization.declined',
    sourceKey: `${authorizationKey(card.id, id)}:decided`,
    payload: authorizationView(stored),
  });

  await write(client, stored, planEntriesOnLockedAccounts(movements, accounts), fundings, events);
  const decision: AuthorizationDecision = { authorization_id: id, decision: stored.decision, reason };
  return autoReload ? { decision, autoReload } : { decision };
}

/** The card's balance, its holds and (for a JIT card) the wallet, locked; and today's spending when it has a daily limit. */
async function lockAccounts(client: pg.PoolClient, card: CardRow) {
  const codes = [cardAccountCode(card.id), cardHoldAccountCode(card.id), ...(card.jit_funding ? ['wallet'] : [])];
  const lock = () => prepared(client, 'card-decision-accounts', ACCOUNTS, [card.tenant_id, codes]);
  let { rows } = await lock();
  if (!rows.some((row) => row.code === cardHoldAccountCode(card.id))) {
    // The card's first authorization opens its hold account.
    await prepared(client, 'card-decision-open-hold', OPEN_HOLD_ACCOUNT, [
      randomUUID(),
      card.tenant_id,
      cardHoldAccountCode(card.id),
      card.currency,
    ]);
    ({ rows } = await lock());
  }
  const accounts = new Map<string, LockedAccount>(
    rows.map((row) => [row.code as string, { id: row.id as string, balanceMinor: Number(row.balance_minor) }]),
  );
  for (const code of codes) {
    if (!accounts.has(code)) throw new Error(`card ${card.id} has no ${code} account`);
  }
  let spentToday = 0;
  if ((card.daily_limit_minor ?? null) !== null) {
    const spent = await prepared(client, 'card-decision-spent-today', SPENT_TODAY, [card.id]);
    spentToday = Number(spent.rows[0]!.spent);
  }
  return { accounts, spentToday };
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

async function write(
  client: pg.PoolClient,
  stored: AuthorizationRow,
  plan: PlannedEntries,
  fundings: FundingInsert[],
  events: EventRow[],
): Promise<void> {
  const { rows } = await prepared(client, 'card-decision-write', WRITE, [
    stored.id,
    stored.tenant_id,
    stored.card_id,
    stored.amount_minor,
    stored.currency,
    stored.merchant_name,
    stored.merchant_category,
    stored.channel,
    stored.decision,
    stored.reason,
    stored.status,
    stored.jit_funded_minor,
    plan.entries.map((entry) => entry.id),
    plan.entries.map((entry) => entry.kind),
    plan.entries.map((entry) => entry.idempotencyKey),
    plan.entries.map((entry) => entry.description),
    plan.accounts.map((account) => account.id),
    plan.accounts.map((account) => account.beforeMinor),
    plan.accounts.map((account) => account.deltaMinor),
    plan.postings.map((posting) => posting.entryId),
    plan.postings.map((posting) => posting.accountId),
    plan.postings.map((posting) => posting.amountMinor),
    plan.postings.map((posting) => posting.balanceAfterMinor),
    fundings.map(({ funding }) => funding.operation_id),
    fundings.map(({ funding }) => (funding.status === 'succeeded' ? 'applied' : 'accepted')),
    fundings.map(({ operationKey }) => operationKey),
    fundings.map(({ funding }) => funding.id),
    fundings.map(({ funding }) => funding.operation_id),
    fundings.map(({ funding }) => funding.amount_minor),
    fundings.map(({ funding }) => funding.status),
    fundings.map(({ funding }) => funding.transaction_reference ?? null),
    fundings.map(({ funding }) => funding.idempotency_key ?? null),
    fundings.map(({ funding }) => funding.source),
    activeTraceparent(),
    events.map(() => randomUUID()),
    events.map((event) => event.type),
    events.map((event) => event.sourceKey),
    events.map((event) => JSON.stringify(event.payload)),
  ]);
  const written = rows[0] as Record<string, number>;
  const expected = {
    authorizations: 1,
    entries: plan.entries.length,
    moved: plan.accounts.length,
    posted: plan.postings.length,
    operations: fundings.length,
    fundings: fundings.length,
    events: events.length,
  };
  for (const [what, count] of Object.entries(expected)) {
    if (written[what] !== count) {
      // Under the locks this cannot differ; if it ever does, nothing of the decision is kept.
      throw new Error(`authorization ${stored.id}: wrote ${written[what]} ${what}, expected ${count}`);
    }
  }
}
