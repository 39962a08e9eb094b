// Canonical JSON and its SHA-256: the same content always gives the same text and digest, whatever
// the order of its keys. Pure (no I/O, no Node built-ins), so workflow code may use it as well as
// the API: the transfer domain fingerprints requests with it.
import { sha256 as sha256Bytes } from '@noble/hashes/sha2.js';
import { bytesToHex, utf8ToBytes } from '@noble/hashes/utils.js';

/** Deeper than any body the edge admits (MAX_BODY_DEPTH); the bound only keeps recursion finite. */
const MAX_CANONICAL_DEPTH = 64;

/** JSON with object keys sorted and undefined members left out. */
export function canonicalJson(value: unknown, depth = 0): string {
  if (depth > MAX_CANONICAL_DEPTH) throw new RangeError(`value nested deeper than ${MAX_CANONICAL_DEPTH} levels`);
  if (Array.isArray(value)) return `[${value.map((item) => canonicalJson(item, depth + 1)).join(',')}]`;
  if (value && typeof value === 'object') {
    const entries = Object.entries(value as Record<string, unknown>)
      .filter(([, v]) => v !== undefined)
      .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
    return `{${entries.map(([k, v]) => `${JSON.stringify(k)}:${canonicalJson(v, depth + 1)}`).join(',')}}`;
  }
  return JSON.stringify(value) ?? 'null';
}

/** Hex SHA-256 of the text's UTF-8 bytes. */
export function sha256(text: string): string {
  return bytesToHex(sha256Bytes(utf8ToBytes(text)));
}
