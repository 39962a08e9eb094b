// Transfers through Paystack (decisions §13): bank list, name enquiry, submission and status query.
// A submission is two calls: the recipient (`POST /transferrecipient`, kept per account, since
// Paystack answers the same recipient for the same details), then the transfer under a reference
// derived from ours, the same on every retry. Paystack refuses a reference it has seen; that
// answer means an earlier attempt reached it, so the transfer's status is asked, never failed. A
// refusal is "not taken" only in the few words Paystack documents for refusals made before
// processing; any other leaves the transfer possibly held by Paystack (decisions §17).
import { ProviderError } from '../capabilities.ts';
import type {
  Bank,
  BankSwitch,
  NameEnquiryResult,
  SettlementReport,
  SubmitTransferInput,
  TransferStatusResult,
} from '../capabilities.ts';
import { PROVIDER, type PaystackClient, PaystackRefusal, unreadable } from './http.ts';
import { paystackReference } from './reference.ts';
import { BankItem, BankList, CursorMeta, Recipient, ResolvedAccount, Transfer } from './schemas.ts';

/** What the status query and the submission make of Paystack's transfer statuses (decisions §13). */
const STATUSES: Record<string, TransferStatusResult['status']> = {
  success: 'successful',
  failed: 'failed',
  // Paid out, then reversed (decisions §21): a transfer still in flight in our books fails; a
  // completed one is reversed once this status query confirms Paystack's `transfer.reversed`.
  reversed: 'reversed',
  pending: 'pending',
  received: 'pending',
  processing: 'pending',
};

export const OTP_MESSAGE =
  'Paystack holds this transfer for an OTP: disable transfer OTP for the integration (Paystack dashboard, ' +
  'Settings → Preferences → Transfers) so that the gateway can send transfers';

/** The most pages of banks read: Paystack's list is a few hundred banks; a cursor that never ends is a fault. */
const MAX_BANK_PAGES = 50;
/** Recipients kept: enough for a day's distinct accounts; a recipient forgotten costs one call. */
const RECIPIENT_CACHE_SIZE = 5_000;

/**
 * Refusals of `POST /transfer` that Paystack documents as made before any processing: a key it does
 * not know (401), a balance too low, a recipient it does not know, an integration not allowed to
 * pay out. Only these may pass the transfer to the next connector, and only when no earlier attempt
 * was ambiguous (decisions §17). Anything else, a `validation_error` included (Paystack words its
 * duplicate-reference refusal in more than one way), is no proof: the transfer may be held there.
 */
function provesNotTaken(refusal: PaystackRefusal): boolean {
  if (refusal.httpStatus === 401) return true;
  if (isDuplicateReference(refusal)) return false;
  return /balance is not enough|insufficient balance|recipient specified is invalid|third party payouts/i.test(
    refusal.message,
  );
}

function isDuplicateReference(refusal: PaystackRefusal): boolean {
  return (
    refusal.code === 'duplicate_transfer_reference' || /reference already exists on a transfer/i.test(refusal.message)
  );
}

function isRecipientInvalid(refusal: PaystackRefusal): boolean {
  return /recipient specified is invalid/i.test(refusal.message);
}

/** A transfer's state in our words; `otp` is left to the caller (a refusal for a submission). */
export function statusOf(transfer: Transfer): TransferStatusResult {
  const sessionId = transfer.session?.id;
  const base = {
    sessionId: sessionId === null || sessionId === undefined ? '' : String(sessionId),
    rawCode: transfer.status,
  };
  const known = Object.hasOwn(STATUSES, transfer.status) ? STATUSES[transfer.status] : undefined;
  if (!known) {
    // abandoned, blocked, rejected, or a status Paystack adds later: never guessed at.
    return {
      status: 'pending',
      ...base,
      message: `Paystack status ${transfer.status}: kept for the operator`,
    };
  }
  return { status: known, ...base, ...(transfer.gateway_response ? { message: transfer.gateway_response } : {}) };
}

export class PaystackTransfers implements BankSwitch {
  readonly name = PROVIDER;
  private readonly client: PaystackClient;
  private readonly report: (date: string) => Promise<SettlementReport>;
  /** `bank_code:account_number` → recipient code, oldest first (a bounded LRU). */
  private readonly recipients = new Map<string, string>();

  constructor(client: PaystackClient, report: (date: string) => Promise<SettlementReport>) {
    this.client = client;
    this.report = report;
  }

  async listBanks(): Promise<Bank[]> {
    const banks: Bank[] = [];
    let next: string | undefined;
    for (let page = 0; page < MAX_BANK_PAGES; page += 1) {
      const answer = await this.client.read(
        {
          method: 'GET',
          route: '/bank',
          query: { country: 'nigeria', ...(next ? { use_cursor: 'true', next } : {}) },
        },
        'bank list',
      );
      const list = BankList.safeParse(answer.data);
      if (!list.success) throw unreadable('bank list', answer.httpStatus, list.error.issues[0]?.message);
      for (const item of list.data) {
        const bank = BankItem.safeParse(item);
        if (!bank.success) throw unreadable('bank list', answer.httpStatus, bank.error.issues[0]?.message);
        banks.push({ code: bank.data.code, name: bank.data.name, slug: bank.data.slug ?? '' });
      }
      const meta = CursorMeta.safeParse(answer.meta);
      next = meta.success && meta.data?.next ? meta.data.next : undefined;
      if (!next) return banks;
    }
    throw new ProviderError(
      PROVIDER,
      'unknown',
      true,
      `Paystack's bank list did not end within ${MAX_BANK_PAGES} pages`,
    );
  }

  async nameEnquiry(bankCode: string, accountNumber: string): Promise<NameEnquiryResult> {
    let answer;
    try {
      answer = await this.client.call({
        method: 'GET',
        route: '/bank/resolve',
        query: { account_number: accountNumber, bank_code: bankCode },
      });
    } catch (error) {
      if (error instanceof PaystackRefusal) {
        // "Could not resolve account name" (422), an unknown bank code or a malformed number (400).
        const invalid = error.httpStatus === 400 || error.httpStatus === 404 || error.httpStatus === 422;
        throw error.toProviderError(invalid ? 'invalid_account' : 'rejected', {
          message: invalid
            ? `Paystack could not resolve the account: ${error.message}`
            : `Paystack refused the name enquiry: ${error.message}`,
        });
      }
      throw error;
    }
    const resolved = ResolvedAccount.safeParse(answer.data);
    if (!resolved.success) throw unreadable('name enquiry', answer.httpStatus, resolved.error.issues[0]?.message);
    // Paystack gives no NIP session id for a resolve.
    return { accountNumber, bankCode, accountName: resolved.data.account_name, sessionId: '' };
  }

  async submitTransfer(input: SubmitTransferInput): Promise<TransferStatusResult> {
    const reference = paystackReference(input.reference);
    const key = `${input.bankCode}:${input.accountNumber}`;
    const cached = this.recipients.get(key);
    let recipient = cached ?? (await this.createRecipient(input));
    let answer;
    try {
      answer = await this.initiate(input, recipient, reference);
    } catch (error) {
      // A recipient kept here but since deleted at Paystack: made again, once.
      if (!(error instanceof PaystackRefusal && cached && isRecipientInvalid(error))) throw this.refusal(error);
      this.recipients.delete(key);
      recipient = await this.createRecipient(input);
      try {
        answer = await this.initiate(input, recipient, reference);
      } catch (again) {
        throw this.refusal(again);
      }
    }
    if (answer === 'duplicate') return this.afterDuplicate(reference);
    const transfer = Transfer.safeParse(answer.data);
    if (!transfer.success) throw unreadable('transfer', answer.httpStatus, transfer.error.issues[0]?.message);
    return this.submitted(transfer.data);
  }

  async transferStatus(reference: string): Promise<TransferStatusResult> {
    return statusOf(await this.verify(paystackReference(reference)));
  }

  settlementReport(date: string): Promise<SettlementReport> {
    return this.report(date);
  }

  private async verify(reference: string): Promise<Transfer> {
    let answer;
    try {
      answer = await this.client.call({ method: 'GET', route: '/transfer/verify/{reference}', params: { reference } });
    } catch (error) {
      if (error instanceof PaystackRefusal) {
        if (error.httpStatus === 404) {
          throw error.toProviderError('not_found', { message: `Paystack has no transfer ${reference}` });
        }
        throw error.toProviderError('rejected');
      }
      throw error;
    }
    const transfer = Transfer.safeParse(answer.data);
    if (!transfer.success) throw unreadable('transfer status', answer.httpStatus, transfer.error.issues[0]?.message);
    return transfer.data;
  }

  /** The first answer about a transfer: `otp` refuses it; anything else reads as a status query. */
  private submitted(transfer: Transfer): TransferStatusResult {
    if (transfer.status === 'otp') {
      throw new ProviderError(PROVIDER, 'rejected', false, OTP_MESSAGE, { rawCode: 'otp', heldUnpaid: true });
    }
    return statusOf(transfer);
  }

  /**
   * Paystack already has this reference: an earlier attempt reached it (an answer lost on the way,
   * a retry after a timeout). Its status is the answer; a verify that cannot find it is a fault to
   * retry, never a failure.
   */
  private async afterDuplicate(reference: string): Promise<TransferStatusResult> {
    let transfer: Transfer;
    try {
      transfer = await this.verify(reference);
    } catch (error) {
      if (error instanceof ProviderError && !error.transient) {
        throw new ProviderError(
          PROVIDER,
          'unknown',
          true,
          `Paystack says reference ${reference} is taken but does not show it (${error.message}); asking again later`,
          { rawCode: error.rawCode, httpStatus: error.httpStatus, cause: error },
        );
      }
      throw error;
    }
    return this.submitted(transfer);
  }

  private async initiate(
    input: SubmitTransferInput,
    recipient: string,
    reference: string,
  ): Promise<Awaited<ReturnType<PaystackClient['call']>> | 'duplicate'> {
    try {
      return await this.client.call({
        method: 'POST',
        route: '/transfer',
        body: {
          source: 'balance',
          amount: input.amountMinor,
          recipient,
          reference,
          reason: input.narration,
          currency: 'NGN',
        },
      });
    } catch (error) {
      if (error instanceof PaystackRefusal && isDuplicateReference(error)) return 'duplicate';
      throw error;
    }
  }

  /** A refusal of `POST /transfer` as a ProviderError: definitive, and `notTaken` only when it proves it. */
  private refusal(error: unknown): unknown {
    if (!(error instanceof PaystackRefusal)) return error;
    const notTaken = provesNotTaken(error);
    const outcome = /balance is not enough|insufficient balance/i.test(error.message)
      ? 'transfer_failed'
      : isRecipientInvalid(error)
        ? 'invalid_account'
        : 'rejected';
    return error.toProviderError(outcome, { notTaken });
  }

  private async createRecipient(input: SubmitTransferInput): Promise<string> {
    let answer;
    try {
      answer = await this.client.call({
        method: 'POST',
        route: '/transferrecipient',
        body: {
          type: 'nuban',
          name: input.accountName,
          account_number: input.accountNumber,
          bank_code: input.bankCode,
          currency: 'NGN',
        },
      });
    } catch (error) {
      if (error instanceof PaystackRefusal) {
        // No recipient, no transfer: whatever the reason, Paystack has taken nothing.
        const invalid = error.httpStatus === 400 || error.httpStatus === 404 || error.httpStatus === 422;
        throw error.toProviderError(invalid ? 'invalid_account' : 'rejected', {
          notTaken: true,
          message: `Paystack refused the transfer recipient: ${error.message}`,
        });
      }
      throw error;
    }
    const recipient = Recipient.safeParse(answer.data);
    if (!recipient.success)
      throw unreadable('transfer recipient', answer.httpStatus, recipient.error.issues[0]?.message);
    const key = `${input.bankCode}:${input.accountNumber}`;
    this.recipients.delete(key);
    this.recipients.set(key, recipient.data.recipient_code);
    if (this.recipients.size > RECIPIENT_CACHE_SIZE) {
      const oldest = this.recipients.keys().next().value;
      if (oldest !== undefined) this.recipients.delete(oldest);
    }
    return recipient.data.recipient_code;
  }
}
