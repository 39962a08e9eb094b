// The providers this deployment talks to, built from configuration. Sandbox keys and tests use
// the bundled sandbox bank through the sandbox connector (the generic contract): its transfers,
// cards and BVN service, and two virtual-account providers so that routing between providers is real.
import { type SandboxConnectorConfig, createSandboxConnector } from '../connectors/sandbox/index.ts';
import type { Bank, BankSwitch, CardProcessor, IdentityVerifier, VirtualAccountProvider } from './types.ts';

export interface VirtualAccountProviderEntry {
  provider: VirtualAccountProvider;
  countries: readonly string[];
  currencies: readonly string[];
  /** Whether the provider honours a `preferred_bank` hint. */
  supportsPreferredBank: boolean;
  /** Key modes allowed to route here. */
  modes: readonly ('test' | 'live')[];
}

/** The providers one key mode routes to. */
export interface ProviderSet {
  bankSwitch: BankSwitch;
  cards: CardProcessor;
  banks: BankDirectory;
  /** BVN lookups for identity customers. */
  identity: IdentityVerifier;
}

/**
 * The sandbox set (the bundled sandbox bank, for sk_test_ keys) at the top level, and the
 * production set for sk_live_ keys under `live` — absent unless the deployment configures one. The
 * sandbox bank is never a live provider.
 */
export interface Providers extends ProviderSet {
  virtualAccounts: VirtualAccountProviderEntry[];
  live?: ProviderSet;
  /**
   * The key modes whose objects each callback sender (`/provider-callbacks/<name>`) may act on: the
   * sandbox bank's callbacks never touch a live transfer, card or account (decisions §16).
   */
  callbackModes: Record<string, readonly ('test' | 'live')[]>;
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

export function createProviders(config: SandboxConnectorConfig): Providers {
  const sandbox = createSandboxConnector(config);
  const bankSwitch = sandbox.transfers!;
  return {
    bankSwitch,
    banks: new BankDirectory(bankSwitch),
    cards: sandbox.cards!,
    identity: sandbox.identity!,
    callbackModes: { [sandbox.name]: sandbox.modes },
    virtualAccounts: sandbox.virtualAccounts!.map((route) => ({ ...route, modes: sandbox.modes })),
  };
}
