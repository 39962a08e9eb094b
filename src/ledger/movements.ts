// Every movement of money the gateway makes, as pure functions: each returns one journal entry
// (its idempotency key, kind, description and postings by account) from plain inputs, with no
// database. Activities, the operator CLI and the discrepancy settlement post these and nothing
// else (`postMovement` in ./ledger.ts resolves the accounts), so which accounts a movement touches
// and by how much is written once, here, and tested with tables of cases.
import type { SystemAccountCode, TenantAccountCode } from './accounts.ts';
import { assertMinorUnits } from '../lib/money.ts';

/** An account a posting goes to: a platform account, one of the tenant's, a card's own or its holds. */
export type AccountRef =
  { system: SystemAccountCode } | { tenant: TenantAccountCode } | { card: string } | { cardHold: string };

export interface MovementPosting {
  account: AccountRef;
  /** Signed kobo: positive adds to the account's balance, negative takes from it. */
  amountMinor: number;
}

export interface Movement {
  /** Business key: posting the same movement twice applies it once. */
  idempotencyKey: string;
  kind: string;
  description: string;
  postings: MovementPosting[];
}

const wallet: AccountRef = { tenant: 'wallet' };
const inFlight: AccountRef = { tenant: 'in_flight' };
const suspense: AccountRef = { tenant: 'suspense' };

export interface TransferAmounts {
  transferId: string;
  reference: string;
  amountMinor: number;
  feeMinor: number;
  /**
   * What pays it: the wallet (every transfer), or the suspense account for the return of a credit
   * it holds (decisions §21), which a failure gives the money back to.
   */
  fundedFrom?: 'wallet' | 'suspense';
}

const sourceOf = (transfer: TransferAmounts): AccountRef => (transfer.fundedFrom === 'suspense' ? suspense : wallet);

/** Accepting a transfer: amount + fee from the wallet (or, returning a held credit, suspense) into in flight. */
export function transferReserve(transfer: TransferAmounts): Movement {
  const total = transferTotal(transfer);
  return {
    idempotencyKey: `transfer:${transfer.transferId}:reserve`,
    kind: 'transfer_reserve',
    description: `reserve transfer ${transfer.reference}${transfer.fundedFrom === 'suspense' ? ' from suspense' : ''}`,
    postings: [
      { account: sourceOf(transfer), amountMinor: -total },
      { account: inFlight, amountMinor: total },
    ],
  };
}

/**
 * An atomic batch accepted (decisions §14): every amount and fee of its items from the wallet into in
 * flight, in one entry. Its items' transfers then draw on it instead of reserving each.
 */
export function transferBatchReserve(batch: { batchId: string; batchReference: string; totalMinor: number }): Movement {
  positiveMinor(batch.totalMinor, 'batch total');
  return {
    idempotencyKey: `transfer-batch:${batch.batchId}:reserve`,
    kind: 'transfer_batch_reserve',
    description: `reserve transfer batch ${batch.batchReference}`,
    postings: [
      { account: wallet, amountMinor: -batch.totalMinor },
      { account: inFlight, amountMinor: batch.totalMinor },
    ],
  };
}

/** An atomic batch's item refused after its batch was reserved: its amount + fee back to the wallet. */
export function transferBatchItemRelease(item: {
  batchId: string;
  index: number;
  reference: string;
  amountMinor: number;
  feeMinor: number;
  reason: string;
}): Movement {
  const total = transferTotal({
    transferId: '',
    reference: item.reference,
    amountMinor: item.amountMinor,
    feeMinor: item.feeMinor,
  });
  return {
    idempotencyKey: `transfer-batch:${item.batchId}:item:${item.index}:release`,
    kind: 'transfer_batch_release',
    description: `release batch item ${item.reference}: ${item.reason}`,
    postings: [
      { account: inFlight, amountMinor: -total },
      { account: wallet, amountMinor: total },
    ],
  };
}

/** The bank paid: in flight out to bank settlement (the amount) and fee revenue (the fee). */
export function transferSettle(transfer: TransferAmounts): Movement {
  transferTotal(transfer);
  return {
    idempotencyKey: `transfer:${transfer.transferId}:settle`,
    kind: 'transfer_settle',
    description: `settle transfer ${transfer.reference}`,
    postings: withoutZeros([
      { account: inFlight, amountMinor: -(transfer.amountMinor + transfer.feeMinor) },
      { account: { system: 'bank_settlement' }, amountMinor: transfer.amountMinor },
      { account: { system: 'fee_revenue' }, amountMinor: transfer.feeMinor },
    ]),
  };
}

/** The transfer failed: amount + fee from in flight back to what paid it (the wallet, or suspense). */
export function transferReverse(transfer: TransferAmounts, reason: string): Movement {
  const total = transferTotal(transfer);
  return {
    idempotencyKey: `transfer:${transfer.transferId}:reverse`,
    kind: 'transfer_reverse',
    description: `reverse transfer ${transfer.reference}: ${reason}`,
    postings: [
      { account: inFlight, amountMinor: -total },
      { account: sourceOf(transfer), amountMinor: total },
    ],
  };
}

/**
 * The bank reversed a transfer it had paid out (decisions §21), confirmed by its status query: the
 * settlement undone, amount + fee back to what paid it: the wallet (its statement line
 * `transfer_reversal`), or suspense for the return of a held credit.
 */
export function transferReversal(transfer: TransferAmounts): Movement {
  const total = transferTotal(transfer);
  return {
    idempotencyKey: `transfer:${transfer.transferId}:reversal`,
    kind: 'transfer_reversal',
    description: `bank reversed transfer ${transfer.reference} after paying it out`,
    postings: withoutZeros([
      { account: { system: 'bank_settlement' }, amountMinor: -transfer.amountMinor },
      { account: { system: 'fee_revenue' }, amountMinor: -transfer.feeMinor },
      { account: sourceOf(transfer), amountMinor: total },
    ]),
  };
}

/**
 * Aligns the books with the bank after a discrepancy (decisions §12). Bank paid a transfer we
 * failed and refunded: amount + fee back from the wallet into bank settlement and fee revenue, as
 * a settlement would have done. Bank failed a transfer we completed: the settlement undone and the
 * wallet refunded.
 */
export function discrepancyCorrection(
  transfer: TransferAmounts,
  discrepancy: { id: string; ours: 'completed' | 'failed'; bank: 'successful' | 'failed' },
): Movement {
  transferTotal(transfer);
  const sign = discrepancy.bank === 'successful' ? 1 : -1;
  return {
    idempotencyKey: `transfer:${transfer.transferId}:discrepancy:${discrepancy.id}`,
    kind: 'transfer_discrepancy',
    description: `settle discrepancy of transfer ${transfer.reference}: books ${discrepancy.ours}, bank ${discrepancy.bank}`,
    postings: withoutZeros([
      { account: wallet, amountMinor: -sign * (transfer.amountMinor + transfer.feeMinor) },
      { account: { system: 'bank_settlement' }, amountMinor: sign * transfer.amountMinor },
      { account: { system: 'fee_revenue' }, amountMinor: sign * transfer.feeMinor },
    ]),
  };
}

/**
 * Money received on a virtual account, less what its provider kept (decisions §18; Paystack's
 * `fees`): the wallet is credited the amount the sender paid and debited the fee, in this one entry
 * (the credit first, so the balance never dips), and inbound clearing gives up only the net amount,
 * which is what the provider owes and settles: the fee never reaches the platform, so it is no
 * account's revenue or expense. A credit without a fee is the two postings it always was.
 */
export function inboundCredit(credit: {
  provider: string;
  transactionReference: string;
  accountNumber: string;
  senderName: string;
  amountMinor: number;
  feeMinor?: number;
}): Movement {
  positiveMinor(credit.amountMinor, 'amount');
  const feeMinor = credit.feeMinor ?? 0;
  assertMinorUnits(feeMinor, 'provider fee');
  if (feeMinor >= credit.amountMinor) {
    throw new RangeError(`a provider fee of ${feeMinor} leaves nothing of a credit of ${credit.amountMinor}`);
  }
  return {
    idempotencyKey: `inbound-credit:${credit.provider}:${credit.transactionReference}`,
    kind: 'inbound_credit',
    description: `credit to ${credit.accountNumber} from ${credit.senderName}`,
    postings: withoutZeros([
      { account: { system: 'inbound_clearing' }, amountMinor: -(credit.amountMinor - feeMinor) },
      { account: wallet, amountMinor: credit.amountMinor },
      { account: wallet, amountMinor: -feeMinor },
    ]),
  };
}

/** What an inbound credit brought in: what the sender paid, less what its provider kept. */
export interface HeldCredit {
  provider: string;
  transactionReference: string;
  accountNumber: string;
  senderName: string;
  amountMinor: number;
  feeMinor?: number;
}

/**
 * Money received on a closed or expired virtual account (decisions §21): held in the tenant mode's
 * suspense account, never its wallet, until it goes back to its sender (a return paid from
 * suspense) or an operator releases it to the wallet. Under the same key as `inboundCredit`: a
 * credit is booked once, one way or the other. Only what reached the platform is held (the
 * provider's fee, when it kept one, never did).
 */
export function inboundCreditHeld(credit: HeldCredit): Movement {
  const netMinor = creditNet(credit);
  return {
    idempotencyKey: `inbound-credit:${credit.provider}:${credit.transactionReference}`,
    kind: 'inbound_credit_held',
    description: `credit to closed account ${credit.accountNumber} from ${credit.senderName}, held`,
    postings: [
      { account: { system: 'inbound_clearing' }, amountMinor: -netMinor },
      { account: suspense, amountMinor: netMinor },
    ],
  };
}

/** An operator releases a held credit to the tenant's wallet (`admin credits release`): all of it. */
export function heldCreditRelease(credit: HeldCredit): Movement {
  const netMinor = creditNet(credit);
  return {
    idempotencyKey: `inbound-credit-release:${credit.provider}:${credit.transactionReference}`,
    kind: 'inbound_credit_release',
    description: `held credit to ${credit.accountNumber} from ${credit.senderName} released to the wallet`,
    postings: [
      { account: suspense, amountMinor: -netMinor },
      { account: wallet, amountMinor: netMinor },
    ],
  };
}

function creditNet(credit: HeldCredit): number {
  positiveMinor(credit.amountMinor, 'amount');
  const feeMinor = credit.feeMinor ?? 0;
  assertMinorUnits(feeMinor, 'provider fee');
  if (feeMinor >= credit.amountMinor) {
    throw new RangeError(`a provider fee of ${feeMinor} leaves nothing of a credit of ${credit.amountMinor}`);
  }
  return credit.amountMinor - feeMinor;
}

/** JIT funding: from the wallet onto the card. */
export function cardFunding(funding: { fundingId: string; cardId: string; amountMinor: number }): Movement {
  positiveMinor(funding.amountMinor, 'amount');
  return {
    idempotencyKey: `card-funding:${funding.fundingId}`,
    kind: 'card_funding',
    description: `JIT funding of card ${funding.cardId}`,
    postings: [
      { account: wallet, amountMinor: -funding.amountMinor },
      { account: { card: funding.cardId }, amountMinor: funding.amountMinor },
    ],
  };
}

/**
 * The processor refused a funding for good: the money goes back from the card to the wallet. All
 * of it, or (`fundingMinor` more than `amountMinor`) what the card still held of it when purchases
 * had already spent the rest (activities/cards/cards.ts).
 */
export function cardFundingReverse(funding: {
  fundingId: string;
  cardId: string;
  amountMinor: number;
  fundingMinor?: number;
}): Movement {
  positiveMinor(funding.amountMinor, 'amount');
  const whole = funding.fundingMinor ?? funding.amountMinor;
  if (whole < funding.amountMinor) {
    throw new RangeError(`cannot return ${funding.amountMinor} of a funding of ${whole}`);
  }
  return {
    idempotencyKey: `card-funding:${funding.fundingId}:reverse`,
    kind: 'card_funding_reverse',
    description:
      whole === funding.amountMinor
        ? `card processor refused funding ${funding.fundingId}`
        : `card processor refused funding ${funding.fundingId}: ${funding.amountMinor} of ${whole} returned, the rest already spent on the card`,
    postings: [
      { account: { card: funding.cardId }, amountMinor: -funding.amountMinor },
      { account: wallet, amountMinor: funding.amountMinor },
    ],
  };
}

export interface AuthorizationAmounts {
  authorizationId: string;
  cardId: string;
  amountMinor: number;
}

/**
 * An authorization's journal key: its card and its id, since ids are the processor's per card
 * (decisions §16). Entries written before that (migration 0021) keep `card-authorization:<id>:…`;
 * no key of this form can take that form, and `ledger verify` recognises both.
 */
const authorizationEntryKey = (authorization: AuthorizationAmounts, step: 'hold' | 'clear' | 'release') =>
  `card:${authorization.cardId}:authorization:${authorization.authorizationId}:${step}`;

/** An approved authorization: the amount moves from the card to the card's holds. */
export function cardAuthorizationHold(authorization: AuthorizationAmounts): Movement {
  positiveMinor(authorization.amountMinor, 'authorization amount');
  return {
    idempotencyKey: authorizationEntryKey(authorization, 'hold'),
    kind: 'card_authorization_hold',
    description: `hold for authorization ${authorization.authorizationId}`,
    postings: [
      { account: { card: authorization.cardId }, amountMinor: -authorization.amountMinor },
      { account: { cardHold: authorization.cardId }, amountMinor: authorization.amountMinor },
    ],
  };
}

/**
 * The processor cleared `clearedMinor` (at most the hold): that goes to the card processor's
 * settlement account, the rest of the hold back to the card.
 */
export function cardAuthorizationClear(authorization: AuthorizationAmounts & { clearedMinor: number }): Movement {
  positiveMinor(authorization.amountMinor, 'authorization amount');
  positiveMinor(authorization.clearedMinor, 'cleared amount');
  if (authorization.clearedMinor > authorization.amountMinor) {
    throw new RangeError(
      `cleared amount ${authorization.clearedMinor} is more than the hold of ${authorization.amountMinor}`,
    );
  }
  return {
    idempotencyKey: authorizationEntryKey(authorization, 'clear'),
    kind: 'card_authorization_clear',
    description: `authorization ${authorization.authorizationId} cleared for ${authorization.clearedMinor}`,
    postings: withoutZeros([
      { account: { cardHold: authorization.cardId }, amountMinor: -authorization.amountMinor },
      { account: { system: 'card_settlement' }, amountMinor: authorization.clearedMinor },
      { account: { card: authorization.cardId }, amountMinor: authorization.amountMinor - authorization.clearedMinor },
    ]),
  };
}

/** The processor reversed the authorization: the whole hold goes back to the card. */
export function cardAuthorizationRelease(authorization: AuthorizationAmounts): Movement {
  positiveMinor(authorization.amountMinor, 'authorization amount');
  return {
    idempotencyKey: authorizationEntryKey(authorization, 'release'),
    kind: 'card_authorization_release',
    description: `authorization ${authorization.authorizationId} reversed`,
    postings: [
      { account: { cardHold: authorization.cardId }, amountMinor: -authorization.amountMinor },
      { account: { card: authorization.cardId }, amountMinor: authorization.amountMinor },
    ],
  };
}

/** An operator funds a tenant's wallet from the platform's external funding account. */
export function walletFunding(funding: { tenantId: string; reference: string; amountMinor: number }): Movement {
  positiveMinor(funding.amountMinor, 'amount');
  return {
    idempotencyKey: `wallet-funding:${funding.tenantId}:${funding.reference}`,
    kind: 'wallet_funding',
    description: `operator funding ${funding.reference}`,
    postings: [
      { account: { system: 'external_funding' }, amountMinor: -funding.amountMinor },
      { account: wallet, amountMinor: funding.amountMinor },
    ],
  };
}

/** A fee-free transfer has no fee posting: the ledger refuses zero postings. */
function withoutZeros(postings: MovementPosting[]): MovementPosting[] {
  return postings.filter((posting) => posting.amountMinor !== 0);
}

/**
 * A movement's amount is a positive whole number of kobo (a fee may be 0). Checked here, where the
 * direction of each posting is decided: a negative amount would otherwise run the movement
 * backwards (a wallet funding of -x posted as a withdrawal of x) and still balance.
 */
function positiveMinor(value: number, what: string): void {
  assertMinorUnits(value, what);
  if (value === 0) throw new RangeError(`${what} must be more than 0 kobo`);
}

/** A transfer's amount + fee, each checked. */
function transferTotal(transfer: TransferAmounts): number {
  positiveMinor(transfer.amountMinor, 'transfer amount');
  assertMinorUnits(transfer.feeMinor, 'transfer fee');
  return transfer.amountMinor + transfer.feeMinor;
}
