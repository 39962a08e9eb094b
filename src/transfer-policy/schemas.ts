// The transfer policy's shape (decisions §20), the same in the request (PUT takes it whole) and in
// the answer.
import { z } from 'zod';
import { koboAmount } from '../http/kobo-amount.ts';
import { MAX_MOVEMENT_MINOR } from '../lib/money.ts';

const flag = z.boolean({ error: 'must be true or false' });

export const TransferPolicyBody = z.strictObject({
  approval: z.strictObject(
    {
      above_minor: koboAmount(0, MAX_MOVEMENT_MINOR, 'must be a whole number of kobo or null').nullable(),
      new_recipient: flag,
      every_transfer: flag,
    },
    { error: 'is required: {above_minor, new_recipient, every_transfer}' },
  ),
  approval_expires_in_hours: z
    .number({ error: 'must be a whole number of hours' })
    .int('must be a whole number of hours')
    .min(1, 'must be at least 1')
    .max(72, 'must be at most 72'),
  saved_recipients_only: flag,
  live_keys_need_ip_allow_list: flag,
});
export type TransferPolicyBody = z.infer<typeof TransferPolicyBody>;

export const TransferPolicyView = z.object({
  approval: z.object({ above_minor: z.number().nullable(), new_recipient: z.boolean(), every_transfer: z.boolean() }),
  approval_expires_in_hours: z.number(),
  saved_recipients_only: z.boolean(),
  live_keys_need_ip_allow_list: z.boolean(),
});
export type TransferPolicyView = z.infer<typeof TransferPolicyView>;
