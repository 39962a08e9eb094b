// The identity feature's event types (decisions §7), in the event catalog (src/events/catalog.ts):
// never a BVN, only its last four digits once verified.
import { z } from 'zod';
import { type EventDataOf, eventType } from '../events/catalog.ts';
import { SAMPLE_AT, SAMPLE_LATER } from '../events/samples.ts';
import { CustomerView } from './schemas.ts';

const CustomerVerificationData = CustomerView.extend({ verification_id: z.string() });

const customer = (
  kyc: Pick<z.input<typeof CustomerView>, 'kyc_status' | 'kyc_failure_reason' | 'bvn_last4'>,
): z.input<typeof CustomerView> => ({
  id: '1a2b3c4d-5e6f-4a7b-8c9d-0e1f2a3b4c5d',
  external_reference: 'user-1001',
  first_name: 'Ada',
  last_name: 'Obi',
  email: 'ada@example.com',
  phone: null,
  country: 'NG',
  metadata: null,
  ...kyc,
  created_at: SAMPLE_AT,
  updated_at: SAMPLE_LATER,
});

const VERIFICATION_ID = 'd2e3f4a5-b6c7-4d8e-9f0a-1b2c3d4e5f6a';

export const IDENTITY_EVENT_TYPES = {
  'identity.customer.created': eventType(
    'An identity customer was created (never a BVN).',
    CustomerView,
    customer({ kyc_status: 'unverified', kyc_failure_reason: null, bvn_last4: null }),
  ),
  'identity.customer.verified': eventType(
    "A customer's BVN verification succeeded: the customer and the verification's id.",
    CustomerVerificationData,
    {
      ...customer({ kyc_status: 'verified', kyc_failure_reason: null, bvn_last4: '5678' }),
      verification_id: VERIFICATION_ID,
    },
  ),
  'identity.customer.verification_failed': eventType(
    "A customer's BVN verification failed (bvn_not_found or name_mismatch): the customer and the verification's id.",
    CustomerVerificationData,
    {
      ...customer({ kyc_status: 'verification_failed', kyc_failure_reason: 'name_mismatch', bvn_last4: '5678' }),
      verification_id: VERIFICATION_ID,
    },
  ),
};

declare module '../events/catalog.ts' {
  interface EventDataByType extends EventDataOf<typeof IDENTITY_EVENT_TYPES> {}
}
