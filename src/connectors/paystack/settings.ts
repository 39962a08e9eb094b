// The `paystack` connector's settings (decisions §13, §18): PAYSTACK_SECRET_KEY and
// PAYSTACK_BASE_URL, how they are read (a bad one names the variable and never repeats its value),
// and what production checks of them. Configuration (src/config.ts) reads them from here, without
// the connector's HTTP client.
import { z } from 'zod';
import type { ConnectorSettings } from '../types.ts';

export const PROVIDER = 'paystack';

export const DEFAULT_PAYSTACK_BASE_URL = 'https://api.paystack.co';

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

export const paystackSettings: ConnectorSettings<PaystackSettings> = {
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
};
