// Discrepancies (decisions §12): a bank answer that contradicts a transfer already final in our
// books. Recording one moves no money; an operator settles it with one correcting journal entry
// that aligns the books with the bank, audited (who, when, why) in the same transaction as the
// entry, the transfer row and its event. Its rows are the transfers store's (src/transfers/store.ts).
import type { EntityManager } from '@mikro-orm/postgresql';
import { Refusal } from '../lib/refusal.ts';
import { recordEvent } from '../events/events.ts';
import { InsufficientFundsError, postMovement, tenantAccountId } from '../ledger/ledger.ts';
import { type AccountRef, type Movement, discrepancyCorrection } from '../ledger/movements.ts';
import type { BankOutcome } from '../../workflows/transfers/definitions.ts';
import { contradictsBooks } from './domain.ts';
import { itemView } from './views.ts';
import {
  type DiscrepancyRow,
  discrepanciesWithAmounts,
  findOpenDiscrepancy,
  findTransfer,
  finishRow,
  insertOpenDiscrepancy,
  latestSettledDiscrepancy,
  markDiscrepancySettled,
  recordResolution,
} from './store.ts';

export type BooksStatus = 'completed' | 'failed';
export type BankStatus = BankOutcome['status'];

/** Who noticed the contradiction: the callback route, or the workflow that was still finishing. */
export type DetectedBy = 'callback' | 'workflow';

export interface DiscrepancyView {
  transfer_id: string;
  reference: string;
  ours: BooksStatus;
  bank: BankStatus;
  received_at: string;
  id: string;
  tenant_id: string;
  amount_minor: number;
  fee_minor: number;
  bank_detail: Record<string, unknown>;
  settled_at: string | null;
  settled_by: string | null;
  settlement_note: string | null;
  journal_entry_id: string | null;
}

export type DiscrepancyErrorCode =
  'unknown_transfer' | 'no_discrepancy' | 'already_settled' | 'books_changed' | 'insufficient_balance';

/** Settling is an operator's act (`transfers settle-discrepancy`): its refusals are operator refusals. */
export class DiscrepancyError extends Refusal<DiscrepancyErrorCode> {
  override readonly name = 'DiscrepancyError';
}

export type CorrectionAccount = 'wallet' | 'bank_settlement' | 'fee_revenue';

export interface CorrectionPosting {
  account: CorrectionAccount;
  amountMinor: number;
}

/** A correction's postings (src/ledger/movements.ts) by the account names operators read. */
export function correctionPostings(correction: Movement): CorrectionPosting[] {
  return correction.postings.map((posting) => ({
    account: correctionAccount(posting.account),
    amountMinor: posting.amountMinor,
  }));
}

function correctionAccount(account: AccountRef): CorrectionAccount {
  if ('tenant' in account && account.tenant === 'wallet') return 'wallet';
  if ('system' in account && (account.system === 'bank_settlement' || account.system === 'fee_revenue')) {
    return account.system;
  }
  throw new Error(`a discrepancy correction never posts to ${JSON.stringify(account)}`);
}

function view(row: DiscrepancyRow, transfer: { amount_minor: string | number; fee_minor: string | number }) {
  return {
    transfer_id: row.transfer_id,
    reference: row.reference,
    ours: row.ours,
    bank: row.bank,
    received_at: new Date(row.received_at).toISOString(),
    id: row.id,
    tenant_id: row.tenant_id,
    amount_minor: Number(transfer.amount_minor),
    fee_minor: Number(transfer.fee_minor),
    bank_detail: row.bank_detail,
    settled_at: row.settled_at ? new Date(row.settled_at).toISOString() : null,
    settled_by: row.settled_by,
    settlement_note: row.settlement_note,
    journal_entry_id: row.journal_entry_id,
  } satisfies DiscrepancyView;
}

/**
 * Keeps a bank answer that contradicts the transfer's final status. Judged again under the
 * transfer's row lock, so an answer racing a settlement is weighed against the books as they end
 * up. Returns undefined when the answer does not contradict them (nothing recorded), else the open
 * discrepancy and whether this call created it (a repeated answer finds the existing one).
 */
export async function recordDiscrepancy(
  em: EntityManager,
  input: { transferId: string; bank: BankOutcome; detectedBy: DetectedBy; eventId?: string },
): Promise<{ created: boolean; discrepancy: DiscrepancyView } | undefined> {
  return em.transactional(async (tx) => {
    const transfer = await findTransfer(tx, input.transferId, { lock: true });
    if (!transfer || !contradictsBooks(transfer.status, input.bank.status)) return undefined;
    // A transfer reversed after its success (decisions §21) was paid out: a late word of its success
    // says nothing the books do not.
    if (transfer.reversed_at && input.bank.status === 'successful') return undefined;
    const detail = {
      source: input.bank.source,
      detected_by: input.detectedBy,
      session_id: input.bank.sessionId ?? null,
      provider_code: input.bank.providerCode ?? null,
      message: input.bank.message ?? null,
      ...(input.eventId ? { event_id: input.eventId } : {}),
    };
    const inserted = await insertOpenDiscrepancy(tx, transfer, input.bank.status, detail);
    if (inserted) return { created: true, discrepancy: view(inserted, transfer) };
    const open = await findOpenDiscrepancy(tx, transfer.id);
    return { created: false, discrepancy: view(open!, transfer) };
  });
}

/** Open discrepancies (or all, settled too), oldest first. */
export async function listDiscrepancies(em: EntityManager, options: { all: boolean }): Promise<DiscrepancyView[]> {
  const rows = await discrepanciesWithAmounts(em, options);
  return rows.map((row) => view(row, row));
}

export interface Settlement {
  discrepancy: DiscrepancyView;
  status: BooksStatus;
  entry_id: string;
  idempotency_key: string;
  postings: { account: CorrectionAccount; amount_minor: number }[];
  event: { id: string; type: 'transfer.settled' | 'transfer.failed' };
}

/**
 * The audited settlement: one balanced correcting entry, the transfer row moved to the bank's
 * outcome, the settlement on the discrepancy and in `transfer_resolutions`, and the transfer's
 * event, all in one transaction. Refused (nothing changed) when there is no open discrepancy,
 * when it was settled already, or when the wallet cannot cover a debit: no wallet goes negative.
 */
export async function settleDiscrepancy(
  em: EntityManager,
  input: { transferId: string; note: string; operator: string },
): Promise<Settlement> {
  return em.transactional(async (tx) => {
    const transfer = await findTransfer(tx, input.transferId, { lock: true });
    if (!transfer) throw new DiscrepancyError('unknown_transfer', `no transfer ${input.transferId}`);
    const open = await findOpenDiscrepancy(tx, transfer.id, { lock: true });
    if (!open) {
      const settled = await latestSettledDiscrepancy(tx, transfer.id);
      if (settled) {
        throw new DiscrepancyError(
          'already_settled',
          `the discrepancy of transfer ${transfer.id} was already settled at ${new Date(settled.settled_at!).toISOString()} ` +
            `by ${settled.settled_by}; nothing was moved`,
        );
      }
      throw new DiscrepancyError('no_discrepancy', `transfer ${transfer.id} has no open discrepancy`);
    }
    if (transfer.status !== open.ours) {
      throw new DiscrepancyError(
        'books_changed',
        `transfer ${transfer.id} is ${transfer.status}, not ${open.ours} as when the discrepancy was recorded`,
      );
    }

    const movement = discrepancyCorrection(
      {
        transferId: transfer.id,
        reference: transfer.reference,
        amountMinor: transfer.amount_minor,
        feeMinor: transfer.fee_minor,
      },
      open,
    );
    const walletId = await tenantAccountId(tx, transfer.tenant_id, 'wallet');
    const idempotencyKey = movement.idempotencyKey;
    let entryId: string;
    try {
      ({ entryId } = await postMovement(tx, transfer.tenant_id, movement, {
        metadata: { discrepancy_id: open.id, operator: input.operator, note: input.note },
      }));
    } catch (error) {
      if (error instanceof InsufficientFundsError) {
        const what = error.accountId === walletId ? `the wallet of tenant ${transfer.tenant_id}` : 'a platform account';
        throw new DiscrepancyError(
          error.code,
          `${what} holds ${error.availableMinor} kobo, ${error.requiredMinor} kobo are needed to align transfer ` +
            `${transfer.id} with the bank; nothing was changed`,
          { cause: error },
        );
      }
      throw error;
    }

    const status: BooksStatus = open.bank === 'successful' ? 'completed' : 'failed';
    const detail = open.bank_detail;
    const sessionId = typeof detail.session_id === 'string' && detail.session_id ? detail.session_id : null;
    const providerCode = typeof detail.provider_code === 'string' ? detail.provider_code : null;
    const updated = await finishRow(
      tx,
      transfer.id,
      status === 'completed'
        ? { status, sessionId, providerCode }
        : {
            status,
            sessionId,
            providerCode,
            reason: `the bank reported the transfer failed after it was completed${typeof detail.message === 'string' ? `: ${detail.message}` : ''}`,
          },
    );
    const settled = await markDiscrepancySettled(tx, open.id, {
      operator: input.operator,
      note: input.note,
      entryId,
      idempotencyKey,
    });
    await recordResolution(tx, transfer.id, {
      outcome: open.bank,
      note: `discrepancy settled: ${input.note}`,
      operator: input.operator,
    });
    const type = status === 'completed' ? 'transfer.settled' : 'transfer.failed';
    const eventId = await recordEvent(tx, {
      tenantId: transfer.tenant_id,
      type,
      sourceKey: `${idempotencyKey}:${type}`,
      payload: { ...itemView(updated, { withCompletedAt: true }) },
    });
    return {
      discrepancy: view(settled, transfer),
      status,
      entry_id: entryId,
      idempotency_key: idempotencyKey,
      postings: correctionPostings(movement).map((posting) => ({
        account: posting.account,
        amount_minor: posting.amountMinor,
      })),
      event: { id: eventId, type },
    };
  });
}
