// transfer_batches and transfer_batch_items (decisions §14, migration 0025): the only code that
// writes them. A batch is written with its items in one transaction by the API; its workflow's
// activities then record each item's name enquiry and decide it (refused with a code, or accepted
// with its transfer), in the transaction that makes the transfer. Items go by raw SQL over arrays
// (`unnest`), so a batch of a thousand costs one statement per step, not one per item.
import { type InferEntity, LockMode, p, raw } from '@mikro-orm/core';
import type { EntityManager } from '@mikro-orm/postgresql';
import { NEWEST_FIRST, createdAt, keyMode, tableEntity, tenantOwned } from '../db/columns.ts';
import { executeNumbered } from '../db/numbered-sql.ts';
import { type Page, type Window, pageOf } from '../db/pages.ts';
import type { TransferStatus } from './domain.ts';
import { type ApprovalActor, approvalColumns } from './approvals.ts';
import { Transfer, type TransferRow } from './store.ts';

export const TransferBatch = tableEntity('TransferBatch', 'transfer_batches', {
  ...tenantOwned(),
  batch_reference: p.string(),
  request_hash: p.string(),
  atomic: p.boolean(),
  mode: keyMode(),
  total_count: p.integer(),
  total_amount_minor: p.bigint('number'),
  total_fee_minor: p.bigint('number'),
  metadata: p.json<Record<string, unknown>>(),
  status: p.enum(['processing', 'completed'] as const),
  ...approvalColumns(),
  ...createdAt(),
  completed_at: p.datetime().nullable(),
});
export type TransferBatchRow = InferEntity<typeof TransferBatch>;

export const transferBatchEntities = [TransferBatch];

export interface NewBatch {
  id: string;
  tenantId: string;
  batchReference: string;
  requestHash: string;
  atomic: boolean;
  mode: 'test' | 'live';
  totalAmountMinor: number;
  totalFeeMinor: number;
  metadata: Record<string, unknown>;
  /** The key that made the batch (decisions §19): it may not approve it. */
  createdByKeyId?: string | null;
  /** Held whole by the transfer policy until then (decisions §20); absent when not held. */
  approvalExpiresAt?: Date | null;
}

export interface NewBatchItem {
  index: number;
  reference: string;
  amountMinor: number;
  feeMinor: number;
  recipientAccount: string;
  recipientBankCode: string;
  recipientBank: string;
  /**
   * A saved recipient's name (decisions §20), for an item naming `recipient_id`: its name enquiry
   * must still give it, and it is paid under it. Null for an item naming an account.
   */
  savedName: string | null;
  narration: string;
  metadata: Record<string, unknown>;
  /** The item's transfer fingerprint: a single create of its reference with the same body is the same transfer. */
  requestHash: string;
  /**
   * Refused when the batch is accepted, before any name enquiry (decisions §20: the transfer
   * policy's saved_recipients_only refuses an account that is not saved, recipient_not_allowed).
   */
  refusal?: { code: string; message: string };
}

export interface BatchItemRow {
  batch_id: string;
  index: number;
  reference: string;
  amount_minor: number;
  fee_minor: number;
  recipient_account: string;
  recipient_bank_code: string;
  recipient_bank: string;
  /** A saved recipient's name (migration 0033), or null: see NewBatchItem.savedName. */
  saved_name: string | null;
  narration: string;
  metadata: Record<string, unknown>;
  request_hash: string;
  status: 'queued' | 'refused' | 'accepted';
  recipient_name: string | null;
  name_enquiry_session_id: string | null;
  connector: string | null;
  transfer_id: string | null;
  error_code: string | null;
  error_message: string | null;
}

const INSERT_BATCH = `insert into transfer_batches
    (id, tenant_id, batch_reference, request_hash, atomic, mode, total_count, total_amount_minor, total_fee_minor, metadata,
     created_by_key_id, approval_status, approval_expires_at)
    values ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, case when $12::timestamptz is null then null else 'required' end, $12)
    on conflict (tenant_id, batch_reference) do nothing returning id`;

const INSERT_ITEMS = `insert into transfer_batch_items
    (batch_id, index, reference, amount_minor, fee_minor, recipient_account, recipient_bank_code, recipient_bank,
     narration, metadata, request_hash, saved_name, status, error_code, error_message, decided_at)
    select $1, i.index, i.reference, i.amount_minor, i.fee_minor, i.recipient_account, i.recipient_bank_code,
           i.recipient_bank, i.narration, i.metadata, i.request_hash, i.saved_name,
           case when i.error_code is null then 'queued' else 'refused' end, i.error_code, i.error_message,
           case when i.error_code is null then null else now() end
      from unnest($2::int[], $3::text[], $4::bigint[], $5::bigint[], $6::text[], $7::text[], $8::text[],
                  $9::text[], $10::jsonb[], $11::text[], $12::text[], $13::text[], $14::text[])
      as i (index, reference, amount_minor, fee_minor, recipient_account, recipient_bank_code, recipient_bank,
            narration, metadata, request_hash, saved_name, error_code, error_message) returning 1`;

/**
 * The batch and its items, in the caller's transaction; false (nothing written) when the tenant
 * already has a batch of this reference.
 */
export async function insertBatch(
  em: EntityManager,
  batch: NewBatch,
  items: readonly NewBatchItem[],
): Promise<boolean> {
  const inserted = await executeNumbered(em, INSERT_BATCH, [
    batch.id,
    batch.tenantId,
    batch.batchReference,
    batch.requestHash,
    batch.atomic,
    batch.mode,
    items.length,
    batch.totalAmountMinor,
    batch.totalFeeMinor,
    JSON.stringify(batch.metadata),
    batch.createdByKeyId ?? null,
    batch.approvalExpiresAt?.toISOString() ?? null,
  ]);
  if (inserted.length === 0) return false;
  await executeNumbered(em, INSERT_ITEMS, [
    batch.id,
    items.map((item) => item.index),
    items.map((item) => item.reference),
    items.map((item) => item.amountMinor),
    items.map((item) => item.feeMinor),
    items.map((item) => item.recipientAccount),
    items.map((item) => item.recipientBankCode),
    items.map((item) => item.recipientBank),
    items.map((item) => item.narration),
    items.map((item) => JSON.stringify(item.metadata)),
    items.map((item) => item.requestHash),
    items.map((item) => item.savedName),
    items.map((item) => item.refusal?.code ?? null),
    items.map((item) => item.refusal?.message.slice(0, 500) ?? null),
  ]);
  return true;
}

/** The tenant's batch by id (any tenant's when none is given). */
export async function findBatch(em: EntityManager, id: string, tenantId?: string): Promise<TransferBatchRow | null> {
  return em.findOne(TransferBatch, { id, ...(tenantId ? { tenant_id: tenantId } : {}) }, { refresh: true });
}

/** The tenant's batches, newest first; only those whose approval stands so when given. */
export function listBatches(
  em: EntityManager,
  tenantId: string,
  query: { approval?: 'required' | 'approved' | 'rejected' | 'expired' | undefined },
  window: Window,
): Promise<Page<TransferBatchRow>> {
  return pageOf(
    em,
    TransferBatch,
    { tenant_id: tenantId, ...(query.approval !== undefined ? { approval_status: query.approval } : {}) },
    NEWEST_FIRST,
    window,
  );
}

export async function findBatchByReference(
  em: EntityManager,
  tenantId: string,
  batchReference: string,
): Promise<TransferBatchRow | null> {
  return em.findOne(TransferBatch, { tenant_id: tenantId, batch_reference: batchReference }, { refresh: true });
}

/** How many of the tenant's batches of this mode are open (not completed). */
export async function openBatchCount(em: EntityManager, tenantId: string, mode: 'test' | 'live'): Promise<number> {
  return em.count(TransferBatch, { tenant_id: tenantId, mode, status: 'processing' });
}

/**
 * The items of the tenant's batches of this mode recorded in the last `seconds` (by the database's
 * clock), and how long until the oldest of them leaves that window. Raw SQL: the window is the rule.
 */
export async function itemsAdmittedWithin(
  em: EntityManager,
  tenantId: string,
  mode: 'test' | 'live',
  seconds: number,
): Promise<{ items: number; oldestLeavesInSeconds: number }> {
  const [row] = await em.execute<{ items: string; leaves: number | null }[]>(
    `select coalesce(sum(total_count), 0)::text as items,
            extract(epoch from min(created_at) + make_interval(secs => ?) - now())::float8 as leaves
       from transfer_batches where tenant_id = ? and mode = ? and created_at > now() - make_interval(secs => ?)`,
    [seconds, tenantId, mode, seconds],
  );
  return { items: Number(row!.items), oldestLeavesInSeconds: Math.max(1, Math.ceil(row!.leaves ?? 1)) };
}

function itemOf(row: Record<string, unknown>): BatchItemRow {
  return {
    ...(row as unknown as BatchItemRow),
    amount_minor: Number(row.amount_minor),
    fee_minor: Number(row.fee_minor),
  };
}

/** Items of [from, to) still waiting for their name enquiry, in index order. */
export async function itemsAwaitingEnquiry(
  em: EntityManager,
  batchId: string,
  range: { from: number; to: number },
): Promise<BatchItemRow[]> {
  const rows = await em.execute(
    `select * from transfer_batch_items
      where batch_id = ? and status = 'queued' and recipient_name is null and index >= ? and index < ? order by index`,
    [batchId, range.from, range.to],
  );
  return rows.map(itemOf);
}

/** Items of [from, to) not decided yet, named or not, in index order. */
export async function undecidedItems(
  em: EntityManager,
  batchId: string,
  range: { from: number; to: number },
): Promise<BatchItemRow[]> {
  const rows = await em.execute(
    `select * from transfer_batch_items
      where batch_id = ? and status = 'queued' and index >= ? and index < ? order by index`,
    [batchId, range.from, range.to],
  );
  return rows.map(itemOf);
}

/** What each item's name enquiry answered, kept until the item is decided. */
export async function recordEnquiries(
  em: EntityManager,
  batchId: string,
  answers: readonly { index: number; recipientName: string; sessionId: string; connector: string }[],
): Promise<void> {
  if (answers.length === 0) return;
  await executeNumbered(
    em,
    `update transfer_batch_items i set recipient_name = a.name, name_enquiry_session_id = a.session, connector = a.connector
       from unnest($2::int[], $3::text[], $4::text[], $5::text[]) as a (index, name, session, connector)
      where i.batch_id = $1 and i.index = a.index and i.status = 'queued' returning 1`,
    [
      batchId,
      answers.map((answer) => answer.index),
      answers.map((answer) => answer.recipientName),
      answers.map((answer) => answer.sessionId),
      answers.map((answer) => answer.connector),
    ],
  );
}

/** Queued items of [from, to), locked for the caller's transaction, in index order. */
export async function lockQueuedItems(
  em: EntityManager,
  batchId: string,
  range: { from: number; to: number },
): Promise<BatchItemRow[]> {
  const rows = await em.execute(
    `select * from transfer_batch_items where batch_id = ? and status = 'queued' and index >= ? and index < ?
      order by index for update`,
    [batchId, range.from, range.to],
  );
  return rows.map(itemOf);
}

/** Items of [from, to) accepted (by this transaction or an earlier one), in index order. */
export async function acceptedItems(
  em: EntityManager,
  batchId: string,
  range: { from: number; to: number },
): Promise<BatchItemRow[]> {
  const rows = await em.execute(
    `select * from transfer_batch_items where batch_id = ? and status = 'accepted' and index >= ? and index < ?
      order by index`,
    [batchId, range.from, range.to],
  );
  return rows.map(itemOf);
}

/** Queued items refused, each with its code; the indexes refused now. */
export async function refuseItems(
  em: EntityManager,
  batchId: string,
  refusals: readonly { index: number; code: string; message: string }[],
): Promise<number[]> {
  if (refusals.length === 0) return [];
  const rows = await executeNumbered<{ index: number }[]>(
    em,
    `update transfer_batch_items i set status = 'refused', error_code = r.code, error_message = r.message, decided_at = now()
       from unnest($2::int[], $3::text[], $4::text[]) as r (index, code, message)
      where i.batch_id = $1 and i.index = r.index and i.status = 'queued' returning i.index`,
    [
      batchId,
      refusals.map((refusal) => refusal.index),
      refusals.map((refusal) => refusal.code),
      refusals.map((refusal) => refusal.message.slice(0, 500)),
    ],
  );
  return rows.map((row) => row.index);
}

/** Queued items accepted, each with the transfer it became. */
export async function acceptItems(
  em: EntityManager,
  batchId: string,
  accepted: readonly { index: number; transferId: string }[],
): Promise<void> {
  if (accepted.length === 0) return;
  const rows = await executeNumbered(
    em,
    `update transfer_batch_items i set status = 'accepted', transfer_id = a.transfer_id, decided_at = now()
       from unnest($2::int[], $3::uuid[]) as a (index, transfer_id)
      where i.batch_id = $1 and i.index = a.index and i.status = 'queued' returning 1`,
    [batchId, accepted.map((item) => item.index), accepted.map((item) => item.transferId)],
  );
  if (rows.length !== accepted.length) {
    throw new Error(`batch ${batchId}: accepted ${rows.length} items, expected ${accepted.length}`);
  }
}

export interface BatchCounts {
  refused: number;
  pending: number;
  successful: number;
  failed: number;
}

/** The batch's items by what the API shows: refused, or their transfers' status (pending until decided). */
export async function batchCounts(em: EntityManager, batchId: string): Promise<BatchCounts> {
  const [row] = await em.execute<Record<keyof BatchCounts, string>[]>(
    `select count(*) filter (where i.status = 'refused') as refused,
            count(*) filter (where i.status = 'queued' or t.status in ('pending', 'processing')) as pending,
            count(*) filter (where t.status = 'completed') as successful,
            count(*) filter (where t.status = 'failed') as failed
       from transfer_batch_items i left join transfers t on t.id = i.transfer_id
      where i.batch_id = ?`,
    [batchId],
  );
  return {
    refused: Number(row?.refused ?? 0),
    pending: Number(row?.pending ?? 0),
    successful: Number(row?.successful ?? 0),
    failed: Number(row?.failed ?? 0),
  };
}

export interface BatchItemWithTransfer extends BatchItemRow {
  transfer_status: TransferStatus | null;
  failure_reason: string | null;
}

/** A page of the batch's items in index order, with their transfers' status. */
export async function batchItemsPage(
  em: EntityManager,
  batchId: string,
  window: Window,
): Promise<BatchItemWithTransfer[]> {
  const rows = await em.execute(
    `select i.*, t.status as transfer_status, t.failure_reason
       from transfer_batch_items i left join transfers t on t.id = i.transfer_id
      where i.batch_id = ? order by i.index limit ? offset ?`,
    [batchId, window.limit, window.offset],
  );
  return rows.map((row) => ({
    ...itemOf(row),
    transfer_status: (row.transfer_status as TransferStatus | null) ?? null,
    failure_reason: (row.failure_reason as string | null) ?? null,
  }));
}

/** The batch marked completed, once: null when it already was. */
export async function markBatchCompleted(em: EntityManager, id: string): Promise<TransferBatchRow | null> {
  const updated = await em.nativeUpdate(
    TransferBatch,
    { id, status: 'processing' },
    { status: 'completed', completed_at: raw('now()') },
  );
  return updated > 0 ? findBatch(em, id) : null;
}

/** Accepted items of [from, to) with their transfers' status and session, in index order. */
export async function acceptedWithTransfers(
  em: EntityManager,
  batchId: string,
  range: { from: number; to: number },
): Promise<
  (BatchItemRow & { transfer_status: TransferStatus; session_id: string | null; possibly_taken_at: Date | null })[]
> {
  const rows = await em.execute(
    `select i.*, t.status as transfer_status, t.session_id, t.possibly_taken_at
       from transfer_batch_items i join transfers t on t.id = i.transfer_id
      where i.batch_id = ? and i.status = 'accepted' and i.index >= ? and i.index < ? order by i.index`,
    [batchId, range.from, range.to],
  );
  return rows.map((row) => ({
    ...itemOf(row),
    transfer_status: row.transfer_status as TransferStatus,
    session_id: (row.session_id as string | null) ?? null,
    possibly_taken_at: row.possibly_taken_at ? new Date(row.possibly_taken_at as string | Date) : null,
  }));
}

/**
 * A transfer's batch item, if it is one: the run that awaits its bank's word when its batch's group
 * run does (migration 0042), else null (its own transfer run, which may not have started yet).
 */
export async function batchItemOf(em: EntityManager, transferId: string): Promise<{ awaitedBy: string | null } | null> {
  const [row] = await em.execute<{ awaited_by: string | null }[]>(
    'select awaited_by from transfer_batch_items where transfer_id = ?',
    [transferId],
  );
  return row ? { awaitedBy: row.awaited_by } : null;
}

/** Items of a batch marked awaited by their group's run, one statement per group. */
export async function markItemsAwaited(
  em: EntityManager,
  batchId: string,
  groups: ReadonlyMap<string, readonly number[]>,
): Promise<void> {
  for (const [awaitedBy, indexes] of groups) {
    await em.execute('update transfer_batch_items set awaited_by = ? where batch_id = ? and index = any(?::int[])', [
      awaitedBy,
      batchId,
      `{${indexes.join(',')}}`,
    ]);
  }
}

/** The transfers of a batch's items its group's run `awaitedBy` awaits that are still processing. */
export async function processingItemsAwaitedBy(
  em: EntityManager,
  batchId: string,
  awaitedBy: string,
): Promise<TransferRow[]> {
  const rows = await em.execute<{ transfer_id: string }[]>(
    'select transfer_id from transfer_batch_items where batch_id = ? and awaited_by = ? order by index',
    [batchId, awaitedBy],
  );
  if (rows.length === 0) return [];
  const ids = rows.map((row) => row.transfer_id);
  const transfers = await em.find(Transfer, { id: { $in: ids }, status: 'processing' });
  return transfers.sort((a, b) => ids.indexOf(a.id) - ids.indexOf(b.id));
}

/** The bank's words kept on items before their awaiting run was there, by transfer id. */
export async function keptItemWords<T>(em: EntityManager, transferIds: readonly string[]): Promise<Record<string, T>> {
  if (transferIds.length === 0) return {};
  const rows = await em.execute<{ transfer_id: string; bank_word: T }[]>(
    'select transfer_id, bank_word from transfer_batch_items where transfer_id = any(?::uuid[]) and bank_word is not null',
    [`{${transferIds.join(',')}}`],
  );
  return Object.fromEntries(rows.map((row) => [row.transfer_id, row.bank_word]));
}

/** Whether a transfer is a batch's item (its run may not have started yet). */
export async function isBatchItem(em: EntityManager, transferId: string): Promise<boolean> {
  return (await batchItemOf(em, transferId)) !== null;
}

/** Keeps the bank's word about a batch item whose run has not started (migration 0041): the first word stays. */
export async function keepItemBankWord(em: EntityManager, transferId: string, word: object): Promise<void> {
  await em.execute('update transfer_batch_items set bank_word = coalesce(bank_word, ?::jsonb) where transfer_id = ?', [
    JSON.stringify(word),
    transferId,
  ]);
}

/** The bank's word kept for a batch item before its run started, if any. */
export async function itemBankWord<T>(em: EntityManager, transferId: string): Promise<T | undefined> {
  const [row] = await em.execute<{ bank_word: T | null }[]>(
    'select bank_word from transfer_batch_items where transfer_id = ?',
    [transferId],
  );
  return row?.bank_word ?? undefined;
}

// A held batch (decisions §20): its row's decision, and its items' transfers, which carry the
// batch's approval as theirs.

/** The batch row locked for the caller's transaction. */
export async function lockBatch(em: EntityManager, id: string): Promise<TransferBatchRow | null> {
  return em.findOne(TransferBatch, { id }, { lockMode: LockMode.PESSIMISTIC_WRITE, refresh: true });
}

/** A held batch's approval decided: the caller holds its row lock. */
export async function decideBatchRow(
  em: EntityManager,
  id: string,
  outcome: 'approved' | 'rejected' | 'expired',
  decidedBy: ApprovalActor | null,
): Promise<TransferBatchRow> {
  await em.nativeUpdate(
    TransferBatch,
    { id, approval_status: 'required' },
    { approval_status: outcome, approval_decided_by: decidedBy, approval_decided_at: raw('now()') },
  );
  return (await findBatch(em, id))!;
}

/** The transfers of the accepted items of [from, to) still held, locked for the caller's transaction. */
export async function lockHeldItemTransfers(
  em: EntityManager,
  batchId: string,
  range: { from: number; to: number },
): Promise<TransferRow[]> {
  const ids = (await acceptedItems(em, batchId, range)).map((item) => item.transfer_id!);
  if (ids.length === 0) return [];
  return em.find(
    Transfer,
    { id: { $in: ids }, approval_status: 'required' },
    { lockMode: LockMode.PESSIMISTIC_WRITE, refresh: true, orderBy: { id: 'asc' } },
  );
}

/** The batch each of these transfers is an item of (a transfer of none is absent). */
export async function batchIdsOf(em: EntityManager, transferIds: readonly string[]): Promise<Map<string, string>> {
  if (transferIds.length === 0) return new Map();
  const rows = await executeNumbered<{ transfer_id: string; batch_id: string }[]>(
    em,
    'select transfer_id, batch_id from transfer_batch_items where transfer_id = any($1::uuid[])',
    [[...transferIds]],
  );
  return new Map(rows.map((row) => [row.transfer_id, row.batch_id]));
}
