// Identity customers' request and response shapes (decisions §7, and BVN verification of §11).
import { z } from 'zod';
import { metadataField, timestampFields } from '../http/view-fields.ts';
import { Metadata } from '../http/hostile-input.ts';
import { BVN_PATTERN } from './bvn.ts';

const regions = new Intl.DisplayNames(['en'], { type: 'region' });
/** A real ISO 3166-1 alpha-2 code (ICU names it; unknown codes come back unchanged). */
export function isCountryCode(code: string): boolean {
  return /^[A-Z]{2}$/.test(code) && regions.of(code) !== code && regions.of(code) !== 'Unknown Region';
}

export const CreateCustomerBody = z.object({
  external_reference: z.string({ error: 'is required' }).trim().min(1, 'is required').max(200),
  first_name: z.string({ error: 'is required' }).trim().min(1, 'is required').max(100),
  last_name: z.string({ error: 'is required' }).trim().min(1, 'is required').max(100),
  email: z.email('must be an email address').max(254).optional(),
  phone: z
    .string()
    .regex(/^\+[1-9]\d{6,14}$/, 'must be an E.164 number such as +2348012345678')
    .optional(),
  country: z.string().refine(isCountryCode, 'must be an ISO 3166 alpha-2 country code such as NG').optional(),
  metadata: Metadata.optional(),
});
export type CreateCustomerBody = z.infer<typeof CreateCustomerBody>;

export const CustomerView = z.object({
  id: z.string(),
  external_reference: z.string(),
  first_name: z.string(),
  last_name: z.string(),
  email: z.string().nullable(),
  phone: z.string().nullable(),
  country: z.string(),
  metadata: metadataField(),
  kyc_status: z.enum(['unverified', 'pending', 'verified', 'verification_failed']),
  /** Why the latest verification failed; null unless kyc_status is verification_failed. */
  kyc_failure_reason: z.enum(['bvn_not_found', 'name_mismatch']).nullable(),
  /** The last 4 digits of the BVN last submitted for verification; never the BVN. */
  bvn_last4: z.string().nullable(),
  ...timestampFields(),
});
export type CustomerView = z.infer<typeof CustomerView>;

export const CustomerParams = z.object({ id: z.string() });

// The messages name the rule only: zod's own would not echo the value either, and this body's
// value is a BVN, which no answer, log line or error may carry.
export const BvnVerificationBody = z.strictObject({
  bvn: z
    .string({
      error: (issue) =>
        issue.input === undefined
          ? 'is required: a string of exactly 11 digits'
          : 'must be a string of exactly 11 digits',
    })
    .regex(BVN_PATTERN, 'must be exactly 11 digits'),
});
export type BvnVerificationBody = z.infer<typeof BvnVerificationBody>;

export const BvnVerificationAccepted = z.object({
  customer_id: z.string(),
  verification_id: z.string(),
  status: z.literal('pending'),
});
export type BvnVerificationAccepted = z.infer<typeof BvnVerificationAccepted>;
