// What the API, the activities and the virtual-account workflows share: workflow types and ids,
// the inbound credit's shape and the `status` queries. No workflow code, so the API can import it.
import { defineQuery } from '@temporalio/workflow';
import type { AllocateVirtualAccountInput, AllocatedVirtualAccount } from '../../src/connectors/capabilities.ts';
export {
  CLOSE_WORKFLOW_TYPE,
  CREATE_WORKFLOW_TYPE,
  EXPIRY_WORKFLOW_TYPE,
  HELD_CREDIT_RETURN_WORKFLOW_TYPE,
  INBOUND_CREDIT_WORKFLOW_TYPE,
  closeWorkflowId,
  createWorkflowId,
  expiryWorkflowId,
  heldCreditReturnWorkflowId,
  inboundCreditWorkflowId,
} from '../workflow-names.ts';

export interface InboundCredit {
  /** The virtual-account provider the credit is for (the sandbox bank names the one it plays). */
  provider: string;
  /**
   * Who sent the notice (the callback route's provider name): it may act only on accounts of the
   * modes it serves. Absent in runs started before it was recorded.
   */
  sender?: string;
  accountNumber: string;
  /** What the sender paid (gross). */
  amountMinor: number;
  /**
   * What the provider kept of it (decisions §18, Paystack's `fees`): booked in the same entry, so
   * the wallet ends up with the rest. Absent in runs started before fees were booked: none.
   */
  feeMinor?: number;
  transactionReference: string;
  senderName: string;
  sessionId: string;
  /**
   * The sender's account and bank code, when the provider gave both (decisions §21): where the
   * credit can be returned to. Absent otherwise, and in runs started before they were recorded.
   */
  senderAccountNumber?: string;
  senderBankCode?: string;
}

/** What applying a credit did: applied, held (the account was closed or expired), refused, or a duplicate. */
export interface AppliedCredit {
  status: string;
  reason?: string;
  /** The credit's id, when it is held. */
  creditId?: string;
  /** A held credit's sender account, to return it to (decisions §21): absent when the sender is unknown. */
  returnTo?: { accountNumber: string; bankCode: string };
}

/** A held credit sent back to an account (its sender's, or one an operator names) from suspense. */
export interface HeldCreditReturn {
  creditId: string;
  accountNumber: string;
  bankCode: string;
  /** The return transfer's reference: the same on every attempt, so the return is made once. */
  reference: string;
}

/** What a held credit's return did: a transfer on its way, or the credit still held, and why. */
export type HeldCreditReturnResult =
  { status: 'returning'; transferId: string; reference: string } | { status: 'held'; reason: string };

export interface ExpiryState {
  accountId: string;
  expiresAt: string;
  /** `waiting` until expires_at; then what the expiry did (`expired`, or why it did not). */
  status: string;
}

export interface InboundCreditState {
  transactionReference: string;
  /**
   * `applying` until the credit is applied, held or refused, then `applied`, `refused` or `held`; a
   * held credit from a known sender is `returning` while it is sent back, then `returned` (its
   * transfer made) or `held` (why in `reason`).
   */
  status: string;
  reason?: string;
  /** A held credit's return transfer. */
  transferId?: string;
}

export const expiryStatusQuery = defineQuery<ExpiryState>('status');
export const inboundCreditStatusQuery = defineQuery<InboundCreditState>('status');

export interface VirtualAccountCreateInput {
  accountId: string;
  tenantId: string;
  customerId: string;
  accountName: string;
  /**
   * A BVN went with the request: it waits sealed in `virtual_account_bvns` under `accountId` (the
   * allocation opens it there), so the input, and the history, never hold it.
   */
  sealedBvn?: boolean;
  /**
   * The BVN in clear, as runs started before migration 0019 carry it. Never set any more: read
   * only so that such a run, still open at that deploy, allocates as it was asked to.
   */
  bvn?: string;
  preferredBank?: string;
  /** Providers to try, best first, and whether each takes the preferred-bank hint. */
  providers: { name: string; preferredBank: boolean }[];
  /** Our idempotency key at every provider: a repeat allocates nothing new. */
  reference: string;
  accountType: string;
  metadata: Record<string, unknown> | null;
  requestId: string | null;
  expiresAt: string | null;
  /** `NG/NGN`: named in the refusal when no provider can serve. */
  market: string;
}

export interface VirtualAccountCreateState {
  accountId: string;
  /** `allocating` at a provider, `recording` the account, then `created` (or `existing`). */
  status: 'allocating' | 'recording' | 'created' | 'existing';
  provider?: string;
}

export const createStatusQuery = defineQuery<VirtualAccountCreateState>('status');

export interface VirtualAccountCloseInput {
  accountId: string;
  tenantId: string;
  provider: string;
  accountNumber: string;
  reason: string | null;
}

export interface VirtualAccountCloseState {
  accountId: string;
  /** `closing` at the provider, `recording`, then `closed` (or `unchanged`: it had left active/frozen). */
  status: 'closing' | 'recording' | 'closed' | 'unchanged';
}

export const closeStatusQuery = defineQuery<VirtualAccountCloseState>('status');

/** What the virtual-account workflows ask of their activities (activities/virtual-accounts/virtual-accounts.ts). */
export type VirtualAccountActivities = {
  /**
   * Allocates at one provider under our reference (a repeat allocates nothing new). With
   * `sealedBvnOf` (a create's account id) the provider gets the BVN sealed under it; a copy
   * already erased refuses the allocation rather than allocating without it.
   */
  allocateVirtualAccount(
    input: AllocateVirtualAccountInput & {
      provider: string;
      sealedBvnOf?: string;
    },
  ): Promise<AllocatedVirtualAccount>;
  /**
   * The account's row and `virtual_account.created`, in one transaction, which also erases the
   * create's sealed BVN (the provider has the account). If another request with the same
   * request_id recorded one first, that one stands (created: false).
   */
  recordVirtualAccount(
    input: VirtualAccountCreateInput &
      AllocatedVirtualAccount & {
        provider: string;
      },
  ): Promise<{
    accountId: string;
    accountNumber: string;
    created: boolean;
  }>;
  /**
   * Starts the account's expiry timer workflow, on this worker's task queue; a repeat finds it
   * started. (A workflow of its own, not a child: it outlives the create workflow by design.)
   */
  startExpiry(input: { accountId: string; expiresAt: string }): Promise<void>;
  /** Closes the account at its provider (a provider closes a closed account again harmlessly). */
  closeAtProvider(input: { provider: string; accountNumber: string; reason: string | null }): Promise<void>;
  /** The row closed and `virtual_account.closed`, in one transaction; false if it had left active/frozen. */
  recordClosure(input: { accountId: string; tenantId: string; reason: string | null }): Promise<{
    closed: boolean;
  }>;
  /** Erases a create's sealed BVN when no account will be recorded (its hash and last 4 stay). */
  eraseVirtualAccountBvn(input: { accountId: string }): Promise<void>;
  /** Gives an allocation nobody needs back to its provider. */
  releaseVirtualAccount(input: { provider: string; accountNumber: string }): Promise<void>;
  expireVirtualAccount(input: { accountId: string }): Promise<string>;
  /**
   * Applies the credit once per provider transaction reference: to the wallet, or, for a closed or
   * expired account, held in the tenant mode's suspense account (decisions §21), with its sender's
   * account when it is known. A repeat answers the credit as it was recorded.
   */
  applyInboundCredit(credit: InboundCredit): Promise<AppliedCredit>;
  /**
   * Sends a held credit back, in full and without a fee, as a transfer paid from suspense, through
   * the transfers' own create under `reference` (made once, whatever the retries). A refusal (an
   * account its bank does not know, a credit no longer held) leaves the credit held and says why.
   */
  returnHeldCredit(input: HeldCreditReturn): Promise<HeldCreditReturnResult>;
};
