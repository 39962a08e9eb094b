// The transfer domain's rules (decisions §4, §12), in one pure module: amounts and fees, the daily
// limit, the statuses and how each vocabulary reads them, when a bank's answer contradicts the
// books, and every failure a transfer can end a step with. No I/O and no Node built-ins: the API,
// the activities and the transfer workflow all decide with this code, so the workflow may import it
// (the architecture check lets workflows import domain modules). The request fingerprints, which
// only the API makes, are in fingerprints.ts.
import { ApplicationFailure } from '@temporalio/common';

// ---- amounts ---------------------------------------------------------------------------------

export const MIN_TRANSFER_MINOR = 100; // ₦1
export const MAX_TRANSFER_MINOR = 1_000_000_000; // ₦10,000,000

/** ₦10 up to ₦5,000; ₦25 up to ₦50,000; ₦50 above. */
export function transferFee(amountMinor: number): number {
  if (amountMinor <= 500_000) return 1_000;
  if (amountMinor <= 5_000_000) return 2_500;
  return 5_000;
}

/**
 * The daily limit: a transfer passes when the amounts of today's transfers (Africa/Lagos day, not
 * failed) plus its own stay within the tenant's limit. Fees do not count towards it.
 */
export function withinDailyLimit(input: { limitMinor: number; usedMinor: number; amountMinor: number }): boolean {
  return input.usedMinor + input.amountMinor <= input.limitMinor;
}

// ---- statuses --------------------------------------------------------------------------------

/** The create vocabulary, which the projection stores: pending → processing → completed | failed. */
export const TRANSFER_STATUSES = ['pending', 'processing', 'completed', 'failed'] as const;
export type TransferStatus = (typeof TRANSFER_STATUSES)[number];

/** The get/list vocabulary: pending for pending and processing. */
export type PublicTransferStatus = 'pending' | 'successful' | 'failed';

/** Completed or failed: the books of the transfer are closed. */
export function isFinal(status: TransferStatus): status is 'completed' | 'failed' {
  return status === 'completed' || status === 'failed';
}

export function publicStatus(status: TransferStatus): PublicTransferStatus {
  if (status === 'completed') return 'successful';
  if (status === 'failed') return 'failed';
  return 'pending';
}

/** The statuses of the create vocabulary that a get/list status filter stands for. */
export function internalStatuses(status: PublicTransferStatus): TransferStatus[] {
  if (status === 'successful') return ['completed'];
  if (status === 'failed') return ['failed'];
  return ['pending', 'processing'];
}

/**
 * Whether the bank's answer contradicts our books (decisions §12): only a final status can be
 * contradicted, and only by the opposite answer.
 */
export function contradictsBooks(ours: TransferStatus | 'refused', bank: 'successful' | 'failed'): boolean {
  return (ours === 'completed' && bank === 'failed') || (ours === 'failed' && bank === 'successful');
}

// ---- the request -----------------------------------------------------------------------------

/**
 * Whether the name a bank gives an account now is the name a saved recipient was saved under
 * (decisions §20): the same letters, case and runs of whitespace aside.
 */
export function sameAccountName(saved: string, current: string): boolean {
  const plain = (name: string) => name.trim().replace(/\s+/g, ' ').toUpperCase();
  return plain(saved) === plain(current);
}

// ---- failures --------------------------------------------------------------------------------

/** Business refusals of a create: each is also the API's error code (decisions §4, interface §7.2). */
export const REFUSALS = [
  'insufficient_balance',
  'invalid_account',
  'limit_exceeded',
  'duplicate_reference',
  // Only a credit's return (decisions §21): more than is left of the credit, or a credit that cannot be returned.
  'failed_precondition',
] as const;
export type TransferRefusal = (typeof REFUSALS)[number];
/** What a refused `create` may say: a business refusal, or `unavailable` (retry later). */
export const CREATE_REFUSALS = [...REFUSALS, 'unavailable'] as const;
export type CreateRefusal = (typeof CREATE_REFUSALS)[number];

/** Each failure a transfer's steps raise, with the details it carries (the API shows a refusal's). */
export interface TransferFailureDetails {
  insufficient_balance: { required: number; available: number };
  limit_exceeded: { limit: number; used: number };
  duplicate_reference: { transfer_id: string | null };
  /** A credit's return asked for more than is left of it, or of a credit in no state to be returned. */
  failed_precondition: { returnable_minor: number };
  /** With details when a saved recipient's bank now gives another name (decisions §20). */
  invalid_account: { saved_name: string; current_name: string } | undefined;
  unavailable: undefined;
  /** The create was refused: the run ends failed, so the reference may be tried again. */
  transfer_refused: undefined;
  /** No connector of the key's mode (other than those tried) serves transfers. */
  no_connector: undefined;
  /** A definitive refusal by the bank that says it did not take the transfer: the next connector may. */
  bank_not_taken: ProviderRefusalDetails;
  /** Any other definitive refusal by the bank: the transfer fails. */
  bank_rejected: ProviderRefusalDetails;
  /** A definitive refusal of the name enquiry other than "no such account". */
  name_enquiry_failed: ProviderRefusalDetails;
  /** A reservation attempt that arrived after the create path gave up on it. */
  reservation_abandoned: undefined;
  unknown_tenant: undefined;
  unknown_transfer: undefined;
  /** An operator's resolution sent to a run that has no reserved transfer (yet). */
  not_created: undefined;
  /** An operator's resolution that says otherwise than the one the transfer already holds. */
  already_resolved: undefined;
  /** An approval decision on a payout its policy did not hold (decisions §20). */
  not_held: undefined;
  /** An approval decision on a payout already decided, or whose approval expired. */
  already_decided: { status: 'approved' | 'rejected' | 'expired' };
  /** An approval decision by the key that made the payout. */
  forbidden: undefined;
  /** An operator's resolution of a payout still awaiting its approval (nothing was sent). */
  awaiting_approval: undefined;
}
export type TransferFailureType = keyof TransferFailureDetails;

/** What a provider's definitive refusal carries: its outcome and raw code. */
export interface ProviderRefusalDetails {
  outcome: string;
  providerCode: string | null;
}

export function isCreateRefusal(type: string | null | undefined): type is CreateRefusal {
  return (CREATE_REFUSALS as readonly (string | null | undefined)[]).includes(type);
}

function isRefusal(type: string | null | undefined): type is TransferRefusal {
  return (REFUSALS as readonly (string | null | undefined)[]).includes(type);
}

/**
 * The one way a transfer step fails for good: a non-retryable ApplicationFailure whose type is a
 * known failure and whose details have that failure's shape (read back by `failureDetails`).
 */
export function transferFailure<T extends TransferFailureType>(
  type: T,
  message: string,
  ...[details, cause]: undefined extends TransferFailureDetails[T]
    ? [details?: TransferFailureDetails[T], cause?: unknown]
    : [details: TransferFailureDetails[T], cause?: unknown]
): ApplicationFailure {
  return ApplicationFailure.create({
    type,
    message,
    nonRetryable: true,
    details: details === undefined ? [] : [details],
    ...(cause instanceof Error ? { cause } : {}),
  });
}

/** A step's refusal passed on as the create's answer: its type, message and details, without its causes. */
export function passedOnRefusal(error: unknown): ApplicationFailure | undefined {
  if (!(error instanceof ApplicationFailure) || !isRefusal(error.type)) return undefined;
  return ApplicationFailure.create({
    type: error.type,
    message: error.message,
    nonRetryable: true,
    details: error.details ? [...error.details] : [],
  });
}

/** The details a failure of `type` carries, or undefined when it has none. */
export function failureDetails<T extends TransferFailureType>(
  failure: ApplicationFailure,
  type: T,
): TransferFailureDetails[T] | undefined {
  if (failure.type !== type) return undefined;
  return failure.details?.[0] as TransferFailureDetails[T] | undefined;
}

// ---- batches (decisions §14) -----------------------------------------------------------------

export const MAX_BATCH_ITEMS = 1_000;

/** An item that names no reference gets its batch's, with its index (from 0). */
export function batchItemReference(batchReference: string, index: number): string {
  return `${batchReference}-${index}`;
}

/** What deciding an item of a batch that is not atomic weighs: its amount, and its fee. */
export interface ItemAmounts {
  amountMinor: number;
  feeMinor: number;
}

/** Batches a tenant may have open (not completed) at once in one mode (decisions §18); the next is 429. */
export const MAX_OPEN_BATCHES = 5;

export type ItemDecision = 'accepted' | 'insufficient_balance' | 'limit_exceeded';

/**
 * Items of a batch that is not atomic, decided in index order against the wallet's available balance
 * and the day's usage, as single creates would be one after the other: an accepted item takes its
 * amount + fee from the balance and its amount from the limit; a refused one takes nothing, so a
 * smaller item after it may still pass. The limit is checked first, as a single create checks it.
 */
export function decideItems(
  items: readonly ItemAmounts[],
  start: { availableMinor: number; usedMinor: number; limitMinor: number },
): { decisions: ItemDecision[]; availableMinor: number; usedMinor: number } {
  let { availableMinor, usedMinor } = start;
  const decisions = items.map((item): ItemDecision => {
    if (!withinDailyLimit({ limitMinor: start.limitMinor, usedMinor, amountMinor: item.amountMinor })) {
      return 'limit_exceeded';
    }
    const total = item.amountMinor + item.feeMinor;
    if (total > availableMinor) return 'insufficient_balance';
    availableMinor -= total;
    usedMinor += item.amountMinor;
    return 'accepted';
  });
  return { decisions, availableMinor, usedMinor };
}

/**
 * Whether a waiting item of a batch that is not atomic is worth its name enquiry (decisions §18),
 * decided in index order as decideItems will decide it when the items are reserved: `before` are
 * the batch's undecided items ahead of it, each named already or `asking` (its enquiry in flight;
 * refused ones are not among them). `enquire` if it would be accepted were every one ahead of it
 * accepted; its refusal if it would be refused and nothing ahead of it is still asking; otherwise
 * `wait` for those enquiries to answer (one that turns out an unknown account frees its share).
 */
export function screenItem(
  before: readonly (ItemAmounts & { asking: boolean })[],
  item: ItemAmounts,
  start: { availableMinor: number; usedMinor: number; limitMinor: number },
): 'enquire' | 'wait' | Exclude<ItemDecision, 'accepted'> {
  const decision = decideItems([...before, item], start).decisions.at(-1)!;
  if (decision === 'accepted') return 'enquire';
  return before.some((ahead) => ahead.asking) ? 'wait' : decision;
}

/** An item's status as the API shows it: refused, or its transfer's get/list status (pending until decided). */
export type BatchItemStatus = 'refused' | PublicTransferStatus;

export function batchItemStatus(
  item: 'queued' | 'refused' | 'accepted',
  transfer: TransferStatus | null,
): BatchItemStatus {
  if (item === 'refused') return 'refused';
  return transfer ? publicStatus(transfer) : 'pending';
}
