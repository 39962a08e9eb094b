// The contract's calls, one capability object each (src/connectors/capabilities.ts), over the one client.
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
} from '../capabilities.ts';
import type { GenericBankClient } from './client.ts';
import {
  BankListAnswer,
  BvnHolderAnswer,
  type BvnLookupRequest,
  CONTRACT_PATHS,
  CardAnswer,
  CardFundingAnswer,
  CardStatusAnswer,
  type CloseVirtualAccountRequest,
  type FundCardRequest,
  type IssueCardRequest,
  NameEnquiryAnswer,
  type NameEnquiryRequest,
  SettlementStatementAnswer,
  TransferAnswer,
  type TransferRequest,
  TransferStatusAnswer,
  VirtualAccountAnswer,
  type VirtualAccountRequest,
  bankSlug,
} from './contract.ts';

function statusResult(answer: TransferAnswer): TransferStatusResult {
  return {
    status: answer.status,
    sessionId: answer.session_id ?? '',
    rawCode: answer.code ?? '',
    ...(answer.message ? { message: answer.message } : {}),
  };
}

/** A capability object over the client, named as the client's provider. */
abstract class GenericCapability {
  readonly name: string;
  protected readonly client: GenericBankClient;

  constructor(client: GenericBankClient) {
    this.client = client;
    this.name = client.provider;
  }
}

export class GenericBankSwitch extends GenericCapability implements BankSwitch {
  async listBanks(): Promise<Bank[]> {
    const answer = await this.client.call({ method: 'GET', route: CONTRACT_PATHS.banks }, BankListAnswer);
    return answer.banks.map((bank) => ({ code: bank.code, name: bank.name, slug: bankSlug(bank.name) }));
  }

  async nameEnquiry(bankCode: string, accountNumber: string): Promise<NameEnquiryResult> {
    // 404 `invalid_account` becomes a definitive invalid_account error (refusalOutcome).
    const answer = await this.client.call({ method: 'POST', route: CONTRACT_PATHS.nameEnquiry }, NameEnquiryAnswer, {
      body: { bank_code: bankCode, account_number: accountNumber } satisfies z.input<typeof NameEnquiryRequest>,
    });
    return { accountNumber, bankCode, accountName: answer.account_name, sessionId: answer.session_id };
  }

  async submitTransfer(input: SubmitTransferInput): Promise<TransferStatusResult> {
    const route = { method: 'POST', route: CONTRACT_PATHS.transfers } as const;
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
      } satisfies z.input<typeof TransferRequest>,
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
      { method: 'GET', route: CONTRACT_PATHS.transfer, params: { reference } },
      TransferStatusAnswer,
    );
    this.sameTransfer(reference, answer.reference, 'GET /transfers/{reference}');
    return statusResult(answer);
  }

  async settlementReport(date: string): Promise<SettlementReport> {
    const route = CONTRACT_PATHS.settlementStatement;
    const statement = await this.client.call({ method: 'GET', route, params: { date } }, SettlementStatementAnswer);
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

export class GenericVirtualAccountProvider extends GenericCapability implements VirtualAccountProvider {
  async allocate(input: AllocateVirtualAccountInput): Promise<AllocatedVirtualAccount> {
    const answer = await this.client.call(
      { method: 'POST', route: CONTRACT_PATHS.virtualAccounts },
      VirtualAccountAnswer,
      {
        body: {
          reference: input.reference,
          account_name: input.accountName,
          customer_id: input.customerId,
          ...(input.bvn ? { bvn: input.bvn } : {}),
          ...(input.preferredBank ? { preferred_bank: input.preferredBank } : {}),
        } satisfies z.input<typeof VirtualAccountRequest>,
      },
    );
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
      { method: 'POST', route: CONTRACT_PATHS.closeVirtualAccount, params: { account_number: accountNumber } },
      z.unknown(),
      { body: (reason ? { reason } : {}) satisfies z.input<typeof CloseVirtualAccountRequest> },
    );
  }
}

export class GenericCardProcessor extends GenericCapability implements CardProcessor {
  async issue(input: { reference: string; customerId: string }): Promise<{ cardReference: string; last4: string }> {
    const answer = await this.client.call({ method: 'POST', route: CONTRACT_PATHS.cards }, CardAnswer, {
      body: { reference: input.reference, customer_id: input.customerId } satisfies z.input<typeof IssueCardRequest>,
    });
    return { cardReference: answer.card_reference, last4: answer.last4 };
  }

  async setLocked(cardReference: string, locked: boolean): Promise<void> {
    const answer = await this.client.call(
      {
        method: 'POST',
        route: locked ? CONTRACT_PATHS.lockCard : CONTRACT_PATHS.unlockCard,
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
      { method: 'POST', route: CONTRACT_PATHS.fundCard, params: { card_reference: input.cardReference } },
      CardFundingAnswer,
      {
        body: { reference: input.reference, amount_minor: input.amountMinor } satisfies z.input<typeof FundCardRequest>,
      },
    );
  }
}

/**
 * BVN lookups. The BVN travels in the request body only (never in a path, which logs and spans
 * carry), and no error raised here repeats it.
 */
export class GenericIdentityVerifier extends GenericCapability implements IdentityVerifier {
  async lookUpBvn(input: { bvn: string; firstName: string; lastName: string }): Promise<BvnHolder | null> {
    const holder = await this.client.call({ method: 'POST', route: CONTRACT_PATHS.bvnLookup }, BvnHolderAnswer, {
      body: { bvn: input.bvn, first_name: input.firstName, last_name: input.lastName } satisfies z.input<
        typeof BvnLookupRequest
      >,
      refused: (refusal) => (refusal.status === 404 && refusal.error.code === 'not_found' ? null : undefined),
    });
    return holder === null ? null : { firstName: holder.first_name, lastName: holder.last_name };
  }
}
