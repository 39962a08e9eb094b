// Dedicated virtual accounts at Paystack: a customer (`POST /customer`), then its dedicated account
// (`POST /dedicated_account`). Paystack has no idempotency key for either, so ours is carried in
// what Paystack does dedupe: the customer's email is derived from our allocation reference, and
// Paystack answers the existing customer for an email it knows. A repeat of the allocation finds
// that customer, and when Paystack refuses a second account for it, the account it already has
// (`GET /dedicated_account?customer=`) is the answer. Our API collects no customer email, and
// Paystack never mails a dedicated-account customer on its own; the address is in the reserved
// `.invalid` domain so that nothing could ever be delivered there.
import { ProviderError } from '../capabilities.ts';
import type { AllocateVirtualAccountInput, AllocatedVirtualAccount, VirtualAccountProvider } from '../capabilities.ts';
import { PROVIDER, type PaystackClient, PaystackRefusal, unreadable } from './http.ts';
import { Customer, DedicatedAccount, PageMeta } from './schemas.ts';
import { z } from 'zod';

export const CUSTOMER_EMAIL_DOMAIN = 'paystack-dva.gateway.invalid';
/** Pages of dedicated accounts read when closing by account number alone (100 a page). */
const MAX_ACCOUNT_PAGES = 200;

/** The Paystack customer's email for one allocation: the same on every retry of it. */
export function customerEmail(reference: string): string {
  const local = reference
    .toLowerCase()
    .replace(/[^a-z0-9._-]/g, '-')
    .slice(0, 60);
  return `va-${local}@${CUSTOMER_EMAIL_DOMAIN}`;
}

/**
 * First and last name from the account name: the first word and the rest (a one-word name is both),
 * which Paystack puts in the account's name after the business's.
 */
export function customerNames(accountName: string): { first_name: string; last_name: string } {
  const words = accountName.trim().split(/\s+/).filter(Boolean);
  const first = words[0] ?? 'Customer';
  return { first_name: first, last_name: words.length > 1 ? words.slice(1).join(' ') : first };
}

/** A bank's code from its Paystack slug (the bank list has both); undefined when not listed. */
export type BankCodeOf = (slug: string) => Promise<string | undefined>;

export class PaystackDedicatedAccounts implements VirtualAccountProvider {
  readonly name = PROVIDER;
  private readonly client: PaystackClient;
  private readonly bankCodeOf: BankCodeOf;

  constructor(client: PaystackClient, bankCodeOf: BankCodeOf) {
    this.client = client;
    this.bankCodeOf = bankCodeOf;
  }

  async allocate(input: AllocateVirtualAccountInput): Promise<AllocatedVirtualAccount> {
    const customer = await this.customer(input);
    try {
      const answer = await this.client.call({
        method: 'POST',
        route: '/dedicated_account',
        body: {
          customer: customer.customer_code,
          ...(input.preferredBank ? { preferred_bank: input.preferredBank } : {}),
        },
      });
      const account = DedicatedAccount.safeParse(answer.data);
      if (!account.success) throw unreadable('dedicated account', answer.httpStatus, account.error.issues[0]?.message);
      return await this.allocated(account.data);
    } catch (error) {
      if (!(error instanceof PaystackRefusal)) throw error;
      // Refused: if an earlier attempt of this allocation made the account, that account is the answer.
      const existing = await this.activeAccountOf(customer.id);
      if (existing) return this.allocated(existing);
      throw error.toProviderError('rejected', { message: `Paystack refused the dedicated account: ${error.message}` });
    }
  }

  /**
   * Deactivates the account (`DELETE /dedicated_account/{id}`). `providerReference` (the id that
   * allocate returned, kept on our account row) saves a search; without it the id is found by
   * reading Paystack's list of dedicated accounts. An account already inactive is closed already.
   */
  async close(accountNumber: string, _reason?: string, providerReference?: string): Promise<void> {
    let id = providerReference && /^\d+$/.test(providerReference) ? providerReference : undefined;
    if (!id) {
      const found = await this.findByNumber(accountNumber);
      if (!found)
        throw new ProviderError(PROVIDER, 'not_found', false, 'Paystack has no dedicated account with that number');
      if (!found.active) return;
      id = String(found.id);
    }
    try {
      const answer = await this.client.call({ method: 'DELETE', route: '/dedicated_account/{id}', params: { id } });
      const account = DedicatedAccount.safeParse(answer.data);
      if (!account.success)
        throw unreadable('deactivated account', answer.httpStatus, account.error.issues[0]?.message);
    } catch (error) {
      if (error instanceof PaystackRefusal) {
        throw error.toProviderError(error.httpStatus === 404 ? 'not_found' : 'rejected', {
          message: `Paystack refused to deactivate dedicated account ${id}: ${error.message}`,
        });
      }
      throw error;
    }
  }

  /**
   * Paystack names a dedicated account's bank by slug (`wema-bank`) and id, not by the NIP code our
   * API shows; the code comes from the bank list, and the slug stands in if the list lacks it.
   */
  private async allocated(account: DedicatedAccount): Promise<AllocatedVirtualAccount> {
    const slug = account.bank.slug ?? '';
    let code: string | undefined;
    try {
      code = slug ? await this.bankCodeOf(slug) : undefined;
    } catch {
      // The account exists either way; the code is a courtesy the list may fail to give.
      code = undefined;
    }
    return {
      accountNumber: account.account_number,
      bankCode: code ?? slug,
      bankName: account.bank.name,
      providerReference: String(account.id),
    };
  }

  private async customer(input: AllocateVirtualAccountInput): Promise<z.infer<typeof Customer>> {
    try {
      const answer = await this.client.call({
        method: 'POST',
        route: '/customer',
        body: {
          email: customerEmail(input.reference),
          ...customerNames(input.accountName),
          metadata: { gateway_reference: input.reference, gateway_customer_id: input.customerId },
        },
      });
      const customer = Customer.safeParse(answer.data);
      if (!customer.success) throw unreadable('customer', answer.httpStatus, customer.error.issues[0]?.message);
      return customer.data;
    } catch (error) {
      if (error instanceof PaystackRefusal) {
        throw error.toProviderError('rejected', { message: `Paystack refused the customer: ${error.message}` });
      }
      throw error;
    }
  }

  private async activeAccountOf(customerId: number): Promise<DedicatedAccount | undefined> {
    const accounts = await this.list({ customer: String(customerId), active: 'true' }, 1);
    return accounts.find((account) => account.active);
  }

  private async findByNumber(accountNumber: string): Promise<DedicatedAccount | undefined> {
    let found: DedicatedAccount | undefined;
    await this.list({}, MAX_ACCOUNT_PAGES, (account) => {
      // An active one wins over an old inactive assignment of the same number.
      if (account.account_number === accountNumber && (!found || account.active)) found = account;
    });
    return found;
  }

  private async list(
    filter: Record<string, string>,
    maxPages: number,
    each?: (account: DedicatedAccount) => void,
  ): Promise<DedicatedAccount[]> {
    const all: DedicatedAccount[] = [];
    for (let page = 1; page <= maxPages; page += 1) {
      const answer = await this.client.read(
        { method: 'GET', route: '/dedicated_account', query: { ...filter, perPage: '100', page: String(page) } },
        'dedicated account list',
      );
      const accounts = z.array(DedicatedAccount).safeParse(answer.data);
      if (!accounts.success)
        throw unreadable('dedicated account list', answer.httpStatus, accounts.error.issues[0]?.message);
      for (const account of accounts.data) {
        all.push(account);
        each?.(account);
      }
      const meta = PageMeta.safeParse(answer.meta);
      if (!meta.success || meta.data.page >= meta.data.pageCount || accounts.data.length === 0) return all;
    }
    return all;
  }
}
