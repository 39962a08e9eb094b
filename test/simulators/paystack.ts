// A Paystack API simulator for the connector's tests, faithful to Paystack's published OpenAPI
// document (PaystackOSS/openapi) where the connector reads it: paths, query parameters, field
// names, the `{status, message, data, meta}` envelope, `{status: false, message, meta, type, code}`
// errors and their HTTP statuses, the bearer-key check (401 "Invalid key"). It keeps transfers
// idempotent by reference (a reference seen before → Paystack's duplicate-reference refusal),
// dedupes recipients by account and customers by email, and sends webhooks signed as Paystack
// signs them (hex HMAC-SHA512 of the body with the secret key) to a URL the test gives.
//
// Tests steer it with plain methods, never over HTTP: a fault for the next call (an HTML 502, a
// body that is not JSON, a 200 missing fields, a hang, a reset connection, an answer lost after
// the work is done), finishing a transfer, holding transfers for an OTP, crediting a dedicated
// account, a low balance, the clock. Only tests use it; `npm start` never does. It keeps the
// reference of every `POST /transfer` it was sent, whatever became of it, and the faults met.
//
// Two options serve a run that treats it as one more bank rather than steering each transfer (the
// chaos run, test/chaos/): more banks in its list (`extraBanks`), and `magicFates`, under which
// the transfers it takes end on their own by the fates of the generic test bank's magic accounts
// (docs/connectors/test-bank.md). Without them it behaves as it always has.
//
// Where the document is silent the simulator makes a documented choice: the account
// `0000000000` does not resolve (422 "Could not resolve account name…", as the sandbox bank's
// magic account does); a customer that already has an active dedicated account at a bank is
// refused another there (400).
import { createHmac } from 'node:crypto';
import { type IncomingMessage, type Server, type ServerResponse, createServer } from 'node:http';
import type { Socket } from 'node:net';
import { freePorts } from '../support/ports.ts';

export const UNRESOLVABLE_ACCOUNT = '0000000000';

/** Paystack's fee on a dedicated-account credit, in kobo: 1%, at most ₦300. */
export function dedicatedAccountFee(amountKobo: number): number {
  return Math.min(30_000, Math.round(amountKobo * 0.01));
}

/**
 * The recipient accounts whose fate `magicFates` fixes, as the generic test bank's: taken then
 * failed; taken and never ended; taken on its first submission and the answer lost (the
 * connection destroyed once the work is done); and one whose name Paystack cannot resolve for
 * now (a 503 to the name enquiry and the recipient's creation), so that no transfer to it is ever
 * taken here.
 */
export const MAGIC_FATES = {
  fails: '1111111111',
  neverEnds: '2222222222',
  answerLost: '3333333333',
  unreachable: '4444444444',
} as const;

/**
 * What the next matching call meets. Besides garbage, hangs, resets and a lost answer, refusals as
 * Paystack words them: `duplicate_unrecognised` (a duplicate reference in words other than the two
 * the connector knows, as a `validation_error`), `unauthorized` (401 "Invalid key"),
 * `recipient_refused` (400 "Cannot resolve account", for `POST /transferrecipient`) and
 * `too_many_requests` (429).
 */
export type Fault =
  | 'html_502'
  | 'not_json'
  | 'missing_fields'
  | 'no_data'
  | 'hang'
  | 'reset'
  | 'lose_answer'
  | 'duplicate_unrecognised'
  | 'unauthorized'
  | 'recipient_refused'
  | 'too_many_requests';

interface FaultPlan {
  fault: Fault;
  /** `POST /transfer`: the first call whose method and path (no query) match. */
  match?: string | undefined;
  /** Only a `POST /transfer` of a reference Paystack already holds (a retry); set only when asked. */
  repeatsOnly?: true;
}

export interface FaultMet {
  fault: Fault;
  /** `METHOD /path` of the call that met it. */
  call: string;
  /** The `POST /transfer` body's reference, when the call was one. */
  reference: string | undefined;
}

export interface SimBank {
  id: number;
  name: string;
  slug: string;
  code: string;
  longcode: string;
}

const BANKS: SimBank[] = [
  { id: 1, name: 'Access Bank', slug: 'access-bank', code: '044', longcode: '044150149' },
  { id: 2, name: 'First Bank of Nigeria', slug: 'first-bank-of-nigeria', code: '011', longcode: '011151003' },
  { id: 3, name: 'Guaranty Trust Bank', slug: 'guaranty-trust-bank', code: '058', longcode: '058152036' },
  { id: 4, name: 'Titan Bank', slug: 'titan-paystack', code: '100039', longcode: '' },
  { id: 5, name: 'United Bank For Africa', slug: 'united-bank-for-africa', code: '033', longcode: '033153513' },
  { id: 6, name: 'Wema Bank', slug: 'wema-bank', code: '035', longcode: '035150103' },
  { id: 7, name: 'Zenith Bank', slug: 'zenith-bank', code: '057', longcode: '057150013' },
];

/** Banks that issue dedicated accounts, by Paystack's provider slug. */
const DVA_BANKS = new Set(['wema-bank', 'titan-paystack']);

export interface SimRecipient {
  id: number;
  recipient_code: string;
  name: string;
  account_number: string;
  bank_code: string;
}

export interface SimTransfer {
  id: number;
  transfer_code: string;
  reference: string;
  amount: number;
  reason: string;
  currency: string;
  status: string;
  recipient: SimRecipient;
  session: { provider: string | null; id: string | null };
  gateway_response: string | null;
  createdAt: string;
  updatedAt: string;
  transferred_at: string | null;
}

export interface SimCustomer {
  id: number;
  customer_code: string;
  email: string;
  first_name: string;
  last_name: string;
  metadata: unknown;
}

export interface SimDedicatedAccount {
  id: number;
  account_number: string;
  account_name: string;
  bank: { id: number; name: string; slug: string };
  customer: SimCustomer;
  active: boolean;
  created_at: string;
  updated_at: string;
}

export interface SimCharge {
  id: number;
  reference: string;
  amount: number;
  /** What Paystack keeps of it: 1% of a dedicated-account credit, at most ₦300 (30,000 kobo). */
  fees: number;
  status: string;
  channel: string;
  currency: string;
  paid_at: string;
  created_at: string;
  account: SimDedicatedAccount;
  sender: { name: string; bank: string; account_number: string };
}

export interface SentWebhook {
  event: string;
  body: string;
  signature: string;
  /** The receiver's HTTP status; undefined when there was no URL or the POST failed. */
  answered: number | undefined;
}

export interface PaystackSimulator {
  url: string;
  secretKey: string;
  /** Every request, as `METHOD /path?query`. */
  requests: string[];
  /**
   * The reference of every `POST /transfer` body, in order, taken or not (a fault's call
   * included): everything Paystack was ever sent to pay.
   */
  transferReferences: string[];
  /** Every planned fault a call met, in order. */
  faultsMet: FaultMet[];
  transfers: Map<string, SimTransfer>;
  recipients: Map<string, SimRecipient>;
  customers: Map<string, SimCustomer>;
  accounts: SimDedicatedAccount[];
  charges: SimCharge[];
  webhooks: SentWebhook[];
  /** Where webhooks go; none sent while unset (they are still built and kept in `webhooks`). */
  webhookUrl: string | undefined;
  /**
   * The next matching call meets this fault; with `repeatsOnly`, only a `POST /transfer` of a
   * reference Paystack already holds (what a retry after a lost answer sends).
   */
  failNext(fault: Fault, match?: string, options?: { repeatsOnly?: boolean }): void;
  /** Faults planned and not met yet, in order. */
  pendingFaults(): { fault: Fault; match?: string | undefined; repeatsOnly?: true }[];
  /** Drops the faults planned and not met. */
  clearFaults(): void;
  /** New transfers wait for an OTP (status `otp`), as with transfer OTP enabled on the integration. */
  requireOtp(enabled: boolean): void;
  /** The integration's NGN balance, in kobo. */
  setBalance(kobo: number): void;
  /** Banks per page of `GET /bank` (cursor pagination); default all on one page. */
  setBankPageSize(size: number): void;
  /** The most items per page of the numbered lists (transfers, transactions, dedicated accounts). */
  setListPageSize(size: number): void;
  /** Fixes the clock (transfers' and charges' times); null for the real one. */
  setTime(at: Date | null): void;
  /** Ends a transfer as Paystack would, and sends its webhook. */
  finishTransfer(reference: string, outcome: 'success' | 'failed' | 'reversed'): Promise<SentWebhook>;
  /** Someone pays into a dedicated account: a charge, and its charge.success webhook. */
  creditDedicatedAccount(
    accountNumber: string,
    amountKobo: number,
    sender?: Partial<SimCharge['sender']>,
  ): Promise<{ charge: SimCharge; webhook: SentWebhook }>;
  /** Sends a webhook again, as Paystack repeats an unanswered one. */
  resend(webhook: SentWebhook): Promise<SentWebhook>;
  close(): Promise<void>;
}

export interface PaystackSimulatorOptions {
  secretKey?: string;
  port?: number;
  /**
   * Banks it lists and resolves accounts at besides its own seven (a real integration lists every
   * Nigerian bank): what a gateway whose other connector lists other codes may send it.
   */
  extraBanks?: readonly { code: string; name: string }[];
  /**
   * The transfers it takes end on their own, `finishAfterMs` after being taken (their webhook
   * sent as finishTransfer sends it), by the fates of MAGIC_FATES: `success` but for those to
   * `1111111111` (`failed`) and `2222222222` (never). Without it a transfer stays as taken until
   * the test finishes it, and only `0000000000` is magic.
   */
  magicFates?: { finishAfterMs: number };
}

class HttpError extends Error {
  readonly status: number;
  readonly extra: Record<string, unknown>;
  constructor(status: number, message: string, extra: Record<string, unknown> = {}) {
    super(message);
    this.status = status;
    this.extra = extra;
  }
}

const validation = (message: string, code = 'invalid_params') =>
  new HttpError(400, message, {
    meta: { nextStep: 'Check the request and try again' },
    type: 'validation_error',
    code,
  });

function pageOf<T>(
  items: T[],
  query: URLSearchParams,
  perPageName: string,
  most: number,
): { data: T[]; meta: Record<string, number> } {
  const perPage = Math.max(1, Math.min(Number(query.get(perPageName) ?? 50) || 50, most));
  const page = Math.max(1, Number(query.get('page') ?? 1) || 1);
  const skipped = (page - 1) * perPage;
  return {
    data: items.slice(skipped, skipped + perPage),
    meta: { total: items.length, skipped, perPage, page, pageCount: Math.max(1, Math.ceil(items.length / perPage)) },
  };
}

function within(at: string, query: URLSearchParams): boolean {
  const from = query.get('from');
  const to = query.get('to');
  const time = Date.parse(at);
  if (from && time < Date.parse(from)) return false;
  if (to && time > Date.parse(to)) return false;
  return true;
}

export async function startPaystackSimulator(options: PaystackSimulatorOptions = {}): Promise<PaystackSimulator> {
  const secretKey = options.secretKey ?? 'sk_test_simulator0000000000000000000000';
  const port = options.port ?? (await freePorts(1))[0]!;
  const magic = options.magicFates;
  const banks: SimBank[] = [...BANKS];
  for (const extra of options.extraBanks ?? []) {
    if (banks.some((bank) => bank.code === extra.code)) continue;
    const slug = extra.name
      .toLowerCase()
      .replace(/[^a-z0-9]+/g, '-')
      .replace(/^-|-$/g, '');
    banks.push({ id: banks.length + 1, name: extra.name, slug, code: extra.code, longcode: '' });
  }
  /** The magic fates' finishing, cleared on close. */
  const finishing = new Set<NodeJS.Timeout>();
  const faults: FaultPlan[] = [];
  const sockets = new Set<Socket>();
  let otp = false;
  let balance = 1_000_000_000_00;
  let bankPageSize = banks.length;
  let fixedTime: Date | null = null;
  let listPageSize = 100;
  let ids = 1000;
  const nextId = () => (ids += 1);
  const now = () => (fixedTime ?? new Date()).toISOString();
  const code = (prefix: string) => `${prefix}_${nextId().toString(36)}${Math.random().toString(36).slice(2, 10)}`;

  const sim: PaystackSimulator = {
    url: `http://127.0.0.1:${port}`,
    secretKey,
    requests: [],
    transferReferences: [],
    faultsMet: [],
    transfers: new Map(),
    recipients: new Map(),
    customers: new Map(),
    accounts: [],
    charges: [],
    webhooks: [],
    webhookUrl: undefined,
    failNext: (fault, match, plan) =>
      void faults.push({ fault, match, ...(plan?.repeatsOnly ? { repeatsOnly: true } : {}) }),
    pendingFaults: () => faults.map((plan) => ({ ...plan })),
    clearFaults: () => void faults.splice(0),
    requireOtp: (enabled) => void (otp = enabled),
    setBalance: (kobo) => void (balance = kobo),
    setBankPageSize: (size) => void (bankPageSize = size),
    setTime: (at) => void (fixedTime = at),
    setListPageSize: (size) => void (listPageSize = size),
    async finishTransfer(reference, outcome) {
      const transfer = sim.transfers.get(reference);
      if (!transfer) throw new Error(`no transfer ${reference}`);
      transfer.status = outcome;
      transfer.updatedAt = now();
      if (outcome === 'success') {
        transfer.transferred_at = now();
        transfer.session = { provider: 'nip', id: `0900002${String(transfer.id).padStart(23, '0')}` };
        transfer.gateway_response = 'Approved';
      } else {
        // The money comes back to the balance.
        balance += transfer.amount;
        transfer.gateway_response =
          outcome === 'reversed' ? 'Reversed by the beneficiary bank' : 'Failed at the processor';
      }
      return send(`transfer.${outcome}`, transferView(transfer));
    },
    async creditDedicatedAccount(accountNumber, amountKobo, sender = {}) {
      const account = sim.accounts.find((candidate) => candidate.account_number === accountNumber && candidate.active);
      if (!account) throw new Error(`no active dedicated account ${accountNumber}`);
      const charge: SimCharge = {
        id: nextId(),
        reference: `dva_${nextId()}${Math.random().toString(36).slice(2, 10)}`,
        amount: amountKobo,
        fees: dedicatedAccountFee(amountKobo),
        status: 'success',
        channel: 'dedicated_nuban',
        currency: 'NGN',
        paid_at: now(),
        created_at: now(),
        account,
        sender: {
          name: sender.name ?? 'ADA OBI',
          bank: sender.bank ?? 'Guaranty Trust Bank',
          account_number: sender.account_number ?? 'XXXXXX0011',
        },
      };
      sim.charges.push(charge);
      return { charge, webhook: await send('charge.success', chargeView(charge)) };
    },
    async resend(webhook) {
      return deliver(webhook.event, webhook.body);
    },
    async close() {
      for (const timer of finishing) clearTimeout(timer);
      finishing.clear();
      for (const socket of sockets) socket.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };

  function recipientView(recipient: SimRecipient) {
    const bank = banks.find((candidate) => candidate.code === recipient.bank_code);
    return {
      active: true,
      createdAt: now(),
      currency: 'NGN',
      description: '',
      domain: 'test',
      email: null,
      id: recipient.id,
      integration: 100032,
      metadata: null,
      name: recipient.name,
      recipient_code: recipient.recipient_code,
      type: 'nuban',
      updatedAt: now(),
      is_deleted: false,
      isDeleted: false,
      details: {
        authorization_code: null,
        account_number: recipient.account_number,
        account_name: recipient.name,
        bank_code: recipient.bank_code,
        bank_name: bank?.name ?? '',
      },
    };
  }

  function transferView(transfer: SimTransfer) {
    return {
      amount: transfer.amount,
      createdAt: transfer.createdAt,
      currency: transfer.currency,
      domain: 'test',
      failures: null,
      id: transfer.id,
      integration: 100032,
      reason: transfer.reason,
      reference: transfer.reference,
      source: 'balance',
      source_details: null,
      status: transfer.status,
      titan_code: null,
      transfer_code: transfer.transfer_code,
      request: transfer.id,
      transferred_at: transfer.transferred_at,
      updatedAt: transfer.updatedAt,
      recipient: recipientView(transfer.recipient),
      session: transfer.session,
      fee_charged: 1000,
      fees_breakdown: null,
      gateway_response: transfer.gateway_response,
    };
  }

  function customerView(customer: SimCustomer) {
    return {
      transactions: [],
      subscriptions: [],
      authorizations: [],
      email: customer.email,
      first_name: customer.first_name,
      last_name: customer.last_name,
      phone: '',
      integration: 100032,
      domain: 'test',
      metadata: customer.metadata,
      customer_code: customer.customer_code,
      risk_action: 'default',
      id: customer.id,
      createdAt: now(),
      updatedAt: now(),
      identified: false,
      identifications: null,
    };
  }

  function accountView(account: SimDedicatedAccount) {
    const { customer } = account;
    return {
      bank: account.bank,
      account_name: account.account_name,
      account_number: account.account_number,
      assigned: account.active,
      currency: 'NGN',
      metadata: null,
      active: account.active,
      id: account.id,
      created_at: account.created_at,
      updated_at: account.updated_at,
      assignment: {
        integration: 100032,
        assignee_id: customer.id,
        assignee_type: 'Customer',
        expired: !account.active,
        account_type: 'PAY-WITH-TRANSFER-RECURRING',
        assigned_at: account.created_at,
        expired_at: account.active ? null : account.updated_at,
      },
      customer: {
        id: customer.id,
        first_name: customer.first_name,
        last_name: customer.last_name,
        email: customer.email,
        customer_code: customer.customer_code,
        phone: '',
        metadata: {},
        risk_action: 'default',
        international_format_phone: null,
      },
    };
  }

  function chargeView(charge: SimCharge) {
    const { account, sender } = charge;
    return {
      id: charge.id,
      domain: 'test',
      status: charge.status,
      reference: charge.reference,
      amount: charge.amount,
      message: null,
      gateway_response: 'Approved',
      paid_at: charge.paid_at,
      created_at: charge.created_at,
      channel: charge.channel,
      currency: charge.currency,
      ip_address: null,
      metadata: { receiver_account_number: account.account_number, receiver_bank: account.bank.name },
      fees: charge.fees,
      customer: {
        id: account.customer.id,
        first_name: account.customer.first_name,
        last_name: account.customer.last_name,
        email: account.customer.email,
        customer_code: account.customer.customer_code,
        phone: null,
        metadata: {},
        risk_action: 'default',
      },
      authorization: {
        authorization_code: code('AUTH').toLowerCase(),
        bin: '008XXX',
        last4: 'X011',
        exp_month: '01',
        exp_year: '2030',
        channel: 'dedicated_nuban',
        card_type: 'transfer',
        bank: sender.bank,
        country_code: 'NG',
        brand: 'Managed Account',
        reusable: false,
        signature: null,
        sender_bank: sender.bank,
        sender_bank_account_number: sender.account_number,
        sender_country: 'NG',
        sender_name: sender.name,
        narration: `NIP: ${sender.name}`,
        receiver_bank_account_number: account.account_number,
        receiver_bank: account.bank.name,
      },
    };
  }

  async function deliver(event: string, body: string): Promise<SentWebhook> {
    const signature = createHmac('sha512', secretKey).update(body, 'utf8').digest('hex');
    let answered: number | undefined;
    if (sim.webhookUrl) {
      try {
        const response = await fetch(sim.webhookUrl, {
          method: 'POST',
          headers: { 'content-type': 'application/json', 'x-paystack-signature': signature },
          body,
          signal: AbortSignal.timeout(5_000),
        });
        answered = response.status;
        await response.arrayBuffer();
      } catch {
        answered = undefined;
      }
    }
    const webhook = { event, body, signature, answered };
    sim.webhooks.push(webhook);
    return webhook;
  }

  const send = (event: string, data: unknown) => deliver(event, JSON.stringify({ event, data }));

  function authorize(request: IncomingMessage): void {
    const header = request.headers.authorization;
    if (!header) throw new HttpError(401, 'No Authorization Header was found');
    const match = /^Bearer (.+)$/.exec(header);
    if (!match) throw new HttpError(401, 'Format is Authorization Bearer [secret key]');
    if (match[1] !== secretKey) throw new HttpError(401, 'Invalid key');
  }

  function bankByCode(bankCode: string | undefined | null): SimBank | undefined {
    return banks.find((bank) => bank.code === bankCode);
  }

  /** The name Paystack resolves for an account (every 10-digit number but the magic one resolves). */
  function resolveName(accountNumber: string, bankCode: string): string {
    if (!/^\d{10}$/.test(accountNumber)) throw validation('Account number is invalid');
    if (!bankByCode(bankCode)) throw validation(`Unknown bank code: ${bankCode.slice(0, 20)}`, 'invalid_bank_code');
    if (magic && accountNumber === MAGIC_FATES.unreachable) {
      throw new HttpError(503, 'Could not reach the beneficiary bank to resolve the account. Try again later.');
    }
    if (accountNumber === UNRESOLVABLE_ACCOUNT) {
      throw new HttpError(422, 'Could not resolve account name. Check parameters or try again.', {
        meta: { nextStep: 'Ensure that you are passing the correct account number and bank code' },
        type: 'validation_error',
        code: 'invalid_bank_code',
      });
    }
    return `TEST ACCOUNT ${accountNumber.slice(-4)}`;
  }

  function route(method: string, path: string, query: URLSearchParams, body: Record<string, unknown>) {
    if (method === 'GET' && path === '/bank') {
      if ((query.get('country') ?? 'nigeria') !== 'nigeria') return { message: 'Banks retrieved', data: [], meta: {} };
      const start = query.get('next') ? Number(Buffer.from(query.get('next')!, 'base64url').toString()) : 0;
      const page = banks.slice(start, start + bankPageSize);
      const end = start + page.length;
      return {
        message: 'Banks retrieved',
        data: page.map((bank) => ({
          ...bank,
          gateway: 'emandate',
          pay_with_bank: false,
          supports_transfer: true,
          available_for_direct_debit: false,
          active: true,
          is_deleted: false,
          country: 'Nigeria',
          currency: 'NGN',
          type: 'nuban',
          createdAt: '2016-07-14T10:04:29.000Z',
          updatedAt: '2024-01-01T00:00:00.000Z',
        })),
        meta: {
          next: end < banks.length ? Buffer.from(String(end)).toString('base64url') : null,
          previous: start > 0 ? Buffer.from(String(Math.max(0, start - bankPageSize))).toString('base64url') : null,
          perPage: bankPageSize,
        },
      };
    }
    if (method === 'GET' && path === '/bank/resolve') {
      const accountNumber = query.get('account_number') ?? '';
      const bankCode = query.get('bank_code');
      if (!bankCode) throw validation('bank_code is required');
      const name = resolveName(accountNumber, bankCode);
      return {
        message: 'Account number resolved',
        data: { account_number: accountNumber, account_name: name, bank_id: bankByCode(bankCode)!.id },
      };
    }
    if (method === 'POST' && path === '/transferrecipient') {
      if (body.type !== 'nuban') throw validation('Invalid recipient type');
      const accountNumber = typeof body.account_number === 'string' ? body.account_number : '';
      const bankCode = typeof body.bank_code === 'string' ? body.bank_code : '';
      if (!accountNumber) throw validation('Either authorization_code or account_number must be passed.');
      resolveName(accountNumber, bankCode);
      const key = `${bankCode}:${accountNumber}`;
      const existing = sim.recipients.get(key);
      if (existing)
        return { status: 200, message: 'Transfer recipient created successfully', data: recipientView(existing) };
      const recipient: SimRecipient = {
        id: nextId(),
        recipient_code: code('RCP').replace(/[^A-Za-z0-9_]/g, ''),
        name: typeof body.name === 'string' ? body.name : '',
        account_number: accountNumber,
        bank_code: bankCode,
      };
      sim.recipients.set(key, recipient);
      return { status: 201, message: 'Transfer recipient created successfully', data: recipientView(recipient) };
    }
    if (method === 'POST' && path === '/transfer') {
      if (body.source !== 'balance') throw validation('Invalid source');
      const amount = body.amount;
      if (typeof amount !== 'number' || !Number.isInteger(amount) || amount <= 0) throw validation('Invalid amount');
      const reference = typeof body.reference === 'string' ? body.reference : '';
      if (!/^[a-z0-9_-]{16,50}$/.test(reference)) {
        throw validation('Your reference contains illegal special characters', 'invalid_reference');
      }
      if (sim.transfers.has(reference)) {
        throw new HttpError(400, 'Please provide a unique reference. Reference already exists on a transfer', {
          meta: { nextStep: 'Create a new reference for the new transfer' },
          type: 'validation_error',
          code: 'duplicate_transfer_reference',
        });
      }
      const recipient = [...sim.recipients.values()].find((candidate) => candidate.recipient_code === body.recipient);
      if (!recipient) throw validation('Recipient specified is invalid', 'invalid_recipient');
      if (amount > balance) {
        throw new HttpError(400, 'Your balance is not enough to fulfil this request', {
          meta: { nextStep: 'Top up your Paystack balance and try again' },
          type: 'api_error',
          code: 'insufficient_balance',
        });
      }
      balance -= amount;
      const id = nextId();
      const transfer: SimTransfer = {
        id,
        transfer_code: code('TRF').replace(/[^A-Za-z0-9_]/g, ''),
        reference,
        amount,
        reason: typeof body.reason === 'string' ? body.reason : '',
        currency: 'NGN',
        status: otp ? 'otp' : 'pending',
        recipient,
        session: { provider: null, id: null },
        gateway_response: null,
        createdAt: now(),
        updatedAt: now(),
        transferred_at: null,
      };
      sim.transfers.set(reference, transfer);
      if (magic) finishOnItsOwn(transfer, magic.finishAfterMs);
      const view = transferView(transfer);
      return {
        message: otp ? 'Transfer requires OTP to continue' : 'Transfer has been queued',
        data: {
          transfersessionid: [],
          transfertrials: [],
          ...view,
          recipient: recipient.id,
        },
      };
    }
    const verify = /^\/transfer\/verify\/([^/]+)$/.exec(path);
    if (method === 'GET' && verify) {
      const transfer = sim.transfers.get(decodeURIComponent(verify[1]!));
      if (!transfer) throw new HttpError(404, 'Transfer not found', { type: 'validation_error', code: 'not_found' });
      return { message: 'Transfer retrieved', data: transferView(transfer) };
    }
    if (method === 'GET' && path === '/transfer') {
      const listed = [...sim.transfers.values()]
        .filter((transfer) => within(transfer.createdAt, query))
        .filter((transfer) => !query.get('status') || transfer.status === query.get('status'))
        .reverse();
      const { data, meta } = pageOf(listed, query, 'per_page', listPageSize);
      return { message: 'Transfers retrieved', data: data.map(transferView), meta };
    }
    if (method === 'GET' && path === '/transaction') {
      const listed = sim.charges
        .filter((charge) => within(charge.created_at, query))
        .filter((charge) => !query.get('channel') || charge.channel === query.get('channel'))
        .reverse();
      const { data, meta } = pageOf(listed, query, 'per_page', listPageSize);
      return { message: 'Transactions retrieved', data: data.map(chargeView), meta: { ...meta, total_volume: 0 } };
    }
    if (method === 'POST' && path === '/customer') {
      const email = typeof body.email === 'string' ? body.email.toLowerCase() : '';
      if (!/^[^@\s]+@[^@\s]+\.[^@\s]+$/.test(email)) throw validation('Invalid Email Address Passed');
      let customer = sim.customers.get(email);
      if (!customer) {
        customer = {
          id: nextId(),
          customer_code: code('CUS').replace(/[^A-Za-z0-9_]/g, ''),
          email,
          first_name: '',
          last_name: '',
          metadata: null,
        };
        sim.customers.set(email, customer);
      }
      // Paystack answers the existing customer for a known email, with the names given now.
      if (typeof body.first_name === 'string') customer.first_name = body.first_name;
      if (typeof body.last_name === 'string') customer.last_name = body.last_name;
      if (body.metadata !== undefined) customer.metadata = body.metadata;
      return { message: 'Customer created', data: customerView(customer) };
    }
    if (method === 'POST' && path === '/dedicated_account') {
      const reference = body.customer;
      const customer = [...sim.customers.values()].find(
        (candidate) => candidate.customer_code === reference || String(candidate.id) === String(reference),
      );
      if (!customer) throw new HttpError(404, 'Customer not found', { type: 'validation_error', code: 'not_found' });
      const slug = typeof body.preferred_bank === 'string' ? body.preferred_bank : 'wema-bank';
      const bank = banks.find((candidate) => candidate.slug === slug);
      if (!bank || !DVA_BANKS.has(slug)) throw validation('Invalid preferred bank', 'invalid_preferred_bank');
      if (
        sim.accounts.some((account) => account.customer === customer && account.active && account.bank.slug === slug)
      ) {
        throw validation('Customer already has an active dedicated virtual account', 'duplicate_dedicated_account');
      }
      const account: SimDedicatedAccount = {
        id: nextId(),
        account_number: `9${String(sim.accounts.length + 1).padStart(9, '0')}`,
        account_name: `GATEWAY/${customer.first_name} ${customer.last_name}`.toUpperCase(),
        bank: { id: bank.id, name: bank.name, slug: bank.slug },
        customer,
        active: true,
        created_at: now(),
        updated_at: now(),
      };
      sim.accounts.push(account);
      return { message: 'NUBAN successfully created', data: accountView(account) };
    }
    if (method === 'GET' && path === '/dedicated_account') {
      const listed = sim.accounts
        .filter((account) => !query.get('customer') || String(account.customer.id) === query.get('customer'))
        .filter((account) => !query.get('active') || String(account.active) === query.get('active'));
      const { data, meta } = pageOf(listed, query, 'perPage', listPageSize);
      return { message: 'Managed accounts successfully retrieved', data: data.map(accountView), meta };
    }
    const dedicated = /^\/dedicated_account\/(\d+)$/.exec(path);
    if (method === 'DELETE' && dedicated) {
      const account = sim.accounts.find((candidate) => String(candidate.id) === dedicated[1]);
      if (!account)
        throw new HttpError(404, 'Dedicated account not found', { type: 'validation_error', code: 'not_found' });
      account.active = false;
      account.updated_at = now();
      return { message: 'Managed Account Successfully Unassigned', data: accountView(account) };
    }
    throw new HttpError(404, 'Route not found');
  }

  /** Under `magicFates`: the transfer ends `afterMs` from now, as its recipient's fate says, if still pending. */
  function finishOnItsOwn(transfer: SimTransfer, afterMs: number): void {
    const account = transfer.recipient.account_number;
    if (account === MAGIC_FATES.neverEnds) return;
    const timer = setTimeout(() => {
      finishing.delete(timer);
      if (sim.transfers.get(transfer.reference) !== transfer || transfer.status !== 'pending') return;
      void sim.finishTransfer(transfer.reference, account === MAGIC_FATES.fails ? 'failed' : 'success');
    }, afterMs);
    finishing.add(timer);
  }

  function takeFault(method: string, path: string, repeat: boolean): FaultPlan | undefined {
    const index = faults.findIndex(
      (plan) => (!plan.match || plan.match === `${method} ${path}`) && (!plan.repeatsOnly || repeat),
    );
    return index === -1 ? undefined : faults.splice(index, 1)[0];
  }

  /** A `POST /transfer` body's reference, read before anything else (a fault may answer first). */
  function referenceIn(raw: string): string | undefined {
    try {
      const reference = (JSON.parse(raw) as { reference?: unknown } | null)?.reference;
      return typeof reference === 'string' ? reference : undefined;
    } catch {
      return undefined;
    }
  }

  function handle(request: IncomingMessage, response: ServerResponse, raw: string): void {
    const url = new URL(request.url ?? '/', 'http://simulator');
    const method = request.method ?? 'GET';
    sim.requests.push(`${method} ${url.pathname}${url.search}`);
    const submitted = method === 'POST' && url.pathname === '/transfer' ? referenceIn(raw) : undefined;
    if (submitted !== undefined) sim.transferReferences.push(submitted);
    const plan = takeFault(method, url.pathname, submitted !== undefined && sim.transfers.has(submitted));
    if (plan) sim.faultsMet.push({ fault: plan.fault, call: `${method} ${url.pathname}`, reference: submitted });
    const reply = (status: number, payload: unknown) => {
      response.writeHead(status, { 'content-type': 'application/json; charset=utf-8' });
      response.end(JSON.stringify(payload));
    };
    switch (plan?.fault) {
      case 'hang':
        return;
      case 'reset':
        request.socket.destroy();
        return;
      case 'html_502':
        response.writeHead(502, { 'content-type': 'text/html' });
        response.end('<html><head><title>502 Bad Gateway</title></head><body><h1>502 Bad Gateway</h1></body></html>');
        return;
      case 'not_json':
        response.writeHead(200, { 'content-type': 'application/json' });
        response.end('{"status":true,"message":"Transfer has been queued","data":{"reference":');
        return;
      case 'missing_fields':
        return reply(200, { status: true, message: 'OK', data: { id: 1, domain: 'test' } });
      case 'no_data':
        return reply(200, { status: true, message: 'OK' });
      case 'duplicate_unrecognised':
        return reply(400, {
          status: false,
          message: 'Transfer reference has been used before',
          meta: { nextStep: 'Use a new reference' },
          type: 'validation_error',
          code: 'invalid_params',
        });
      case 'unauthorized':
        return reply(401, { status: false, message: 'Invalid key' });
      case 'recipient_refused':
        return reply(400, {
          status: false,
          message: 'Cannot resolve account',
          meta: { nextStep: 'Check the account details and try again' },
          type: 'validation_error',
          code: 'invalid_params',
        });
      case 'too_many_requests':
        return reply(429, { status: false, message: 'Too many requests, try again later' });
      default:
        break;
    }
    let body: Record<string, unknown> = {};
    try {
      authorize(request);
      if (raw) {
        const parsed: unknown = JSON.parse(raw);
        if (typeof parsed === 'object' && parsed !== null && !Array.isArray(parsed))
          body = parsed as Record<string, unknown>;
      }
      const result = route(method, url.pathname, url.searchParams, body) as {
        status?: number;
        message: string;
        data: unknown;
        meta?: unknown;
      };
      // A transfer taken here for the first time (a repeat is refused) to the account whose
      // answer is lost by its fate.
      const lostByFate =
        magic !== undefined &&
        submitted !== undefined &&
        sim.transfers.get(submitted)?.recipient.account_number === MAGIC_FATES.answerLost;
      if (plan?.fault === 'lose_answer' || lostByFate) {
        // The work is done; the answer never arrives.
        request.socket.destroy();
        return;
      }
      reply(result.status ?? 200, {
        status: true,
        message: result.message,
        data: result.data,
        ...(result.meta ? { meta: result.meta } : {}),
      });
    } catch (error) {
      if (plan?.fault === 'lose_answer') {
        request.socket.destroy();
        return;
      }
      if (error instanceof HttpError)
        return reply(error.status, { status: false, message: error.message, ...error.extra });
      if (error instanceof SyntaxError) return reply(400, { status: false, message: 'Invalid JSON' });
      reply(500, { status: false, message: 'An error occurred' });
    }
  }

  const server: Server = createServer((request, response) => {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => handle(request, response, Buffer.concat(chunks).toString('utf8')));
  });
  server.on('connection', (socket) => {
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, '127.0.0.1', () => resolve());
  });
  return sim;
}
