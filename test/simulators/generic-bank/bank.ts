// What the test bank knows and does, apart from HTTP: transfers with the magic accounts' fates,
// virtual accounts, inbound credits, the callbacks it owes the gateway, the day's statement.
//
// Every change is an entry: written to the journal (fsync'd), then applied to the books in
// memory by the same `apply` that replays the journal at start. So what a restarted bank knows
// is, by construction, what the bank it replaces had said.
import { createHash, randomBytes, randomUUID } from 'node:crypto';
import type { z } from 'zod';
import type {
  StatementItem as ContractStatementItem,
  TransferAnswer,
  TransferRequest as ContractTransferRequest,
  VirtualAccountAnswer,
} from '../../../src/connectors/generic/contract.ts';
import { nuban } from '../../../src/sandbox-bank/banks.ts';
import { ACCOUNT_ISSUERS, holderName, institution, issuerFor } from './banks.ts';
import { Journal } from './journal.ts';

/** Recipient accounts with a fixed fate (decisions §9, plus the refusal this contract has). */
export const MAGIC_ACCOUNTS = {
  /** Name enquiry: 404 invalid_account (a submission to it: 422 invalid_account). */
  invalid: '0000000000',
  /** Taken (202), then failed at the bank: `57`. */
  failsAfterAcceptance: '1111111111',
  /** Taken (202), never settled unless an operator settles it through /control. */
  neverCompletes: '2222222222',
  /** The first submission of a reference is taken, then answered 500: its answer is lost (decisions §17). */
  answerLost: '3333333333',
  /** Refused at submission: 422 refused_not_taken, nothing kept. */
  refused: '4444444444',
} as const;

/** NIBSS NIP response codes the bank puts in `code`, as a Nigerian bank's switch answers. */
export const CODES = {
  successful: { code: '00', message: 'Approved or completed successfully' },
  pending: { code: '09', message: 'Transaction in progress' },
  notPermitted: { code: '57', message: 'Transaction not permitted to sender' },
} as const;

/** `reversed` (contract v1.1): it succeeded, then the bank reversed it (a control call). */
export type TransferStatus = 'pending' | 'successful' | 'failed' | 'reversed';
type PlannedOutcome = 'successful' | 'failed' | 'held';

/**
 * A submission's body, as the bank took it: a repeat of the reference must say the same. The name
 * enquiry's `session_id`, when the gateway gave one, is never compared for idempotency.
 */
export type TransferRequest = z.output<typeof ContractTransferRequest>;

export interface Transfer {
  request: TransferRequest;
  /** The bank's own NIP session id for the transfer (the request's is the name enquiry's). */
  sessionId: string;
  outcome: PlannedOutcome;
  status: TransferStatus;
  code: string;
  message: string;
  acceptedAt: string;
  settledAt: string | null;
  /** When the bank reversed it after its success; absent in entries written before reversals. */
  reversedAt?: string | null;
  /** Wall-clock milliseconds at which it settles on its own; null when it never does. */
  dueAtMs: number | null;
}

export interface VirtualAccount {
  reference: string;
  accountNumber: string;
  bankCode: string;
  accountName: string;
  customerId: string;
  /** Only the last four digits of a BVN are kept, even by a test bank. */
  bvnLast4: string | null;
  status: 'active' | 'closed';
  openedAt: string;
}

export interface Credit {
  transactionReference: string;
  /** The reference the control call gave, scoped to the account; null when it gave none. */
  senderReference: string | null;
  accountNumber: string;
  amountMinor: number;
  senderName: string;
  senderAccountNumber: string | null;
  senderBankCode: string | null;
  sessionId: string;
  receivedAt: string;
}

export type CallbackState = 'queued' | 'delivered' | 'dropped' | 'gave_up';

export interface Callback {
  id: string;
  type: 'transfer.completed' | 'transfer.reversed' | 'virtual_account.credited';
  data: Record<string, unknown>;
  queuedAt: string;
  state: CallbackState;
  attempts: number;
  lastError: string | null;
}

export type CallbackMode = 'deliver' | 'drop';

export type Entry =
  | { kind: 'transfer.attempted'; reference: string }
  | { kind: 'transfer.accepted'; transfer: Transfer }
  | {
      kind: 'transfer.settled';
      reference: string;
      status: 'successful' | 'failed';
      code: string;
      message: string;
      at: string;
    }
  | { kind: 'transfer.reversed'; reference: string; message: string; at: string }
  | { kind: 'account.opened'; account: VirtualAccount }
  | { kind: 'account.closed'; accountNumber: string }
  | { kind: 'credit.received'; credit: Credit }
  | { kind: 'callback.queued'; callback: Omit<Callback, 'attempts' | 'lastError'> }
  | { kind: 'callback.attempted'; id: string; ok: boolean; error: string | null; gaveUp: boolean }
  | { kind: 'callbacks.mode'; mode: CallbackMode };

/** One line of the day's statement: the contract's, and the bank code this bank gives too. */
export type StatementItem = ContractStatementItem & { bank_code: string };

/** `lost`: taken, and answered with this error instead (an answer lost after the work was done). */
export type Submission =
  | { taken: true; transfer: Transfer; lost?: { status: number; code: string; message: string } }
  | { taken: false; status: number; code: string; message: string };

export interface BankSettings {
  dataDir: string;
  /** How long an ordinary transfer (and 1111111111's failure) takes to settle. */
  completionDelayMs: number;
  /** The name the gateway knows this bank under, which the statement gives credits as `provider`. */
  connectorName: string;
  /** The bank's business clock: value times and statement days. */
  now: () => Date;
}

/** A NIP session id: 30 digits, here this bank's institution prefix, the time, and randomness. */
export function newSessionId(at: Date): string {
  const stamp = at.toISOString().replace(/\D/g, '').slice(2, 14);
  const random = BigInt(`0x${randomBytes(8).toString('hex')}`)
    .toString()
    .padStart(20, '0')
    .slice(-12);
  return `999058${stamp}${random}`;
}

export class Bank {
  readonly settings: BankSettings;
  readonly transfers = new Map<string, Transfer>();
  /** How many times each reference was submitted, taken or not. */
  readonly offers = new Map<string, number>();
  readonly accounts = new Map<string, VirtualAccount>();
  private readonly accountByReference = new Map<string, string>();
  readonly credits = new Map<string, Credit>();
  /** In the order they were queued, which is the order they are sent in. */
  readonly callbacks = new Map<string, Callback>();
  callbackMode: CallbackMode = 'deliver';
  private readonly journal: Journal;
  private readonly timers = new Set<NodeJS.Timeout>();
  /** Told when a callback is queued, so that the sender need not wait for its next look. */
  onCallbackQueued: () => void = () => {};

  constructor(settings: BankSettings) {
    this.settings = settings;
    const { journal, entries } = Journal.open(settings.dataDir);
    this.journal = journal;
    for (const entry of entries) this.apply(entry as Entry);
  }

  get journalPath(): string {
    return this.journal.path;
  }

  /** Sets the timers of transfers that settle on their own, those taken before a restart included. */
  start(): void {
    for (const transfer of this.transfers.values()) {
      if (transfer.status === 'pending' && transfer.dueAtMs !== null) this.schedule(transfer, transfer.dueAtMs);
    }
  }

  /** Stops settling; the journal is closed. Nothing else is written: a kill and a stop leave the same file. */
  stop(): void {
    for (const timer of this.timers) clearTimeout(timer);
    this.timers.clear();
    this.journal.close();
  }

  private record(entry: Entry): void {
    this.journal.append(entry);
    this.apply(entry);
  }

  private apply(entry: Entry): void {
    switch (entry.kind) {
      case 'transfer.attempted':
        this.offers.set(entry.reference, (this.offers.get(entry.reference) ?? 0) + 1);
        return;
      case 'transfer.accepted':
        this.transfers.set(entry.transfer.request.reference, { ...entry.transfer });
        return;
      case 'transfer.settled': {
        const transfer = this.transfers.get(entry.reference);
        if (!transfer) return;
        Object.assign(transfer, {
          status: entry.status,
          code: entry.code,
          message: entry.message,
          settledAt: entry.at,
        });
        return;
      }
      case 'transfer.reversed': {
        const transfer = this.transfers.get(entry.reference);
        if (!transfer) return;
        Object.assign(transfer, { status: 'reversed', message: entry.message, reversedAt: entry.at });
        return;
      }
      case 'account.opened':
        this.accounts.set(entry.account.accountNumber, { ...entry.account });
        this.accountByReference.set(entry.account.reference, entry.account.accountNumber);
        return;
      case 'account.closed': {
        const account = this.accounts.get(entry.accountNumber);
        if (account) account.status = 'closed';
        return;
      }
      case 'credit.received':
        this.credits.set(entry.credit.transactionReference, { ...entry.credit });
        return;
      case 'callback.queued':
        this.callbacks.set(entry.callback.id, { ...entry.callback, attempts: 0, lastError: null });
        return;
      case 'callback.attempted': {
        const callback = this.callbacks.get(entry.id);
        if (!callback) return;
        callback.attempts += 1;
        callback.lastError = entry.error;
        if (entry.ok) callback.state = 'delivered';
        else if (entry.gaveUp) callback.state = 'gave_up';
        return;
      }
      case 'callbacks.mode':
        this.callbackMode = entry.mode;
        return;
    }
  }

  private now(): string {
    return this.settings.now().toISOString();
  }

  // ---- transfers ----

  nameEnquiry(bankCode: string, accountNumber: string): { account_name: string; session_id: string } | undefined {
    if (accountNumber === MAGIC_ACCOUNTS.invalid) return undefined;
    const own = this.accounts.get(accountNumber);
    const name =
      own && own.bankCode === bankCode && own.status === 'active' ? own.accountName : holderName(accountNumber);
    return { account_name: name, session_id: newSessionId(this.settings.now()) };
  }

  /**
   * Takes a transfer, or says why not. `conflict` is the same reference with another body; the
   * session id is left out of that comparison, since a retry after a fresh name enquiry carries
   * a new one and is still the same transfer.
   */
  submit(request: TransferRequest): Submission | { conflict: Transfer } {
    // Every offer is kept, taken or not: what a test (or the chaos run) counts of what was sent here.
    this.record({ kind: 'transfer.attempted', reference: request.reference });
    const known = this.transfers.get(request.reference);
    if (known) return sameTransfer(known.request, request) ? { taken: true, transfer: known } : { conflict: known };
    switch (request.account_number) {
      case MAGIC_ACCOUNTS.invalid:
        return {
          taken: false,
          status: 422,
          code: 'invalid_account',
          message: 'Invalid account: the transfer was not taken',
        };
      case MAGIC_ACCOUNTS.refused:
        return {
          taken: false,
          status: 422,
          code: 'refused_not_taken',
          message: 'The beneficiary bank refused the transfer; it was not taken',
        };
    }
    const outcome: PlannedOutcome =
      request.account_number === MAGIC_ACCOUNTS.failsAfterAcceptance
        ? 'failed'
        : request.account_number === MAGIC_ACCOUNTS.neverCompletes
          ? 'held'
          : 'successful';
    const transfer: Transfer = {
      request,
      sessionId: newSessionId(this.settings.now()),
      outcome,
      status: 'pending',
      ...CODES.pending,
      acceptedAt: this.now(),
      settledAt: null,
      dueAtMs: outcome === 'held' ? null : Date.now() + this.settings.completionDelayMs,
    };
    this.record({ kind: 'transfer.accepted', transfer });
    const taken = this.transfers.get(request.reference)!;
    if (taken.dueAtMs !== null) this.schedule(taken, taken.dueAtMs);
    if (request.account_number === MAGIC_ACCOUNTS.answerLost) {
      return {
        taken: true,
        transfer: taken,
        lost: { status: 500, code: 'system_malfunction', message: 'System malfunction' },
      };
    }
    return { taken: true, transfer: taken };
  }

  private schedule(transfer: Transfer, dueAtMs: number): void {
    const timer = setTimeout(
      () => {
        this.timers.delete(timer);
        if (transfer.status !== 'pending') return;
        const failed = transfer.outcome === 'failed';
        this.settle(
          transfer.request.reference,
          failed ? 'failed' : 'successful',
          failed ? CODES.notPermitted : CODES.successful,
        );
      },
      Math.max(0, dueAtMs - Date.now()),
    );
    this.timers.add(timer);
  }

  /** Ends a pending transfer and queues its `transfer.completed`; `final` when it had already ended. */
  settle(
    reference: string,
    status: 'successful' | 'failed',
    reason: { code: string; message: string },
  ): 'settled' | 'unknown' | 'final' {
    const transfer = this.transfers.get(reference);
    if (!transfer) return 'unknown';
    if (transfer.status !== 'pending') return 'final';
    this.record({ kind: 'transfer.settled', reference, status, ...reason, at: this.now() });
    this.queueCallback('transfer.completed', transferView(transfer));
    return 'settled';
  }

  /**
   * Reverses a transfer that succeeded (contract v1.1) and queues its `transfer.reversed`; its status
   * query says `reversed` from then on. `not_successful` for one pending, failed or already reversed.
   */
  reverse(reference: string, message: string): 'reversed' | 'unknown' | 'not_successful' {
    const transfer = this.transfers.get(reference);
    if (!transfer) return 'unknown';
    if (transfer.status !== 'successful') return 'not_successful';
    this.record({ kind: 'transfer.reversed', reference, message, at: this.now() });
    this.queueCallback('transfer.reversed', {
      reference,
      session_id: transfer.sessionId,
      code: transfer.code,
      message,
    });
    return 'reversed';
  }

  // ---- virtual accounts and credits ----

  openAccount(input: {
    reference: string;
    account_name: string;
    customer_id: string;
    bvn?: string | undefined;
    preferred_bank?: string | undefined;
  }): VirtualAccount {
    const known = this.accountByReference.get(input.reference);
    if (known) return this.accounts.get(known)!;
    const issuer = issuerFor(input.preferred_bank);
    const opened = [...this.accounts.values()].filter((account) => account.bankCode === issuer.code).length;
    const account: VirtualAccount = {
      reference: input.reference,
      accountNumber: nuban(issuer.code, issuer.serialBase + opened),
      bankCode: issuer.code,
      accountName: input.account_name,
      customerId: input.customer_id,
      bvnLast4: input.bvn?.slice(-4) ?? null,
      status: 'active',
      openedAt: this.now(),
    };
    this.record({ kind: 'account.opened', account });
    return this.accounts.get(account.accountNumber)!;
  }

  closeAccount(accountNumber: string): VirtualAccount | undefined {
    const account = this.accounts.get(accountNumber);
    if (account?.status === 'active') this.record({ kind: 'account.closed', accountNumber });
    return account;
  }

  /**
   * Money arrives in one of the bank's virtual accounts and the bank tells the gateway. With a
   * sender's reference the credit is that reference's within the account: a repeat is the same
   * credit, notified again as a real bank's duplicate notification is (a new callback id, the
   * same transaction reference), and the same reference for another amount is refused.
   */
  credit(
    accountNumber: string,
    input: {
      amount_minor: number;
      sender_name?: string | undefined;
      reference?: string | undefined;
      sender_account_number?: string | undefined;
      sender_bank_code?: string | undefined;
    },
  ): { credit: Credit; callbackId: string } | 'no_account' | 'closed' | 'conflict' {
    const account = this.accounts.get(accountNumber);
    if (!account) return 'no_account';
    const transactionReference =
      input.reference === undefined
        ? `TBCR${randomUUID().replaceAll('-', '').slice(0, 24).toUpperCase()}`
        : `TBCR${createHash('sha256').update(`${accountNumber}:${input.reference}`).digest('hex').slice(0, 24).toUpperCase()}`;
    let credit = this.credits.get(transactionReference);
    if (credit && credit.amountMinor !== input.amount_minor) return 'conflict';
    if (!credit) {
      if (account.status !== 'active') return 'closed';
      this.record({
        kind: 'credit.received',
        credit: {
          transactionReference,
          senderReference: input.reference ?? null,
          accountNumber,
          amountMinor: input.amount_minor,
          senderName: input.sender_name ?? 'TEST BANK SENDER',
          senderAccountNumber: input.sender_account_number ?? null,
          senderBankCode: input.sender_bank_code ?? null,
          sessionId: newSessionId(this.settings.now()),
          receivedAt: this.now(),
        },
      });
      credit = this.credits.get(transactionReference)!;
    }
    const callbackId = this.queueCallback('virtual_account.credited', {
      account_number: credit.accountNumber,
      amount_minor: credit.amountMinor,
      transaction_reference: credit.transactionReference,
      sender_name: credit.senderName,
      ...(credit.senderAccountNumber !== null ? { sender_account_number: credit.senderAccountNumber } : {}),
      ...(credit.senderBankCode !== null ? { sender_bank_code: credit.senderBankCode } : {}),
    });
    return { credit, callbackId };
  }

  // ---- callbacks ----

  private queueCallback(type: Callback['type'], data: Record<string, unknown>): string {
    const id = `evt_${randomUUID().replaceAll('-', '')}`;
    // In drop mode the callback is lost as a network loses it: it exists, and is never sent.
    const state: CallbackState = this.callbackMode === 'drop' ? 'dropped' : 'queued';
    this.record({ kind: 'callback.queued', callback: { id, type, data, queuedAt: this.now(), state } });
    if (state === 'queued') this.onCallbackQueued();
    return id;
  }

  recordAttempt(id: string, ok: boolean, error: string | null, gaveUp: boolean): void {
    this.record({ kind: 'callback.attempted', id, ok, error, gaveUp });
  }

  setCallbackMode(mode: CallbackMode): void {
    if (mode !== this.callbackMode) this.record({ kind: 'callbacks.mode', mode });
  }

  // ---- statement ----

  /**
   * The day's settlement statement: transfers that ended and credits received that UTC day, by
   * time. A transfer reversed after its success is listed failed, on the day it was reversed.
   */
  statement(date: string): StatementItem[] {
    const items: StatementItem[] = [];
    for (const transfer of this.transfers.values()) {
      const endedAt = transfer.status === 'reversed' ? transfer.reversedAt : transfer.settledAt;
      if (transfer.status === 'pending' || !endedAt || endedAt.slice(0, 10) !== date) continue;
      items.push({
        kind: 'transfer',
        reference: transfer.request.reference,
        session_id: transfer.sessionId,
        amount_minor: transfer.request.amount_minor,
        status: transfer.status === 'reversed' ? 'failed' : transfer.status,
        provider: null,
        bank_code: transfer.request.bank_code,
        account_number: transfer.request.account_number,
        value_time: endedAt,
      });
    }
    for (const credit of this.credits.values()) {
      if (credit.receivedAt.slice(0, 10) !== date) continue;
      items.push({
        kind: 'inbound_credit',
        reference: credit.transactionReference,
        session_id: credit.sessionId,
        amount_minor: credit.amountMinor,
        status: 'successful',
        provider: this.settings.connectorName,
        bank_code: this.accounts.get(credit.accountNumber)?.bankCode ?? ACCOUNT_ISSUERS[0].code,
        account_number: credit.accountNumber,
        value_time: credit.receivedAt,
      });
    }
    return items.sort((a, b) =>
      a.value_time === b.value_time ? a.reference.localeCompare(b.reference) : a.value_time.localeCompare(b.value_time),
    );
  }
}

function sameTransfer(taken: TransferRequest, repeat: TransferRequest): boolean {
  return (
    taken.amount_minor === repeat.amount_minor &&
    taken.currency === repeat.currency &&
    taken.bank_code === repeat.bank_code &&
    taken.account_number === repeat.account_number &&
    taken.account_name === repeat.account_name &&
    taken.narration === repeat.narration
  );
}

/** `GET /transfers/{reference}`'s body, and `transfer.completed`'s data. */
export function transferView(transfer: Transfer): TransferAnswer {
  return {
    reference: transfer.request.reference,
    status: transfer.status,
    session_id: transfer.sessionId,
    code: transfer.code,
    message: transfer.message,
  };
}

export function accountView(account: VirtualAccount): z.input<typeof VirtualAccountAnswer> {
  return {
    account_number: account.accountNumber,
    bank_code: account.bankCode,
    bank_name: institution(account.bankCode)?.name ?? account.bankCode,
  };
}
