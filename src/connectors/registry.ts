// The providers this deployment talks to, built from configuration: the sandbox connector for
// sk_test_ keys (the bundled sandbox bank through the generic contract: transfers, two
// virtual-account providers so that routing between providers is real, cards, identity), and the
// connectors LIVE_CONNECTORS names for sk_live_ keys, each serving the capabilities it declares
// (decisions §13).
import type { Config } from '../config.ts';
import { type SandboxConnectorConfig, createSandboxConnector } from './sandbox/index.ts';
import type { Bank, BankSwitch, CardProcessor, IdentityVerifier } from './capabilities.ts';
import { connectorKind } from './index.ts';
import type { Capability, Connector, KeyMode, VirtualAccountRoute } from './types.ts';

export interface VirtualAccountProviderEntry extends VirtualAccountRoute {
  /** Key modes allowed to route here: its connector's. */
  modes: readonly KeyMode[];
  /** The connector the provider belongs to. */
  connector: string;
}

/** The test mode's providers: the sandbox connector's, which every sk_test_ key uses. */
export interface ProviderSet {
  bankSwitch: BankSwitch;
  cards: CardProcessor;
  banks: BankDirectory;
  /** BVN lookups for identity customers. */
  identity: IdentityVerifier;
}

/**
 * Every connector this deployment has (decisions §13): the sandbox, for sk_test_ keys, whose
 * providers also sit at the top level, then the live connectors in LIVE_CONNECTORS order. The
 * sandbox bank is never a live provider.
 */
export interface Providers extends ProviderSet {
  virtualAccounts: VirtualAccountProviderEntry[];
  connectors: readonly Connector[];
  /** Each transfers connector's bank list, kept for a few minutes. */
  directories: ReadonlyMap<string, BankDirectory>;
  /**
   * The key modes whose objects each callback sender (`/provider-callbacks/<name>`) may act on: the
   * sandbox bank's callbacks never touch a live transfer, card or account (decisions §16).
   */
  callbackModes: Record<string, readonly KeyMode[]>;
}

/** The connectors that serve `capability` for keys of `mode`, in priority order. */
export function serving(providers: Pick<Providers, 'connectors'>, mode: KeyMode, capability: Capability): Connector[] {
  return providers.connectors.filter(
    (connector) => connector.modes.includes(mode) && connector.capabilities.includes(capability),
  );
}

/** A transfers connector by name, with its bank list: undefined when the deployment has none of that name. */
export function transfersConnector(
  providers: Pick<Providers, 'connectors' | 'directories'>,
  name: string,
): { connector: Connector; bankSwitch: BankSwitch; banks: BankDirectory } | undefined {
  const connector = providers.connectors.find((candidate) => candidate.name === name);
  const banks = providers.directories.get(name);
  if (!connector?.transfers || !banks) return undefined;
  return { connector, bankSwitch: connector.transfers, banks };
}

/** A bank list: one connector's, or a mode's (src/connectors/registry.ts banksOf). */
export type Banks = Pick<BankDirectory, 'list' | 'find'>;

/**
 * The bank list of a key mode: the first of its transfers connectors whose list answers, in
 * priority order (decisions §13). A connector that is down does not stop a transfer that the next
 * one can take, so it must not stop the bank code's check either.
 */
export function banksOf(providers: Pick<Providers, 'connectors' | 'directories'>, mode: KeyMode): Banks {
  const chain = serving(providers, mode, 'transfers').flatMap(
    (connector) => providers.directories.get(connector.name) ?? [],
  );
  const list = async (): Promise<Bank[]> => {
    let fault: unknown = new Error(`no ${mode} connector serves transfers`);
    for (const directory of chain) {
      try {
        return await directory.list();
      } catch (error) {
        fault = error;
      }
    }
    throw fault;
  };
  return { list, find: async (code) => (await list()).find((bank) => bank.code === code) };
}

/**
 * The card processor of a key mode: the first connector serving cards for it. A card stays with
 * the processor that issued it, so a deployment names one live cards connector (docs/going-live.md).
 */
export function cardsFor(providers: Pick<Providers, 'connectors' | 'cards'>, mode: KeyMode): CardProcessor {
  if (mode === 'test') return providers.cards;
  const processor = serving(providers, mode, 'cards')[0]?.cards;
  if (!processor) throw new Error(`no ${mode} connector serves cards`);
  return processor;
}

/** The BVN lookups of a key mode: the first connector serving identity for it. */
export function identityFor(providers: Pick<Providers, 'connectors' | 'identity'>, mode: KeyMode): IdentityVerifier {
  if (mode === 'test') return providers.identity;
  const verifier = serving(providers, mode, 'identity')[0]?.identity;
  if (!verifier) throw new Error(`no ${mode} connector serves identity`);
  return verifier;
}

/** The key modes whose objects callbacks from `provider` may act on: none for a sender not listed. */
export function callbackModesOf(
  providers: Pick<Providers, 'callbackModes'>,
  provider: string,
): readonly ('test' | 'live')[] {
  return Object.hasOwn(providers.callbackModes, provider) ? providers.callbackModes[provider]! : [];
}

/** Whether callbacks from `provider` may act on objects of `mode`: never for a sender not listed. */
export function callbacksServe(providers: Pick<Providers, 'callbackModes'>, provider: string, mode: string): boolean {
  return callbackModesOf(providers, provider).some((served) => served === mode);
}

/** The bank list, fetched from the switch and kept for a few minutes. */
export class BankDirectory {
  private readonly bankSwitch: BankSwitch;
  private readonly ttlMs: number;
  private cached: { banks: Bank[]; at: number } | undefined;

  constructor(bankSwitch: BankSwitch, ttlMs = 5 * 60_000) {
    this.bankSwitch = bankSwitch;
    this.ttlMs = ttlMs;
  }

  async list(): Promise<Bank[]> {
    if (this.cached && Date.now() - this.cached.at < this.ttlMs) return this.cached.banks;
    const banks = await this.bankSwitch.listBanks();
    this.cached = { banks, at: Date.now() };
    return banks;
  }

  async find(code: string): Promise<Bank | undefined> {
    return (await this.list()).find((bank) => bank.code === code);
  }
}

/** The providers of a sandbox connector and the live connectors given, in that order. */
export function providersOf(sandbox: Connector, live: readonly Connector[]): Providers {
  const connectors = [sandbox, ...live];
  const directories = new Map<string, BankDirectory>();
  for (const connector of connectors) {
    if (connector.transfers) directories.set(connector.name, new BankDirectory(connector.transfers));
  }
  const callbackModes: Record<string, readonly KeyMode[]> = {};
  for (const connector of connectors) if (connector.callbacks) callbackModes[connector.name] = connector.modes;
  if (!sandbox.transfers || !sandbox.cards || !sandbox.identity) {
    throw new Error('the sandbox connector must serve transfers, cards and identity');
  }
  return {
    bankSwitch: sandbox.transfers,
    banks: directories.get(sandbox.name)!,
    cards: sandbox.cards,
    identity: sandbox.identity,
    connectors,
    directories,
    callbackModes,
    virtualAccounts: connectors.flatMap((connector) =>
      (connector.virtualAccounts ?? []).map((route) => ({
        ...route,
        modes: connector.modes,
        connector: connector.name,
      })),
    ),
  };
}

export function createProviders(config: SandboxConnectorConfig & Partial<Pick<Config, 'liveConnectors'>>): Providers {
  const live = (config.liveConnectors ?? []).map(({ name, settings }) => {
    const kind = connectorKind(name);
    if (!kind) throw new Error(`no connector kind ${name}`);
    return kind.create(settings, { timeoutMs: config.PROVIDER_TIMEOUT_MS });
  });
  return providersOf(createSandboxConnector(config), live);
}
