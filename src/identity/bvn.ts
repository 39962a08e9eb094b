// How a BVN is kept (docs/identity.md): never in the clear at rest, in logs, events,
// answers or workflow histories. Two keys are derived from BVN_SECRET_KEY (HKDF-SHA256, one per
// use): an HMAC-SHA256 key for the BVN's lasting fingerprint, and an AES-256-GCM key for the copy
// the worker reads while the lookup runs (erased when the verification ends) or while a virtual
// account is allocated with it (erased once the account is recorded). A keyed hash, not
// a salted fast hash: with only 10^11 possible BVNs, any digest that a database dump alone lets
// one recompute is reversed by trying them all; without the server key it cannot be. The match
// rule is here too, pure.
import { createCipheriv, createDecipheriv, createHmac, hkdfSync, randomBytes } from 'node:crypto';

export const BVN_PATTERN = /^\d{11}$/;

export interface BvnKeys {
  hashKey: Buffer;
  encryptionKey: Buffer;
}

export function bvnKeysFrom(secret: Buffer): BvnKeys {
  const derive = (info: string) => Buffer.from(hkdfSync('sha256', secret, Buffer.alloc(0), info, 32));
  return { hashKey: derive('naira-gateway bvn fingerprint v1'), encryptionKey: derive('naira-gateway bvn transit v1') };
}

/** The BVN's lasting fingerprint: hex HMAC-SHA256 under the server's key. */
export function bvnHash(keys: BvnKeys, bvn: string): string {
  return createHmac('sha256', keys.hashKey).update(bvn, 'utf8').digest('hex');
}

export function bvnLast4(bvn: string): string {
  return bvn.slice(-4);
}

/**
 * The copy an activity reads (a verification's lookup, a virtual-account create's allocation),
 * bound to the row it belongs to (`boundTo`: a verification's id, `virtual-account:<id>`), so a
 * copy moved to another row does not open.
 */
export function sealBvn(keys: BvnKeys, boundTo: string, bvn: string): string {
  const iv = randomBytes(12);
  const cipher = createCipheriv('aes-256-gcm', keys.encryptionKey, iv);
  cipher.setAAD(Buffer.from(boundTo, 'utf8'));
  const ciphertext = Buffer.concat([cipher.update(bvn, 'utf8'), cipher.final()]);
  return `v1.${iv.toString('base64')}.${cipher.getAuthTag().toString('base64')}.${ciphertext.toString('base64')}`;
}

export function openBvn(keys: BvnKeys, boundTo: string, sealed: string): string {
  const [version, iv, tag, ciphertext] = sealed.split('.');
  // Says nothing of the content: this message may reach a workflow history.
  if (version !== 'v1' || !iv || !tag || ciphertext === undefined) throw new Error('unreadable sealed BVN');
  const decipher = createDecipheriv('aes-256-gcm', keys.encryptionKey, Buffer.from(iv, 'base64'));
  decipher.setAAD(Buffer.from(boundTo, 'utf8'));
  decipher.setAuthTag(Buffer.from(tag, 'base64'));
  return Buffer.concat([decipher.update(Buffer.from(ciphertext, 'base64')), decipher.final()]).toString('utf8');
}

export type BvnFailureReason = 'bvn_not_found' | 'name_mismatch';
export type BvnOutcome = 'verified' | BvnFailureReason;

/**
 * A name as the comparison sees it: trimmed, inner spaces collapsed, case folded (upper then
 * lower, so that a record's WEISS is the customer's Weiß).
 */
function folded(name: string): string {
  return name.trim().replace(/\s+/g, ' ').normalize('NFC').toLocaleUpperCase('en').toLocaleLowerCase('en');
}

/**
 * Verified when the BVN exists and its holder's first and last names are the customer's,
 * case-insensitively (decisions §11); otherwise why not.
 */
export function bvnOutcome(
  holder: { firstName: string; lastName: string } | null,
  customer: { firstName: string; lastName: string },
): BvnOutcome {
  if (!holder) return 'bvn_not_found';
  const same =
    folded(holder.firstName) === folded(customer.firstName) && folded(holder.lastName) === folded(customer.lastName);
  return same ? 'verified' : 'name_mismatch';
}
