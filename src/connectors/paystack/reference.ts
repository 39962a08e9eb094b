// The transfer reference Paystack is given, derived from ours (the transfer id). Paystack takes the
// reference as its idempotency key and allows only lowercase letters, digits, `-` and `_`, 16 to
// 50 characters. Our transfer ids are UUIDs, which fit once lowercased; so a callback or a listing
// gives our id back by reading Paystack's reference. Anything else that breaks the rules is never
// reshaped by hand (dropping or lowercasing characters could make two of ours one at Paystack, and
// a duplicate-reference answer would then report on the other transfer): it is replaced by a
// digest, the same on every retry, and such a reference does not lead back to ours.
import { createHash } from 'node:crypto';

/** Paystack's rule for a transfer reference. */
export const PAYSTACK_REFERENCE = /^[a-z0-9_-]{16,50}$/;

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** Marks a digest, so that it is never read back as one of our references. */
const DIGEST_PREFIX = 'gwd_';

export function paystackReference(ours: string): string {
  // A UUID's letters are hex digits, whose case carries nothing: lowercasing keeps it the same id.
  if (UUID.test(ours)) return ours.toLowerCase();
  if (PAYSTACK_REFERENCE.test(ours) && !ours.startsWith(DIGEST_PREFIX)) return ours;
  return `${DIGEST_PREFIX}${createHash('sha256').update(ours, 'utf8').digest('hex').slice(0, 40)}`;
}

/**
 * Our reference behind one of Paystack's: itself, unless it is a digest (then null: the transfer
 * is found, if ever, by asking with our reference, never from Paystack's side).
 */
export function ourReference(paystack: string): string | null {
  if (paystack.startsWith(DIGEST_PREFIX)) return null;
  return paystack;
}
