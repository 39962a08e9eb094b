// The transfer workflow's side effects: the bank (through the provider adapter) and PostgreSQL
// (ledger, projection, events, each change with its event in one transaction). Every activity is
// idempotent on the transfer id, so a retry after a crash applies nothing twice. A step fails for
// good only through the domain's transferFailure (src/transfers/domain.ts: a non-retryable
// ApplicationFailure whose type and details the domain declares); transient bank faults are plain
// errors that Temporal retries.
import { CompleteAsyncError, Context, log } from '@temporalio/activity';
import { ActivityNotFoundError, type Client } from '@temporalio/client';
import { UniqueConstraintViolationException } from '@mikro-orm/core';
import type { EntityManager, MikroORM } from '@mikro-orm/postgresql';
import { recordEvent } from '../../src/events/events.ts';
import { InsufficientFundsError, lockAccountsOf, postMovement } from '../../src/ledger/ledger.ts';
import { type TransferAmounts, transferReserve, transferReverse, transferSettle } from '../../src/ledger/movements.ts';
import { type Providers, serving, transfersConnector } from '../../src/connectors/registry.ts';
import { nameEnquirySlotsFor } from '../../src/connectors/name-enquiry-slots.ts';
import { type BankSwitch, ProviderError } from '../../src/connectors/capabilities.ts';
import type { KeyMode } from '../../src/connectors/types.ts';
import { isDefinitive, refusalDetails } from '../provider-failure.ts';
import { enquiringTenant } from './enquiring-tenant.ts';
import { recordDiscrepancy } from '../../src/transfers/discrepancies.ts';
import { isFinal, sameAccountName, transferFailure, withinDailyLimit } from '../../src/transfers/domain.ts';
import {
  type TransferRow,
  assignConnector,
  beginSubmission,
  clearPossiblyTaken,
  clearSubmission,
  connectorOf,
  decideApprovalRow,
  findTransfer,
  finishRow,
  flagStuck,
  insertTransfer,
  reservationOf,
  lockTransfers,
  markAbandoned,
  markAmbiguous,
  markProcessing,
  recordResolution,
  returnedOfCredits,
  usedToday,
} from '../../src/transfers/store.ts';
import { recordConnectorConflict } from '../../src/transfers/conflicts.ts';
import { itemBankWord } from '../../src/transfers/batch-store.ts';
import { lockCreditForReturn } from '../../src/virtual-accounts/service.ts';
import { returnableMinor } from '../../src/virtual-accounts/domain.ts';
import { itemView } from '../../src/transfers/views.ts';
import { lockTenant } from '../../src/tenants/tenants.ts';
import { recordAuditEntry } from '../../src/audit/log.ts';
import type {
  BankOutcome,
  ItemFinish,
  OperatorResolution,
  SubmissionAnswer,
  TransferRecord,
  TransferRequest,
} from '../../workflows/transfers/definitions.ts';
import type { TransferActivities } from '../../workflows/transfers/definitions.ts';

export interface TransferActivityDeps {
  orm: MikroORM;
  providers: Providers;
  /**
   * Given, a first submission the bank answers "pending" waits for the bank's word as an open
   * activity, which the bank's callback completes (docs/workflows.md#the-banks-word-completes-the-submission);
   * without it (a test's activities, the batch's), it answers "pending" at once.
   */
  client?: Client;
}

/**
 * How long a first submission answered "pending" waits for the bank's word before it answers
 * "pending" itself (the run then waits as before: the bank's signal, its status queries). Long
 * enough for a bank that confirms at once (the sandbox bank's callback comes within tens of ms);
 * short, because until it is over the run still counts the transfer as being submitted. A wait
 * whose worker dies ends at the bank activity's 1 min start-to-close, and its retry answers
 * possibly taken (submitOnce): status queries decide, as for any answer lost.
 */
export const BANK_WORD_WAIT_MS = 3_000;

/**
 * The bank switch of the connector that took a transfer. A connector the deployment no longer has is
 * a fault to retry, never a reason to ask or pay elsewhere: its transfers wait until it is
 * configured again or an operator resolves them.
 */
function transfersOf(providers: Providers, connector: string): BankSwitch {
  const found = transfersConnector(providers, connector);
  if (!found) {
    throw new Error(
      `connector ${connector} took this transfer but is not configured in this deployment: ` +
        'configure it again (LIVE_CONNECTORS) so the transfer can be resolved',
    );
  }
  return found.bankSwitch;
}

/** What the workflow learns of a row: its id and status, never a response shape. */
function recordOf(row: TransferRow): TransferRecord {
  return { id: row.id, status: row.status, recipientName: row.recipient_name, connector: connectorOf(row) };
}

async function emitTransferEvent(
  em: EntityManager,
  row: TransferRow,
  type:
    | 'transfer.created'
    | 'transfer.settled'
    | 'transfer.failed'
    | 'transfer.approval_required'
    | 'transfer.approved'
    | 'transfer.rejected',
): Promise<void> {
  await recordEvent(em, {
    tenantId: row.tenant_id,
    type,
    sourceKey: `transfer:${row.id}:${type}`,
    payload: { ...itemView(row, { withCompletedAt: true }) },
  });
}

export function createTransferActivities({ orm, providers, client }: TransferActivityDeps): TransferActivities {
  const enquirySlots = nameEnquirySlotsFor(orm);
  const activities: TransferActivities = {
    acceptTransfer: (input) => acceptWith(activities, input),

    /**
     * The recipient's name from the first connector of the transfer's mode whose name enquiry
     * answers (decisions §13): one that is down (a transient fault) passes the transfer to the
     * next; an account the bank does not know refuses it. `exclude` names connectors already tried
     * (after a definitive "not taken"). Each connector is asked holding one of its name enquiry
     * slots, shared fairly between tenants (src/connectors/name-enquiry-slots.ts): none free in
     * time is a transient fault, and not a reason to ask the next connector. With `savedName` (a
     * saved recipient's, decisions §20), a bank name that is not it (case and spacing aside) refuses
     * the transfer as invalid_account with `{saved_name, current_name}`; one that is answers it.
     */
    async nameEnquiry(input: {
      bankCode: string;
      accountNumber: string;
      mode: KeyMode;
      exclude?: string[];
      savedName?: string;
    }): Promise<{ accountName: string; sessionId: string; connector: string }> {
      const candidates = serving(providers, input.mode, 'transfers').filter(
        (connector) => !input.exclude?.includes(connector.name),
      );
      if (candidates.length === 0) {
        throw transferFailure(
          'no_connector',
          input.exclude?.length
            ? `no other ${input.mode} connector can take this transfer (tried ${input.exclude.join(', ')})`
            : `no ${input.mode} connector serves transfers`,
        );
      }
      let lastFault: unknown;
      const tenantId = enquiringTenant();
      for (const connector of candidates) {
        let result;
        try {
          result = await enquirySlots.run(connector.name, tenantId, () =>
            connector.transfers!.nameEnquiry(input.bankCode, input.accountNumber),
          );
        } catch (error) {
          if (error instanceof ProviderError && error.outcome === 'invalid_account') {
            throw transferFailure(
              'invalid_account',
              `recipient account ${input.accountNumber} was not found at bank ${input.bankCode}`,
            );
          }
          // Down for the name enquiry: nothing was sent, so the next connector may take it.
          if (error instanceof ProviderError && error.transient) {
            log.warn('connector down for the name enquiry; trying the next', {
              connector: connector.name,
              error: error.message,
            });
            lastFault = error;
            continue;
          }
          return bankFailure(error, 'name_enquiry_failed');
        }
        return answeredFor(input, {
          accountName: result.accountName,
          sessionId: result.sessionId,
          connector: connector.name,
        });
      }
      throw lastFault;
    },

    /**
     * Creates the transfer and reserves amount + fee (wallet → in flight), with its
     * transfer.created event, in one transaction; refuses over the daily limit or the balance.
     */
    async reserveFunds(input: {
      transferId: string;
      request: TransferRequest;
      recipientName: string;
      nameEnquirySessionId: string;
      /** The connector whose name enquiry answered. */
      connector: string;
      approvalExpiresAt?: number;
    }): Promise<TransferRecord> {
      const { request } = input;
      const total = request.amountMinor + request.feeMinor;
      return orm.em.fork().transactional(async (tx) => {
        // One reservation at a time per tenant, so the daily limit holds under concurrency.
        const tenant = await lockTenant(tx, request.tenantId);
        if (!tenant) throw transferFailure('unknown_tenant', `no tenant ${request.tenantId}`);
        const { existing, abandoned } = await reservationOf(tx, input.transferId);
        if (existing) return recordOf(existing);
        if (abandoned) {
          // This attempt arrives after the create path gave up on it (settleReservation).
          throw transferFailure(
            'reservation_abandoned',
            `transfer ${input.transferId} was abandoned before this reservation attempt; nothing was reserved`,
          );
        }

        // A credit's return sends back at most what is left of it (decisions §21): decided here, under
        // the tenant's lock that every return of the credit is reserved under, so two at once cannot
        // both take what is left.
        if (request.returnOf) await refuseUnlessReturnable(tx, request, request.returnOf);
        // A held credit's return is the platform's, paid from suspense: the tenant's limit is not its.
        if (request.returnOf?.fundedFrom !== 'suspense') {
          const limit = tenant.dailyTransferLimitMinor;
          const used = await usedToday(tx, request.tenantId);
          if (!withinDailyLimit({ limitMinor: limit, usedMinor: used, amountMinor: request.amountMinor })) {
            throw transferFailure(
              'limit_exceeded',
              `daily transfer limit of ${limit} kobo would be exceeded: ${used} already used today`,
              { limit, used },
            );
          }
        }

        let row: TransferRow;
        try {
          row = await insertTransfer(tx, input.transferId, request, input.recipientName, {
            nameEnquirySessionId: input.nameEnquirySessionId,
            connector: input.connector,
            ...(input.approvalExpiresAt !== undefined ? { approvalExpiresAt: new Date(input.approvalExpiresAt) } : {}),
          });
        } catch (error) {
          // Another transfer holds the reference: a conflict, never worth retrying.
          if (error instanceof UniqueConstraintViolationException) {
            throw transferFailure(
              'duplicate_reference',
              `reference ${request.reference} was already used for another transfer`,
              { transfer_id: null },
              error,
            );
          }
          throw error;
        }
        try {
          await postMovement(
            tx,
            request.tenantId,
            transferReserve({
              transferId: input.transferId,
              reference: request.reference,
              amountMinor: request.amountMinor,
              feeMinor: request.feeMinor,
              fundedFrom: request.returnOf?.fundedFrom ?? 'wallet',
            }),
          );
        } catch (error) {
          if (error instanceof InsufficientFundsError) {
            throw transferFailure(
              error.code,
              `wallet balance ${error.availableMinor} is below the ${total} kobo required (amount plus fee)`,
              { required: total, available: error.availableMinor },
            );
          }
          throw error;
        }
        await emitTransferEvent(tx, row, 'transfer.created');
        if (row.approval_status === 'required') await emitTransferEvent(tx, row, 'transfer.approval_required');
        return recordOf(row);
      });
    },

    /**
     * Sends the transfer to its connector under our transfer id (decisions §17). The transfer is
     * marked possibly taken before the request leaves (a process that dies mid-request leaves the
     * mark), so an attempt that finds an earlier one's mark sends nothing and answers
     * `possibly_taken`: after an ambiguous attempt only the connector's status query decides. An
     * answer that leaves doubt (no answer, a 5xx, a refusal the connector does not recognise, or
     * any refusal once an attempt was ambiguous) answers `possibly_taken` too. Only a refusal the
     * connector recognises as made before processing, with no ambiguous attempt ever, is
     * `bank_not_taken` (the workflow may pass it to the next connector); a transfer the provider
     * holds and will never pay (Paystack's `otp`) is `bank_rejected`. A fault before anything was
     * sent (a 429, a connection never made) is retried.
     */
    async submitToBank(input: {
      transferId: string;
      request: TransferRequest;
      recipientName: string;
      connector: string;
      /** The name enquiry's session at that connector (the generic contract sends it). */
      sessionId?: string;
      markProcessing?: boolean;
    }): Promise<SubmissionAnswer> {
      const em = orm.em.fork();
      // A first submission may be completed by the bank's word (its callback): its task token is
      // written with the write-ahead mark, before anything is sent, so that a word that comes
      // before this attempt has its answer finds it too.
      const token = client !== undefined && input.markProcessing ? Context.current().info.taskToken : undefined;
      const awaitingWordToken = token ? Buffer.from(token).toString('base64') : undefined;
      const answer = await submitOnce(em, providers, input, awaitingWordToken);
      // The processing mark folded into the submission (the lean shape): the same write
      // markProcessing makes, after the answer it goes with. An attempt whose completion is lost
      // after this commit finds the transfer `processing` with no mark, and answers possibly taken
      // (submitOnce): the answer it got is not known any more, and nothing is sent again.
      if (input.markProcessing) {
        const held = answer.status === 'possibly_taken';
        // "Pending": this attempt waits for the bank's word, its token kept; any other answer is
        // the attempt's own, and the token goes.
        const waits = answer.status === 'pending' && awaitingWordToken !== undefined;
        await markProcessing(em, input.transferId, held ? '' : answer.sessionId, {
          taken: !held,
          ...(waits ? { awaitingWordToken } : {}),
        });
        if (waits && token && client) {
          // The bank's callback completes this activity with its word (src/transfers/callbacks.ts);
          // failing that, this process answers "pending" when the wait is over. Whichever comes
          // second finds the activity completed and changes nothing.
          setTimeout(() => {
            client.activity.complete(token, answer).catch((error: unknown) => {
              // Completed already (the word came) is the usual case; anything else leaves the
              // activity to time out and be retried, which answers possibly taken (submitOnce).
              if (!(error instanceof ActivityNotFoundError)) {
                log.warn('a submission waiting for the bank could not answer "pending"', {
                  transferId: input.transferId,
                  error: String(error),
                });
              }
            });
          }, BANK_WORD_WAIT_MS).unref();
          throw new CompleteAsyncError();
        }
      }
      return answer;
    },

    /** The transfer passes to the connector whose name enquiry answered after a "not taken"; false if it may not. */
    async assignConnector(input: { transferId: string; connector: string; sessionId: string }): Promise<boolean> {
      return assignConnector(orm.em.fork(), input.transferId, input.connector, input.sessionId);
    },

    async itemBankWord(input: { transferId: string }): Promise<BankOutcome | undefined> {
      return itemBankWord<BankOutcome>(orm.em.fork(), input.transferId);
    },

    /** `taken` (default): the bank's answer settled the submission, whose possibly-taken mark goes. */
    async markProcessing(input: { transferId: string; sessionId: string; taken?: boolean }): Promise<void> {
      await markProcessing(orm.em.fork(), input.transferId, input.sessionId, { taken: input.taken !== false });
    },

    /** The connector's status query proved the transfer was never taken (decisions §17): its mark goes. */
    async clearPossiblyTaken(input: { transferId: string; lastAttemptAt: number }): Promise<void> {
      await clearPossiblyTaken(orm.em.fork(), input.transferId, new Date(input.lastAttemptAt));
    },

    /**
     * A connector that does not hold the transfer answered about it (decisions §17): kept for
     * operators with both connectors named, never applied.
     */
    async recordConnectorConflict(input: {
      transferId: string;
      bank: BankOutcome & { connector: string };
    }): Promise<void> {
      const kept = await recordConnectorConflict(orm.em.fork(), {
        transferId: input.transferId,
        bank: input.bank,
        detectedBy: 'workflow',
      });
      if (kept?.created)
        log.error('a connector that does not hold the transfer answered about it', { ...kept.conflict });
    },

    /** The bank's status query. `unknown` when the bank has no record of it (never submitted). */
    async queryBankStatus(input: {
      transferId: string;
      connector: string;
    }): Promise<BankOutcome | { status: 'pending' | 'unknown' }> {
      const bankSwitch = transfersOf(providers, input.connector);
      try {
        const result = await bankSwitch.transferStatus(input.transferId);
        if (result.status === 'pending') return { status: 'pending' };
        // Paid out and reversed before the transfer was final in our books: it failed, as `reversed`
        // (decisions §21). A completed transfer's reversal is the reversal workflow's (reversals.ts).
        const reversed = result.status === 'reversed';
        return {
          status: result.status === 'reversed' ? 'failed' : result.status,
          sessionId: result.sessionId,
          providerCode: result.rawCode,
          ...(result.message ? { message: result.message } : {}),
          ...(reversed ? { reversed: true } : {}),
          source: 'status_query',
        };
      } catch (error) {
        if (error instanceof ProviderError && error.outcome === 'not_found') return { status: 'unknown' };
        throw error;
      }
    },

    async decideApproval(input) {
      return orm.em.fork().transactional(async (tx) => {
        const current = await findTransfer(tx, input.transferId, { lock: true });
        if (!current) throw transferFailure('unknown_transfer', `no transfer ${input.transferId}`);
        if (current.approval_status !== 'required') {
          return { ...recordOf(current), approval: current.approval_status ?? null };
        }
        const { decision, outcome } = input;
        let row = await decideApprovalRow(tx, current.id, outcome, decision?.actor ?? null);
        if (outcome === 'approved') {
          await emitTransferEvent(tx, row, 'transfer.approved');
        } else {
          row = await reverse(tx, row, outcome === 'rejected' ? 'rejected' : 'approval_expired');
          await emitTransferEvent(tx, row, 'transfer.rejected');
          await emitTransferEvent(tx, row, 'transfer.failed');
        }
        if (decision) {
          await recordAuditEntry(tx, {
            tenantId: row.tenant_id,
            action: outcome === 'approved' ? 'transfer.approved' : 'transfer.rejected',
            target: { type: 'transfer', id: row.id },
            actor: decision.actor,
            ip: decision.ip,
            requestId: decision.requestId,
            details: {
              reference: row.reference,
              amount_minor: row.amount_minor,
              fee_minor: row.fee_minor,
              ...(decision.reason !== undefined ? { reason: decision.reason } : {}),
            },
          });
        }
        return { ...recordOf(row), approval: row.approval_status ?? null };
      });
    },

    /** Success: in flight → bank settlement (amount) and fee revenue (fee); transfer.settled. */
    async settleTransfer(input: {
      transferId: string;
      outcome: BankOutcome;
      resolution?: OperatorResolution;
    }): Promise<TransferRecord> {
      return orm.em.fork().transactional((tx) => settleIn(tx, input));
    },

    /** Failure: amount + fee back from in flight to the wallet; transfer.failed. */
    async reverseTransfer(input: {
      transferId: string;
      reason: string;
      providerCode?: string;
      resolution?: OperatorResolution;
    }): Promise<TransferRecord> {
      return orm.em.fork().transactional((tx) => reverseIn(tx, input));
    },

    /**
     * The create path stopped short of a confirmed reservation (an attempt timed out, failed, or a
     * later one was refused) and an earlier attempt may still commit. Settled for certain under the
     * tenant lock that reserveFunds takes first: a reservation that did commit is returned, to be
     * used by the transfer; otherwise the id is marked abandoned, so a late attempt reserves
     * nothing, and the reference stays free for a retry of the request. Null when abandoned.
     */
    async settleReservation(input: { transferId: string; request: TransferRequest }): Promise<TransferRecord | null> {
      return orm.em.fork().transactional(async (tx) => {
        await lockTenant(tx, input.request.tenantId);
        const reserved = await findTransfer(tx, input.transferId);
        if (reserved && reserved.status !== 'failed') return recordOf(reserved);
        if (!reserved) await markAbandoned(tx, input.transferId, input.request.tenantId, input.request.reference);
        return null;
      });
    },

    /** Unconfirmed after 24 h: marked for operators, never guessed at. */
    async flagStuck(input: { transferId: string }): Promise<void> {
      await flagStuck(orm.em.fork(), input.transferId);
    },

    /**
     * The bank answered while the workflow settled or reversed on an operator's word, and says the
     * opposite: kept as a discrepancy for operators, never applied (decisions §12). True if one is open.
     */
    async recordDiscrepancy(input: { transferId: string; bank: BankOutcome }): Promise<boolean> {
      const kept = await recordDiscrepancy(orm.em.fork(), { ...input, detectedBy: 'workflow' });
      if (kept?.created) {
        const { discrepancy } = kept;
        log.error('late bank answer contradicts the books: recorded as a discrepancy', {
          transferId: discrepancy.transfer_id,
          tenantId: discrepancy.tenant_id,
          reference: discrepancy.reference,
          ours: discrepancy.ours,
          bank: discrepancy.bank,
        });
      }
      return kept !== undefined;
    },
  };
  return activities;
}

/**
 * The create path in one step (acceptTransfer): the name enquiry, then the reservation under the
 * connector that answered, made by `steps` (the activities themselves, or a test's recording stubs).
 */
export async function acceptWith(
  steps: Pick<TransferActivities, 'nameEnquiry' | 'reserveFunds'>,
  input: Parameters<TransferActivities['acceptTransfer']>[0],
): ReturnType<TransferActivities['acceptTransfer']> {
  const { request } = input;
  const enquiry = await steps.nameEnquiry({
    bankCode: request.recipientBankCode,
    accountNumber: request.recipientAccount,
    mode: request.mode,
    ...(request.savedName !== undefined ? { savedName: request.savedName } : {}),
  });
  const reserved = await steps.reserveFunds({
    transferId: input.transferId,
    request,
    recipientName: enquiry.accountName,
    nameEnquirySessionId: enquiry.sessionId,
    connector: enquiry.connector,
    ...(input.approvalExpiresAt !== undefined ? { approvalExpiresAt: input.approvalExpiresAt } : {}),
  });
  return { ...reserved, nameEnquirySessionId: enquiry.sessionId };
}

/**
 * One submission attempt (submitToBank's answer, before its processing mark). The transfer is
 * marked possibly taken first; an earlier attempt's mark, or (for a transfer the workflow knows is
 * still `pending`) an earlier attempt of this activity that got its answer and marked it
 * `processing` before its completion was lost, sends nothing and answers possibly taken.
 */
async function submitOnce(
  em: EntityManager,
  providers: Providers,
  input: Parameters<TransferActivities['submitToBank']>[0],
  awaitingWordToken?: string,
): Promise<SubmissionAnswer> {
  const bankSwitch = transfersOf(providers, input.connector);
  const start = await beginSubmission(em, input.transferId, awaitingWordToken);
  if (start.prior) {
    return possiblyTaken(input, new Date(start.mark), 'lost', 'an earlier submission got no answer; not sent again');
  }
  if (input.markProcessing && start.status === 'processing') {
    return possiblyTaken(
      input,
      new Date(start.mark),
      'lost',
      'an earlier attempt was answered and its answer lost; not sent again',
    );
  }
  try {
    const result = await bankSwitch.submitTransfer({
      reference: input.transferId,
      amountMinor: input.request.amountMinor,
      bankCode: input.request.recipientBankCode,
      accountNumber: input.request.recipientAccount,
      accountName: input.recipientName,
      narration: input.request.narration,
      ...(input.sessionId ? { sessionId: input.sessionId } : {}),
    });
    // The mark goes with the processing mark that follows (markProcessing, taken). A repeat the
    // bank answers `reversed` (paid out and taken back before we knew) failed, for our books.
    return {
      status: result.status === 'reversed' ? 'failed' : result.status,
      sessionId: result.sessionId,
      providerCode: result.rawCode,
    };
  } catch (error) {
    // Anything else (a fault of our own) leaves the mark: the retry reads it as ambiguous.
    if (!(error instanceof ProviderError)) throw error;
    if (error.transient && !error.ambiguous) {
      // Nothing was sent, or the provider says it did not act: the same attempt may be made again.
      await clearSubmission(em, input.transferId, start.mark);
      throw error;
    }
    if (error.heldUnpaid || (error.notTaken && !start.ambiguousSince)) {
      await clearSubmission(em, input.transferId, start.mark);
      return bankFailure(error, error.notTaken ? 'bank_not_taken' : 'bank_rejected');
    }
    const at = await markAmbiguous(em, input.transferId);
    log.warn("submission may have been taken: only its connector's status query decides now", {
      transferId: input.transferId,
      connector: input.connector,
      error: error.message,
    });
    return possiblyTaken(input, at, error.transient ? 'lost' : 'refused', error.message);
  }
}

/** A submission the connector may hold (decisions §17), from the time of its last ambiguous attempt. */
function possiblyTaken(
  input: { connector: string },
  at: Date,
  kind: 'lost' | 'refused',
  reason: string,
): SubmissionAnswer {
  return {
    status: 'possibly_taken',
    possiblyTaken: { connector: input.connector, lastAttemptAt: at.getTime(), kind, reason },
  };
}

/**
 * A name enquiry's answer: the bank's name, or for a saved recipient (decisions §20) its saved name
 * once the bank's is that name (case and spacing aside); another name refuses the transfer as
 * invalid_account, with both names.
 */
function answeredFor(
  input: { bankCode: string; accountNumber: string; savedName?: string },
  answer: { accountName: string; sessionId: string; connector: string },
): { accountName: string; sessionId: string; connector: string } {
  const { savedName } = input;
  if (savedName === undefined) return answer;
  if (!sameAccountName(savedName, answer.accountName)) {
    throw transferFailure(
      'invalid_account',
      `recipient account ${input.accountNumber} at bank ${input.bankCode} was saved as ${savedName}, ` +
        `but its bank now names it ${answer.accountName}: delete the recipient and save it again to pay it`,
      { saved_name: savedName, current_name: answer.accountName },
    );
  }
  return { ...answer, accountName: savedName };
}

/** A connector's definitive refusal as the step's failure; a transient fault is rethrown for the retry policy. */
function bankFailure(error: unknown, type: 'name_enquiry_failed' | 'bank_not_taken' | 'bank_rejected'): never {
  if (isDefinitive(error)) throw transferFailure(type, error.message, refusalDetails(error), error);
  throw error;
}

/** A transfer row's amounts, as the movements take them. */
function amountsOf(row: TransferRow): TransferAmounts {
  return {
    transferId: row.id,
    reference: row.reference,
    amountMinor: row.amount_minor,
    feeMinor: row.fee_minor,
    fundedFrom: row.funded_from,
  };
}

/**
 * Refuses (`failed_precondition`, with what can still be returned) a credit's return that asks for
 * more than is left of the credit, or of a credit in no state to be returned from what pays it:
 * from the wallet, a credit the wallet received (applied, or released by an operator); from
 * suspense, a credit held there, in full. The credit's row is locked, so an operator's release
 * and this decision come one after the other.
 */
async function refuseUnlessReturnable(
  tx: EntityManager,
  request: TransferRequest,
  returnOf: NonNullable<TransferRequest['returnOf']>,
): Promise<void> {
  const credit = await lockCreditForReturn(tx, returnOf.creditId);
  if (!credit || credit.tenant_id !== request.tenantId) {
    throw transferFailure('failed_precondition', `no credit ${returnOf.creditId} of this tenant to return`, {
      returnable_minor: 0,
    });
  }
  const returned = (await returnedOfCredits(tx, [credit.id])).get(credit.id)?.returnedMinor ?? 0;
  const left = returnableMinor({
    amountMinor: credit.amount_minor,
    feeMinor: credit.fee_minor,
    returnedMinor: returned,
  });
  const payable =
    returnOf.fundedFrom === 'suspense'
      ? credit.status === 'held'
      : credit.status === 'applied' || credit.status === 'released';
  if (!payable) {
    throw transferFailure(
      'failed_precondition',
      returnOf.fundedFrom === 'suspense'
        ? `credit ${credit.transaction_reference} is not held in suspense (it is ${credit.status})`
        : `credit ${credit.transaction_reference} is held in suspense: only an operator returns or releases it`,
      { returnable_minor: credit.status === 'held' ? 0 : left },
    );
  }
  if (request.amountMinor > left || (returnOf.fundedFrom === 'suspense' && request.amountMinor !== left)) {
    throw transferFailure(
      'failed_precondition',
      `at most ${left} kobo of credit ${credit.transaction_reference} is left to return; ${request.amountMinor} asked`,
      { returnable_minor: left },
    );
  }
}

/** amount + fee from in flight back to the wallet, and the row marked failed. */
async function reverse(
  tx: EntityManager,
  current: TransferRow,
  reason: string,
  providerCode?: string,
): Promise<TransferRow> {
  await postMovement(tx, current.tenant_id, transferReverse(amountsOf(current), reason));
  return finishRow(tx, current.id, { status: 'failed', reason, providerCode: providerCode ?? null });
}

/**
 * Settles or reverses a transfer once: under a row lock, a transfer already final is returned
 * as it is; otherwise `apply` moves the money and updates the row, and the operator's resolution
 * (if any) and the event are written in the same transaction.
 */
async function finishTransfer(
  tx: EntityManager,
  input: { transferId: string; resolution?: OperatorResolution },
  eventType: 'transfer.settled' | 'transfer.failed',
  apply: (tx: EntityManager, current: TransferRow) => Promise<TransferRow>,
): Promise<TransferRecord> {
  const current = await findTransfer(tx, input.transferId, { lock: true });
  if (!current) throw transferFailure('unknown_transfer', `no transfer ${input.transferId}`);
  if (isFinal(current.status)) return recordOf(current);
  const row = await apply(tx, current);
  if (input.resolution) await recordResolution(tx, current.id, input.resolution);
  await emitTransferEvent(tx, row, eventType);
  return recordOf(row);
}

/** Success, in the caller's transaction: in flight → bank settlement (amount) and fee revenue (fee); transfer.settled. */
function settleIn(
  tx: EntityManager,
  input: { transferId: string; outcome: BankOutcome; resolution?: OperatorResolution },
): Promise<TransferRecord> {
  return finishTransfer(tx, input, 'transfer.settled', async (tx, current) => {
    await postMovement(tx, current.tenant_id, transferSettle(amountsOf(current)));
    return finishRow(tx, current.id, {
      status: 'completed',
      sessionId: input.outcome.sessionId || null,
      providerCode: input.outcome.providerCode ?? null,
    });
  });
}

/** Failure, in the caller's transaction: amount + fee back from in flight to the wallet; transfer.failed. */
function reverseIn(
  tx: EntityManager,
  input: { transferId: string; reason: string; providerCode?: string; resolution?: OperatorResolution },
): Promise<TransferRecord> {
  return finishTransfer(tx, input, 'transfer.failed', (tx, current) =>
    reverse(tx, current, input.reason, input.providerCode),
  );
}

/**
 * A batch group's decided items finished in one transaction (decisions §14): each as settleTransfer
 * or reverseTransfer finishes a single transfer (its movement, fee, row, resolution, event), on the
 * bank's word or failing that an operator's. Every item's row is locked first, in id order, then
 * every account their entries may touch, in id order, before any entry is posted: the order a
 * single finish takes (its row, then its entry's accounts in id order), so two finishes never wait
 * on each other in a circle. An item already final answers as it stands.
 */
export async function finishTransfersTogether(orm: MikroORM, items: readonly ItemFinish[]): Promise<TransferRecord[]> {
  const ordered = [...items].sort((a, b) => (a.transferId < b.transferId ? -1 : a.transferId > b.transferId ? 1 : 0));
  return orm.em.fork().transactional(async (tx) => {
    const tenants = await lockTransfers(
      tx,
      ordered.map((item) => item.transferId),
    );
    // Then every account their entries may touch (a settlement's in flight, bank settlement and fee
    // revenue; a reversal's in flight and its source), in id order, before any entry is posted.
    await lockAccountsOf(tx, tenants, ['in_flight', 'wallet', 'suspense'], ['bank_settlement', 'fee_revenue']);
    const records: TransferRecord[] = [];
    for (const item of ordered) {
      const { outcome, resolution } = item;
      const operator = outcome ? {} : resolution ? { resolution } : {};
      const succeeded = outcome ? outcome.status === 'successful' : resolution?.outcome === 'successful';
      records.push(
        succeeded
          ? await settleIn(tx, {
              transferId: item.transferId,
              outcome: outcome ?? {
                status: 'successful',
                source: 'callback',
                ...(item.sessionId ? { sessionId: item.sessionId } : {}),
              },
              ...operator,
            })
          : await reverseIn(tx, {
              transferId: item.transferId,
              reason: outcome?.reversed
                ? 'reversed'
                : (outcome?.message ??
                  (resolution ? `resolved by operator: ${resolution.note}` : 'failed at the bank')),
              ...(outcome?.providerCode ? { providerCode: outcome.providerCode } : {}),
              ...operator,
            }),
      );
    }
    return records;
  });
}

export type { TransferActivities };
