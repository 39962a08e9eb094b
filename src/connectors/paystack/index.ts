// The `paystack` connector (decisions §13): transfers, name enquiry, bank list and dedicated virtual
// accounts through Paystack's public API, for live keys. Its settings are PAYSTACK_SECRET_KEY and
// PAYSTACK_BASE_URL; a bad one names the variable and never repeats its value.
import { z } from 'zod';
import type { Bank } from '../../providers/types.ts';
import type { Connector, ConnectorContext, ConnectorDefinition } from '../types.ts';
import { PaystackCallbacks } from './callbacks.ts';
import { PROVIDER, PaystackClient } from './http.ts';
import { PaystackSettlement } from './settlement.ts';
import { PaystackTransfers } from './transfers.ts';
import { PaystackDedicatedAccounts } from './virtual-accounts.ts';

export const DEFAULT_PAYSTACK_BASE_URL = 'https://api.paystack.co';

/** How long the bank list behind dedicated accounts' bank codes is kept. */
const BANK_LIST_TTL_MS = 60 * 60_000;

export interface PaystackSettings {
  secretKey: string;
  baseUrl: string;
}

const SecretKey = z
  .string({
    error: (issue) =>
      issue.input === undefined ? 'PAYSTACK_SECRET_KEY is required' : 'PAYSTACK_SECRET_KEY must be a string',
  })
  .regex(/^sk_(live|test)_[A-Za-z0-9]+$/, {
    error: 'PAYSTACK_SECRET_KEY must be a Paystack secret key: sk_live_ or sk_test_ followed by the key',
  });

const BaseUrl = z
  .string({ error: 'PAYSTACK_BASE_URL must be a string' })
  .refine(
    (value) => {
      try {
        const url = new URL(value);
        return (url.protocol === 'https:' || url.protocol === 'http:') && !url.username && !url.password;
      } catch {
        return false;
      }
    },
    { error: 'PAYSTACK_BASE_URL must be an http(s) URL without credentials' },
  )
  .default(DEFAULT_PAYSTACK_BASE_URL);

/** Read from the environment (the variables by name); the key goes nowhere but the Authorization header. */
export const PaystackSettingsSchema: z.ZodType<PaystackSettings> = z
  .object({ PAYSTACK_SECRET_KEY: SecretKey, PAYSTACK_BASE_URL: BaseUrl })
  .transform((env) => ({ secretKey: env.PAYSTACK_SECRET_KEY, baseUrl: env.PAYSTACK_BASE_URL }));

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
  name: PROVIDER,
  settings: PaystackSettingsSchema,
  secrets: {
    PAYSTACK_SECRET_KEY: { bytes: (value) => Buffer.from(value, 'utf8'), example: 'the live secret key, sk_live_…' },
  },
  baseUrls: ['PAYSTACK_BASE_URL'],
  // A test key reaches Paystack's test mode, whose simulated payments arrive signed as real ones.
  testCredential: (env) =>
    env.PAYSTACK_SECRET_KEY?.startsWith('sk_test_')
      ? { variable: 'PAYSTACK_SECRET_KEY', what: "a Paystack test key (sk_test_…), of Paystack's test mode" }
      : undefined,
  create: createPaystackConnector,
};
