// The only code that touches the transfer tables: `transfers` (the projection the API renders),
// `transfer_resolutions` (operators' decisions), `abandoned_reservations`,
// `transfer_discrepancies` (late bank answers that contradict the books) and
// `transfer_connector_conflicts` (answers from a connector that does not hold the transfer). Rows
// come typed from the MikroORM entity below, amounts as numbers (kobo: bigint columns, far below
// 2^53). Properties are named as their columns, so a row reads the same in SQL, in code and in logs.
// Raw SQL stays only where the SQL is the rule: today's usage against the daily limit, a
// submission's possibly-taken mark (read and replaced under one row lock), and the discrepancies
// and conflicts (one open per transfer is a partial unique index the insert leans on).
import { randomUUID } from 'node:crypto';
import { type InferEntity, LockMode, p, raw } from '@mikro-orm/core';
import type { EntityManager, MikroORM } from '@mikro-orm/postgresql';
import { NEWEST_FIRST, createdAt, tableEntity, tenantOwned, timestamps } from '../db/columns.ts';
import { type Page, type Window, pageOf } from '../db/pages.ts';
import { startOfLagosDay } from '../db/lagos-day.ts';
import { readOne } from '../db/prepared.ts';
import { executeNumbered } from '../db/numbered-sql.ts';
import type { KeyMode } from '../connectors/types.ts';
import type { OperatorResolution, TransferRequest } from '../../workflows/transfers/definitions.ts';
import { TRANSFER_STATUSES, type TransferStatus } from './domain.ts';
import { type ApprovalActor, type ApprovalStatus, approvalColumns } from './approvals.ts';

export const Transfer = tableEntity('Transfer', 'transfers', {
  ...tenantOwned(),
  reference: p.string(),
  request_hash: p.string(),
  amount_minor: p.bigint('number'),
  fee_minor: p.bigint('number'),
  currency: p.string(),
  recipient_account: p.string(),
  recipient_bank_code: p.string(),
  recipient_bank: p.string(),
  recipient_name: p.string(),
  narration: p.string(),
  metadata: p.json<Record<string, unknown>>(),
  status: p.enum(TRANSFER_STATUSES),
  name_enquiry_session_id: p.string().nullable(),
  session_id: p.string().nullable(),
  provider_code: p.string().nullable(),
  failure_reason: p.string().nullable(),
  stuck_since: p.datetime().nullable(),
  /** The connector that took the transfer (decisions §13); null while none has. */
  connector: p.string().nullable(),
  /**
   * Set while a submission to `connector` may have been taken (decisions §17): written before each
   * submission is sent, cleared when the answer settles it or a status query proves "not taken".
   */
  possibly_taken_at: p.datetime().nullable(),
  /** The first ambiguous submission, kept for good: no refusal proves "not taken" after one. */
  ambiguous_since: p.datetime().nullable(),
  ...approvalColumns(),
  ...timestamps(),
  completed_at: p.datetime().nullable(),
  /**
   * When its bank's reversal, after it had paid the transfer out, was applied (decisions §21): set
   * with status `failed` and failure_reason `reversed`; null for every other transfer.
   */
  reversed_at: p.datetime().nullable(),
  /** The inbound credit this transfer returns to its sender (decisions §21); null for any other. */
  return_of: p.uuid().nullable(),
  /** What pays it: the wallet, or the suspense account for the return of a held credit (migration 0038). */
  funded_from: p.enum(['wallet', 'suspense'] as const).default('wallet'),
  /**
   * The task token (base64) of the submission that waits for the bank's word (migration 0045): the
   * bank's callback completes that activity with it. Null when none waits; never shown to tenants.
   */
  awaiting_word_token: p.text().nullable().lazy(),
});
export type TransferRow = InferEntity<typeof Transfer>;

export const TransferResolution = tableEntity('TransferResolution', 'transfer_resolutions', {
  id: p.uuid().primary(),
  transfer_id: p.uuid(),
  outcome: p.enum(['successful', 'failed'] as const),
  note: p.string(),
  operator: p.string(),
  ...createdAt(),
});

export const AbandonedReservation = tableEntity('AbandonedReservation', 'abandoned_reservations', {
  transfer_id: p.uuid().primary(),
  tenant_id: p.uuid(),
  reference: p.string(),
  abandoned_at: p.datetime().defaultRaw('now()'),
});

export const transferEntities = [Transfer, TransferResolution, AbandonedReservation];

/** The connector that took a transfer: a row none is recorded on was made before connectors were, by the sandbox (migration 0023). */
export function connectorOf(row: TransferRow): string {
  return row.connector ?? 'sandbox';
}

/**
 * Whose transfers a reconciliation reads: those one connector took and, for the sandbox connector,
 * those no connector is recorded on (made before connectors were, migration 0023).
 */
export interface ConnectorScope {
  connector: string;
  orUnattributed: boolean;
}

function ofConnector(scope: ConnectorScope) {
  return scope.orUnattributed
    ? { $or: [{ connector: scope.connector }, { connector: null }] }
    : { connector: scope.connector };
}

/**
 * The transfers of one connector that the bank has seen (they carry its session id) and that ended
 * in [from, to), for reconciliation against that connector's record of the day. A transfer its bank
 * reversed after paying it out (decisions §21) ended when it was reversed: banks list it as failed
 * on that day.
 */
export async function transfersEndedBetween(
  em: EntityManager,
  scope: ConnectorScope,
  from: Date,
  to: Date,
): Promise<TransferRow[]> {
  return em.find(
    Transfer,
    {
      $and: [
        { status: { $in: ['completed', 'failed'] }, session_id: { $ne: null } },
        {
          $or: [{ reversed_at: null, completed_at: { $gte: from, $lt: to } }, { reversed_at: { $gte: from, $lt: to } }],
        },
        ofConnector(scope),
      ],
    },
    { orderBy: { completed_at: 'asc', id: 'asc' } },
  );
}

/** One connector's transfers by id, or by the bank's session id, whatever their status or day. */
export async function transfersByIdOrSession(
  em: EntityManager,
  scope: ConnectorScope,
  ids: readonly string[],
  sessionIds: readonly string[],
): Promise<TransferRow[]> {
  if (!ids.length && !sessionIds.length) return [];
  return em.find(Transfer, {
    $and: [{ $or: [{ id: { $in: [...ids] } }, { session_id: { $in: [...sessionIds] } }] }, ofConnector(scope)],
  });
}

/** `lock`: a row lock for the caller's transaction (settling, reversing, correcting). */
/**
 * Transfers' rows locked for the caller's transaction, in id order (the order every multi-row finish
 * takes); the tenants they belong to.
 */
export async function lockTransfers(em: EntityManager, ids: readonly string[]): Promise<string[]> {
  if (ids.length === 0) return [];
  const rows = await em.execute<{ tenant_id: string }[]>(
    'select tenant_id from transfers where id = any(?::uuid[]) order by id for update',
    [`{${ids.join(',')}}`],
  );
  return [...new Set(rows.map((row) => row.tenant_id))];
}

export async function findTransfer(
  em: EntityManager,
  id: string,
  options: { tenantId?: string; lock?: boolean } = {},
): Promise<TransferRow | null> {
  return em.findOne(
    Transfer,
    { id, ...(options.tenantId ? { tenant_id: options.tenantId } : {}) },
    options.lock ? { lockMode: LockMode.PESSIMISTIC_WRITE } : {},
  );
}

/** A transfer with its tenant row's mode (the world it belongs to), in one statement; null for no such transfer. */
export async function findTransferWithMode(
  em: EntityManager,
  id: string,
): Promise<{ row: TransferRow; mode: KeyMode } | null> {
  const [found] = await em.execute<Record<string, unknown>[]>(
    'select t.*, n.mode as tenant_mode from transfers t join tenants n on n.id = t.tenant_id where t.id = ?',
    [id],
  );
  if (!found) return null;
  const { tenant_mode: mode, ...row } = found;
  return { row: em.map(Transfer, row), mode: mode as KeyMode };
}

export async function findByReference(em: EntityManager, tenantId: string, reference: string) {
  return em.findOne(Transfer, { tenant_id: tenantId, reference });
}

// The API's reads, outside any transaction: prepared once per connection (src/db/prepared.ts).
const BY_ID = { name: 'transfer_by_id', where: 'id = $1' };
const BY_TENANT_AND_ID = { name: 'transfer_by_tenant_id', where: 'id = $1 and tenant_id = $2' };
const BY_REFERENCE = { name: 'transfer_by_reference', where: 'tenant_id = $1 and reference = $2' };

/** The tenant's transfer (any tenant's when none is given), read outside a transaction. */
export function readTransfer(orm: MikroORM, id: string, tenantId?: string): Promise<TransferRow | null> {
  return tenantId === undefined
    ? readOne(orm, Transfer, BY_ID, [id])
    : readOne(orm, Transfer, BY_TENANT_AND_ID, [id, tenantId]);
}

/** The tenant's transfer with this reference, read outside a transaction. */
export function readByReference(orm: MikroORM, tenantId: string, reference: string): Promise<TransferRow | null> {
  return readOne(orm, Transfer, BY_REFERENCE, [tenantId, reference]);
}

export interface TransferListQuery {
  statuses?: TransferRow['status'][] | undefined;
  reference?: string | undefined;
  recipientAccount?: string | undefined;
  approval?: 'required' | 'approved' | 'rejected' | 'expired' | undefined;
  /** created_at bounds: from inclusive, to exclusive or inclusive as given. */
  createdFrom?: Date | undefined;
  createdBefore?: Date | undefined;
  createdUntil?: Date | undefined;
}

export async function listTransfers(
  em: EntityManager,
  tenantId: string,
  query: TransferListQuery,
  window: Window,
): Promise<Page<TransferRow>> {
  const created = {
    ...(query.createdFrom ? { $gte: query.createdFrom } : {}),
    ...(query.createdBefore ? { $lt: query.createdBefore } : {}),
    ...(query.createdUntil ? { $lte: query.createdUntil } : {}),
  };
  return pageOf(
    em,
    Transfer,
    {
      tenant_id: tenantId,
      ...(query.reference !== undefined ? { reference: query.reference } : {}),
      ...(query.recipientAccount !== undefined ? { recipient_account: query.recipientAccount } : {}),
      ...(query.approval !== undefined ? { approval_status: query.approval } : {}),
      ...(query.statuses ? { status: { $in: query.statuses } } : {}),
      ...(Object.keys(created).length > 0 ? { created_at: created } : {}),
    },
    NEWEST_FIRST,
    window,
  );
}

/**
 * Today's usage against the daily limit: the amounts of the tenant's transfers not failed, since
 * midnight in Lagos by the database's clock (src/db/lagos-day.ts). Raw SQL because the day
 * boundary is the rule. Returns of held credits are the platform's, paid from suspense: they use
 * none of it (decisions §21).
 */
export async function usedToday(em: EntityManager, tenantId: string): Promise<number> {
  // An atomic batch's items count from the moment the batch reserved them, before each is a transfer.
  const [usage] = await em.execute<{ used: string }[]>(
    `select (coalesce((select sum(amount_minor) from transfers
                        where tenant_id = ? and status <> 'failed' and funded_from = 'wallet'
                          and created_at >= ${startOfLagosDay}), 0)
           + coalesce((select sum(i.amount_minor) from transfer_batch_items i join transfer_batches b on b.id = i.batch_id
                        where b.tenant_id = ? and b.atomic and i.status = 'queued'
                          and b.created_at >= ${startOfLagosDay}), 0))::text as used`,
    [tenantId, tenantId],
  );
  return Number(usage!.used);
}

/**
 * What returns of each credit hold of it (decisions §21): the amounts of the transfers that return
 * it and have not failed (a failed one gave its money back), by credit id; a credit none returns is
 * left out; `fromSuspenseMinor` is the part paid from suspense (a held credit's return).
 */
export async function returnedOfCredits(
  em: EntityManager,
  creditIds: readonly string[],
): Promise<Map<string, { returnedMinor: number; fromSuspenseMinor: number }>> {
  if (creditIds.length === 0) return new Map();
  const rows = await executeNumbered<{ return_of: string; returned: string; from_suspense: string }[]>(
    em,
    `select return_of, sum(amount_minor)::text as returned,
            coalesce(sum(amount_minor) filter (where funded_from = 'suspense'), 0)::text as from_suspense
       from transfers where return_of = any($1::uuid[]) and status <> 'failed' group by return_of`,
    [[...creditIds]],
  );
  return new Map(
    rows.map((row) => [
      row.return_of,
      { returnedMinor: Number(row.returned), fromSuspenseMinor: Number(row.from_suspense) },
    ]),
  );
}

/** A transfer whose money is reserved, as its projection row is inserted: `pending`, with its connector. */
interface ReservedRow {
  transferId: string;
  request: TransferRequest;
  recipientName: string;
  nameEnquirySessionId: string;
  connector: string;
}

function pendingRow({ transferId, request, recipientName, nameEnquirySessionId, connector }: ReservedRow) {
  return {
    id: transferId,
    tenant_id: request.tenantId,
    reference: request.reference,
    request_hash: request.requestHash,
    amount_minor: request.amountMinor,
    fee_minor: request.feeMinor,
    currency: request.currency,
    recipient_account: request.recipientAccount,
    recipient_bank_code: request.recipientBankCode,
    recipient_bank: request.recipientBankName,
    recipient_name: recipientName,
    narration: request.narration,
    metadata: request.metadata,
    status: 'pending' as const,
    name_enquiry_session_id: nameEnquirySessionId,
    connector,
    created_by_key_id: request.createdByKeyId ?? null,
    return_of: request.returnOf?.creditId ?? null,
    funded_from: request.returnOf?.fundedFrom ?? ('wallet' as const),
  };
}

/** The projection row of a transfer whose money was just reserved: `pending`, with its connector. */
export async function insertTransfer(
  em: EntityManager,
  transferId: string,
  request: TransferRequest,
  recipientName: string,
  reserved: { nameEnquirySessionId: string; connector: string; approvalExpiresAt?: Date },
): Promise<TransferRow> {
  const { approvalExpiresAt, ...taken } = reserved;
  const [written] = await em
    .createQueryBuilder(Transfer)
    .insert({
      ...pendingRow({ transferId, request, recipientName, ...taken }),
      ...(approvalExpiresAt ? { approval_status: 'required' as const, approval_expires_at: approvalExpiresAt } : {}),
    })
    .returning('*')
    .execute<Record<string, unknown>[]>('all', false)
    // As the ORM's own insert reports them (a taken reference: UniqueConstraintViolationException).
    .catch((error: Error) => {
      throw em.getDriver().convertException(error);
    });
  return rowAsRead(em, transferId, written);
}

/** A batch's accepted items, made transfers at once: `pending`, each with its connector. */
export async function insertTransfers(em: EntityManager, transfers: readonly ReservedRow[]): Promise<TransferRow[]> {
  if (transfers.length === 0) return [];
  await em.insertMany(Transfer, transfers.map(pendingRow));
  return em.find(
    Transfer,
    { id: { $in: transfers.map((transfer) => transfer.transferId) } },
    { refresh: true, orderBy: { reference: 'asc' } },
  );
}

/** Which of these references the tenant's transfers already hold. */
export async function referencesTaken(
  em: EntityManager,
  tenantId: string,
  references: readonly string[],
): Promise<Set<string>> {
  if (references.length === 0) return new Set();
  const rows = await em.find(
    Transfer,
    { tenant_id: tenantId, reference: { $in: [...references] } },
    { fields: ['reference'] },
  );
  return new Set(rows.map((row) => row.reference));
}

/**
 * The bank's answer took the transfer, or left it possibly taken: pending → processing, with the
 * bank's session id (a transfer already processing keeps its own unless the bank gave one). `taken`:
 * the answer leaves no doubt, so the mark its submission wrote beforehand (beginSubmission) goes.
 */
export async function markProcessing(
  em: EntityManager,
  id: string,
  sessionId: string,
  options: { taken: boolean; awaitingWordToken?: string } = { taken: true },
): Promise<void> {
  await em.execute(
    `update transfers
        set session_id = case when status = 'pending' or ? <> '' then ? else session_id end,
            status = 'processing',
            possibly_taken_at = case when ? then null else possibly_taken_at end,
            awaiting_word_token = ?,
            updated_at = now()
      where id = ? and status in ('pending', 'processing')`,
    [sessionId, sessionId, options.taken, options.awaitingWordToken ?? null, id],
  );
}

/** What a submission about to be sent learns of the transfer's earlier attempts (decisions §17). */
export interface SubmissionStart {
  /**
   * When an earlier attempt left the transfer possibly taken (an ambiguous answer, or a process
   * that died mid-request); null when none did, and this one may be sent.
   */
  prior: Date | null;
  /** The first ambiguous attempt ever, this one's predecessor included. */
  ambiguousSince: Date | null;
  /** This attempt's own mark (its exact text, to the microsecond): clearing it leaves another's alone. */
  mark: string;
  /** The transfer's status as the attempt found it. */
  status: TransferStatus;
}

/**
 * Marks the transfer possibly taken before a submission is sent (a write-ahead: a process that dies
 * mid-request leaves the mark behind, and the next attempt, on any worker, reads it as ambiguous).
 * Raw SQL: the earlier mark must be read and replaced under one row lock.
 */
export async function beginSubmission(
  em: EntityManager,
  id: string,
  /** The attempt's task token when the bank's word may complete it (base64); an earlier one goes. */
  awaitingWordToken?: string,
): Promise<SubmissionStart> {
  const [row] = await em.execute<
    { prior: string | null; ambiguous_since: string | null; mark: string; status: TransferStatus }[]
  >(
    `update transfers t
        set possibly_taken_at = clock_timestamp(),
            ambiguous_since = coalesce(t.ambiguous_since, earlier.prior),
            awaiting_word_token = ?,
            updated_at = now()
       from (select id, possibly_taken_at as prior from transfers where id = ? for update) earlier
      where t.id = earlier.id
      returning earlier.prior, t.ambiguous_since, t.possibly_taken_at::text as mark, t.status`,
    [awaitingWordToken ?? null, id],
  );
  if (!row) throw new Error(`no transfer ${id} to submit`);
  return {
    prior: row.prior === null ? null : new Date(row.prior),
    ambiguousSince: row.ambiguous_since === null ? null : new Date(row.ambiguous_since),
    mark: row.mark,
    status: row.status,
  };
}

/** The submission's answer settled it (refused before processing, or nothing was sent): its mark goes. */
export async function clearSubmission(em: EntityManager, id: string, mark: string): Promise<void> {
  await em.execute(
    'update transfers set possibly_taken_at = null, updated_at = now() where id = ? and possibly_taken_at = ?::timestamptz',
    [id, mark],
  );
}

/**
 * The submission's answer left doubt: the transfer stays possibly taken from now (the last
 * ambiguous attempt, which status queries must wait past), and is ambiguous for good.
 */
export async function markAmbiguous(em: EntityManager, id: string): Promise<Date> {
  const [row] = await em.execute<{ possibly_taken_at: string | Date }[]>(
    `update transfers
        set possibly_taken_at = clock_timestamp(), ambiguous_since = coalesce(ambiguous_since, clock_timestamp()),
            updated_at = now()
      where id = ? returning possibly_taken_at`,
    [id],
  );
  if (!row) throw new Error(`no transfer ${id}`);
  return new Date(row.possibly_taken_at);
}

/**
 * Its connector's status query proved the transfer was never taken (decisions §17): the mark goes,
 * unless a later attempt (after `asOf`) made another.
 */
export async function clearPossiblyTaken(em: EntityManager, id: string, asOf: Date): Promise<void> {
  // The workflow knows the mark to the millisecond; the column holds microseconds.
  await em.execute(
    `update transfers set possibly_taken_at = null, updated_at = now()
      where id = ? and date_trunc('milliseconds', possibly_taken_at) <= ?`,
    [id, asOf],
  );
}

/**
 * The transfer passes to another connector: the one before it answered the submission with a
 * definitive "not taken" (decisions §13), or its status query proved it never took it (§17). Never
 * while it is possibly taken, nor once final: false when it did not move.
 */
export async function assignConnector(
  em: EntityManager,
  id: string,
  connector: string,
  nameEnquirySessionId: string,
): Promise<boolean> {
  const moved = await em.nativeUpdate(
    Transfer,
    { id, status: { $in: ['pending', 'processing'] }, possibly_taken_at: null },
    { connector, name_enquiry_session_id: nameEnquirySessionId, updated_at: raw('now()') },
  );
  return moved > 0;
}

/** Marks a transfer stuck for operators, keeping the first time it was flagged. */
export async function flagStuck(em: EntityManager, id: string): Promise<void> {
  await em.nativeUpdate(Transfer, { id, stuck_since: null }, { stuck_since: raw('now()'), updated_at: raw('now()') });
}

/**
 * The final status of a transfer, with the bank's word on it: a session id or provider code not
 * given keeps the one recorded; completing clears any failure reason (a corrected failure).
 */
export async function finishRow(
  em: EntityManager,
  id: string,
  final:
    | { status: 'completed'; sessionId: string | null; providerCode: string | null }
    | { status: 'failed'; reason: string; providerCode: string | null; sessionId?: string | null },
): Promise<TransferRow> {
  const [written] = await em
    .createQueryBuilder(Transfer)
    .update({
      status: final.status,
      completed_at: raw('now()'),
      updated_at: raw('now()'),
      // Final: nothing is "possibly" anything any more (ambiguous_since keeps that there was doubt),
      // and no submission waits for a word.
      possibly_taken_at: null,
      awaiting_word_token: null,
      failure_reason: final.status === 'failed' ? final.reason.slice(0, 500) : null,
      ...(final.providerCode ? { provider_code: final.providerCode } : {}),
      ...(final.sessionId ? { session_id: final.sessionId } : {}),
    })
    .where({ id })
    .returning('*')
    .execute<Record<string, unknown>[]>('all', false);
  return rowAsRead(em, id, written);
}

/**
 * The row a write answered (`returning *`), as the ORM reads it: one statement where a write and a
 * read were two. Read again only when the write found no row (it never should).
 */
async function rowAsRead(em: EntityManager, id: string, written: Record<string, unknown> | undefined) {
  return written ? em.map(Transfer, written) : (await em.findOne(Transfer, { id }, { refresh: true }))!;
}

/**
 * A completed transfer its bank reversed (decisions §21): `failed`, failure_reason `reversed`,
 * reversed now. The caller holds the row lock and has moved the money; completed_at keeps when the
 * bank paid it out.
 */
export async function markReversed(em: EntityManager, id: string, providerCode: string | null): Promise<TransferRow> {
  await em.nativeUpdate(
    Transfer,
    { id, status: 'completed' },
    {
      status: 'failed',
      failure_reason: 'reversed',
      reversed_at: raw('now()'),
      updated_at: raw('now()'),
      ...(providerCode ? { provider_code: providerCode } : {}),
    },
  );
  return (await em.findOne(Transfer, { id }, { refresh: true }))!;
}

/** A held transfer's approval decided (decisions §20): the caller holds its row lock. */
export async function decideApprovalRow(
  em: EntityManager,
  id: string,
  outcome: 'approved' | 'rejected' | 'expired',
  decidedBy: ApprovalActor | null,
): Promise<TransferRow> {
  await em.nativeUpdate(
    Transfer,
    { id, approval_status: 'required' },
    {
      approval_status: outcome,
      approval_decided_by: decidedBy,
      approval_decided_at: raw('now()'),
      updated_at: raw('now()'),
    },
  );
  return (await em.findOne(Transfer, { id }, { refresh: true }))!;
}

export async function recordResolution(em: EntityManager, transferId: string, resolution: OperatorResolution) {
  await em.insert(TransferResolution, {
    id: randomUUID(),
    transfer_id: transferId,
    outcome: resolution.outcome,
    note: resolution.note,
    operator: resolution.operator,
  });
}

/**
 * What a reservation attempt finds of its transfer id, in one statement: the transfer, if an earlier
 * attempt made it, and whether the create path gave up on the id (markAbandoned).
 */
export async function reservationOf(
  em: EntityManager,
  transferId: string,
): Promise<{ existing: TransferRow | null; abandoned: boolean }> {
  const [found] = await em.execute<Record<string, unknown>[]>(
    `select t.*, exists (select 1 from abandoned_reservations a where a.transfer_id = k.id) as abandoned_reservation
       from (select ?::uuid as id) k left join transfers t on t.id = k.id`,
    [transferId],
  );
  const { abandoned_reservation: abandoned, ...row } = found!;
  return { existing: row.id ? em.map(Transfer, row) : null, abandoned: abandoned === true };
}

/** The create path gave up on this id: a late reservation attempt must reserve nothing. */
export async function markAbandoned(em: EntityManager, transferId: string, tenantId: string, reference: string) {
  await em
    .createQueryBuilder(AbandonedReservation)
    .insert({ transfer_id: transferId, tenant_id: tenantId, reference })
    .onConflict('transfer_id')
    .ignore()
    .execute();
}

// transfer_discrepancies: a bank answer that contradicts a transfer final in the books (decisions
// §12), kept for operators. Raw SQL: at most one open per transfer is the partial unique index's
// rule, and the insert leans on it.

export interface DiscrepancyRow {
  id: string;
  transfer_id: string;
  tenant_id: string;
  reference: string;
  ours: 'completed' | 'failed';
  bank: 'successful' | 'failed';
  bank_detail: Record<string, unknown>;
  received_at: Date;
  settled_at: Date | null;
  settled_by: string | null;
  settlement_note: string | null;
  journal_entry_id: string | null;
  idempotency_key: string | null;
}

/** The transfer's open discrepancy, made now; undefined when one is open already. */
export async function insertOpenDiscrepancy(
  em: EntityManager,
  transfer: TransferRow,
  bank: DiscrepancyRow['bank'],
  detail: Record<string, unknown>,
): Promise<DiscrepancyRow | undefined> {
  const [inserted] = await em.execute<DiscrepancyRow[]>(
    `insert into transfer_discrepancies (id, transfer_id, tenant_id, reference, ours, bank, bank_detail)
     values (?, ?, ?, ?, ?, ?, ?)
     on conflict (transfer_id) where settled_at is null do nothing returning *`,
    [randomUUID(), transfer.id, transfer.tenant_id, transfer.reference, transfer.status, bank, JSON.stringify(detail)],
  );
  return inserted;
}

/** `lock`: a row lock for the caller's transaction (settling it). */
export async function findOpenDiscrepancy(
  em: EntityManager,
  transferId: string,
  options: { lock?: boolean } = {},
): Promise<DiscrepancyRow | undefined> {
  const [open] = await em.execute<DiscrepancyRow[]>(
    `select * from transfer_discrepancies where transfer_id = ? and settled_at is null${options.lock ? ' for update' : ''}`,
    [transferId],
  );
  return open;
}

export async function latestSettledDiscrepancy(em: EntityManager, transferId: string) {
  const [settled] = await em.execute<DiscrepancyRow[]>(
    `select * from transfer_discrepancies where transfer_id = ? and settled_at is not null
      order by settled_at desc limit 1`,
    [transferId],
  );
  return settled;
}

/** Open discrepancies (or all, settled too), oldest first, with their transfers' amounts. */
export async function discrepanciesWithAmounts(em: EntityManager, options: { all: boolean }) {
  return em.execute<(DiscrepancyRow & { amount_minor: string; fee_minor: string })[]>(
    `select d.*, t.amount_minor, t.fee_minor from transfer_discrepancies d join transfers t on t.id = d.transfer_id
      ${options.all ? '' : 'where d.settled_at is null'}
      order by d.received_at, d.id`,
  );
}

export async function markDiscrepancySettled(
  em: EntityManager,
  id: string,
  settlement: { operator: string; note: string; entryId: string; idempotencyKey: string },
): Promise<DiscrepancyRow> {
  const [settled] = await em.execute<DiscrepancyRow[]>(
    `update transfer_discrepancies
        set settled_at = now(), settled_by = ?, settlement_note = ?, journal_entry_id = ?, idempotency_key = ?
      where id = ? returning *`,
    [settlement.operator, settlement.note, settlement.entryId, settlement.idempotencyKey, id],
  );
  return settled!;
}

/**
 * Late bank answers still open, and those received in [from, to), about one connector's transfers
 * (with `orUnattributed`, also those no connector is recorded on: the sandbox's, made before
 * connectors were): each connector's reconciliation report counts its own.
 */
export async function discrepancyCounts(
  em: EntityManager,
  scope: ConnectorScope,
  from: Date,
  to: Date,
): Promise<{ open: number; received_on_day: number }> {
  const [row] = await em.execute<{ open: string; received: string }[]>(
    `select count(*) filter (where d.settled_at is null) as open,
            count(*) filter (where d.received_at >= ? and d.received_at < ?) as received
       from transfer_discrepancies d
       join transfers t on t.id = d.transfer_id
      where t.connector = ? or (? and t.connector is null)`,
    [from, to, scope.connector, scope.orUnattributed],
  );
  return { open: Number(row?.open ?? 0), received_on_day: Number(row?.received ?? 0) };
}

// transfer_connector_conflicts: an answer about a transfer from a connector that does not hold it
// (decisions §17), kept with both connectors named until an operator closes it. Raw SQL for the
// same reason as the discrepancies: one open record per transfer, connector and word is the
// partial unique index's rule, and the insert leans on it.

export interface ConnectorConflictRow {
  id: string;
  transfer_id: string;
  tenant_id: string;
  reference: string;
  /** The connector that holds the transfer. */
  holder: string;
  /** The connector that answered about it. */
  connector: string;
  said: 'successful' | 'failed';
  /** The transfer's status in the books when the answer came. */
  transfer_status: string;
  detail: Record<string, unknown>;
  received_at: Date;
  closed_at: Date | null;
  closed_by: string | null;
  close_note: string | null;
}

/** The conflict, recorded now, or the open one this answer repeats (`created` false). */
export async function insertConnectorConflict(
  em: EntityManager,
  transfer: TransferRow,
  answer: { connector: string; said: ConnectorConflictRow['said']; detail: Record<string, unknown> },
): Promise<{ created: boolean; conflict: ConnectorConflictRow }> {
  const [inserted] = await em.execute<ConnectorConflictRow[]>(
    `insert into transfer_connector_conflicts
       (id, transfer_id, tenant_id, reference, holder, connector, said, transfer_status, detail)
     values (?, ?, ?, ?, ?, ?, ?, ?, ?)
     on conflict (transfer_id, connector, said) where closed_at is null do nothing returning *`,
    [
      randomUUID(),
      transfer.id,
      transfer.tenant_id,
      transfer.reference,
      connectorOf(transfer),
      answer.connector,
      answer.said,
      transfer.status,
      JSON.stringify(answer.detail),
    ],
  );
  if (inserted) return { created: true, conflict: inserted };
  const [open] = await em.execute<ConnectorConflictRow[]>(
    `select * from transfer_connector_conflicts
      where transfer_id = ? and connector = ? and said = ? and closed_at is null`,
    [transfer.id, answer.connector, answer.said],
  );
  return { created: false, conflict: open! };
}

/** Connector conflicts still open (or all, closed too), oldest first, with their transfers' amounts. */
export async function connectorConflicts(em: EntityManager, options: { all: boolean }) {
  return em.execute<(ConnectorConflictRow & { amount_minor: string; fee_minor: string })[]>(
    `select c.*, t.amount_minor, t.fee_minor from transfer_connector_conflicts c join transfers t on t.id = c.transfer_id
      ${options.all ? '' : 'where c.closed_at is null'}
      order by c.received_at, c.id`,
  );
}

/** Closes an open conflict with the operator's note; undefined when there is no such open one. */
export async function closeConnectorConflict(
  em: EntityManager,
  id: string,
  closing: { operator: string; note: string },
): Promise<ConnectorConflictRow | undefined> {
  const [closed] = await em.execute<ConnectorConflictRow[]>(
    `update transfer_connector_conflicts set closed_at = now(), closed_by = ?, close_note = ?
      where id = ? and closed_at is null returning *`,
    [closing.operator, closing.note, id],
  );
  return closed;
}

export async function findConnectorConflict(em: EntityManager, id: string): Promise<ConnectorConflictRow | undefined> {
  const [row] = await em.execute<ConnectorConflictRow[]>('select * from transfer_connector_conflicts where id = ?', [
    id,
  ]);
  return row;
}

/** New transfers held for approval until `expiresAt` (a held batch's items, decisions §20), as they then stand. */
export async function holdTransfers(
  em: EntityManager,
  made: readonly TransferRow[],
  expiresAt: Date,
): Promise<TransferRow[]> {
  if (made.length === 0) return [];
  const ids = made.map((row) => row.id);
  await em.nativeUpdate(
    Transfer,
    { id: { $in: ids }, approval_status: null },
    { approval_status: 'required', approval_expires_at: expiresAt },
  );
  return em.find(Transfer, { id: { $in: ids } }, { refresh: true, orderBy: { reference: 'asc' } });
}

/**
 * Held transfers given a decision (a held batch's items take their batch's, decisions §20): its
 * approval fields, and once rejected or expired, failed with `reason`. The caller holds their row
 * locks and has moved their money.
 */
export async function decideHeldTransfers(
  em: EntityManager,
  transferIds: readonly string[],
  approval: {
    approval_status?: ApprovalStatus | null;
    approval_decided_by?: ApprovalActor | null;
    approval_decided_at?: Date | null;
  },
  failed: { reason: string } | null,
): Promise<TransferRow[]> {
  if (transferIds.length === 0) return [];
  await em.nativeUpdate(
    Transfer,
    { id: { $in: [...transferIds] }, approval_status: 'required' },
    {
      approval_status: approval.approval_status,
      approval_decided_by: approval.approval_decided_by ?? null,
      approval_decided_at: approval.approval_decided_at ?? null,
      updated_at: raw('now()'),
      ...(failed ? { status: 'failed' as const, failure_reason: failed.reason, completed_at: raw('now()') } : {}),
    },
  );
  return em.find(Transfer, { id: { $in: [...transferIds] } }, { refresh: true, orderBy: { id: 'asc' } });
}
