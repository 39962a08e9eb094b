// Payout approvals (decisions §20): what the tenant's transfer policy holds, how a held transfer or
// batch reads, and the columns both keep. The wait itself is the transfer's (or the batch's)
// workflow: reserved, a durable timer until `expires_at`, and the `decideApproval` update
// (workflows/transfers/definitions.ts) that another key, or a person with the role, sends.
//
// What holds a payout, when the policy says so:
// - `above_minor`: an amount above it (a batch: any item above it, or its total above it);
// - `new_recipient`: a payee this tenant and mode has never paid (no transfer to that bank and
//   account that completed) — a first payment is where a leaked key or a mistyped account costs;
// - `every_transfer`: everything.
// `saved_recipients_only` is not a hold but a refusal (422 recipient_not_allowed) of a payment to
// an account that is not one of the tenant's saved recipients.
import { p } from '@mikro-orm/core';
import type { EntityManager } from '@mikro-orm/postgresql';
import type { TransferPolicy } from '../transfer-policy/service.ts';
import { executeNumbered } from '../db/numbered-sql.ts';

export { DEFAULT_TRANSFER_POLICY, type TransferPolicy, readTransferPolicy } from '../transfer-policy/service.ts';

/** Why the policy holds a payout, in the policy's words; empty when it goes straight to its bank. */
export type HoldReason = 'above_minor' | 'new_recipient' | 'every_transfer';

export function holdReasons(
  policy: TransferPolicy,
  payout: { amountMinor: number; newRecipient: boolean },
): HoldReason[] {
  const reasons: HoldReason[] = [];
  const { above_minor, new_recipient, every_transfer } = policy.approval;
  if (every_transfer) reasons.push('every_transfer');
  if (above_minor !== null && payout.amountMinor > above_minor) reasons.push('above_minor');
  if (new_recipient && payout.newRecipient) reasons.push('new_recipient');
  return reasons;
}

/** A payee's account, as transfers name it. */
export interface PayeeAccount {
  bankCode: string;
  account: string;
}

const payeeKey = (payee: PayeeAccount) => `${payee.bankCode}/${payee.account}`;

/**
 * The payees of `payees` this tenant's mode has never paid: no transfer to that bank and account
 * that completed. One query for any number (a batch's items).
 */
export async function newPayees(em: EntityManager, tenantId: string, payees: readonly PayeeAccount[]) {
  if (payees.length === 0) return new Set<string>();
  // Numbered parameters: the ORM's `?` would spread an array into a list, and unnest needs it whole.
  const paid = await executeNumbered<{ recipient_bank_code: string; recipient_account: string }[]>(
    em,
    `select distinct t.recipient_bank_code, t.recipient_account
       from transfers t
       join unnest($1::text[], $2::text[]) as p(bank_code, account)
         on t.recipient_bank_code = p.bank_code and t.recipient_account = p.account
      where t.tenant_id = $3 and t.status = 'completed'`,
    [payees.map((payee) => payee.bankCode), payees.map((payee) => payee.account), tenantId],
  );
  const known = new Set(
    paid.map((row) => payeeKey({ bankCode: row.recipient_bank_code, account: row.recipient_account })),
  );
  return new Set(payees.map(payeeKey).filter((key) => !known.has(key)));
}

export function isNewPayee(news: Set<string>, payee: PayeeAccount): boolean {
  return news.has(payeeKey(payee));
}

/** Whether the payee is among the saved ones (`savedPayees` of src/recipients/service.ts). */
export function isSavedPayee(saved: Set<string>, payee: PayeeAccount): boolean {
  return saved.has(payeeKey(payee));
}

export const RECIPIENT_NOT_ALLOWED =
  'the transfer policy allows payments to saved recipients only: save this account first (POST /api/v1/recipients)';

export type ApprovalStatus = 'required' | 'approved' | 'rejected' | 'expired';

/** Who decided: a key (its id and name) or a console user. */
export interface ApprovalActor {
  type: 'key' | 'user';
  id: string;
  name: string;
}

/** The approval columns transfers and transfer_batches share (migration 0035). */
export function approvalColumns() {
  return {
    approval_status: p.enum(['required', 'approved', 'rejected', 'expired'] as const).nullable(),
    approval_expires_at: p.datetime().nullable(),
    approval_decided_by: p.json<ApprovalActor>().nullable(),
    approval_decided_at: p.datetime().nullable(),
    /** The key that made the row: it may not approve it. */
    created_by_key_id: p.uuid().nullable(),
  };
}

export interface ApprovalView {
  status: ApprovalStatus;
  expires_at: string;
  decided_by: ApprovalActor | null;
  decided_at: string | null;
}

/** How a row's approval reads (null for one the policy did not hold). */
export function approvalView(row: {
  approval_status?: ApprovalStatus | null;
  approval_expires_at?: Date | null;
  approval_decided_by?: ApprovalActor | null;
  approval_decided_at?: Date | null;
}): ApprovalView | null {
  if (!row.approval_status || !row.approval_expires_at) return null;
  return {
    status: row.approval_status,
    expires_at: row.approval_expires_at.toISOString(),
    decided_by: row.approval_decided_by ?? null,
    decided_at: row.approval_decided_at?.toISOString() ?? null,
  };
}
