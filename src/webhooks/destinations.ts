// Where webhooks may go (SSRF guard). Live keys: https only, and every address the host resolves
// to must be public unicast — checked at registration and again before every attempt, after DNS
// resolution, so a name that later points inside our network is refused. Sandbox keys may also
// use plain http and loopback, for local development. The WHATWG URL parser has already turned
// numeric encodings (2130706433, 0x7f.1, …) into dotted form; IPv4-mapped IPv6 is unwrapped.
import { lookup } from 'node:dns/promises';
import ipaddr from 'ipaddr.js';
import type { KeyMode } from '../tenants/api-keys.ts';

export class DestinationRefused extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'DestinationRefused';
  }
}

function rangeOf(address: string): string {
  let parsed = ipaddr.parse(address);
  if (parsed.kind() === 'ipv6' && (parsed as ipaddr.IPv6).isIPv4MappedAddress()) {
    parsed = (parsed as ipaddr.IPv6).toIPv4Address();
  }
  return parsed.range();
}

function allowed(range: string, mode: KeyMode): boolean {
  if (range === 'unicast') return true;
  return mode === 'test' && range === 'loopback';
}

export type Resolver = (host: string) => Promise<string[]>;

const systemResolver: Resolver = async (host) =>
  (await lookup(host, { all: true, verbatim: true })).map((a) => a.address);

/**
 * Parses and checks a URL for a key mode; resolves the host. Returns the URL and the checked
 * addresses, which the caller must connect to (and nothing else).
 */
export async function checkDestination(
  rawUrl: string,
  mode: KeyMode,
  resolve: Resolver = systemResolver,
): Promise<{ url: URL; addresses: string[] }> {
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
  for (const address of addresses) {
    const range = rangeOf(address);
    if (!allowed(range, mode)) {
      throw new DestinationRefused(
        `resolves to ${address} (${range}), which is not a public address${mode === 'test' ? ' or loopback' : ''}`,
      );
    }
  }
  return { url, addresses };
}
