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
import { executeNumbered } from '../db/numbered-sql.ts';

/** The transfer policy of a tenant's mode, as GET /api/v1/transfer-policy answers it. */
export interface TransferPolicy {
  approval: { above_minor: number | null; new_recipient: boolean; every_transfer: boolean };
  approval_expires_in_hours: number;
  saved_recipients_only: boolean;
  live_keys_need_ip_allow_list: boolean;
}

export const DEFAULT_TRANSFER_POLICY: TransferPolicy = {
  approval: { above_minor: null, new_recipient: false, every_transfer: false },
  approval_expires_in_hours: 24,
  saved_recipients_only: false,
  live_keys_need_ip_allow_list: false,
};

/** The policy of the tenant's mode (`tenantId`: the mode's id, as every store scopes by); all off without a row. */
export async function transferPolicyOf(em: EntityManager, tenantId: string): Promise<TransferPolicy> {
  const [row] = await em.execute<
    {
      above_minor: string | null;
      new_recipient: boolean;
      every_transfer: boolean;
      approval_expires_in_hours: number;
      saved_recipients_only: boolean;
      live_keys_need_ip_allow_list: boolean;
    }[]
  >(
    `select above_minor, new_recipient, every_transfer, approval_expires_in_hours, saved_recipients_only,
            live_keys_need_ip_allow_list
       from transfer_policies where tenant_id = ?`,
    [tenantId],
  );
  if (!row) return DEFAULT_TRANSFER_POLICY;
  return {
    approval: {
      above_minor: row.above_minor === null ? null : Number(row.above_minor),
      new_recipient: row.new_recipient,
      every_transfer: row.every_transfer,
    },
    approval_expires_in_hours: row.approval_expires_in_hours,
    saved_recipients_only: row.saved_recipients_only,
    live_keys_need_ip_allow_list: row.live_keys_need_ip_allow_list,
  };
}

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

/** A decision on a held payout, as the audit log records it (decisions §19). */
export interface DecisionAudit {
  /** The id of the tenant's mode. */
  tenantId: string;
  action: 'transfer.approved' | 'transfer.rejected' | 'batch.approved' | 'batch.rejected';
  target: { type: 'transfer' | 'transfer_batch'; id: string };
  actor: ApprovalActor;
  ip: string;
  requestId: string;
  details: Record<string, unknown>;
}

/** Records the decision in the tenant's audit log, in the caller's transaction. */
export async function auditDecision(em: EntityManager, entry: DecisionAudit): Promise<void> {
  await em.execute(
    `insert into audit_log (id, tenant_id, action, actor_type, actor_id, actor_name, target_type, target_id, ip,
                            request_id, details)
     values (gen_random_uuid(), ?, ?, ?, ?, ?, ?, ?, ?, ?, ?::jsonb)`,
    [
      entry.tenantId,
      entry.action,
      entry.actor.type,
      entry.actor.id,
      entry.actor.name,
      entry.target.type,
      entry.target.id,
      entry.ip,
      entry.requestId,
      JSON.stringify(entry.details),
    ],
  );
}
