// A connector is the gateway's adapter to one provider (decisions §13): it declares the
// capabilities it serves and the key modes it serves them for, and gives the gateway one object
// per capability (the interfaces of ./capabilities.ts) plus a receiver for the provider's signed
// callbacks. Everything above this layer — routes, workflows, reconciliation — talks to
// capabilities, never to a provider's HTTP API.
//
// Adding a connector: a folder under src/connectors/ whose settings.ts exports its
// ConnectorSettings and whose index exports the ConnectorDefinition built on them, and one line in
// each of src/connectors/settings.ts and src/connectors/index.ts. Its settings are read by its own
// schema, called from src/config.ts when LIVE_CONNECTORS names it; it declares which of them are
// secrets, provider URLs and test credentials, which production holds to its rules (./live-rules.ts).
import type { IncomingHttpHeaders } from 'node:http';
import type { z } from 'zod';
import type {
  BankSwitch,
  CardProcessor,
  IdentityVerifier,
  SettlementReport,
  VirtualAccountProvider,
} from './capabilities.ts';

/** What a provider does for the gateway (decisions §13). */
export type Capability = 'transfers' | 'virtual_accounts' | 'identity' | 'cards';
export const CAPABILITIES: readonly Capability[] = ['transfers', 'virtual_accounts', 'identity', 'cards'];

export type KeyMode = 'test' | 'live';

/** A virtual-account provider and what routing needs to know of it. */
export interface VirtualAccountRoute {
  provider: VirtualAccountProvider;
  countries: readonly string[];
  currencies: readonly string[];
  /** Whether the provider honours a `preferred_bank` hint. */
  supportsPreferredBank: boolean;
}

export type SignatureCheck = { ok: true } | { ok: false; reason: string };

/**
 * One provider callback in the gateway's own vocabulary, handed to the dispatcher
 * (src/provider-callbacks/dispatcher.ts). `type` is one of:
 * - `transfer.successful` / `transfer.failed`: data `{reference (our transfer id), session_id?,
 *   response_code?, message?}`;
 * - `virtual_account.credit`: data `{account_number, amount_minor, transaction_reference,
 *   sender_name?, session_id?, provider? (which of the connector's virtual-account providers),
 *   fee_minor? (what the provider kept of the amount; none: 0)}`;
 * - `card.authorization.request` (answered synchronously with the decision),
 *   `card.authorization.cleared`, `card.authorization.reversed`: data as src/cards/callbacks.ts reads;
 * - anything else is recorded for operators and not applied.
 */
export interface NormalizedCallback {
  /** The provider's id for this event: each is applied once. */
  eventId: string;
  type: string;
  occurredAt?: string | undefined;
  data: Record<string, unknown>;
}

export type NormalizeResult =
  { ok: true; callback: NormalizedCallback } | { ok: false; issues: { path: string; message: string }[] };

/** The provider's signed callbacks at `POST /provider-callbacks/<connector name>`. */
export interface CallbackReceiver {
  /** Checks the signature (and its timestamp, where the scheme has one) over the raw body. */
  verify(rawBody: string, headers: IncomingHttpHeaders, nowSeconds?: number): SignatureCheck;
  /** The verified body in our vocabulary; never throws on a hostile body. */
  normalize(rawBody: string): NormalizeResult;
}

export interface Connector {
  /** The name in LIVE_CONNECTORS, in callback paths, on transfers, in reconciliation. */
  readonly name: string;
  readonly modes: readonly KeyMode[];
  readonly capabilities: readonly Capability[];
  readonly transfers?: BankSwitch;
  readonly virtualAccounts?: readonly VirtualAccountRoute[];
  readonly cards?: CardProcessor;
  readonly identity?: IdentityVerifier;
  readonly callbacks?: CallbackReceiver;
  /** The provider's record of one UTC day (YYYY-MM-DD), for the daily reconciliation. */
  settlementReport?(date: string): Promise<SettlementReport>;
}

/** What every connector gets besides its own settings. */
export interface ConnectorContext {
  /** Per-call timeout (PROVIDER_TIMEOUT_MS). */
  timeoutMs: number;
}

/** One of a connector's secret variables (an API key, a signing secret). */
export interface ConnectorSecret {
  /** The key bytes a value stands for: what authenticates or signs (a `whsec_` secret's decoded key). */
  bytes(value: string): Buffer;
  /** How to make a good one, for the line that refuses a short one. */
  example: string;
}

/** What production checks of a connector's variables (./live-rules.ts), declared by the connector. */
export interface ConnectorVariables {
  /** Its secrets, by variable. */
  readonly secrets: Readonly<Record<string, ConnectorSecret>>;
  /** The variables of its provider's base URLs. */
  readonly baseUrls: readonly string[];
  /**
   * The variable set to a credential of the provider's own test mode (Paystack's `sk_test_…`), with
   * what it is, when one is; undefined otherwise.
   */
  readonly testCredential?: (env: Readonly<Record<string, string>>) => { variable: string; what: string } | undefined;
}

/**
 * A connector kind's settings: how to read them from the environment, and what production checks
 * of them. Each connector declares these in its own settings.ts, which imports none of its client,
 * so that configuration (src/config.ts) reads them without loading a provider's HTTP code.
 */
export interface ConnectorSettings<Settings = unknown> extends ConnectorVariables {
  readonly name: string;
  /** Its environment variables, by name: each failure names the variable. */
  readonly settings: z.ZodType<Settings>;
}

/** A connector kind: its settings, and how to build it from them. */
export interface ConnectorDefinition<Settings = unknown> extends ConnectorSettings<Settings> {
  create(settings: Settings, context: ConnectorContext): Connector;
}

/** A kind's settings with their type erased, as configuration holds them: settings always come from its own schema. */
export interface RegisteredSettings extends ConnectorVariables {
  readonly name: string;
  /** Reads and checks its settings from the environment; each issue names the variable. */
  parse(env: Record<string, string | undefined>): { ok: true; settings: unknown } | { ok: false; issues: string[] };
}

/** A definition with its settings type erased, as the registry holds them. */
export interface RegisteredConnector extends RegisteredSettings {
  create(settings: unknown, context: ConnectorContext): Connector;
}

export function registerSettings<Settings>(definition: ConnectorSettings<Settings>): RegisteredSettings {
  return {
    name: definition.name,
    secrets: definition.secrets,
    baseUrls: definition.baseUrls,
    ...(definition.testCredential ? { testCredential: definition.testCredential } : {}),
    parse(env) {
      const parsed = definition.settings.safeParse(env);
      if (parsed.success) return { ok: true, settings: parsed.data };
      return {
        ok: false,
        issues: parsed.error.issues.map((issue) => `${issue.path.join('.') || definition.name}: ${issue.message}`),
      };
    },
  };
}

export function registerConnector<Settings>(definition: ConnectorDefinition<Settings>): RegisteredConnector {
  return {
    ...registerSettings(definition),
    // Only ever given what `parse` returned for this definition.
    create: (settings, context) => definition.create(settings as Settings, context),
  };
}
