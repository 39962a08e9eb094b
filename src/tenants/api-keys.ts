// API key format and hashing. A key is `sk_test_` or `sk_live_` followed by 40 random base62
// characters (about 238 bits); only its SHA-256 is stored, which is enough for a secret of that
// entropy. The first 16 characters are kept in clear as the key's prefix, so operators can name
// a key (to revoke it) without ever seeing it whole.
import { createHash, randomInt } from 'node:crypto';

export type KeyMode = 'test' | 'live';

const ALPHABET = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789';
export const KEY_RANDOM_LENGTH = 40;
export const KEY_PREFIX_LENGTH = 16;
const KEY_PATTERN = /^sk_(test|live)_[A-Za-z0-9]{32,128}$/;

export function generateApiKey(mode: KeyMode): string {
  let random = '';
  // randomInt draws without modulo bias.
  for (let i = 0; i < KEY_RANDOM_LENGTH; i += 1) random += ALPHABET[randomInt(ALPHABET.length)];
  return `sk_${mode}_${random}`;
}

export function hashApiKey(key: string): string {
  return createHash('sha256').update(key, 'utf8').digest('hex');
}

export function keyPrefix(key: string): string {
  return key.slice(0, KEY_PREFIX_LENGTH);
}

/** The mode of a well-formed key, or undefined for anything that is not one. */
export function parseApiKey(key: string): KeyMode | undefined {
  const match = KEY_PATTERN.exec(key);
  return match ? (match[1] as KeyMode) : undefined;
}
