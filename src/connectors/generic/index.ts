// The `generic` connector (decisions §13): the HTTP bank contract of
// docs/generic-bank-contract-v1.yaml, which any bank, aggregator or in-house shim can implement.
// Live keys reach it when LIVE_CONNECTORS names it; the sandbox connector is this same code
// pointed at the bundled sandbox bank (src/connectors/sandbox/index.ts).
import { z } from 'zod';
import { CAPABILITIES, type Capability, type Connector, type ConnectorDefinition, type KeyMode } from '../types.ts';
import { GenericBankClient } from './client.ts';
import {
  GenericBankSwitch,
  GenericCardProcessor,
  GenericIdentityVerifier,
  GenericVirtualAccountProvider,
} from './operations.ts';
import { genericCallbackReceiver } from './receiver.ts';

export { GenericBankClient } from './client.ts';
export {
  GenericBankSwitch,
  GenericCardProcessor,
  GenericIdentityVerifier,
  GenericVirtualAccountProvider,
} from './operations.ts';
export { genericCallbackReceiver } from './receiver.ts';

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

/** A virtual-account provider the bank serves under a path prefix (e.g. `/providers/wema`). */
export interface GenericVirtualAccountRouteOptions {
  name: string;
  pathPrefix: string;
  supportsPreferredBank: boolean;
}

export interface GenericConnectorOptions {
  name: string;
  modes: readonly KeyMode[];
  baseUrl: string;
  apiKey: string;
  /** Verifies the bank's callbacks: a `whsec_…` secret's key, otherwise the secret's UTF-8 bytes. */
  webhookSecret: string;
  capabilities: readonly Capability[];
  timeoutMs: number;
  /**
   * Several virtual-account providers at one bank, each at its path prefix. Without them, the
   * bank's own virtual accounts (the contract's paths at the root), named as the connector.
   */
  virtualAccountProviders?: readonly GenericVirtualAccountRouteOptions[];
}

/** A generic connector, its capability objects with their own classes (which the sandbox extends). */
export interface GenericConnector extends Connector {
  readonly transfers?: GenericBankSwitch;
  readonly virtualAccounts?: readonly {
    provider: GenericVirtualAccountProvider;
    countries: readonly string[];
    currencies: readonly string[];
    supportsPreferredBank: boolean;
  }[];
  readonly cards?: GenericCardProcessor;
  readonly identity?: GenericIdentityVerifier;
}

export function createGenericConnector(options: GenericConnectorOptions): GenericConnector {
  const client = new GenericBankClient({
    provider: options.name,
    baseUrl: options.baseUrl,
    apiKey: options.apiKey,
    timeoutMs: options.timeoutMs,
  });
  const serves = (capability: Capability) => options.capabilities.includes(capability);
  const routes = options.virtualAccountProviders ?? [
    { name: options.name, pathPrefix: '', supportsPreferredBank: true },
  ];
  const transfers = serves('transfers') ? new GenericBankSwitch(client) : undefined;
  return {
    name: options.name,
    modes: options.modes,
    capabilities: CAPABILITIES.filter(serves),
    ...(transfers ? { transfers } : {}),
    ...(serves('virtual_accounts')
      ? {
          virtualAccounts: routes.map((route) => ({
            provider: new GenericVirtualAccountProvider(client.withPrefix(route.name, route.pathPrefix)),
            countries: ['NG'],
            currencies: ['NGN'],
            supportsPreferredBank: route.supportsPreferredBank,
          })),
        }
      : {}),
    ...(serves('cards') ? { cards: new GenericCardProcessor(client) } : {}),
    ...(serves('identity') ? { identity: new GenericIdentityVerifier(client) } : {}),
    // A credit may name only one of this connector's own virtual-account providers.
    callbacks: genericCallbackReceiver(options.webhookSecret, {
      virtualAccountProviders: routes.map((route) => route.name),
    }),
    // The statement comes with transfers: it is the transfer switch's record of the day.
    ...(transfers ? { settlementReport: (date: string) => transfers.settlementReport(date) } : {}),
  };
}

export const genericConnector: ConnectorDefinition<GenericSettings> = {
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
  create: (settings, context) =>
    createGenericConnector({ name: 'generic', modes: ['live'], ...settings, timeoutMs: context.timeoutMs }),
};
