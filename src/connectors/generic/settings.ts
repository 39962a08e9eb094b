// The `generic` connector's settings (decisions §13, §18): its variables, how they are read, and
// what production checks of them. Configuration (src/config.ts) reads them from here, without the
// connector's HTTP client.
import { z } from 'zod';
import { CAPABILITIES, type Capability, type ConnectorSettings } from '../types.ts';

/** The shortest `whsec_` key accepted, decoded; production asks for 32 bytes (../live-rules.ts). */
export const MIN_WEBHOOK_KEY_BYTES = 24;

const DEFAULT_CAPABILITIES = 'transfers,virtual_accounts';

function isWebhookSecret(value: string): boolean {
  if (!value.startsWith('whsec_')) return false;
  const key = value.slice('whsec_'.length);
  return /^[A-Za-z0-9+/]+={0,2}$/.test(key) && Buffer.from(key, 'base64').length >= MIN_WEBHOOK_KEY_BYTES;
}

function capabilityList(value: string): string[] {
  return value
    .split(',')
    .map((entry) => entry.trim())
    .filter(Boolean);
}

const capabilitiesMessage = `must be a comma-separated list of ${CAPABILITIES.join(', ')}`;

/**
 * The live connector's settings, from the environment. Each message names its variable (the
 * issue's path) and never repeats a value: the key and the secret appear in no error.
 */
export const GenericSettings = z
  .object({
    GENERIC_BANK_URL: z.url({ protocol: /^https?$/, error: 'must be an http:// or https:// URL' }),
    GENERIC_BANK_API_KEY: z
      .string({ error: 'is required' })
      .min(1, { error: 'is required', abort: true })
      // It goes into a header: no spaces or control characters.
      .regex(/^[\x21-\x7e]+$/, 'must be printable ASCII without spaces'),
    GENERIC_BANK_WEBHOOK_SECRET: z
      .string({ error: 'is required' })
      .refine(isWebhookSecret, `must be whsec_ followed by a base64 key of at least ${MIN_WEBHOOK_KEY_BYTES} bytes`),
    GENERIC_BANK_CAPABILITIES: z
      .string({ error: capabilitiesMessage })
      .default(DEFAULT_CAPABILITIES)
      .refine(
        (value) =>
          capabilityList(value).length > 0 &&
          capabilityList(value).every((entry) => (CAPABILITIES as readonly string[]).includes(entry)),
        capabilitiesMessage,
      ),
  })
  .transform((env) => ({
    baseUrl: env.GENERIC_BANK_URL,
    apiKey: env.GENERIC_BANK_API_KEY,
    webhookSecret: env.GENERIC_BANK_WEBHOOK_SECRET,
    capabilities: [...new Set(capabilityList(env.GENERIC_BANK_CAPABILITIES))] as Capability[],
  }));
export type GenericSettings = z.output<typeof GenericSettings>;

export const genericSettings: ConnectorSettings<GenericSettings> = {
  name: 'generic',
  settings: GenericSettings,
  secrets: {
    GENERIC_BANK_API_KEY: { bytes: (value) => Buffer.from(value, 'utf8'), example: 'openssl rand -hex 32' },
    // What signs is the decoded key.
    GENERIC_BANK_WEBHOOK_SECRET: {
      bytes: (value) => Buffer.from(value.slice('whsec_'.length), 'base64'),
      example: 'whsec_$(openssl rand -base64 32)',
    },
  },
  baseUrls: ['GENERIC_BANK_URL'],
};
