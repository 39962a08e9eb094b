// The `paystack` connector (decisions §13): transfers, name enquiry, bank list and dedicated virtual
// accounts through Paystack's public API, for live keys. Its settings are PAYSTACK_SECRET_KEY and
// PAYSTACK_BASE_URL; a bad one names the variable and never repeats its value.
import type { Bank } from '../capabilities.ts';
import type { Connector, ConnectorContext, ConnectorDefinition } from '../types.ts';
import { PaystackCallbacks } from './callbacks.ts';
import { PROVIDER, PaystackClient } from './http.ts';
import { PaystackSettlement } from './settlement.ts';
import { type PaystackSettings, paystackSettings } from './settings.ts';
import { PaystackTransfers } from './transfers.ts';
import { PaystackDedicatedAccounts } from './virtual-accounts.ts';

export {
  DEFAULT_PAYSTACK_BASE_URL,
  type PaystackSettings,
  PaystackSettingsSchema,
  paystackSettings,
} from './settings.ts';

/** How long the bank list behind dedicated accounts' bank codes is kept. */
const BANK_LIST_TTL_MS = 60 * 60_000;

export function createPaystackConnector(settings: PaystackSettings, context: ConnectorContext): Connector {
  const client = new PaystackClient({ ...settings, timeoutMs: context.timeoutMs });
  const settlement = new PaystackSettlement(client);
  const transfers = new PaystackTransfers(client, (date) => settlement.report(date));
  let banks: { list: Bank[]; at: number } | undefined;
  const bankCodeOf = async (slug: string) => {
    if (!banks || Date.now() - banks.at > BANK_LIST_TTL_MS)
      banks = { list: await transfers.listBanks(), at: Date.now() };
    return banks.list.find((bank) => bank.slug === slug)?.code;
  };
  const accounts = new PaystackDedicatedAccounts(client, bankCodeOf);
  return {
    name: PROVIDER,
    modes: ['live'],
    capabilities: ['transfers', 'virtual_accounts'],
    transfers,
    virtualAccounts: [{ provider: accounts, countries: ['NG'], currencies: ['NGN'], supportsPreferredBank: true }],
    callbacks: new PaystackCallbacks(settings.secretKey),
    settlementReport: (date) => settlement.report(date),
  };
}

export const paystackConnector: ConnectorDefinition<PaystackSettings> = {
  ...paystackSettings,
  create: createPaystackConnector,
};
