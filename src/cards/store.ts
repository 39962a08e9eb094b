// The only code that touches the card tables: `cards`, `card_operations` (lock, unlock and fund
// requests, keyed by the client's idempotency key) and `card_fundings` (card authorizations have
// theirs: ./authorizations.ts). Rows come typed from the MikroORM entities below, amounts as
// numbers (kobo). Properties are named as their columns. Every status change is conditional on
// the status it leaves, so a retried activity changes a card, an operation or a funding once. The
// fundings a card authorization's decision makes are written as steps of its one statement
// (`insertFundingsSteps`, src/db/write-statement.ts).
import { randomUUID } from 'node:crypto';
import { type InferEntity, LockMode, p, raw } from '@mikro-orm/core';
import type { EntityManager } from '@mikro-orm/postgresql';
import { NEWEST_FIRST, createdAt, tableEntity, tenantOwned, timestamps } from '../db/columns.ts';
import { type Page, type Window, pageOf } from '../db/pages.ts';
import type { WriteStep } from '../db/write-statement.ts';

export const Card = tableEntity('Card', 'cards', {
  ...tenantOwned(),
  customer_id: p.string(),
  status: p.enum(['active', 'locked'] as const),
  last4: p.string(),
  currency: p.string(),
  metadata: p.json<Record<string, unknown>>().nullable(),
  processor_reference: p.string(),
  jit_funding: p.boolean().default(false),
  per_transaction_limit_minor: p.bigint('number').nullable(),
  daily_limit_minor: p.bigint('number').nullable(),
  channel_pos: p.boolean().default(true),
  channel_web: p.boolean().default(true),
  channel_atm: p.boolean().default(true),
  blocked_merchant_categories: p.array().default([]),
  auto_reload_enabled: p.boolean().default(false),
  auto_reload_threshold_minor: p.bigint('number').default(0),
  auto_reload_amount_minor: p.bigint('number').nullable(),
  ...timestamps(),
});
export type CardRow = InferEntity<typeof Card>;

/** The columns of a card's policy (decisions §11): JIT funding, security settings, auto-reload. */
export type CardPolicy = Partial<
  Pick<
    CardRow,
    | 'jit_funding'
    | 'per_transaction_limit_minor'
    | 'daily_limit_minor'
    | 'channel_pos'
    | 'channel_web'
    | 'channel_atm'
    | 'blocked_merchant_categories'
    | 'auto_reload_enabled'
    | 'auto_reload_threshold_minor'
    | 'auto_reload_amount_minor'
  >
>;

export const CardOperationRecord = tableEntity('CardOperationRecord', 'card_operations', {
  id: p.uuid().primary(),
  card_id: p.uuid(),
  action: p.enum(['lock', 'unlock', 'fund'] as const),
  status: p.enum(['accepted', 'applied', 'unchanged', 'failed'] as const),
  idempotency_key: p.string().nullable(),
  reason: p.string().nullable(),
  ...createdAt(),
  completed_at: p.datetime().nullable(),
});
type OperationStatus = InferEntity<typeof CardOperationRecord>['status'];

export const CardFunding = tableEntity('CardFunding', 'card_fundings', {
  id: p.uuid().primary(),
  card_id: p.uuid(),
  operation_id: p.uuid(),
  amount_minor: p.bigint('number'),
  currency: p.string(),
  status: p.enum(['pending', 'succeeded', 'failed'] as const),
  transaction_reference: p.string().nullable(),
  idempotency_key: p.string().nullable(),
  failure_reason: p.string().nullable(),
  /** What asked for it: the API (`/fund`, `/jit-fund`), an authorization's JIT funding, or auto-reload. */
  source: p.enum(['api', 'jit', 'auto_reload'] as const).default('api'),
  /**
   * A load the processor refused after authorizations had spent part of its money on the card: what
   * could not go back to the wallet (activities/cards/cards.ts). 0 for every other funding.
   */
  unrecovered_minor: p.bigint('number').default(0),
  ...createdAt(),
  completed_at: p.datetime().nullable(),
});
export type FundingRow = InferEntity<typeof CardFunding>;

export const cardEntities = [Card, CardOperationRecord, CardFunding];

type Inserted = { affectedRows: number };

export async function findCard(
  em: EntityManager,
  id: string,
  options: { tenantId?: string } = {},
): Promise<CardRow | null> {
  return em.findOne(Card, { id, ...(options.tenantId ? { tenant_id: options.tenantId } : {}) }, { refresh: true });
}

export async function listCards(
  em: EntityManager,
  tenantId: string,
  filters: { customer_id?: string | undefined; status?: string | undefined },
  window: Window,
): Promise<Page<CardRow>> {
  const where: Record<string, unknown> = { tenant_id: tenantId };
  if (filters.customer_id !== undefined) where.customer_id = filters.customer_id;
  if (filters.status !== undefined) where.status = filters.status;
  return pageOf(em, Card, where, NEWEST_FIRST, window);
}

/** The issued card's row; null if an earlier attempt recorded it. */
export async function insertCard(
  em: EntityManager,
  card: Omit<CardRow, 'created_at' | 'updated_at' | keyof CardPolicy>,
): Promise<CardRow | null> {
  const inserted = await em.createQueryBuilder(Card).insert(card).onConflict('id').ignore().execute<Inserted>('run');
  return inserted.affectedRows > 0 ? findCard(em, card.id) : null;
}

/** The card moved to `status`; null when it already was. */
export async function setCardStatus(em: EntityManager, id: string, status: CardRow['status']) {
  const changed = await em.nativeUpdate(Card, { id, status: { $ne: status } }, { status, updated_at: raw('now()') });
  return changed > 0 ? findCard(em, id) : null;
}

/**
 * Replaces part of the card's policy under the card's row lock, in the caller's transaction: the
 * card before and after, or null when the tenant has no such card.
 */
export async function updateCardPolicy(
  em: EntityManager,
  tenantId: string,
  id: string,
  policy: CardPolicy,
): Promise<{ before: CardRow; after: CardRow } | null> {
  const before = await em.findOne(
    Card,
    { id, tenant_id: tenantId },
    { lockMode: LockMode.PESSIMISTIC_WRITE, refresh: true },
  );
  if (!before) return null;
  const snapshot = { ...before };
  await em.nativeUpdate(Card, { id }, { ...policy, updated_at: raw('now()') });
  const after = (await findCard(em, id))!;
  return { before: snapshot, after };
}

/** A lock or unlock request, once per (card, action, idempotency key): the operation's id. */
export async function recordOperation(
  em: EntityManager,
  operation: { cardId: string; action: 'lock' | 'unlock'; idempotencyKey: string | null; reason: string | null },
): Promise<string> {
  const inserted = await em
    .createQueryBuilder(CardOperationRecord)
    .insert({
      id: randomUUID(),
      card_id: operation.cardId,
      action: operation.action,
      status: 'accepted',
      idempotency_key: operation.idempotencyKey,
      reason: operation.reason,
    })
    .onConflict(['card_id', 'action', 'idempotency_key'])
    .ignore()
    .returning('id')
    .execute<{ id: string }[]>('all');
  if (inserted[0]) return inserted[0].id;
  const existing = await em.findOneOrFail(CardOperationRecord, {
    card_id: operation.cardId,
    action: operation.action,
    idempotency_key: operation.idempotencyKey,
  });
  return existing.id;
}

/**
 * An operation's outcome. `onlyIfAccepted`: a retried activity leaves an operation already
 * decided as it is; a failure's reason keeps the one the client gave, if any.
 */
export async function finishOperation(
  em: EntityManager,
  id: string,
  status: Exclude<OperationStatus, 'accepted'>,
  options: { onlyIfAccepted: boolean; reason?: string },
): Promise<void> {
  await em.nativeUpdate(
    CardOperationRecord,
    { id, ...(options.onlyIfAccepted ? { status: 'accepted' as const } : {}) },
    {
      status,
      completed_at: raw('now()'),
      ...(options.reason !== undefined ? { reason: raw('coalesce(reason, ?)', [options.reason]) } : {}),
    },
  );
}

/** The card's funding under this idempotency key or transaction reference, if any. */
export async function findFunding(
  em: EntityManager,
  cardId: string,
  keys: { idempotencyKey?: string | undefined; transactionReference?: string | undefined },
): Promise<FundingRow | null> {
  const any = [
    ...(keys.idempotencyKey !== undefined ? [{ idempotency_key: keys.idempotencyKey }] : []),
    ...(keys.transactionReference !== undefined ? [{ transaction_reference: keys.transactionReference }] : []),
  ];
  if (any.length === 0) return null;
  return em.findOne(CardFunding, { card_id: cardId, $or: any });
}

/**
 * A funding operation's key: the client's idempotency key or the transaction reference, in two
 * namespaces, so a key never meets a reference of the same text.
 */
function operationKeyOf(funding: { idempotencyKey?: string | null; transactionReference?: string | null }) {
  return funding.idempotencyKey != null
    ? `key:${funding.idempotencyKey}`
    : funding.transactionReference != null
      ? `reference:${funding.transactionReference}`
      : null;
}

/**
 * A funding and its operation, in one transaction (the operation keyed by `operationKeyOf`). A
 * concurrent request with the same key or reference makes this throw
 * UniqueConstraintViolationException.
 */
export async function insertFunding(
  em: EntityManager,
  funding: {
    cardId: string;
    amountMinor: number;
    currency: string;
    idempotencyKey?: string | undefined;
    transactionReference?: string | undefined;
  },
): Promise<FundingRow> {
  return em.transactional(async (tx) => {
    const operationId = randomUUID();
    await tx.insert(CardOperationRecord, {
      id: operationId,
      card_id: funding.cardId,
      action: 'fund',
      status: 'accepted',
      idempotency_key: operationKeyOf(funding),
    });
    const id = randomUUID();
    await tx.insert(CardFunding, {
      id,
      card_id: funding.cardId,
      operation_id: operationId,
      amount_minor: funding.amountMinor,
      currency: funding.currency,
      status: 'pending',
      transaction_reference: funding.transactionReference ?? null,
      idempotency_key: funding.idempotencyKey ?? null,
      // The API's (`/fund`, `/jit-fund`); an authorization's JIT funding and auto-reload's are
      // written with its decision (insertFundingsSteps).
      source: 'api',
    });
    return tx.findOneOrFail(CardFunding, { id });
  });
}

/**
 * The fundings a card authorization's decision makes (src/cards/decision.ts: its JIT funding,
 * `succeeded` as it is recorded, and auto-reload's, `pending`), each with its operation (`applied`
 * or `accepted`, keyed as insertFunding keys it), as steps of the decision's one write statement.
 */
export function insertFundingsSteps(
  card: { id: string; currency: string },
  fundings: readonly FundingRow[],
): WriteStep[] {
  return [
    {
      name: 'operations',
      text: `insert into card_operations (id, card_id, action, status, idempotency_key, completed_at)
    select o.id, $1, 'fund', o.status, o.key, case when o.status = 'applied' then now() end
      from unnest($2::uuid[], $3::text[], $4::text[]) as o (id, status, key) returning 1`,
      values: [
        card.id,
        fundings.map((funding) => funding.operation_id),
        fundings.map((funding) => (funding.status === 'succeeded' ? 'applied' : 'accepted')),
        fundings.map((funding) =>
          operationKeyOf({
            idempotencyKey: funding.idempotency_key,
            transactionReference: funding.transaction_reference,
          }),
        ),
      ],
      rows: fundings.length,
    },
    {
      name: 'fundings',
      text: `insert into card_fundings (id, card_id, operation_id, amount_minor, currency, status,
      transaction_reference, idempotency_key, source, completed_at)
    select f.id, $1, f.operation_id, f.amount, $2, f.status, f.reference, f.key, f.source,
           case when f.status = 'succeeded' then now() end
      from unnest($3::uuid[], $4::uuid[], $5::bigint[], $6::text[], $7::text[], $8::text[], $9::text[])
        as f (id, operation_id, amount, status, reference, key, source) returning 1`,
      values: [
        card.id,
        card.currency,
        fundings.map((funding) => funding.id),
        fundings.map((funding) => funding.operation_id),
        fundings.map((funding) => funding.amount_minor),
        fundings.map((funding) => funding.status),
        fundings.map((funding) => funding.transaction_reference ?? null),
        fundings.map((funding) => funding.idempotency_key ?? null),
        fundings.map((funding) => funding.source),
      ],
      rows: fundings.length,
    },
  ];
}

/** A page of the card's fundings, newest first. */
export async function fundingsOf(em: EntityManager, cardId: string, window: Window): Promise<Page<FundingRow>> {
  return pageOf(em, CardFunding, { card_id: cardId }, NEWEST_FIRST, window);
}

/** A funding and its card; `lock` holds the funding's row for the caller's transaction. */
export async function findFundingWithCard(em: EntityManager, fundingId: string, lock = false) {
  const funding = await em.findOne(
    CardFunding,
    { id: fundingId },
    lock ? { lockMode: LockMode.PESSIMISTIC_WRITE, refresh: true } : { refresh: true },
  );
  if (!funding) return undefined;
  return { funding, card: (await findCard(em, funding.card_id))! };
}

/**
 * pending → succeeded or failed; null if the funding had already finished. `unrecoveredMinor`: of a
 * refused load, what purchases had already spent (it stays off the wallet).
 */
export async function finishFundingRow(
  em: EntityManager,
  id: string,
  outcome: { status: 'succeeded' | 'failed'; reason?: string | undefined; unrecoveredMinor?: number },
): Promise<FundingRow | null> {
  const changed = await em.nativeUpdate(
    CardFunding,
    { id, status: 'pending' },
    {
      status: outcome.status,
      failure_reason: outcome.reason ?? null,
      completed_at: raw('now()'),
      ...(outcome.unrecoveredMinor ? { unrecovered_minor: outcome.unrecoveredMinor } : {}),
    },
  );
  return changed > 0 ? em.findOne(CardFunding, { id }, { refresh: true }) : null;
}

/** A refused card load whose money purchases had already spent, as operators list it (`admin cards alerts`). */
export interface RefusedLoadAlert {
  kind: 'refused_load_spent';
  tenant_id: string;
  card_id: string;
  funding_id: string;
  amount_minor: number;
  /** What went back to the wallet: what the card still held of the funding. */
  returned_minor: number;
  /** What purchases had already spent of it, held or cleared: not back in the wallet. */
  unrecovered_minor: number;
  failure_reason: string | null;
  /**
   * The card's balance and holds now. The alert records the refused load for good; if the purchases
   * that spent its money are later reversed, that money is back on the card (here), not lost: an
   * operator making the tenant whole looks at these first.
   */
  card_available_minor: number;
  card_held_minor: number;
  created_at: string;
  completed_at: string | null;
}

/** The refused loads with money left unrecovered, newest first (at most `limit`), with their count and total. */
export async function refusedLoadAlerts(
  em: EntityManager,
  limit: number,
): Promise<{ items: RefusedLoadAlert[]; count: number; unrecoveredMinor: number }> {
  const rows = await em.execute<
    {
      tenant_id: string;
      card_id: string;
      funding_id: string;
      amount_minor: string;
      unrecovered_minor: string;
      failure_reason: string | null;
      available_minor: string;
      held_minor: string;
      created_at: Date;
      completed_at: Date | null;
    }[]
  >(
    `select c.tenant_id, f.card_id, f.id as funding_id, f.amount_minor::text, f.unrecovered_minor::text,
            f.failure_reason, f.created_at, f.completed_at,
            coalesce(a.balance_minor, 0)::text as available_minor, coalesce(h.balance_minor, 0)::text as held_minor
       from card_fundings f join cards c on c.id = f.card_id
       left join ledger_accounts a on a.tenant_id = c.tenant_id and a.code = 'card:' || c.id
       left join ledger_accounts h on h.tenant_id = c.tenant_id and h.code = 'card-hold:' || c.id
      where f.unrecovered_minor > 0
      order by f.created_at desc, f.id desc limit ?`,
    [limit],
  );
  const [totals] = await em.execute<{ n: string; total: string }[]>(
    `select count(*)::text as n, coalesce(sum(unrecovered_minor), 0)::text as total
       from card_fundings where unrecovered_minor > 0`,
  );
  return {
    count: Number(totals?.n ?? 0),
    unrecoveredMinor: Number(totals?.total ?? 0),
    items: rows.map((row) => ({
      kind: 'refused_load_spent' as const,
      tenant_id: row.tenant_id,
      card_id: row.card_id,
      funding_id: row.funding_id,
      amount_minor: Number(row.amount_minor),
      returned_minor: Number(row.amount_minor) - Number(row.unrecovered_minor),
      unrecovered_minor: Number(row.unrecovered_minor),
      failure_reason: row.failure_reason,
      card_available_minor: Number(row.available_minor),
      card_held_minor: Number(row.held_minor),
      created_at: new Date(row.created_at).toISOString(),
      completed_at: row.completed_at ? new Date(row.completed_at).toISOString() : null,
    })),
  };
}
