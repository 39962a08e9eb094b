// The console's secrets (decisions §22): passwords hashed with scrypt (node:crypto, its parameters
// and salt stored beside the hash, so that they can be raised later), one-time TOTP codes (RFC 6238
// through otpauth: 6 digits, 30 s, one step either side, a code never accepted twice), and the random
// tokens of invitations, sessions and CSRF, of which only SHA-256 is stored.
import { createHash, randomBytes, scrypt, timingSafeEqual } from 'node:crypto';
import { Secret, TOTP } from 'otpauth';

const SCRYPT = { N: 2 ** 15, r: 8, p: 1, keylen: 32 } as const;
const MAXMEM = 64 * 1024 * 1024;

export const PASSWORD_MIN = 12;
export const PASSWORD_MAX = 256;

function derive(password: string, salt: Buffer, N: number, r: number, p: number, keylen: number): Promise<Buffer> {
  return new Promise((resolve, reject) =>
    scrypt(password.normalize('NFC'), salt, keylen, { N, r, p, maxmem: MAXMEM }, (error, key) =>
      error ? reject(error) : resolve(key),
    ),
  );
}

/** `scrypt$N$r$p$salt$hash` (base64url). */
export async function hashPassword(password: string): Promise<string> {
  const salt = randomBytes(16);
  const key = await derive(password, salt, SCRYPT.N, SCRYPT.r, SCRYPT.p, SCRYPT.keylen);
  return ['scrypt', SCRYPT.N, SCRYPT.r, SCRYPT.p, salt.toString('base64url'), key.toString('base64url')].join('$');
}

/** A hash of no password: what an unknown email is checked against, so that it takes as long. */
let decoy: Promise<string> | undefined;

/** Whether `password` is the one `stored` was made from; `stored` undefined checks a decoy (false). */
export async function verifyPassword(password: string, stored: string | undefined): Promise<boolean> {
  const hash = stored ?? (await (decoy ??= hashPassword(randomBytes(16).toString('hex'))));
  const [kind, N, r, p, salt, key] = hash.split('$');
  if (kind !== 'scrypt' || !salt || !key) return false;
  const expected = Buffer.from(key, 'base64url');
  const actual = await derive(
    password,
    Buffer.from(salt, 'base64url'),
    Number(N),
    Number(r),
    Number(p),
    expected.length,
  );
  return timingSafeEqual(actual, expected) && stored !== undefined;
}

/** A random token for a link or cookie (256 bits, base64url). */
export function newToken(): string {
  return randomBytes(32).toString('base64url');
}

/** What is stored of a token. */
export function tokenHash(token: string): string {
  return createHash('sha256').update(token).digest('hex');
}

/** Whether two strings are equal, in time that does not depend on where they differ. */
export function sameSecret(a: string, b: string): boolean {
  const left = createHash('sha256').update(a).digest();
  const right = createHash('sha256').update(b).digest();
  return timingSafeEqual(left, right) && a.length === b.length;
}

/** A new TOTP secret (160 bits, base32). */
export function newTotpSecret(): string {
  return new Secret({ size: 20 }).base32;
}

function totpOf(secret: string, label: string): TOTP {
  return new TOTP({
    issuer: 'Gateway console',
    label,
    algorithm: 'SHA1',
    digits: 6,
    period: 30,
    secret: Secret.fromBase32(secret),
  });
}

/** The otpauth:// address an authenticator app reads (from its QR code). */
export function totpUri(secret: string, label: string): string {
  return totpOf(secret, label).toString();
}

/** The current code (tests and the set-up page's check). */
export function totpCode(secret: string, timestamp = Date.now()): string {
  return totpOf(secret, '').generate({ timestamp });
}

/**
 * The time step a code belongs to when it is valid now (one step of clock drift either side), and
 * newer than `lastCounter` (a code used once is not accepted again); null otherwise.
 */
export function totpCounter(secret: string, code: string, lastCounter: number | null): number | null {
  if (!/^\d{6}$/.test(code)) return null;
  const totp = totpOf(secret, '');
  const delta = totp.validate({ token: code, window: 1 });
  if (delta === null) return null;
  const counter = totp.counter() + delta;
  return lastCounter !== null && counter <= lastCounter ? null : counter;
}
