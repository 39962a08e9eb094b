// Where webhooks may go (SSRF guard). Live keys: https only, and every address the host resolves
// to must be public unicast — checked at registration and again before every attempt, after DNS
// resolution, so a name that later points inside our network is refused. Sandbox keys may also
// use plain http and loopback, for local development (unless WEBHOOK_ALLOW_LOOPBACK is off), but
// never the addresses and ports where this deployment's own services listen (API, sandbox bank,
// Temporal, PostgreSQL, the API's and the worker's metrics): a tenant's webhook must not be able to
// drive the deployment or read it. The WHATWG
// URL parser has already turned numeric encodings (2130706433, 0x7f.1, 0177.0.0.1, 127.1) into
// dotted form; IPv4-mapped IPv6 is unwrapped before any comparison, and the deprecated
// IPv4-compatible form (`::a.b.c.d`, RFC 4291 §2.5.5.1) is refused for every key, since a host with
// automatic tunnelling or NAT64 may carry it to the IPv4 address inside. With WEBHOOK_PROXY_URL
// set, deliveries go through that proxy, which then makes the connect-time check itself.
import { lookup } from 'node:dns/promises';
import { networkInterfaces } from 'node:os';
import ipaddr from 'ipaddr.js';
import type { Config } from '../config.ts';
import { isLoopbackHost } from '../runtime/environment.ts';
import type { KeyMode } from '../tenants/api-keys.ts';

export class DestinationRefused extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'DestinationRefused';
  }
}

/** The address as dialled, IPv4-mapped IPv6 unwrapped to IPv4, in one canonical spelling. */
function parseAddress(address: string): ipaddr.IPv4 | ipaddr.IPv6 {
  const parsed = ipaddr.parse(address);
  if (parsed.kind() === 'ipv6' && (parsed as ipaddr.IPv6).isIPv4MappedAddress()) {
    return (parsed as ipaddr.IPv6).toIPv4Address();
  }
  return parsed;
}

/**
 * The address's range as the guard sees it: ipaddr.js's, except that `::/96` beyond `::` and `::1`
 * (IPv4-compatible IPv6), which ipaddr.js calls unicast, is `ipv4Compatible`.
 */
export function rangeOf(address: ipaddr.IPv4 | ipaddr.IPv6): string {
  const range = address.range();
  if (range === 'unicast' && address.kind() === 'ipv6') {
    const parts = (address as ipaddr.IPv6).parts;
    if (parts.slice(0, 6).every((part) => part === 0)) return 'ipv4Compatible';
  }
  return range;
}

/** A service of this deployment: no webhook may be sent to where it listens. */
export interface ProtectedTarget {
  service: string;
  /** The host it listens on or is reached at: an IP, a name, `localhost`, or 0.0.0.0 / :: (every interface). */
  host: string;
  port: number;
}

export interface EgressPolicy {
  /** DNS for the check; the system resolver unless a test gives one. */
  resolve?: Resolver;
  /** Whether sandbox keys may use loopback addresses at all (default true). */
  allowLoopback?: boolean;
  /** Where the deployment's own services listen. Read at every check, so it may grow after start. */
  protectedTargets?: ProtectedTarget[];
  /** WEBHOOK_PROXY_URL: every delivery goes through this proxy (which resolves the name itself). */
  proxy?: URL;
}

export type Resolver = (host: string) => Promise<string[]>;

const systemResolver: Resolver = async (host) =>
  (await lookup(host, { all: true, verbatim: true })).map((a) => a.address);

function isEveryInterface(host: string): boolean {
  const bare = host.replace(/^\[|\]$/g, '');
  return ipaddr.isValid(bare) && parseAddress(bare).range() === 'unspecified';
}

function interfaceAddresses(): string[] {
  return Object.values(networkInterfaces())
    .flat()
    .flatMap((entry) => (entry ? [entry.address.replace(/%.*$/, '')] : []));
}

/** Whether a connection to `address:port` would reach `target`. */
async function reaches(target: ProtectedTarget, address: ipaddr.IPv4 | ipaddr.IPv6, port: number): Promise<boolean> {
  if (target.port !== port) return false;
  const range = address.range();
  if (range === 'unspecified') return true;
  // A service on loopback answers on every loopback address (127.0.0.0/8, ::1), however spelt.
  if (range === 'loopback' && (isLoopbackHost(target.host) || isEveryInterface(target.host))) return true;
  let targetAddresses: string[];
  if (isEveryInterface(target.host)) targetAddresses = interfaceAddresses();
  else if (ipaddr.isValid(target.host.replace(/^\[|\]$/g, ''))) targetAddresses = [target.host.replace(/^\[|\]$/g, '')];
  else targetAddresses = await systemResolver(target.host).catch(() => []);
  const dialled = address.toNormalizedString();
  return targetAddresses.some(
    (candidate) => ipaddr.isValid(candidate) && parseAddress(candidate).toNormalizedString() === dialled,
  );
}

/**
 * Parses and checks a URL for a key mode; resolves the host. Returns the URL and the checked
 * addresses, which the caller must connect to (and nothing else).
 */
export async function checkDestination(
  rawUrl: string,
  mode: KeyMode,
  policy: EgressPolicy = {},
): Promise<{ url: URL; addresses: string[] }> {
  const resolve = policy.resolve ?? systemResolver;
  const loopbackAllowed = mode === 'test' && policy.allowLoopback !== false;
  let url: URL;
  try {
    url = new URL(rawUrl);
  } catch {
    throw new DestinationRefused('must be an absolute http(s) URL');
  }
  if (url.protocol !== 'https:' && !(mode === 'test' && url.protocol === 'http:')) {
    throw new DestinationRefused(mode === 'live' ? 'must use https with a live key' : 'must use http or https');
  }
  if (url.username || url.password) throw new DestinationRefused('must not carry credentials');
  const host = url.hostname.replace(/^\[|\]$/g, '');
  let addresses: string[];
  if (ipaddr.isValid(host)) {
    addresses = [host];
  } else {
    try {
      addresses = await resolve(host);
    } catch {
      throw new DestinationRefused(`host ${host} does not resolve`);
    }
  }
  if (addresses.length === 0) throw new DestinationRefused(`host ${host} does not resolve`);
  const port = url.port ? Number(url.port) : url.protocol === 'https:' ? 443 : 80;
  for (const address of addresses) {
    if (!ipaddr.isValid(address))
      throw new DestinationRefused(`host ${host} resolves to ${address}, not an IP address`);
    const parsed = parseAddress(address);
    const range = rangeOf(parsed);
    if (range !== 'unicast' && !(range === 'loopback' && loopbackAllowed)) {
      throw new DestinationRefused(
        `resolves to ${address} (${range}), which is not a public address${loopbackAllowed ? ' or loopback' : ''}` +
          (mode === 'test' && range === 'loopback' ? ' (loopback is turned off: WEBHOOK_ALLOW_LOOPBACK)' : ''),
      );
    }
    for (const target of policy.protectedTargets ?? []) {
      if (await reaches(target, parsed, port)) {
        throw new DestinationRefused(
          `resolves to ${address} port ${port}, where this deployment's ${target.service} listens; ` +
            'webhooks may not target the gateway itself',
        );
      }
    }
  }
  return { url, addresses };
}

function hostAndPort(url: string, defaultPort: number): { host: string; port: number } | undefined {
  try {
    const parsed = new URL(url);
    return { host: parsed.hostname.replace(/^\[|\]$/g, ''), port: parsed.port ? Number(parsed.port) : defaultPort };
  } catch {
    return undefined;
  }
}

/** The deployment's own services, from its configuration: where webhooks may never go. */
export function protectedTargetsFor(
  config: Pick<
    Config,
    | 'HOST'
    | 'PORT'
    | 'SANDBOX_BANK_HOST'
    | 'SANDBOX_BANK_PORT'
    | 'sandboxBankUrl'
    | 'temporalAddress'
    | 'temporalUiUrl'
    | 'TEMPORAL_UI_PORT'
    | 'TEMPORAL_DEV_HTTP_PORT'
    | 'databaseUrl'
    | 'sandboxBankDatabaseUrl'
    | 'METRICS_HOST'
    | 'METRICS_PORT'
    | 'WORKER_METRICS_PORT'
    | 'WEBHOOK_WORKER_METRICS_PORT'
  >,
): ProtectedTarget[] {
  const targets: ProtectedTarget[] = [
    { service: 'API', host: config.HOST, port: config.PORT },
    { service: 'sandbox bank', host: config.SANDBOX_BANK_HOST, port: config.SANDBOX_BANK_PORT },
  ];
  const add = (service: string, found: { host: string; port: number } | undefined) => {
    if (found) targets.push({ service, ...found });
  };
  add('sandbox bank', hostAndPort(config.sandboxBankUrl, 80));
  const frontend = hostAndPort(`grpc://${config.temporalAddress}`, 7233);
  add('Temporal frontend', frontend);
  if (config.temporalUiUrl) add('Temporal Web UI', hostAndPort(config.temporalUiUrl, 80));
  if (frontend) {
    // The dev server's Web UI and HTTP API ports, on the frontend's host. `npm start` hands its
    // children TEMPORAL_ADDRESS, so they cannot tell an embedded server from an external one: these
    // are protected either way (on an external cluster's host, two more refused ports).
    targets.push(
      { service: 'Temporal Web UI', host: frontend.host, port: config.TEMPORAL_UI_PORT },
      { service: 'Temporal HTTP API', host: frontend.host, port: config.TEMPORAL_DEV_HTTP_PORT },
    );
  }
  add('PostgreSQL', hostAndPort(config.databaseUrl, 5432));
  add('PostgreSQL', hostAndPort(config.sandboxBankDatabaseUrl, 5432));
  // The API's /metrics and the workers' Temporal SDK metrics (port 0: not served, nothing to fence).
  for (const [service, port] of [
    ['API metrics', config.METRICS_PORT],
    ['worker metrics', config.WORKER_METRICS_PORT],
    ['webhook worker metrics', config.WEBHOOK_WORKER_METRICS_PORT],
  ] as const) {
    if (port > 0) targets.push({ service, host: config.METRICS_HOST, port });
  }
  return targets;
}

export function egressPolicyFor(
  config: Parameters<typeof protectedTargetsFor>[0] & Pick<Config, 'webhookAllowLoopback' | 'WEBHOOK_PROXY_URL'>,
): EgressPolicy {
  return {
    allowLoopback: config.webhookAllowLoopback,
    protectedTargets: protectedTargetsFor(config),
    ...(config.WEBHOOK_PROXY_URL ? { proxy: new URL(config.WEBHOOK_PROXY_URL) } : {}),
  };
}
