// The contract's calls, one capability object each (src/providers/types.ts), over the one client.
// Every answer is checked against the contract's shape before anything is taken from it: a 2xx
// without its fields is no answer (transient), never a transfer with an empty session id or an
// account with no number.
import { z } from 'zod';
import {
  type AllocateVirtualAccountInput,
  type AllocatedVirtualAccount,
  type Bank,
  type BankSwitch,
  type BvnHolder,
  type CardProcessor,
  type IdentityVerifier,
  type NameEnquiryResult,
  ProviderError,
  type SettlementReport,
  type SubmitTransferInput,
  type TransferStatusResult,
  type VirtualAccountProvider,
} from '../../providers/types.ts';
import type { GenericBankClient } from './client.ts';

const text = z.string().max(2_000);
const optionalText = text.nullish();

const BanksAnswer = z.object({
  banks: z.array(z.object({ code: z.string().min(1).max(20), name: z.string().min(1).max(200) })).max(10_000),
});
const NameEnquiryAnswer = z.object({ account_name: z.string().min(1).max(200), session_id: text });
/** A transfer as the bank reports it: the submission's answer and the status query's. */
const TransferAnswer = z.object({
  reference: z.string().min(1).max(200),
  status: z.enum(['pending', 'successful', 'failed']),
  session_id: optionalText,
  code: optionalText,
  message: optionalText,
});
const TransferStatusAnswer = TransferAnswer.extend({ session_id: text });
const AllocationAnswer = z.object({
  account_number: z.string().regex(/^\d{10}$/, 'must be 10 digits'),
  bank_code: z.string().min(1).max(20),
  bank_name: z.string().min(1).max(200),
});
/** The statement as the bank sends it: checked field by field, since reconciliation trusts nothing it reads. */
const StatementAnswer = z.object({
  date: z.string(),
  generated_at: z.string(),
  items: z.array(
    z.object({
      kind: z.enum(['transfer', 'inbound_credit']),
      reference: z.string().min(1),
      session_id: z.string(),
      amount_minor: z.number().int().positive(),
      status: z.enum(['successful', 'failed']),
      provider: z.string().nullable(),
      account_number: z.string(),
      value_time: z.string(),
    }),
  ),
});
const BvnAnswer = z.object({ first_name: z.string().min(1).max(200), last_name: z.string().min(1).max(200) });
const CardAnswer = z.object({ card_reference: z.string().min(1).max(200), last4: z.string().regex(/^\d{4}$/) });
const CardStatusAnswer = z.object({ card_reference: z.string().min(1).max(200), status: z.enum(['locked', 'active']) });
const FundingAnswer = z.object({ reference: z.string().min(1).max(200), status: z.literal('successful') });

/** `Guaranty Trust Bank` → `guaranty-trust-bank`: the contract's banks carry code and name only. */
export function bankSlug(name: string): string {
  return name
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, '-')
    .replace(/^-+|-+$/g, '');
}

function statusResult(answer: z.infer<typeof TransferAnswer>): TransferStatusResult {
  return {
    status: answer.status,
    sessionId: answer.session_id ?? '',
    rawCode: answer.code ?? '',
    ...(answer.message ? { message: answer.message } : {}),
  };
}

export class GenericBankSwitch implements BankSwitch {
  readonly name: string;
  private readonly client: GenericBankClient;

  constructor(client: GenericBankClient) {
    this.client = client;
    this.name = client.provider;
  }

  async listBanks(): Promise<Bank[]> {
    const answer = await this.client.call({ method: 'GET', route: '/banks' }, BanksAnswer);
    return answer.banks.map((bank) => ({ code: bank.code, name: bank.name, slug: bankSlug(bank.name) }));
  }

  async nameEnquiry(bankCode: string, accountNumber: string): Promise<NameEnquiryResult> {
    // 404 `invalid_account` becomes a definitive invalid_account error (refusalOutcome).
    const answer = await this.client.call({ method: 'POST', route: '/name-enquiry' }, NameEnquiryAnswer, {
      body: { bank_code: bankCode, account_number: accountNumber },
    });
    return { accountNumber, bankCode, accountName: answer.account_name, sessionId: answer.session_id };
  }

  async submitTransfer(input: SubmitTransferInput): Promise<TransferStatusResult> {
    const route = { method: 'POST', route: '/transfers' } as const;
    const answer = await this.client.call(route, TransferAnswer, {
      body: {
        reference: input.reference,
        amount_minor: input.amountMinor,
        currency: 'NGN',
        bank_code: input.bankCode,
        account_number: input.accountNumber,
        account_name: input.accountName,
        narration: input.narration,
        // The name enquiry's session, where the caller has it; the bank may start its own.
        ...(input.sessionId ? { session_id: input.sessionId } : {}),
      },
      // 422 is the contract's "refused, not taken": the only refusal that lets the transfer go
      // elsewhere. A 409 (the reference with another body) or any other 4xx leaves the doubt.
      refused: (refusal) => {
        throw this.client.definitive('POST /transfers', refusal, { notTaken: refusal.status === 422 });
      },
    });
    this.sameTransfer(input.reference, answer.reference, 'POST /transfers');
    return statusResult(answer);
  }

  async transferStatus(reference: string): Promise<TransferStatusResult> {
    // 404: the bank never took it — a definitive not_found (refusalOutcome).
    const answer = await this.client.call(
      { method: 'GET', route: '/transfers/{reference}', params: { reference } },
      TransferStatusAnswer,
    );
    this.sameTransfer(reference, answer.reference, 'GET /transfers/{reference}');
    return statusResult(answer);
  }

  async settlementReport(date: string): Promise<SettlementReport> {
    const route = '/statements/settlement/{date}';
    const statement = await this.client.call({ method: 'GET', route, params: { date } }, StatementAnswer);
    if (statement.date !== date) {
      throw new ProviderError(
        this.name,
        'unknown',
        true,
        `${this.name} sent the settlement statement of ${statement.date.slice(0, 20)} when asked for ${date}`,
      );
    }
    return {
      date,
      generatedAt: statement.generated_at,
      items: statement.items.map((item) => ({
        kind: item.kind,
        reference: item.reference,
        sessionId: item.session_id,
        amountMinor: item.amount_minor,
        status: item.status,
        provider: item.provider,
        accountNumber: item.account_number,
        valueTime: item.value_time,
      })),
    };
  }

  /** An answer about another transfer is no answer about ours. */
  private sameTransfer(asked: string, answered: string, name: string): void {
    if (asked === answered) return;
    throw new ProviderError(this.name, 'unknown', true, `${this.name} answered ${name} about another transfer`);
  }
}

export class GenericVirtualAccountProvider implements VirtualAccountProvider {
  readonly name: string;
  private readonly client: GenericBankClient;

  constructor(client: GenericBankClient) {
    this.client = client;
    this.name = client.provider;
  }

  async allocate(input: AllocateVirtualAccountInput): Promise<AllocatedVirtualAccount> {
    const answer = await this.client.call({ method: 'POST', route: '/virtual-accounts' }, AllocationAnswer, {
      body: {
        reference: input.reference,
        account_name: input.accountName,
        customer_id: input.customerId,
        ...(input.bvn ? { bvn: input.bvn } : {}),
        ...(input.preferredBank ? { preferred_bank: input.preferredBank } : {}),
      },
    });
    return {
      accountNumber: answer.account_number,
      bankCode: answer.bank_code,
      bankName: answer.bank_name,
      // The bank knows the account by our reference (its idempotency key).
      providerReference: input.reference,
    };
  }

  async close(accountNumber: string, reason?: string): Promise<void> {
    await this.client.call(
      {
        method: 'POST',
        route: '/virtual-accounts/{account_number}/close',
        params: { account_number: accountNumber },
      },
      z.unknown(),
      { body: reason ? { reason } : {} },
    );
  }
}

export class GenericCardProcessor implements CardProcessor {
  readonly name: string;
  private readonly client: GenericBankClient;

  constructor(client: GenericBankClient) {
    this.client = client;
    this.name = client.provider;
  }

  async issue(input: { reference: string; customerId: string }): Promise<{ cardReference: string; last4: string }> {
    const answer = await this.client.call({ method: 'POST', route: '/cards' }, CardAnswer, {
      body: { reference: input.reference, customer_id: input.customerId },
    });
    return { cardReference: answer.card_reference, last4: answer.last4 };
  }

  async setLocked(cardReference: string, locked: boolean): Promise<void> {
    const answer = await this.client.call(
      {
        method: 'POST',
        route: `/cards/{card_reference}/${locked ? 'lock' : 'unlock'}`,
        params: { card_reference: cardReference },
      },
      CardStatusAnswer,
      { body: {} },
    );
    if (answer.status !== (locked ? 'locked' : 'active')) {
      throw new ProviderError(this.name, 'unknown', true, `${this.name} left the card ${answer.status}`);
    }
  }

  async fund(input: { cardReference: string; reference: string; amountMinor: number }): Promise<void> {
    await this.client.call(
      { method: 'POST', route: '/cards/{card_reference}/fund', params: { card_reference: input.cardReference } },
      FundingAnswer,
      { body: { reference: input.reference, amount_minor: input.amountMinor } },
    );
  }
}

/**
 * BVN lookups. The BVN travels in the request body only (never in a path, which logs and spans
 * carry), and no error raised here repeats it.
 */
export class GenericIdentityVerifier implements IdentityVerifier {
  readonly name: string;
  private readonly client: GenericBankClient;

  constructor(client: GenericBankClient) {
    this.client = client;
    this.name = client.provider;
  }

  async lookUpBvn(input: { bvn: string; firstName: string; lastName: string }): Promise<BvnHolder | null> {
    const holder = await this.client.call({ method: 'POST', route: '/identity/bvn-lookup' }, BvnAnswer, {
      body: { bvn: input.bvn, first_name: input.firstName, last_name: input.lastName },
      refused: (refusal) => (refusal.status === 404 && refusal.error.code === 'not_found' ? null : undefined),
    });
    return holder === null ? null : { firstName: holder.first_name, lastName: holder.last_name };
  }
}
