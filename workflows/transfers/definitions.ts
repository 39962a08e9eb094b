// The transfer workflow's Temporal handles, shared by the workflow, its activities and the API: its
// type and id, its input, the `create` update that answers the transfer's id once its money is
// reserved, the bank's signal and the operator's `resolve` update that settle it, the `status`
// query, and the payloads they carry. The transfer's rules (statuses, refusals, fees, limits) live
// in src/transfers/domain.ts. Nothing here is a response shape: the API renders responses from the
// projection.
import { defineQuery, defineSignal, defineUpdate } from '@temporalio/workflow';
import type { TransferStatus } from '../../src/transfers/domain.ts';
import type { KeyMode } from '../../src/connectors/types.ts';
export {
  TRANSFER_BATCH_CHUNK_WORKFLOW_TYPE,
  TRANSFER_BATCH_WORKFLOW_TYPE,
  TRANSFER_REVERSAL_WORKFLOW_TYPE,
  TRANSFER_WORKFLOW_TYPE,
  transferBatchChunkWorkflowId,
  transferBatchWorkflowId,
  transferReversalWorkflowId,
  transferWorkflowId,
} from '../workflow-names.ts';

/** What the API validated and computed; the workflow's input and the `create` update's argument. */
export interface TransferRequest {
  tenantId: string;
  reference: string;
  /** SHA-256 of the canonical request body: a repeat with another body is a duplicate_reference. */
  requestHash: string;
  amountMinor: number;
  feeMinor: number;
  currency: 'NGN';
  recipientAccount: string;
  recipientBankCode: string;
  recipientBankName: string;
  narration: string;
  metadata: Record<string, unknown>;
  /** The key's mode, which picks the connectors. */
  mode: 'test' | 'live';
  /**
   * A saved recipient's name (decisions §20), when the transfer names `recipient_id`: the name
   * enquiry must still give it, and the transfer is paid under it. Absent for a transfer to an
   * account, and in every request made before saved recipients.
   */
  savedName?: string;
  /** The key that made the transfer (decisions §19): it may not approve it. Absent before approvals. */
  createdByKeyId?: string;
  /**
   * Held by the tenant's transfer policy (decisions §20): reserved, then submitted only once
   * another key (or a person with the role) approves it within `expiresInMs` of the run's start;
   * rejected or undecided by then, it fails with its money returned. Absent when not held.
   */
  approval?: { expiresInMs: number; reasons: string[] };
  /**
   * The inbound credit this transfer sends back to its sender (decisions §21), and what pays it:
   * the wallet (a tenant's return, an ordinary transfer), or the suspense account (a held credit's,
   * fee-free, outside the daily limit). Its reservation refuses more than is left of the credit.
   * Absent for any other transfer.
   */
  returnOf?: { creditId: string; fundedFrom: 'wallet' | 'suspense' };
}

/** A decision on a held payout (decisions §20): the `decideApproval` update's argument. */
export interface ApprovalDecision {
  decision: 'approve' | 'reject';
  actor: { type: 'key' | 'user'; id: string; name: string };
  /** The reject's reason, as the caller gave it. */
  reason?: string;
  /** The caller's address and request id, for the audit log (decisions §19). */
  ip: string;
  requestId: string;
}

/** The `decideApproval` update's answer, once the decision is recorded. */
export interface ApprovalResult {
  status: 'approved' | 'rejected';
}

/** What the transfer's activities report of its projection row. */
export interface TransferRecord {
  id: string;
  status: TransferStatus;
  /** The name enquiry's answer kept with the transfer. */
  recipientName: string;
  /** The connector that took the transfer, whose bank is asked about it. */
  connector: string;
}

/** The `create` update's answer. */
export interface CreateResult {
  transferId: string;
  /** True only for the update call that created the transfer (201); repeats get false (200). */
  created: boolean;
}

/** What the bank said about the transfer, from its callback or a status query. */
export interface BankOutcome {
  status: 'successful' | 'failed';
  sessionId?: string;
  providerCode?: string;
  message?: string;
  source: 'callback' | 'status_query' | 'submission';
  /** The connector that said it (a callback's sender): the run applies only the holder's word. */
  connector?: string;
  /**
   * `failed` because the bank paid it out and then reversed it (decisions §21) before the transfer
   * was final in our books: it fails with failure_reason `reversed`.
   */
  reversed?: boolean;
}

/**
 * A transfer whose submission may have been taken by its connector (decisions §17): it is never
 * submitted elsewhere nor failed on a refusal; only that connector's status query decides, and its
 * "not found" counts only 2 minutes after the last ambiguous attempt, confirmed a minute later.
 */
export interface PossiblyTaken {
  connector: string;
  /** The last ambiguous attempt, in epoch ms. */
  lastAttemptAt: number;
  /**
   * `lost`: no answer (a timeout, a 5xx, a connection lost, a process that died mid-request);
   * `refused`: a refusal that proves nothing (unrecognised, or after an ambiguous attempt).
   */
  kind: 'lost' | 'refused';
  reason: string;
  /** The first "not found" that counts (epoch ms), until a second one a minute later proves it. */
  notFoundAt?: number;
  /** When the next status query is due to weigh a "not found" (epoch ms), before the usual schedule. */
  recheckAt?: number;
}

/**
 * What a submission answers: the bank's word on the transfer, or that it may hold it. `word`: the
 * bank answered "pending", and its final word came while the submission waited for it (its callback
 * completed the submission's activity, docs/workflows.md#the-banks-word-completes-the-submission):
 * the outcome as the `bankConfirmed` signal would have carried it.
 */
export type SubmissionAnswer =
  | { status: 'pending' | 'successful' | 'failed'; sessionId: string; providerCode: string; word?: BankOutcome }
  | { status: 'possibly_taken'; possiblyTaken: PossiblyTaken };

export interface OperatorResolution {
  outcome: 'successful' | 'failed';
  note: string;
  operator: string;
}

/** The `resolve` update's answer, once the transfer is settled or reversed: who decided it. */
export interface ResolveResult {
  transferId: string;
  status: 'completed' | 'failed';
  decidedBy: 'bank' | 'operator';
  /** The resolution the transfer holds: the first one sent (a repeat of its outcome shares it). */
  resolution: OperatorResolution;
}

export interface TransferState {
  transferId: string | undefined;
  status: TransferStatus | 'refused';
  sessionId: string | undefined;
  stuck: boolean;
  bankOutcome: BankOutcome | undefined;
  resolution: OperatorResolution | undefined;
  statusChecks: number;
  /** The connector that took the transfer (undefined until its name enquiry answers). */
  connector?: string | undefined;
  /** Set while the connector may hold the transfer without having said so (decisions §17). */
  possiblyTaken?: PossiblyTaken | undefined;
  /** Connectors that refused the transfer before processing: never offered it again. */
  triedConnectors?: string[];
  /** A held transfer's approval (decisions §20): its status and when it expires (epoch ms). */
  approval?: { status: 'required' | 'approved' | 'rejected' | 'expired'; expiresAt: number };
}

/** Carried across continue-as-new while a transfer waits for its bank. */
export interface TransferResume {
  transferId: string;
  recipientName: string;
  sessionId: string;
  waitedMs: number;
  stuck: boolean;
  statusChecks: number;
  connector: string;
  /** What the bank answered at once when its batch submitted it (a batch's item, decisions §14). */
  bankOutcome?: BankOutcome;
  /**
   * Started by its batch after the batch submitted it: the bank's word may have come before the run
   * and been kept on the item (itemBankWord), which the run takes in its first task.
   */
  earlyWord?: true;
  /** The transfer may be held by its connector without having said so (decisions §17). */
  possiblyTaken?: PossiblyTaken;
  triedConnectors?: string[];
}

/**
 * A batch's item (decisions §14) whose money its batch already reserved and whose transfer row it
 * already made: its run starts at the submit phase.
 */
export interface ReservedTransfer {
  transferId: string;
  recipientName: string;
  connector: string;
  nameEnquirySessionId: string;
}

export interface TransferWorkflowInput {
  request: TransferRequest;
  resume?: TransferResume;
  reserved?: ReservedTransfer;
  /**
   * The shape the run takes, declared by whoever starts it (the API, a batch, a run continuing as
   * new): `lean` costs no patch marker. A run started without it (by code older than the lean shape)
   * takes the lean shape through the `lean-transfer` patch, and its recorded history replays the
   * older shape (docs/workflows.md#the-lean-shape).
   */
  shape?: 'lean';
}

export const createUpdate = defineUpdate<CreateResult, [TransferRequest]>('create');
export const bankConfirmedSignal = defineSignal<[BankOutcome]>('bankConfirmed');
/** An operator's decision on a transfer the bank is silent on; answered once it is settled or reversed. */
export const resolveUpdate = defineUpdate<ResolveResult, [OperatorResolution]>('resolve');
export const statusQuery = defineQuery<TransferState>('status');
/**
 * Another key's (or a person's) decision on a held transfer or batch (decisions §20): refused
 * (`already_decided`, `forbidden` for the key that made it, `not_held`) by its validator, never
 * recorded twice; answered once the decision is recorded with its event and audit entry.
 */
export const decideApprovalUpdate = defineUpdate<ApprovalResult, [ApprovalDecision]>('decideApproval');

// The reversal workflow's handles (decisions §21): started by the holder connector's word that it
// reversed a transfer; it asks that connector's status query, and applies the reversal once it
// confirms it, or keeps the word as a discrepancy when it does not.

/** The word that started the run: who said it, and what of it the callback carried. */
export interface TransferReversalInput {
  transferId: string;
  tenantId: string;
  reference: string;
  /** The connector that holds the transfer and said it reversed it: the one asked. */
  connector: string;
  word: { eventId: string; sessionId?: string; providerCode?: string; message?: string };
  /** A batch's item awaited by its group's run (decisions §14): the run told of the reversal, by `itemWord`. */
  awaitedBy?: string;
}

/**
 * Where the run stands (the `status` query), and how it ended: `applied` (the money is back in the
 * wallet, event transfer.reversed), `failed` (it was still in flight: it failed as `reversed`, its
 * money returned by the transfer's own run), `unchanged` (already reversed or failed: nothing to
 * do), `discrepancy` (the status query did not confirm it: kept for operators, nothing moved).
 */
export interface TransferReversalState {
  phase: 'confirming' | 'applying' | 'waiting_for_transfer' | 'done';
  /** What the status query said: `reversed` confirms; anything else, or no answer, does not. */
  bankSays?: string;
  outcome?: 'applied' | 'failed' | 'unchanged' | 'discrepancy';
}

export const reversalStatusQuery = defineQuery<TransferReversalState>('status');

/** What the connector's status query says of a transfer it said it reversed. */
export interface ReversalCheck {
  status: 'pending' | 'successful' | 'failed' | 'reversed' | 'unknown';
  sessionId?: string;
  providerCode?: string;
  message?: string;
}

/** What applying a confirmed reversal did, under the transfer's row lock. */
export type ReversalApplied =
  | { outcome: 'applied'; reversedAt: string }
  | { outcome: 'already_reversed' | 'already_failed' }
  | { outcome: 'in_flight' };

/** What the reversal workflow asks of its activities (activities/transfers/reversals.ts). */
export type TransferReversalActivities = Pick<TransferActivities, 'recordDiscrepancy'> & {
  /**
   * The holder connector's status query about the transfer. `unknown`: it has no such transfer, or
   * refused to say (a definitive refusal); a transient fault is thrown, for the retry policy.
   */
  reversalStatus(input: { transferId: string; connector: string }): Promise<ReversalCheck>;
  /**
   * A confirmed reversal, once, in one transaction under the transfer's row lock: a completed
   * transfer gets its amount and fee back to the wallet (journal `transfer:<id>:reversal`, kind
   * `transfer_reversal`), status failed with failure_reason `reversed` and reversed_at, the event
   * transfer.reversed, and an open discrepancy it answers settled. One already failed (reversed
   * or not) is left as it is; one still in flight is answered `in_flight`, for the run to wait.
   */
  applyReversal(input: { transferId: string; providerCode?: string }): Promise<ReversalApplied>;
};

// The transfer batch workflow's handles (decisions §14): its input, what it hands each item's
// transfer run, and the `status` query. The batch's rules live in src/transfers/domain.ts.
export interface TransferBatchInput {
  batchId: string;
  tenantId: string;
  batchReference: string;
  totalCount: number;
  /** The key that made the batch (decisions §19): it may not approve it. */
  createdByKeyId?: string;
  /**
   * Held whole by the tenant's transfer policy (decisions §20): its items are decided and reserved
   * as for any batch, then none is submitted before an approval that comes before `expiresAt`
   * (epoch ms, the batch row's approval_expires_at: the API writes both from one instant).
   * Absent when not held, as in every batch started before approvals.
   */
  approval?: { expiresAt: number };
}

/** An accepted item, for its own transfer run: the request (without metadata: its row has it) and its reservation. */
export interface BatchItemStart {
  index: number;
  request: TransferRequest;
  reserved: ReservedTransfer;
}

/**
 * What the batch's submission learned of an item its bank took or may hold: the session, what the
 * bank said at once, or that its connector may hold it (decisions §17).
 */
export interface BatchItemSubmission {
  sessionId: string;
  outcome?: BankOutcome;
  possiblyTaken?: PossiblyTaken;
}

/** What the `status` query answers: where the batch is, and its items by outcome so far. */
export interface BatchProgress {
  /** `awaiting_approval`: reserved and held by the transfer policy until decided or expired (decisions §20). */
  phase: 'enquiring' | 'reserving' | 'awaiting_approval' | 'submitting' | 'settling' | 'completed';
  total: number;
  refused: number;
  accepted: number;
  /** Items whose transfer run has started (each submits to the bank at once). */
  started: number;
  successful: number;
  failed: number;
}

export const batchStatusQuery = defineQuery<BatchProgress>('status');

/** How many of a batch's items one awaiting run takes (docs/workflows.md#a-batchs-items). */
export const BATCH_AWAIT_GROUP = 100;

/** The group (and so the awaiting run) of a batch's item: the batch and its submission's activity both ask it. */
export function awaitGroupOf(index: number, group: number = BATCH_AWAIT_GROUP): number {
  return Math.floor(index / group);
}

/** A batch's item its batch submitted cleanly, awaited by its group's run. */
export interface AwaitedItem {
  transferId: string;
  reference: string;
  connector: string;
  sessionId: string;
  /** The bank's final word, when it came with the submission's answer. */
  outcome?: BankOutcome;
  /** An operator's resolution taken while the bank was silent (kept across continue-as-new). */
  resolution?: OperatorResolution;
}

/**
 * The awaiting run's input: its batch, its group, its items still open, and where the group's wait
 * stands (its items were submitted together, so they share the single transfer's status-query
 * schedule and the stuck flag's clock).
 */
export interface BatchChunkInput {
  tenantId: string;
  batchId: string;
  batchReference: string;
  chunk: number;
  items: AwaitedItem[];
  waitedMs?: number;
  statusChecks?: number;
  stuck?: boolean;
  /** Items of the group a run before this one (continue-as-new) finished. */
  successful?: number;
  failed?: number;
}

/** What the awaiting run answers, and ends with: its items by outcome. */
export interface BatchChunkState {
  chunk: number;
  open: number;
  successful: number;
  failed: number;
  statusChecks: number;
  stuck: boolean;
}

/** A bank's word about one item of the group: the callback's signal to the awaiting run. */
export const itemWordSignal = defineSignal<[{ transferId: string; outcome: BankOutcome }]>('itemWord');
/** An operator's resolution of one item of the group (admin transfers resolve); answered once it is finished. */
export const resolveItemUpdate = defineUpdate<ResolveResult, [OperatorResolution & { transferId: string }]>(
  'resolveItem',
);
export const batchChunkStatusQuery = defineQuery<BatchChunkState>('status');

/** An item's finish as the awaiting run asks it: on the bank's word, or on an operator's. */
export interface ItemFinish {
  transferId: string;
  /** The submission's session, kept on a transfer an operator settles. */
  sessionId?: string;
  outcome?: BankOutcome;
  resolution?: OperatorResolution;
}

/** What the transfer workflow asks of its activities (activities/transfers/transfers.ts). */
export type TransferActivities = {
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
  nameEnquiry(input: {
    bankCode: string;
    accountNumber: string;
    mode: KeyMode;
    exclude?: string[];
    savedName?: string;
  }): Promise<{
    accountName: string;
    sessionId: string;
    connector: string;
  }>;
  /**
   * Creates the transfer and reserves amount + fee (wallet → in flight), with its
   * transfer.created event, in one transaction; refuses over the daily limit or the balance.
   */
  reserveFunds(input: {
    transferId: string;
    request: TransferRequest;
    recipientName: string;
    nameEnquirySessionId: string;
    /** The connector whose name enquiry answered. */
    connector: string;
    /**
     * Held for approval until then (epoch ms; decisions §20): the row says so, and the
     * transfer.approval_required event is recorded with transfer.created.
     */
    approvalExpiresAt?: number;
  }): Promise<TransferRecord>;
  /**
   * The create path in one step (the lean shape: one local activity, one marker): the name
   * enquiry, then the reservation under the connector that answered, as nameEnquiry and
   * reserveFunds make them. Refusals and faults are theirs.
   */
  acceptTransfer(input: {
    transferId: string;
    request: TransferRequest;
    approvalExpiresAt?: number;
  }): Promise<TransferRecord & { nameEnquirySessionId: string }>;
  /**
   * A held transfer's decision (decisions §20), once, under its row lock, with its event (and for
   * a key's or a person's decision its audit entry): `approved` goes on to its bank; `rejected` and
   * `expired` fail it with amount and fee returned (failure_reason `rejected` / `approval_expired`,
   * events transfer.rejected and transfer.failed). A transfer already decided answers as it stands.
   */
  decideApproval(input: {
    transferId: string;
    outcome: 'approved' | 'rejected' | 'expired';
    decision?: ApprovalDecision;
  }): Promise<TransferRecord & { approval: 'required' | 'approved' | 'rejected' | 'expired' | null }>;
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
  submitToBank(input: {
    transferId: string;
    request: TransferRequest;
    recipientName: string;
    connector: string;
    /** The name enquiry's session at that connector (the generic contract sends it). */
    sessionId?: string;
    /**
     * The transfer is still `pending` (its first submission): the activity marks it `processing`
     * with the answer it returns, as markProcessing would, so the workflow's next task need not
     * (runs of the lean shape, docs/workflows.md#the-lean-shape).
     */
    markProcessing?: boolean;
  }): Promise<SubmissionAnswer>;
  /** The bank's word about a batch's item that came before the item's run started, if any. */
  itemBankWord(input: { transferId: string }): Promise<BankOutcome | undefined>;
  /** The transfer passes to the connector whose name enquiry answered after a "not taken"; false if it may not. */
  assignConnector(input: { transferId: string; connector: string; sessionId: string }): Promise<boolean>;
  /** `taken` (default): the bank's answer settled the submission, whose possibly-taken mark goes. */
  markProcessing(input: { transferId: string; sessionId: string; taken?: boolean }): Promise<void>;
  /** The connector's status query proved the transfer was never taken (decisions §17): its mark goes. */
  clearPossiblyTaken(input: { transferId: string; lastAttemptAt: number }): Promise<void>;
  /**
   * A connector that does not hold the transfer answered about it (decisions §17): kept for
   * operators with both connectors named, never applied.
   */
  recordConnectorConflict(input: {
    transferId: string;
    bank: BankOutcome & {
      connector: string;
    };
  }): Promise<void>;
  /** The bank's status query. `unknown` when the bank has no record of it (never submitted). */
  queryBankStatus(input: { transferId: string; connector: string }): Promise<
    | BankOutcome
    | {
        status: 'pending' | 'unknown';
      }
  >;
  /** Success: in flight → bank settlement (amount) and fee revenue (fee); transfer.settled. */
  settleTransfer(input: {
    transferId: string;
    outcome: BankOutcome;
    resolution?: OperatorResolution;
  }): Promise<TransferRecord>;
  /** Failure: amount + fee back from in flight to the wallet; transfer.failed. */
  reverseTransfer(input: {
    transferId: string;
    reason: string;
    providerCode?: string;
    resolution?: OperatorResolution;
  }): Promise<TransferRecord>;
  /**
   * The create path stopped short of a confirmed reservation (an attempt timed out, failed, or a
   * later one was refused) and an earlier attempt may still commit. Settled for certain under the
   * tenant lock that reserveFunds takes first: a reservation that did commit is returned, to be
   * used by the transfer; otherwise the id is marked abandoned, so a late attempt reserves
   * nothing, and the reference stays free for a retry of the request. Null when abandoned.
   */
  settleReservation(input: { transferId: string; request: TransferRequest }): Promise<TransferRecord | null>;
  /** Unconfirmed after 24 h: marked for operators, never guessed at. */
  flagStuck(input: { transferId: string }): Promise<void>;
  /**
   * The bank answered while the workflow settled or reversed on an operator's word, and says the
   * opposite: kept as a discrepancy for operators, never applied (decisions §12). True if one is open.
   */
  recordDiscrepancy(input: { transferId: string; bank: BankOutcome }): Promise<boolean>;
};

/** What the transfer batch workflow asks of its activities (activities/transfers/bulk.ts). */
export type TransferBatchActivities = {
  /**
   * The recipient name of the queued items of [from, to); an item whose account the bank does
   * not know is refused. A batch that is not atomic decides its items in index order, as their
   * reservation will (decisions §18): an item the wallet or the day's limit can no longer cover,
   * after the items ahead of it, is refused without a name enquiry; one that could be covered
   * only if an enquiry still in flight ahead of it finds an unknown account waits for that
   * answer. A fault (a bank down, no enquiry slot in time) stops the asking: what answered is
   * kept, and the retry asks only for the rest.
   */
  enquireBatchNames(input: { batchId: string; from: number; to: number }): Promise<{
    answered: number;
    refused: number;
  }>;
  /**
   * Decides the queued items of [from, to) in one transaction, under the tenant's lock (the one a
   * single create reserves under, so the daily limit and the balance hold across both): refused
   * with a code, or made transfers with their money reserved. Answers every accepted item of the
   * range, those decided by an earlier attempt included.
   */
  reserveBatchItems(input: { batchId: string; from: number; to: number }): Promise<{
    accepted: BatchItemStart[];
    refused: number;
  }>;
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
  submitBatchItems(input: {
    batchId: string;
    from: number;
    to: number;
    /** The items' awaiting runs' group size: each item taken cleanly is marked awaited by its group's run. */
    awaitGroup?: number;
  }): Promise<
    {
      index: number;
      submitted: BatchItemSubmission | null;
    }[]
  >;
  /**
   * The batch completed, with its event, once every item is refused or its transfer has ended.
   * An item still pending (its run ended by hand, not yet resolved) keeps it open: retried.
   */
  completeBatch(input: { batchId: string }): Promise<void>;
  /**
   * A held batch's decision (decisions §20), once, under the batch row's lock: its approval
   * fields, and for a key's or a person's decision its audit entry (batch.approved /
   * batch.rejected); `expired` (no decision before its expiry) has no actor and no audit entry.
   * A batch already decided answers as it stands.
   */
  decideBatchApproval(input: {
    batchId: string;
    outcome: 'approved' | 'rejected' | 'expired';
    decision?: ApprovalDecision;
  }): Promise<{ status: 'required' | 'approved' | 'rejected' | 'expired' }>;
  /**
   * The accepted items of [from, to) of a decided held batch given its decision, in one
   * transaction: approved, their transfers' approval says so (event transfer.approved); rejected
   * or expired, each transfer still pending fails (failure_reason `rejected` / `approval_expired`)
   * with its amount and fee back in the wallet, events transfer.rejected and transfer.failed. An
   * item already given the decision is left as it is, so a retry does nothing twice.
   */
  settleHeldBatchItems(input: { batchId: string; from: number; to: number }): Promise<{
    approved: number;
    failed: number;
  }>;
  /** The bank's words kept on items before their awaiting run was there (callbacks.ts), by transfer id. */
  keptItemWords(input: { transferIds: string[] }): Promise<Record<string, BankOutcome>>;
  /**
   * Settles or reverses each item once, all in one transaction (each as settleTransfer /
   * reverseTransfer finish a single transfer: the fee, the events and webhooks), and answers what the
   * books hold for each: an item the books had already finished answers as it stands.
   */
  finishBatchItems(input: { items: ItemFinish[] }): Promise<{ transferId: string; status: TransferStatus }[]>;
  /** The holder connectors' status queries for items still unanswered, many at once; an answer that is not final is left out. */
  queryItemStatuses(input: { items: { transferId: string; connector: string }[] }): Promise<ItemFinish[]>;
  /** Items unconfirmed after 24 h flagged as stuck (the stuck view), as a single transfer is. */
  flagItemsStuck(input: { transferIds: string[] }): Promise<void>;
  /** A late word contradicting an item's books, kept for operators (decisions §12). */
  recordItemDiscrepancy(input: { transferId: string; bank: BankOutcome }): Promise<boolean>;
};
