// What the gateway asks of a bank or virtual-account provider. Adapters turn every answer into
// either a result or a ProviderError that says whether trying again can help: workflows retry
// transient errors (network, timeout, 5xx, "system malfunction") and stop on definitive ones.

export interface NameEnquiryResult {
  accountNumber: string;
  bankCode: string;
  accountName: string;
  sessionId: string;
}

export interface SubmitTransferInput {
  /** Our reference: the bank's idempotency key for the transfer. */
  reference: string;
  amountMinor: number;
  bankCode: string;
  accountNumber: string;
  accountName: string;
  narration: string;
  /** The name enquiry's session id at the same provider, where its API takes one. */
  sessionId?: string;
}

/**
 * `reversed`: the bank paid the transfer out, then took it back (decisions §21: Paystack's
 * `reversed`, the generic contract v1.1's); the money is back with the sender.
 */
export type BankTransferStatus = 'pending' | 'successful' | 'failed' | 'reversed';

export interface TransferStatusResult {
  status: BankTransferStatus;
  sessionId: string;
  /** The provider's own response code, kept for operators. */
  rawCode: string;
  message?: string;
}

export interface AllocateVirtualAccountInput {
  /** Our idempotency key at the provider: a repeat allocates nothing new. */
  reference: string;
  accountName: string;
  customerId: string;
  bvn?: string;
  preferredBank?: string;
}

export interface AllocatedVirtualAccount {
  accountNumber: string;
  bankCode: string;
  bankName: string;
  providerReference: string;
}

export interface Bank {
  code: string;
  name: string;
  slug: string;
}

/** Our outcome vocabulary, whatever the provider's codes. */
export type ProviderOutcome =
  | 'invalid_account'
  | 'transfer_failed'
  | 'not_found'
  | 'rejected'
  | 'unavailable'
  | 'timeout'
  | 'network_error'
  | 'unknown';

export class ProviderError extends Error {
  readonly provider: string;
  readonly outcome: ProviderOutcome;
  /** Whether the same call may succeed later. */
  readonly transient: boolean;
  readonly rawCode: string | undefined;
  readonly httpStatus: number | undefined;
  /**
   * A submission's definitive refusal that the connector recognises as one of its provider's
   * documented refusals made before processing (the generic contract's 422; Paystack's "balance is
   * not enough"): the transfer may go to the next connector, unless an earlier attempt was
   * ambiguous (decisions §17). Never set on an answer that leaves any doubt.
   */
  readonly notTaken: boolean;
  /**
   * A transient fault after which the request may have reached the provider and been acted on
   * (decisions §17): no answer in time, a connection lost once the request was on its way, a 5xx,
   * an answer that cannot be read. False only where the provider cannot have acted: a 429 or 425
   * (it says it did not), or a connection that was never made (nothing was sent). Never set on a
   * definitive answer.
   */
  readonly ambiguous: boolean;
  /**
   * A definitive answer that the provider holds the transfer and will never pay it out (Paystack's
   * `otp`, decisions §13): the transfer fails, and goes to no other connector.
   */
  readonly heldUnpaid: boolean;

  constructor(
    provider: string,
    outcome: ProviderOutcome,
    transient: boolean,
    message: string,
    extra: {
      rawCode?: string | undefined;
      httpStatus?: number;
      cause?: unknown;
      notTaken?: boolean;
      /** For a transient fault: false only when the provider cannot have acted. Default true. */
      ambiguous?: boolean;
      heldUnpaid?: boolean;
    } = {},
  ) {
    super(message, { cause: extra.cause });
    this.name = 'ProviderError';
    this.provider = provider;
    this.outcome = outcome;
    this.transient = transient;
    this.rawCode = extra.rawCode;
    this.httpStatus = extra.httpStatus;
    this.notTaken = extra.notTaken === true && !transient;
    this.ambiguous = transient && extra.ambiguous !== false;
    this.heldUnpaid = extra.heldUnpaid === true && !transient;
  }
}

/** One transaction on a bank's daily settlement statement, in our vocabulary. */
export interface SettlementItem {
  kind: 'transfer' | 'inbound_credit';
  /** For a transfer, our reference (the transfer id); for a credit, the bank's transaction reference. */
  reference: string;
  sessionId: string;
  amountMinor: number;
  status: 'successful' | 'failed';
  /** The virtual-account provider a credit came through; null for transfers. */
  provider: string | null;
  accountNumber: string;
  valueTime: string;
}

export interface SettlementReport {
  /** The UTC day (YYYY-MM-DD) the statement covers. */
  date: string;
  generatedAt: string;
  items: SettlementItem[];
}

export interface BankSwitch {
  readonly name: string;
  listBanks(): Promise<Bank[]>;
  nameEnquiry(bankCode: string, accountNumber: string): Promise<NameEnquiryResult>;
  /** Accepted for processing; the outcome arrives by callback or status query. */
  submitTransfer(input: SubmitTransferInput): Promise<TransferStatusResult>;
  transferStatus(reference: string): Promise<TransferStatusResult>;
  /** The bank's settlement statement for one UTC day (YYYY-MM-DD): what it settled, failed and received. */
  settlementReport(date: string): Promise<SettlementReport>;
}

export interface VirtualAccountProvider {
  readonly name: string;
  allocate(input: AllocateVirtualAccountInput): Promise<AllocatedVirtualAccount>;
  /** `providerReference`: the provider's own id of the account, as allocate gave it, when we have it. */
  close(accountNumber: string, reason?: string, providerReference?: string): Promise<void>;
  /** Sandbox providers only: have the bank send an inbound credit for an account. */
  simulateInboundCredit?(
    accountNumber: string,
    credit: {
      amountMinor: number;
      senderName?: string;
      reference?: string;
      /** The sender's account and bank code (decisions §21): where a return of the credit goes. */
      senderAccountNumber?: string;
      senderBankCode?: string;
    },
  ): Promise<{ transactionReference: string; sessionId: string }>;
}

export interface CardProcessor {
  readonly name: string;
  /** Idempotent on `reference`. */
  issue(input: { reference: string; customerId: string }): Promise<{ cardReference: string; last4: string }>;
  setLocked(cardReference: string, locked: boolean): Promise<void>;
  /** Loads the card at the processor; idempotent on `reference`. */
  fund(input: { cardReference: string; reference: string; amountMinor: number }): Promise<void>;
  /**
   * Sandbox processors only: simulate a purchase — the processor asks the gateway for a decision
   * (provider-callback path) and reports what it received (`declined`/`timeout` without one).
   */
  simulatePurchase?(cardReference: string, purchase: SimulatedPurchase): Promise<ProcessorDecision>;
  /**
   * Sandbox processors only: have the processor send a clearing (capture) or a reversal of one of
   * its authorizations, named by card and id (authorization ids are the processor's, per card).
   */
  simulateSettlement?(
    authorization: { cardReference: string; authorizationId: string },
    action: { kind: 'clear'; amountMinor: number } | { kind: 'reverse' },
  ): Promise<{ eventId: string }>;
}

/** A purchase the sandbox processor plays; `authorizationId` repeats an earlier one (the processor's retry). */
export interface SimulatedPurchase {
  amountMinor: number;
  merchantName: string;
  merchantCategory: string;
  channel: 'pos' | 'web' | 'atm';
  authorizationId?: string | undefined;
}

/** What the processor received from the gateway (`declined` / `timeout` when nothing came in time). */
export interface ProcessorDecision {
  authorizationId: string;
  decision: 'approved' | 'declined';
  reason: string | null;
}

/** The holder of a BVN as the identity provider has them on record. */
export interface BvnHolder {
  firstName: string;
  lastName: string;
}

export interface IdentityVerifier {
  readonly name: string;
  /**
   * The holder of a BVN, or null when the BVN does not exist. The names the customer gave go with
   * it, as a BVN-match service takes them; the comparison is ours.
   */
  lookUpBvn(input: { bvn: string; firstName: string; lastName: string }): Promise<BvnHolder | null>;
}
