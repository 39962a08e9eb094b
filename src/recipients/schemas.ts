// Saved recipients' request and response shapes (decisions §20).
import { z } from 'zod';
import { Metadata } from '../http/hostile-input.ts';
import { listOf } from '../http/pagination.ts';
import { metadataField } from '../http/view-fields.ts';

export const CreateRecipientBody = z.strictObject({
  bank_code: z.string({ error: 'is required' }).min(1, 'is required').max(10, 'must be at most 10 characters'),
  account_number: z.string({ error: 'is required' }).regex(/^\d{10}$/, 'must be exactly 10 digits'),
  label: z.string().trim().min(1, 'must not be empty').max(100, 'must be at most 100 characters').optional(),
  metadata: Metadata.optional(),
});
export type CreateRecipientBody = z.infer<typeof CreateRecipientBody>;

export const RecipientView = z.object({
  id: z.string(),
  bank_code: z.string(),
  bank_name: z.string(),
  account_number: z.string(),
  /** The name the bank gave when the recipient was saved: transfers to it are paid under it. */
  account_name: z.string(),
  label: z.string().nullable(),
  metadata: metadataField(),
  created_at: z.string(),
  last_paid_at: z.string().nullable(),
});
export type RecipientView = z.infer<typeof RecipientView>;

export const RecipientList = listOf(RecipientView);

export const RecipientParams = z.object({ id: z.string() });
