// The `generic` connector (decisions §13): the HTTP bank contract of
// docs/generic-bank-contract-v1.yaml, which any bank, aggregator or in-house shim can implement.
// Live keys reach it when LIVE_CONNECTORS names it; the sandbox connector is this same code
// pointed at the bundled sandbox bank (src/connectors/sandbox/index.ts).
import { CAPABILITIES, type Capability, type Connector, type ConnectorDefinition, type KeyMode } from '../types.ts';
import { GenericBankClient } from './client.ts';
import {
  GenericBankSwitch,
  GenericCardProcessor,
  GenericIdentityVerifier,
  GenericVirtualAccountProvider,
} from './operations.ts';
import { genericCallbackReceiver } from './receiver.ts';
import { type GenericSettings, genericSettings } from './settings.ts';

export { GenericBankClient } from './client.ts';
export {
  GenericBankSwitch,
  GenericCardProcessor,
  GenericIdentityVerifier,
  GenericVirtualAccountProvider,
} from './operations.ts';
export { genericCallbackReceiver } from './receiver.ts';
export { GenericSettings, MIN_WEBHOOK_KEY_BYTES, genericSettings } from './settings.ts';

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
  ...genericSettings,
  create: (settings, context) =>
    createGenericConnector({ name: 'generic', modes: ['live'], ...settings, timeoutMs: context.timeoutMs }),
};
