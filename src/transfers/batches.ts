// Bulk transfers (decisions §14): the API's side. A request is validated whole (every item, every
// bank code, every reference, before anything is written), then written with its items in one
// transaction, and handed to its batch workflow (workflows/transfers/transfer-batch.ts), which decides and
// submits the items. An atomic batch reserves every amount and fee in that transaction, in one
// journal entry, or is refused (422) with nothing written. A repeat of a batch_reference answers
// the batch it made (200), or 409 when the body differs; it also starts the workflow again if the
// first request died between its commit and the start. A tenant has at most MAX_OPEN_BATCHES open
// batches per mode (decisions §18), and at most BULK_ITEMS_PER_MINUTE items admitted per mode over
// the last minute (the gateway's own bound, beside §18's: see admits): the next is 429, decided in
// that transaction under a lock of the tenant's batches, so two requests racing cannot both take the
// last place.
import { randomUUID } from 'node:crypto';
import type { EntityManager, MikroORM } from '@mikro-orm/postgresql';
import { type Client, WorkflowExecutionAlreadyStartedError } from '@temporalio/client';
import { laneTaskQueues } from '../config.ts';
import { ApiError } from '../http/errors.ts';
import { isUuid } from '../http/ids.ts';
import { pageOffset } from '../http/pagination.ts';
import type { KeyMode } from '../connectors/types.ts';
import type { Banks } from '../connectors/registry.ts';
import { InsufficientFundsError, postMovement } from '../ledger/ledger.ts';
import { transferBatchReserve } from '../ledger/movements.ts';
import { lockFor } from '../db/locks.ts';
import { lockTenant } from '../tenants/tenants.ts';
import {
  TRANSFER_BATCH_WORKFLOW_TYPE,
  type TransferBatchInput,
  transferBatchWorkflowId,
} from '../../workflows/transfers/definitions.ts';
import { MAX_OPEN_BATCHES, batchItemReference, transferFee, withinDailyLimit } from './domain.ts';
import { batchFingerprint, transferFingerprint } from './fingerprints.ts';
import {
  type NewBatchItem,
  type TransferBatchRow,
  batchCounts,
  batchItemsPage,
  findBatch,
  findBatchByReference,
  listBatches,
  insertBatch,
  itemsAdmittedWithin,
  openBatchCount,
} from './batch-store.ts';
import { savedPayees, savedRecipients } from '../recipients/service.ts';
import {
  type PayeeAccount,
  RECIPIENT_NOT_ALLOWED,
  type TransferPolicy,
  holdReasons,
  isNewPayee,
  isSavedPayee,
  newPayees,
  readTransferPolicy,
} from './approvals.ts';
import {
  type CreateBulkTransferBody,
  type CreatedBatchResponse,
  NOT_A_SAVED_RECIPIENT,
  NOT_A_SUPPORTED_BANK,
  recipientBankGone,
} from './schemas.ts';
import { findBank } from '../banks/resolve.ts';
import type { Bank } from '../connectors/capabilities.ts';
import { usedToday } from './store.ts';
import { batchDetailView, batchItemView, batchView } from './views.ts';

/** An hour, as the policy's approval_expires_in_hours counts them. */
const HOUR_MS = 3_600_000;

const payeeOf = (item: NewBatchItem): PayeeAccount => ({
  bankCode: item.recipientBankCode,
  account: item.recipientAccount,
});

/**
 * Whether the transfer policy holds a batch whole (decisions §20): it would hold any of the items
 * that go on (those it did not refuse), or their total is above above_minor. Nothing to pay, nothing held.
 */
export function holdsBatch(
  policy: TransferPolicy,
  items: readonly { amountMinor: number; newRecipient: boolean }[],
): boolean {
  if (items.length === 0) return false;
  if (items.some((item) => holdReasons(policy, item).length > 0)) return true;
  const total = items.reduce((sum, item) => sum + item.amountMinor, 0);
  return holdReasons(policy, { amountMinor: total, newRecipient: false }).includes('above_minor');
}

/** A reference's longest form (decisions §4). */
const MAX_REFERENCE_LENGTH = 64;
/** When a tenant at its open batches' bound is told to come back: batches take seconds to minutes. */
const OPEN_BATCHES_RETRY_AFTER_SECONDS = 30;

/**
 * The window batch items are counted over: BULK_ITEMS_PER_MINUTE is held as a sixth of it in any 10
 * seconds, so that a minute's items cannot all arrive at once (a burst of batches that each end at
 * once is what takes the workers from everyone else).
 */
const ADMISSION_WINDOW_SECONDS = 10;

function tooManyItems(limit: number, admitted: { items: number; oldestLeavesInSeconds: number }): ApiError {
  return new ApiError(
    'rate_limited',
    `${admitted.items} items of this tenant's batches were accepted in the last ${ADMISSION_WINDOW_SECONDS} seconds, and this batch would take it past ${limit}; send it once earlier ones have aged out`,
    { limit, window_seconds: ADMISSION_WINDOW_SECONDS, admitted: admitted.items },
    { headers: { 'retry-after': String(admitted.oldestLeavesInSeconds) } },
  );
}

function tooManyOpen(open: number): ApiError {
  return new ApiError(
    'rate_limited',
    `${open} batches of this tenant are still processing, the most it may have open at once; send this one once one has completed`,
    { limit: MAX_OPEN_BATCHES, open },
    { headers: { 'retry-after': String(OPEN_BATCHES_RETRY_AFTER_SECONDS) } },
  );
}

/**
 * Starts a recorded batch's workflow, once for good: a run that is running or ran keeps the id
 * (a repeat is no error). The API starts it after recording the batch; the worker's sweep
 * (./batch-sweep.ts) starts one whose API died in between. `taskQueue` is
 * TEMPORAL_TASK_QUEUE: the batch runs on its batches lane (decisions §18), and its items' runs,
 * started as its children, there too.
 */
export async function startBatchWorkflow(
  deps: { client: Client; taskQueue: string },
  batch: Pick<
    TransferBatchRow,
    'id' | 'tenant_id' | 'batch_reference' | 'total_count' | 'created_by_key_id' | 'approval_expires_at'
  >,
): Promise<'started' | 'already'> {
  // Held (decisions §20): the run's timer ends at the row's approval_expires_at, to the millisecond.
  const expiresAt = batch.approval_expires_at ? batch.approval_expires_at.getTime() : null;
  try {
    await deps.client.workflow.start(TRANSFER_BATCH_WORKFLOW_TYPE, {
      workflowId: transferBatchWorkflowId(batch.tenant_id, batch.batch_reference),
      taskQueue: laneTaskQueues(deps.taskQueue).batches,
      args: [
        {
          batchId: batch.id,
          tenantId: batch.tenant_id,
          batchReference: batch.batch_reference,
          totalCount: batch.total_count,
          ...(batch.created_by_key_id ? { createdByKeyId: batch.created_by_key_id } : {}),
          ...(expiresAt !== null ? { approval: { expiresAt } } : {}),
        } satisfies TransferBatchInput,
      ],
      workflowIdReusePolicy: 'REJECT_DUPLICATE',
      memo: { tenantId: batch.tenant_id, batchReference: batch.batch_reference },
    });
    return 'started';
  } catch (error) {
    if (error instanceof WorkflowExecutionAlreadyStartedError) return 'already';
    throw error;
  }
}

export interface TransferBatchServiceDeps {
  orm: MikroORM;
  client: Client;
  taskQueue: string;
  banks: (mode: KeyMode) => Banks;
  /** BULK_ITEMS_PER_MINUTE: items a tenant may have admitted per mode over the last minute. */
  itemsPerMinute: number;
  /**
   * How long the policy's approval_expires_in_hours' hour lasts, in ms (an hour). Only tests
   * shorten it, to see a held batch expire in seconds.
   */
  approvalHourMs?: number;
}

export class TransferBatchService {
  private readonly deps: TransferBatchServiceDeps;

  constructor(deps: TransferBatchServiceDeps) {
    this.deps = deps;
  }

  /**
   * Refuses a batch that would take the tenant's items admitted over the last 10 seconds past a
   * sixth of BULK_ITEMS_PER_MINUTE (429 rate_limited): the open batches' bound alone lets a tenant
   * whose batches end at once (an empty wallet refuses every item) keep the workers busy without end.
   */
  private async admits(em: EntityManager, tenantId: string, mode: KeyMode, items: number): Promise<void> {
    const limit = Math.floor((this.deps.itemsPerMinute * ADMISSION_WINDOW_SECONDS) / 60);
    const admitted = await itemsAdmittedWithin(em, tenantId, mode, ADMISSION_WINDOW_SECONDS);
    if (admitted.items + items > limit) throw tooManyItems(limit, admitted);
  }

  /** `createdByKeyId`: the key that sends it (request.auth.keyId), which may not approve it (decisions §20). */
  async create(
    tenantId: string,
    body: CreateBulkTransferBody,
    mode: KeyMode,
    createdByKeyId: string | null = null,
  ): Promise<{ status: 200 | 202; body: CreatedBatchResponse }> {
    const atomic = body.atomic ?? false;
    const metadata = body.metadata ?? {};
    const fingerprint = () =>
      batchFingerprint({
        atomic,
        metadata,
        transfers: body.transfers.map((item) => ({ ...item, metadata: item.metadata ?? {} })),
      });
    const existing = await findBatchByReference(this.deps.orm.em.fork(), tenantId, body.batch_reference);
    if (existing) return this.repeat(existing, fingerprint());
    // Refused before its fingerprint and items are made (milliseconds of hashing for 1,000 items),
    // so a flood of full batches costs two reads each; the count that decides is the one under the
    // lock below.
    const open = await openBatchCount(this.deps.orm.em.fork(), tenantId, mode);
    if (open >= MAX_OPEN_BATCHES) throw tooManyOpen(open);
    await this.admits(this.deps.orm.em.fork(), tenantId, mode, body.transfers.length);
    const requestHash = fingerprint();

    const items = await this.prepareItems(tenantId, body, mode);
    const totalAmountMinor = items.reduce((sum, item) => sum + item.amountMinor, 0);
    const totalFeeMinor = items.reduce((sum, item) => sum + item.feeMinor, 0);
    // The transfer policy (decisions §20): items to accounts that are not saved refused now, and the
    // batch held whole when it would hold any item that goes on, or their total.
    const policy = await readTransferPolicy(this.deps.orm.em.fork(), tenantId);
    await this.refuseUnsaved(tenantId, policy, items);
    const paid = items.filter((item) => item.refusal === undefined);
    const reserveAmountMinor = paid.reduce((sum, item) => sum + item.amountMinor, 0);
    const reserveFeeMinor = paid.reduce((sum, item) => sum + item.feeMinor, 0);
    const held = await this.holds(tenantId, policy, paid);
    const approvalExpiresAt = held
      ? new Date(Date.now() + policy.approval_expires_in_hours * (this.deps.approvalHourMs ?? HOUR_MS))
      : null;
    const batchId = randomUUID();
    const created = await this.deps.orm.em.fork().transactional(async (tx) => {
      // The tenant's batch creates of this mode one at a time: the count and the insert cannot race.
      await lockFor(tx, 'transfer-batches', tenantId);
      // A request with the same batch_reference committed first: answered as a repeat (200 or 409), not counted.
      if (await findBatchByReference(tx, tenantId, body.batch_reference)) return false;
      const open = await openBatchCount(tx, tenantId, mode);
      if (open >= MAX_OPEN_BATCHES) throw tooManyOpen(open);
      await this.admits(tx, tenantId, mode, body.transfers.length);
      if (atomic) {
        // Under the lock single creates reserve under: the limit and the balance hold across both.
        const tenant = await lockTenant(tx, tenantId);
        if (!tenant) throw new ApiError('unauthorized', 'unknown tenant');
        const limit = tenant.dailyTransferLimitMinor;
        const used = await usedToday(tx, tenantId);
        if (!withinDailyLimit({ limitMinor: limit, usedMinor: used, amountMinor: reserveAmountMinor })) {
          throw new ApiError(
            'limit_exceeded',
            `the batch's ${reserveAmountMinor} kobo would exceed the daily transfer limit of ${limit} kobo: ${used} already used today`,
            { limit, used, total_amount_minor: reserveAmountMinor, total_fee_minor: reserveFeeMinor },
          );
        }
      }
      const inserted = await insertBatch(
        tx,
        {
          id: batchId,
          tenantId,
          batchReference: body.batch_reference,
          requestHash,
          atomic,
          mode,
          totalAmountMinor,
          totalFeeMinor,
          metadata,
          createdByKeyId,
          approvalExpiresAt,
        },
        items,
      );
      if (!inserted) return false;
      // An atomic batch reserves what its items that go on will pay (all of them, but for an item
      // the policy refused now); one whose every item was refused reserves nothing.
      if (atomic && paid.length > 0) {
        const total = reserveAmountMinor + reserveFeeMinor;
        try {
          await postMovement(
            tx,
            tenantId,
            transferBatchReserve({ batchId, batchReference: body.batch_reference, totalMinor: total }),
          );
        } catch (error) {
          if (error instanceof InsufficientFundsError) {
            throw new ApiError(
              'insufficient_balance',
              `wallet balance ${error.availableMinor} is below the ${total} kobo the batch requires (amounts plus fees)`,
              {
                required: total,
                available: error.availableMinor,
                total_amount_minor: reserveAmountMinor,
                total_fee_minor: reserveFeeMinor,
              },
              { cause: error },
            );
          }
          throw error;
        }
      }
      return true;
    });
    const em = this.deps.orm.em.fork();
    if (!created) {
      // A request with the same batch_reference committed first.
      const holder = await findBatchByReference(em, tenantId, body.batch_reference);
      if (!holder) throw new ApiError('unavailable', 'the batch could not be created right now; retry');
      return this.repeat(holder, requestHash);
    }
    const batch = (await findBatch(em, batchId))!;
    await this.startWorkflow(batch);
    return { status: 202, body: { success: true, data: batchView(batch) } };
  }

  /**
   * Each item as it will be made: its reference (given or derived), fee, account and bank (a saved
   * recipient's, with the name it was saved under, for an item naming `recipient_id`: all of the
   * batch's read in one query); 400 on any that cannot be.
   */
  private async prepareItems(tenantId: string, body: CreateBulkTransferBody, mode: KeyMode): Promise<NewBatchItem[]> {
    const issues: { path: string; message: string }[] = [];
    const ids = body.transfers.flatMap((item) => (item.recipient_id === undefined ? [] : [item.recipient_id]));
    const saved = await savedRecipients(this.deps.orm.em.fork(), tenantId, ids);
    // Each item's account and bank code, as given or as its saved recipient has them.
    const payees = body.transfers.map((item) => {
      if (item.recipient_id === undefined) {
        // The schema lets neither through without the other (namesOnePayee).
        return { account: item.recipient_account!, bankCode: item.recipient_bank_code!, savedName: null };
      }
      const recipient = saved.get(item.recipient_id);
      return recipient
        ? { account: recipient.accountNumber, bankCode: recipient.bankCode, savedName: recipient.accountName }
        : undefined;
    });
    const banks = new Map<string, Bank | undefined>();
    for (const code of new Set(payees.flatMap((payee) => (payee ? [payee.bankCode] : [])))) {
      banks.set(code, await findBank(this.deps.banks(mode), code));
    }
    const seen = new Map<string, number>();
    const items = body.transfers.map((item, index): NewBatchItem => {
      const payee = payees[index];
      const reference = item.reference ?? batchItemReference(body.batch_reference, index);
      const first = seen.get(reference);
      if (reference.length > MAX_REFERENCE_LENGTH) {
        // A reference is at most 64 characters (decisions §4): one derived from a long
        // batch_reference and a large index would be a transfer no single create could name.
        issues.push({
          path: `transfers[${index}].reference`,
          message: `is required here: ${reference} (the batch_reference and the index) is longer than ${MAX_REFERENCE_LENGTH} characters`,
        });
      } else if (first !== undefined) {
        issues.push({
          path: `transfers[${index}].reference`,
          message: `${reference} is also the reference of transfers[${first}]`,
        });
      } else {
        seen.set(reference, index);
      }
      const bank = payee ? banks.get(payee.bankCode) : undefined;
      if (!payee) {
        issues.push({ path: `transfers[${index}].recipient_id`, message: NOT_A_SAVED_RECIPIENT });
      } else if (!bank) {
        issues.push(
          item.recipient_id === undefined
            ? { path: `transfers[${index}].recipient_bank_code`, message: NOT_A_SUPPORTED_BANK }
            : { path: `transfers[${index}].recipient_id`, message: recipientBankGone(payee.bankCode) },
        );
      }
      const metadata = item.metadata ?? {};
      return {
        index,
        reference,
        amountMinor: item.amount_minor,
        feeMinor: transferFee(item.amount_minor),
        recipientAccount: payee?.account ?? '',
        recipientBankCode: bank?.code ?? payee?.bankCode ?? '',
        recipientBank: bank?.name ?? '',
        savedName: payee?.savedName ?? null,
        narration: item.narration,
        metadata,
        // The item as given: one naming a saved recipient is fingerprinted by its recipient_id.
        requestHash: transferFingerprint({ ...item, metadata }),
      };
    });
    if (issues.length > 0) throw ApiError.validation(issues.slice(0, 100));
    return items;
  }

  /**
   * saved_recipients_only (decisions §20): an item to an account that is not one of the tenant's
   * saved recipients is refused (recipient_not_allowed), as other items are refused, the others
   * going on. An item naming recipient_id is a saved recipient's.
   */
  private async refuseUnsaved(tenantId: string, policy: TransferPolicy, items: NewBatchItem[]): Promise<void> {
    if (!policy.saved_recipients_only) return;
    const named = items.filter((item) => item.savedName === null);
    const saved = await savedPayees(this.deps.orm.em.fork(), tenantId, named.map(payeeOf));
    for (const item of named) {
      if (!isSavedPayee(saved, payeeOf(item))) {
        item.refusal = { code: 'recipient_not_allowed', message: RECIPIENT_NOT_ALLOWED };
      }
    }
  }

  /** Whether the policy holds the batch (holdsBatch), its payees' news read in one query when it asks. */
  private async holds(tenantId: string, policy: TransferPolicy, paid: readonly NewBatchItem[]): Promise<boolean> {
    const news = policy.approval.new_recipient
      ? await newPayees(this.deps.orm.em.fork(), tenantId, paid.map(payeeOf))
      : new Set<string>();
    return holdsBatch(
      policy,
      paid.map((item) => ({ amountMinor: item.amountMinor, newRecipient: isNewPayee(news, payeeOf(item)) })),
    );
  }

  private async repeat(
    existing: TransferBatchRow,
    requestHash: string,
  ): Promise<{ status: 200; body: CreatedBatchResponse }> {
    if (existing.request_hash !== requestHash) {
      throw new ApiError(
        'duplicate_reference',
        `batch_reference ${existing.batch_reference} was already used for a different batch`,
        { batch_id: existing.id },
      );
    }
    await this.startWorkflow(existing);
    return { status: 200, body: { success: true, data: batchView(existing) } };
  }

  /** Starts the batch's workflow unless it runs or ran: the batch is written, so it must get one. */
  private async startWorkflow(batch: TransferBatchRow): Promise<void> {
    if (batch.status === 'completed') return;
    try {
      await startBatchWorkflow(this.deps, batch);
    } catch (error) {
      throw new ApiError(
        'unavailable',
        `batch ${batch.batch_reference} is recorded but could not be started right now; repeat the request to start it`,
        null,
        { cause: error },
      );
    }
  }

  async get(tenantId: string, id: string) {
    const em = this.deps.orm.em.fork();
    const batch = isUuid(id) ? await findBatch(em, id, tenantId) : null;
    if (!batch) throw new ApiError('not_found', `no transfer batch ${id}`);
    return batchDetailView(batch, await batchCounts(em, batch.id));
  }

  async list(
    tenantId: string,
    query: { page: number; limit: number; approval?: 'required' | 'approved' | 'rejected' | 'expired' },
  ) {
    const window = { limit: query.limit, offset: pageOffset(query.page, query.limit) };
    const { rows, total } = await listBatches(this.deps.orm.em.fork(), tenantId, { approval: query.approval }, window);
    return {
      items: rows.map(batchView),
      pagination: { page: query.page, limit: query.limit, total, totalPages: Math.ceil(total / query.limit) },
    };
  }

  async listItems(tenantId: string, id: string, query: { page: number; limit: number }) {
    // A window too deep is refused whatever the batch (decisions §16).
    const offset = pageOffset(query.page, query.limit);
    const em = this.deps.orm.em.fork();
    const batch = isUuid(id) ? await findBatch(em, id, tenantId) : null;
    if (!batch) throw new ApiError('not_found', `no transfer batch ${id}`);
    const rows = await batchItemsPage(em, batch.id, { limit: query.limit, offset });
    const total = batch.total_count;
    return {
      items: rows.map(batchItemView),
      pagination: { page: query.page, limit: query.limit, total, totalPages: Math.ceil(total / query.limit) },
    };
  }
}
