// The fingerprints of create and bulk requests (decisions §4), and the reference a create gets from
// its Idempotency-Key: made by the API only. Apart from the domain rules (domain.ts) because the
// workflows import those, and every workflow a worker starts evaluates its bundle's modules again
// (the SDK's reusable context): SHA-256's module was a twentieth of a transfer's workflow-thread
// CPU, spent on code no workflow calls (docs/performance.md, "Where a create's CPU goes").
import { canonicalJson, sha256 } from '../lib/canonical.ts';

/**
 * What of a create request its fingerprint covers: everything but the reference, the payee as the
 * body names it (a saved recipient's id, or an account and bank code: decisions §20).
 */
export interface FingerprintedRequest {
  amount_minor: number;
  recipient_id?: string | undefined;
  recipient_account?: string | undefined;
  recipient_bank_code?: string | undefined;
  narration: string;
  metadata: Record<string, unknown>;
  /** The credit a return sends back (decisions §21); absent for every other transfer. */
  return_of?: string | undefined;
}

/**
 * SHA-256 of the request's canonical JSON: a repeat of a reference with another fingerprint is a
 * `duplicate_reference`, one with the same is the same transfer. Fields the body left out are left
 * out (canonicalJson drops undefined members), so a body without `recipient_id` has the fingerprint
 * it had before saved recipients existed.
 */
export function transferFingerprint(request: FingerprintedRequest): string {
  return sha256(
    canonicalJson({
      amount_minor: request.amount_minor,
      recipient_id: request.recipient_id,
      recipient_account: request.recipient_account,
      recipient_bank_code: request.recipient_bank_code,
      narration: request.narration,
      currency: 'NGN',
      metadata: request.metadata,
      return_of: request.return_of,
    }),
  );
}

/**
 * The reference of a create that names none but carries an Idempotency-Key: derived from the key, so
 * a client retrying after an uncertain answer meets the same transfer.
 */
export function referenceFromIdempotencyKey(tenantId: string, idempotencyKey: string): string {
  return `idem_${sha256(`${tenantId}:${idempotencyKey}`).slice(0, 40)}`;
}

/** What of a bulk request its fingerprint covers: everything but `batch_reference`, defaults applied. */
export interface FingerprintedBatch {
  atomic: boolean;
  metadata: Record<string, unknown>;
  transfers: (FingerprintedRequest & { reference?: string | undefined })[];
}

/** A repeat of a batch_reference with another fingerprint is a `duplicate_reference`. */
export function batchFingerprint(batch: FingerprintedBatch): string {
  return sha256(
    canonicalJson({
      atomic: batch.atomic,
      metadata: batch.metadata,
      transfers: batch.transfers.map((item) => ({
        amount_minor: item.amount_minor,
        recipient_id: item.recipient_id,
        recipient_account: item.recipient_account,
        recipient_bank_code: item.recipient_bank_code,
        narration: item.narration,
        reference: item.reference ?? null,
        metadata: item.metadata,
      })),
    }),
  );
}
