// Paystack's record of one UTC day for the daily reconciliation (decisions §13): the transfers made
// that day (`GET /transfer?from=&to=`) and the dedicated-account credits received
// (`GET /transaction?from=&to=&channel=dedicated_nuban`), every page; a credit at the amount
// Paystack settles, net of its fee (decisions §18: what the books compare it with). Only what has
// ended is listed: success → successful, failed/reversed → failed; a transfer still pending, or in
// a status we do not read (otp, abandoned…), is left out, as the bank's statement leaves it out.
import { ProviderError } from '../capabilities.ts';
import type { SettlementItem, SettlementReport } from '../capabilities.ts';
import { PROVIDER, type PaystackClient, unreadable } from './http.ts';
import { ourReference } from './reference.ts';
import { Charge, ListedTransfer, PageMeta, creditFee } from './schemas.ts';
import { z } from 'zod';

const PER_PAGE = 100;
/** 100,000 lines a day: past it the listing is taken as broken rather than read for ever. */
const MAX_PAGES = 1_000;
const DAY = /^\d{4}-\d{2}-\d{2}$/;

const ENDED: Record<string, SettlementItem['status']> = { success: 'successful', failed: 'failed', reversed: 'failed' };

function endedStatus(status: string): SettlementItem['status'] | undefined {
  return Object.hasOwn(ENDED, status) ? ENDED[status] : undefined;
}

export class PaystackSettlement {
  private readonly client: PaystackClient;

  constructor(client: PaystackClient) {
    this.client = client;
  }

  async report(date: string): Promise<SettlementReport> {
    const from = new Date(`${date}T00:00:00.000Z`);
    if (!DAY.test(date) || Number.isNaN(from.getTime()) || from.toISOString().slice(0, 10) !== date) {
      throw new ProviderError(PROVIDER, 'rejected', false, `not a UTC day: ${JSON.stringify(date).slice(0, 40)}`);
    }
    const range = { from: from.toISOString(), to: `${date}T23:59:59.999Z` };
    const [transfers, credits] = await Promise.all([
      this.pages('/transfer', { ...range, per_page: String(PER_PAGE) }, 'transfer list'),
      this.pages(
        '/transaction',
        { ...range, channel: 'dedicated_nuban', per_page: String(PER_PAGE) },
        'transaction list',
      ),
    ]);
    const items: SettlementItem[] = [];
    for (const raw of transfers) {
      const parsed = ListedTransfer.safeParse(raw);
      if (!parsed.success) throw unreadable('transfer list', 200, parsed.error.issues[0]?.message);
      const transfer = parsed.data;
      const status = endedStatus(transfer.status);
      if (!status) continue;
      const recipient = typeof transfer.recipient === 'object' ? transfer.recipient : undefined;
      const sessionId = transfer.session?.id;
      items.push({
        kind: 'transfer',
        reference: ourReference(transfer.reference) ?? transfer.reference,
        sessionId: sessionId === null || sessionId === undefined ? '' : String(sessionId),
        amountMinor: transfer.amount,
        status,
        provider: null,
        accountNumber: recipient?.details?.account_number ?? '',
        // A success counts when the money left; a failure (a reversal too) when Paystack ended it.
        valueTime:
          (status === 'successful' ? transfer.transferred_at : undefined) ??
          transfer.updated_at ??
          transfer.updatedAt ??
          transfer.created_at ??
          transfer.createdAt ??
          '',
      });
    }
    for (const raw of credits) {
      const parsed = Charge.safeParse(raw);
      if (!parsed.success) throw unreadable('transaction list', 200, parsed.error.issues[0]?.message);
      const charge = parsed.data;
      // The channel filter is Paystack's; a card payment that slipped through is not a credit of ours.
      if (charge.channel !== 'dedicated_nuban' && charge.authorization?.channel !== 'dedicated_nuban') continue;
      const status = endedStatus(charge.status);
      if (!status) continue;
      const fee = creditFee(charge);
      if (typeof fee !== 'number') throw unreadable('transaction list', 200, `${fee.path}: ${fee.message}`);
      items.push({
        kind: 'inbound_credit',
        reference: charge.reference,
        sessionId: '',
        amountMinor: charge.amount - fee,
        status,
        provider: PROVIDER,
        accountNumber:
          charge.authorization?.receiver_bank_account_number ?? charge.metadata?.receiver_account_number ?? '',
        valueTime: charge.paid_at ?? charge.paidAt ?? charge.created_at ?? charge.createdAt ?? '',
      });
    }
    return { date, generatedAt: new Date().toISOString(), items };
  }

  /** Every item of a page-numbered list, page after page until `meta.pageCount`. */
  private async pages(route: string, query: Record<string, string>, what: string): Promise<unknown[]> {
    const items: unknown[] = [];
    for (let page = 1; page <= MAX_PAGES; page += 1) {
      const answer = await this.client.read({ method: 'GET', route, query: { ...query, page: String(page) } }, what);
      const data = z.array(z.unknown()).safeParse(answer.data);
      if (!data.success) throw unreadable(what, answer.httpStatus, data.error.issues[0]?.message);
      const meta = PageMeta.safeParse(answer.meta);
      if (!meta.success) throw unreadable(what, answer.httpStatus, `meta: ${meta.error.issues[0]?.message}`);
      items.push(...data.data);
      if (meta.data.page >= meta.data.pageCount || data.data.length === 0) return items;
    }
    throw new ProviderError(PROVIDER, 'unknown', true, `Paystack's ${what} did not end within ${MAX_PAGES} pages`);
  }
}
