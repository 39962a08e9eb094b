// A key's allow-list of client addresses (decisions §19): at most 20 IPv4 or IPv6 addresses or CIDR
// ranges, each checked and written one way when the key is made (normaliseIpEntry), and matched
// against the request's address (request.ip: the socket's, or the forwarded one only when the
// socket is a proxy TRUST_PROXY names). An IPv4-mapped IPv6 address (`::ffff:192.0.2.1`, how a
// dual-stack socket shows an IPv4 client) is its IPv4 address, in the list and in the request.
import { BlockList, isIP } from 'node:net';

export const MAX_ALLOWED_IPS = 20;

const MAPPED_V4 = /^::ffff:(\d{1,3}(?:\.\d{1,3}){3})$/i;

/** The address in one written form: IPv6 compressed and lower case, IPv4-mapped IPv6 as IPv4. */
function canonicalAddress(address: string): { address: string; family: 4 | 6 } | undefined {
  // No zone ids, no brackets, nothing a URL parser would forgive.
  if (!/^[0-9A-Fa-f:.]{2,45}$/.test(address)) return undefined;
  const family = isIP(address);
  if (family === 4) return { address, family };
  if (family !== 6) return undefined;
  const hostname = new URL(`http://[${address}]/`).hostname.slice(1, -1);
  const mapped = MAPPED_V4.exec(address);
  if (mapped && isIP(mapped[1]!) === 4) return { address: mapped[1]!, family: 4 };
  // The URL parser writes ::ffff:a.b.c.d as ::ffff:xxxx:xxxx; read that back as IPv4 too.
  const hex = /^::ffff:([0-9a-f]{1,4}):([0-9a-f]{1,4})$/.exec(hostname);
  if (hex) {
    const high = parseInt(hex[1]!, 16);
    const low = parseInt(hex[2]!, 16);
    return { address: [high >> 8, high & 255, low >> 8, low & 255].join('.'), family: 4 };
  }
  return { address: hostname, family: 6 };
}

/**
 * An allow-list entry as stored: `192.0.2.7`, `198.51.100.0/24`, `2001:db8::/32`; undefined for
 * anything else (a host name, a zone id, a prefix out of range or with leading zeros).
 */
export function normaliseIpEntry(entry: string): string | undefined {
  if (entry.length > 64) return undefined;
  const [address, prefix, extra] = entry.split('/');
  if (extra !== undefined || address === undefined) return undefined;
  const canonical = canonicalAddress(address);
  if (!canonical) return undefined;
  if (prefix === undefined) return canonical.address;
  if (!/^(0|[1-9]\d{0,2})$/.test(prefix)) return undefined;
  let bits = Number(prefix);
  // A mapped IPv4 range (::ffff:192.0.2.0/120) is the IPv4 range it maps.
  if (canonical.family === 4 && isIP(address) === 6) bits -= 96;
  if (bits < 0 || bits > (canonical.family === 4 ? 32 : 128)) return undefined;
  return `${canonical.address}/${bits}`;
}

const lists = new WeakMap<readonly string[], BlockList>();

function blockListOf(entries: readonly string[]): BlockList {
  let list = lists.get(entries);
  if (list) return list;
  list = new BlockList();
  for (const entry of entries) {
    const [address, prefix] = entry.split('/');
    const family = isIP(address!) === 6 ? 'ipv6' : 'ipv4';
    if (prefix === undefined) list.addAddress(address!, family);
    else list.addSubnet(address!, Number(prefix), family);
  }
  lists.set(entries, list);
  return list;
}

/** Whether `ip` is allowed by the stored entries; an empty list allows every address. */
export function ipAllowed(entries: readonly string[], ip: string): boolean {
  if (entries.length === 0) return true;
  const canonical = canonicalAddress(ip);
  if (!canonical) return false;
  return blockListOf(entries).check(canonical.address, canonical.family === 4 ? 'ipv4' : 'ipv6');
}
