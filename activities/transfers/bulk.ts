// The transfer batch workflow's side effects (decisions §14), each idempotent on the batch and its
// items' indexes, so a retry after a crash decides nothing twice:
// - enquireBatchNames: the queued items' name enquiries, many at once, answers kept on the item
//   (an unknown account refuses it; a bank down is retried for the items still unanswered); a
//   batch that is not atomic first screens each item in index order against the wallet and the
//   daily limit, and refuses the ones they can no longer cover without asking their names
//   (decisions §18: an empty wallet's batch of 1,000 makes no enquiry at all);
// - reserveBatchItems: a chunk of items decided in ONE transaction under the tenant's lock, as
//   single creates one after the other would be (balance, daily limit, references), with their
//   transfer rows, reservations (one statement for all of them, src/ledger) and transfer.created
//   events; an atomic batch's items draw on the batch's reservation instead;
// - completeBatch: once every item's transfer has ended, the batch completed and
//   transfer_batch.completed recorded, once;
// - decideBatchApproval and settleHeldBatchItems: a held batch's decision (decisions §20) on its
//   row, once, then on its items' transfers, a chunk per transaction (their money back unless
//   approved), each item once.
//   Its items' transfers are made held (approval required until the batch's expiry), with
//   transfer.approval_required beside transfer.created.
import { heartbeat, log } from '@temporalio/activity';
import { ApplicationFailure } from '@temporalio/common';
import { IsolationLevel } from '@mikro-orm/core';
import type { EntityManager, MikroORM } from '@mikro-orm/postgresql';
import { randomUUID } from 'node:crypto';
import { recordEvent, recordEvents } from '../../src/events/events.ts';
import {
  lockTenantAccountsIn,
  planEntriesOnLockedAccounts,
  postMovement,
  postPlannedEntries,
  walletBalance,
} from '../../src/ledger/ledger.ts';
import { transferBatchItemRelease, transferReserve, transferReverse } from '../../src/ledger/movements.ts';
import { NAME_ENQUIRY_SLOTS } from '../../src/connectors/name-enquiry-slots.ts';
import type { Providers } from '../../src/connectors/registry.ts';
import {
  type BatchItemRow,
  type TransferBatchRow,
  acceptItems,
  acceptedItems,
  acceptedWithTransfers,
  batchCounts,
  decideBatchRow,
  findBatch,
  keptItemWords,
  lockBatch,
  lockHeldItemTransfers,
  itemsAwaitingEnquiry,
  lockQueuedItems,
  markBatchCompleted,
  markItemsAwaited,
  recordEnquiries,
  refuseItems,
  undecidedItems,
} from '../../src/transfers/batch-store.ts';
import { type ItemDecision, decideItems, screenItem } from '../../src/transfers/domain.ts';
import {
  decideHeldTransfers,
  holdTransfers,
  insertTransfers,
  markProcessing,
  referencesTaken,
  usedToday,
} from '../../src/transfers/store.ts';
import { batchDetailView, itemView } from '../../src/transfers/views.ts';
import { dailyTransferLimitOf, lockTenant } from '../../src/tenants/tenants.ts';
import { recordAuditEntry } from '../../src/audit/log.ts';
import type { TransferRow } from '../../src/transfers/store.ts';
import {
  type BankOutcome,
  type BatchItemStart,
  type BatchItemSubmission,
  type ItemFinish,
  type TransferRequest,
  awaitGroupOf,
  transferBatchChunkWorkflowId,
} from '../../workflows/transfers/definitions.ts';
import { createTransferActivities, finishTransfersTogether } from './transfers.ts';
import type { TransferBatchActivities } from '../../workflows/transfers/definitions.ts';

export interface TransferBatchActivityDeps {
  orm: MikroORM;
  providers: Providers;
}

/** Name enquiries in flight at once for one batch: more would only wait for their connector's slots. */
const ENQUIRY_CONCURRENCY = NAME_ENQUIRY_SLOTS;
/** Submissions in flight at once, per chunk of a batch. */
const SUBMIT_CONCURRENCY = 16;

/** `work` for each item, at most `lanes` at once. */
async function eachAtOnce<T>(items: readonly T[], lanes: number, work: (item: T) => Promise<void>): Promise<void> {
  let next = 0;
  const lane = async () => {
    while (next < items.length) await work(items[next++]!);
  };
  await Promise.all(Array.from({ length: Math.min(lanes, items.length) }, lane));
}

interface Refusal {
  index: number;
  code: string;
  message: string;
}

/** An item refused because the wallet or the day's limit cannot take it, said as a single create says it. */
function balanceRefusal(item: BatchItemRow, decision: Exclude<ItemDecision, 'accepted'>, limitMinor: number): Refusal {
  return {
    index: item.index,
    code: decision,
    message:
      decision === 'limit_exceeded'
        ? `daily transfer limit of ${limitMinor} kobo would be exceeded`
        : `wallet balance is below the ${item.amount_minor + item.fee_minor} kobo required (amount plus fee)`,
  };
}

/**
 * What a chunk of a batch that is not atomic is screened against, read in one snapshot (so a chunk
 * before it being reserved meanwhile is either all in the wallet or all in its items, never
 * counted twice): the wallet, today's usage and the limit, and the batch's undecided items up to
 * the chunk's end.
 */
async function screenOf(orm: MikroORM, batch: TransferBatchRow, to: number) {
  return orm.em.fork().transactional(
    async (tx) => {
      const limitMinor = await dailyTransferLimitOf(tx, batch.tenant_id);
      if (limitMinor === undefined)
        throw ApplicationFailure.create({
          type: 'unknown_tenant',
          message: `no tenant ${batch.tenant_id}`,
          nonRetryable: true,
        });
      const { availableMinor } = await walletBalance(tx, batch.tenant_id);
      const usedMinor = await usedToday(tx, batch.tenant_id);
      const undecided = await undecidedItems(tx, batch.id, { from: 0, to });
      return { start: { availableMinor, usedMinor, limitMinor }, undecided };
    },
    { isolationLevel: IsolationLevel.REPEATABLE_READ, readOnly: true },
  );
}

/** The request an item's transfer is made of (metadata stays on its row: the run does not need it). */
function requestOf(
  batch: Pick<TransferBatchRow, 'tenant_id' | 'mode' | 'created_by_key_id'>,
  item: BatchItemRow,
): TransferRequest {
  return {
    tenantId: batch.tenant_id,
    reference: item.reference,
    requestHash: item.request_hash,
    amountMinor: item.amount_minor,
    feeMinor: item.fee_minor,
    currency: 'NGN',
    recipientAccount: item.recipient_account,
    recipientBankCode: item.recipient_bank_code,
    recipientBankName: item.recipient_bank,
    narration: item.narration,
    metadata: {},
    mode: batch.mode,
    // The key that made the batch made its items (decisions §19, §20).
    ...(batch.created_by_key_id ? { createdByKeyId: batch.created_by_key_id } : {}),
    // A saved recipient's item keeps its saved name should it pass to another connector (§13, §20).
    ...(typeof item.saved_name === 'string' ? { savedName: item.saved_name } : {}),
  };
}

/** The events of items' transfers, one insert for a chunk's. */
async function itemEvents(
  tx: EntityManager,
  tenantId: string,
  rows: readonly TransferRow[],
  types: readonly (
    'transfer.created' | 'transfer.approval_required' | 'transfer.approved' | 'transfer.rejected' | 'transfer.failed'
  )[],
) {
  await recordEvents(
    tx,
    tenantId,
    rows.flatMap((row) =>
      types.map((type) => ({
        type,
        sourceKey: `transfer:${row.id}:${type}`,
        payload: { ...itemView(row, { withCompletedAt: true }) },
      })),
    ),
  );
}

function startOf(batch: TransferBatchRow, item: BatchItemRow): BatchItemStart {
  return {
    index: item.index,
    request: requestOf(batch, item),
    reserved: {
      transferId: item.transfer_id!,
      recipientName: item.recipient_name!,
      connector: item.connector!,
      nameEnquirySessionId: item.name_enquiry_session_id!,
    },
  };
}

async function batchOf(em: EntityManager, batchId: string): Promise<TransferBatchRow> {
  const batch = await findBatch(em, batchId);
  if (!batch)
    throw ApplicationFailure.create({ type: 'unknown_batch', message: `no batch ${batchId}`, nonRetryable: true });
  return batch;
}

/**
 * Items refused, in the caller's transaction: an atomic batch's refused items get their share of
 * its reservation back to the wallet, in the same transaction.
 */
async function refuse(tx: EntityManager, batch: TransferBatchRow, items: readonly BatchItemRow[], refusals: Refusal[]) {
  const refused = new Set(await refuseItems(tx, batch.id, refusals));
  if (!batch.atomic) return;
  const codeOf = new Map(refusals.map((refusal) => [refusal.index, refusal.code]));
  for (const item of items) {
    if (!refused.has(item.index)) continue;
    await postMovement(
      tx,
      batch.tenant_id,
      transferBatchItemRelease({
        batchId: batch.id,
        index: item.index,
        reference: item.reference,
        amountMinor: item.amount_minor,
        feeMinor: item.fee_minor,
        reason: codeOf.get(item.index)!,
      }),
    );
  }
}

export function createTransferBatchActivities({ orm, providers }: TransferBatchActivityDeps): TransferBatchActivities {
  const transfers = createTransferActivities({ orm, providers });

  return {
    /**
     * The recipient name of the queued items of [from, to); an item whose account the bank does
     * not know is refused. A batch that is not atomic decides its items in index order, as their
     * reservation will (decisions §18): an item the wallet or the day's limit can no longer cover,
     * after the items ahead of it, is refused without a name enquiry; one that could be covered
     * only if an enquiry still in flight ahead of it finds an unknown account waits for that
     * answer. A fault (a bank down, no enquiry slot in time) stops the asking: what answered is
     * kept, and the retry asks only for the rest.
     */
    async enquireBatchNames(input: {
      batchId: string;
      from: number;
      to: number;
    }): Promise<{ answered: number; refused: number }> {
      const em = orm.em.fork();
      const batch = await batchOf(em, input.batchId);
      // An atomic batch reserved every item when it was accepted: each is asked, as before.
      const screen = batch.atomic ? undefined : await screenOf(orm, batch, input.to);
      const items = screen ? screen.undecided : await itemsAwaitingEnquiry(em, batch.id, input);
      const answers: Parameters<typeof recordEnquiries>[2][number][] = [];
      const refusals: Refusal[] = [];
      // The undecided items ahead of the one being screened, in index order (refused ones leave it).
      const ahead: { amountMinor: number; feeMinor: number; asking: boolean }[] = [];
      const inFlight = new Set<Promise<void>>();
      let fault: Error | undefined;
      const ask = async (item: BatchItemRow, place: (typeof ahead)[number]) => {
        try {
          // A saved recipient's item (decisions §20): its bank's name must still be the saved one,
          // which it is then paid under; another name refuses it as invalid_account, naming both.
          const answer = await transfers.nameEnquiry({
            bankCode: item.recipient_bank_code,
            accountNumber: item.recipient_account,
            mode: batch.mode,
            ...(typeof item.saved_name === 'string' ? { savedName: item.saved_name } : {}),
          });
          answers.push({ index: item.index, recipientName: answer.accountName, ...answer });
          place.asking = false;
        } catch (error) {
          const failure = error instanceof ApplicationFailure ? error : undefined;
          if (failure?.type === 'invalid_account' || failure?.type === 'name_enquiry_failed') {
            refusals.push({ index: item.index, code: 'invalid_account', message: failure.message });
            ahead.splice(ahead.indexOf(place), 1);
          } else if (failure?.nonRetryable && failure.type) {
            // Final for this item (no connector of its mode serves transfers): refused with that code.
            refusals.push({ index: item.index, code: failure.type, message: failure.message });
            ahead.splice(ahead.indexOf(place), 1);
          } else {
            fault ??= error instanceof Error ? error : new Error(String(error));
          }
        }
        heartbeat();
      };
      dispatch: for (const item of items) {
        const amounts = { amountMinor: item.amount_minor, feeMinor: item.fee_minor };
        if (item.index < input.from || item.recipient_name !== null) {
          ahead.push({ ...amounts, asking: false });
          continue;
        }
        for (;;) {
          if (fault) break dispatch;
          const verdict = screen ? screenItem(ahead, amounts, screen.start) : 'enquire';
          if (verdict === 'enquire') break;
          if (verdict === 'wait') {
            await Promise.race(inFlight);
            continue;
          }
          refusals.push(balanceRefusal(item, verdict, screen!.start.limitMinor));
          continue dispatch;
        }
        while (inFlight.size >= ENQUIRY_CONCURRENCY) await Promise.race(inFlight);
        if (fault) break;
        const place = { ...amounts, asking: true };
        ahead.push(place);
        const asked: Promise<void> = ask(item, place).finally(() => inFlight.delete(asked));
        inFlight.add(asked);
      }
      await Promise.all(inFlight);
      await em.transactional(async (tx) => {
        await recordEnquiries(tx, batch.id, answers);
        await refuse(tx, batch, items, refusals);
      });
      // What answered is kept; the retry asks only for the rest.
      if (fault) throw fault;
      return { answered: answers.length, refused: refusals.length };
    },

    /**
     * Decides the queued items of [from, to) in one transaction, under the tenant's lock (the one a
     * single create reserves under, so the daily limit and the balance hold across both): refused
     * with a code, or made transfers with their money reserved. Answers every accepted item of the
     * range, those decided by an earlier attempt included.
     */
    async reserveBatchItems(input: {
      batchId: string;
      from: number;
      to: number;
    }): Promise<{ accepted: BatchItemStart[]; refused: number }> {
      return orm.em.fork().transactional(async (tx) => {
        const batch = await batchOf(tx, input.batchId);
        const tenant = await lockTenant(tx, batch.tenant_id);
        if (!tenant)
          throw ApplicationFailure.create({
            type: 'unknown_tenant',
            message: `no tenant ${batch.tenant_id}`,
            nonRetryable: true,
          });
        const queued = await lockQueuedItems(tx, batch.id, input);
        const enquired = queued.filter((item) => item.recipient_name !== null);
        if (enquired.length < queued.length) {
          throw new Error(
            `batch ${batch.id}: ${queued.length - enquired.length} items of ${input.from}..${input.to} have no name enquiry yet`,
          );
        }
        const refusals: Refusal[] = [];
        const taken = await referencesTaken(
          tx,
          batch.tenant_id,
          enquired.map((item) => item.reference),
        );
        const candidates = enquired.filter((item) => {
          if (!taken.has(item.reference)) return true;
          refusals.push({
            index: item.index,
            code: 'duplicate_reference',
            message: `reference ${item.reference} was already used for another transfer`,
          });
          return false;
        });

        let accepted = candidates;
        if (!batch.atomic && candidates.length > 0) {
          const accounts = await lockTenantAccountsIn(tx, {
            tenantId: batch.tenant_id,
            currency: 'NGN',
            codes: ['wallet', 'in_flight'],
          });
          const limit = tenant.dailyTransferLimitMinor;
          const used = await usedToday(tx, batch.tenant_id);
          const { decisions } = decideItems(
            candidates.map((item) => ({ amountMinor: item.amount_minor, feeMinor: item.fee_minor })),
            { availableMinor: accounts.get('wallet')!.balanceMinor, usedMinor: used, limitMinor: limit },
          );
          accepted = candidates.filter((item, i) => {
            const decision: ItemDecision = decisions[i]!;
            if (decision === 'accepted') return true;
            refusals.push(balanceRefusal(item, decision, limit));
            return false;
          });
          const made = accepted.map((item) => ({ item, transferId: randomUUID() }));
          await postPlannedEntries(
            tx,
            batch.tenant_id,
            planEntriesOnLockedAccounts(
              made.map(({ item, transferId }) =>
                transferReserve({
                  transferId,
                  reference: item.reference,
                  amountMinor: item.amount_minor,
                  feeMinor: item.fee_minor,
                }),
              ),
              accounts,
            ),
          );
          await makeTransfers(tx, batch, made);
        } else {
          await makeTransfers(
            tx,
            batch,
            accepted.map((item) => ({ item, transferId: randomUUID() })),
          );
        }
        await refuse(tx, batch, queued, refusals);
        const decided = await acceptedItems(tx, batch.id, input);
        return { accepted: decided.map((item) => startOf(batch, item)), refused: refusals.length };
      });
    },

    /**
     * Submits the accepted items of [from, to) whose transfers are still pending to their banks,
     * many at once, under each transfer's id as single transfers are submitted (submitToBank, with
     * every rule of decisions §17), and marks each processing as soon as its bank took it or may
     * have. Answers, per item, its session and what the bank said at once, or that its connector
     * may hold it (its run then only asks the connector's status); null for an item the bank did
     * not take cleanly (refused before processing, or nothing sent): its own run then submits it,
     * with every rule a single transfer's submission has (retries, the next connector, a refusal).
     * An item an earlier attempt of this step left processing is answered from its row.
     */
    async submitBatchItems(input: {
      batchId: string;
      from: number;
      to: number;
      awaitGroup?: number;
    }): Promise<{ index: number; submitted: BatchItemSubmission | null }[]> {
      const em = orm.em.fork();
      const batch = await batchOf(em, input.batchId);
      const items = await acceptedWithTransfers(em, batch.id, input);
      const answers = new Map<number, BatchItemSubmission>();
      for (const item of items) {
        if (item.transfer_status === 'pending') continue;
        answers.set(item.index, {
          sessionId: item.session_id ?? '',
          ...(item.possibly_taken_at
            ? {
                possiblyTaken: {
                  connector: item.connector!,
                  lastAttemptAt: item.possibly_taken_at.getTime(),
                  kind: 'lost' as const,
                  reason: "its batch's submission left it possibly taken",
                },
              }
            : {}),
        });
      }
      const waiting = items.filter((item) => item.transfer_status === 'pending');
      await eachAtOnce(waiting, SUBMIT_CONCURRENCY, async (item) => {
        try {
          const result = await transfers.submitToBank({
            transferId: item.transfer_id!,
            request: requestOf(batch, item),
            recipientName: item.recipient_name!,
            connector: item.connector!,
            ...(item.name_enquiry_session_id ? { sessionId: item.name_enquiry_session_id } : {}),
          });
          if (result.status === 'possibly_taken') {
            await markProcessing(em, item.transfer_id!, '', { taken: false });
            answers.set(item.index, { sessionId: '', possiblyTaken: result.possiblyTaken });
            return;
          }
          // Marked at once: an attempt that dies after this call leaves the item known as submitted.
          await markProcessing(em, item.transfer_id!, result.sessionId);
          answers.set(item.index, {
            sessionId: result.sessionId,
            ...(result.status === 'pending'
              ? {}
              : {
                  outcome: {
                    status: result.status,
                    sessionId: result.sessionId,
                    providerCode: result.providerCode,
                    source: 'submission' as const,
                  },
                }),
          });
        } catch (error) {
          // Refused before processing, or nothing sent: its run submits it. An attempt cut short by a
          // fault of ours left its possibly-taken mark, which the run's submission reads (§17).
          log.warn('batch item not submitted by its batch: its own run will', {
            transferId: item.transfer_id,
            error: String(error),
          });
        } finally {
          heartbeat();
        }
      });
      if (input.awaitGroup !== undefined) {
        // Taken cleanly (a session, no doubt it was taken): its group's run awaits its bank's word,
        // and the item's row says so before the run is there, so its callback is kept for it.
        const groups = new Map<string, number[]>();
        for (const [index, answer] of answers) {
          if (answer.possiblyTaken) continue;
          const run = transferBatchChunkWorkflowId(
            batch.tenant_id,
            batch.batch_reference,
            awaitGroupOf(index, input.awaitGroup),
          );
          groups.set(run, [...(groups.get(run) ?? []), index]);
        }
        await markItemsAwaited(em, batch.id, groups);
      }
      return items.map((item) => ({ index: item.index, submitted: answers.get(item.index) ?? null }));
    },

    async keptItemWords(input) {
      return keptItemWords<BankOutcome>(orm.em.fork(), input.transferIds);
    },

    /**
     * The group's decided items settled or reversed once each, as a single transfer's run finishes
     * it (its movement, fee, events and webhooks), all in one transaction (finishTransfersTogether).
     * What the books then hold is answered: a retry, or an item an earlier attempt finished on
     * another word, answers as it stands.
     */
    async finishBatchItems(input) {
      const records = await finishTransfersTogether(orm, input.items);
      return records.map((record) => ({ transferId: record.id, status: record.status }));
    },

    async queryItemStatuses(input) {
      const known: ItemFinish[] = [];
      await eachAtOnce(input.items, SUBMIT_CONCURRENCY, async (item) => {
        try {
          const answer = await transfers.queryBankStatus(item);
          if (answer.status === 'successful' || answer.status === 'failed') {
            known.push({ transferId: item.transferId, outcome: answer });
          }
        } catch (error) {
          log.warn('bank status query failed for a batch item; will ask again', {
            transferId: item.transferId,
            error: String(error),
          });
        } finally {
          heartbeat();
        }
      });
      return known;
    },

    async flagItemsStuck(input) {
      for (const transferId of input.transferIds) await transfers.flagStuck({ transferId });
    },

    async recordItemDiscrepancy(input) {
      return transfers.recordDiscrepancy(input);
    },

    /**
     * The batch completed, with its event, once every item is refused or its transfer has ended.
     * An item still pending (its run ended by hand, not yet resolved) keeps it open: retried.
     */
    async completeBatch(input: { batchId: string }): Promise<void> {
      await orm.em.fork().transactional(async (tx) => {
        const counts = await batchCounts(tx, input.batchId);
        if (counts.pending > 0) throw new Error(`batch ${input.batchId} still has ${counts.pending} pending items`);
        const completed = await markBatchCompleted(tx, input.batchId);
        if (!completed) return;
        await recordEvent(tx, {
          tenantId: completed.tenant_id,
          type: 'transfer_batch.completed',
          sourceKey: `transfer-batch:${completed.id}:completed`,
          payload: { ...batchDetailView(completed, counts) },
        });
        log.info('transfer batch completed', { batchId: completed.id, ...counts });
      });
    },

    /**
     * A held batch's decision (decisions §20), once, under its row's lock: its approval, and a
     * key's or a person's decision in the audit log. Answers the batch's approval as it stands.
     */
    async decideBatchApproval(input) {
      return orm.em.fork().transactional(async (tx) => {
        const current = await lockBatch(tx, input.batchId);
        if (!current)
          throw ApplicationFailure.create({
            type: 'unknown_batch',
            message: `no batch ${input.batchId}`,
            nonRetryable: true,
          });
        if (current.approval_status !== 'required') return { status: current.approval_status ?? 'required' };
        const { decision, outcome } = input;
        const row = await decideBatchRow(tx, current.id, outcome, decision?.actor ?? null);
        if (decision) {
          await recordAuditEntry(tx, {
            tenantId: row.tenant_id,
            action: outcome === 'approved' ? 'batch.approved' : 'batch.rejected',
            target: { type: 'transfer_batch', id: row.id },
            actor: decision.actor,
            ip: decision.ip,
            requestId: decision.requestId,
            details: {
              batch_reference: row.batch_reference,
              total_count: row.total_count,
              total_amount_minor: row.total_amount_minor,
              total_fee_minor: row.total_fee_minor,
              atomic: row.atomic,
              ...(decision.reason !== undefined ? { reason: decision.reason } : {}),
            },
          });
        }
        log.info('held transfer batch decided', { batchId: row.id, outcome });
        return { status: row.approval_status! };
      });
    },

    /**
     * The accepted items of [from, to) given their batch's decision, in one transaction: approved,
     * their transfers say so (transfer.approved); rejected or expired, each fails with its amount
     * and fee from in flight back to the wallet (an atomic batch's items drew theirs from its one
     * reservation, which these give back item by item), events transfer.rejected and
     * transfer.failed. Items already given the decision are not locked again: a retry does nothing twice.
     */
    async settleHeldBatchItems(input) {
      return orm.em.fork().transactional(async (tx) => {
        const batch = await batchOf(tx, input.batchId);
        const outcome = batch.approval_status;
        if (outcome !== 'approved' && outcome !== 'rejected' && outcome !== 'expired') {
          throw ApplicationFailure.create({
            type: 'not_decided',
            message: `batch ${batch.id} is not decided (approval ${outcome ?? 'none'})`,
            nonRetryable: true,
          });
        }
        const held = await lockHeldItemTransfers(tx, batch.id, input);
        if (outcome === 'approved') {
          const rows = await decideHeldTransfers(
            tx,
            held.map((row) => row.id),
            batch,
            null,
          );
          await itemEvents(tx, batch.tenant_id, rows, ['transfer.approved']);
          return { approved: rows.length, failed: 0 };
        }
        // Never submitted (nothing reaches a bank while held): still pending, their money in flight.
        const pending = held.filter((row) => row.status === 'pending');
        const reason = outcome === 'rejected' ? 'rejected' : 'approval_expired';
        if (pending.length > 0) {
          const accounts = await lockTenantAccountsIn(tx, {
            tenantId: batch.tenant_id,
            currency: 'NGN',
            codes: ['wallet', 'in_flight'],
          });
          await postPlannedEntries(
            tx,
            batch.tenant_id,
            planEntriesOnLockedAccounts(
              pending.map((row) =>
                transferReverse(
                  {
                    transferId: row.id,
                    reference: row.reference,
                    amountMinor: row.amount_minor,
                    feeMinor: row.fee_minor,
                  },
                  reason,
                ),
              ),
              accounts,
            ),
          );
        }
        const failed = await decideHeldTransfers(
          tx,
          pending.map((row) => row.id),
          batch,
          { reason },
        );
        // One that was not pending (never so while held) only takes the decision.
        await decideHeldTransfers(
          tx,
          held.filter((row) => row.status !== 'pending').map((row) => row.id),
          batch,
          null,
        );
        await itemEvents(tx, batch.tenant_id, failed, ['transfer.rejected', 'transfer.failed']);
        return { approved: 0, failed: failed.length };
      });
    },
  };
}

/** Accepted items made transfers (`pending`, their money reserved), each with its transfer.created event. */
async function makeTransfers(
  tx: EntityManager,
  batch: TransferBatchRow,
  made: readonly { item: BatchItemRow; transferId: string }[],
): Promise<void> {
  if (made.length === 0) return;
  const rows = await insertTransfers(
    tx,
    made.map(({ item, transferId }) => ({
      transferId,
      request: { ...requestOf(batch, item), metadata: item.metadata },
      recipientName: item.recipient_name!,
      nameEnquirySessionId: item.name_enquiry_session_id!,
      connector: item.connector!,
    })),
  );
  // A held batch's items are held with it, until its expiry (decisions §20).
  const expiresAt = batch.approval_expires_at;
  const views = expiresAt ? await holdTransfers(tx, rows, expiresAt) : rows;
  await itemEvents(
    tx,
    batch.tenant_id,
    views,
    expiresAt ? ['transfer.created', 'transfer.approval_required'] : ['transfer.created'],
  );
  await acceptItems(
    tx,
    batch.id,
    made.map(({ item, transferId }) => ({ index: item.index, transferId })),
  );
}

export type { TransferBatchActivities };
