// Virtual accounts' request and response shapes (interface §2.2). Types come from these schemas
// (z.infer), so a view and its documented shape cannot drift.
import { z } from 'zod';
import { metadataField, timestampFields } from '../http/view-fields.ts';
import { koboAmount } from '../http/kobo-amount.ts';
import { Metadata } from '../http/hostile-input.ts';
import { PaginationQuery, listOf } from '../http/pagination.ts';
import { MAX_MOVEMENT_MINOR } from '../lib/money.ts';
import { SORTS, VIRTUAL_ACCOUNT_STATUSES } from './store.ts';

export const CreateVirtualAccountBody = z.object({
  customer_id: z.string({ error: 'is required' }).trim().min(1, 'is required').max(200),
  account_name: z.string({ error: 'is required' }).trim().min(1, 'is required').max(200),
  provider: z.string().min(1).max(50).optional(),
  account_type: z.string().min(1).max(50).optional(),
  metadata: Metadata.optional(),
  bvn: z
    .string()
    .regex(/^\d{11}$/, 'must be 11 digits')
    .optional(),
  country: z
    .string()
    .regex(/^[A-Z]{2}$/, 'must be an ISO 3166 alpha-2 code such as NG')
    .optional(),
  currency: z
    .string()
    .regex(/^[A-Z]{3}$/, 'must be an ISO 4217 code such as NGN')
    .optional(),
  request_id: z.string().min(1).max(200).optional(),
  preferred_bank: z.string().min(1).max(100).optional(),
});

export const ListVirtualAccountsQuery = PaginationQuery.extend({
  customer_id: z.string().optional(),
  status: z.string().optional(),
  account_type: z.string().optional(),
  bank_code: z.string().optional(),
  sort: z
    .string()
    .refine((sort) => Object.hasOwn(SORTS, sort), `must be one of ${Object.keys(SORTS).join(', ')}`)
    .default('-created_at'),
});

export type CreateVirtualAccountBody = z.infer<typeof CreateVirtualAccountBody>;

export const VirtualAccountParams = z.object({ id: z.string() });

export const CloseVirtualAccountBody = z
  .object({ reason: z.string().max(500, 'must be at most 500 characters').optional() })
  .nullish();

export const SandboxCreditBody = z.object({
  amount_minor: koboAmount(1, MAX_MOVEMENT_MINOR),
  sender_name: z.string().min(1).max(200).optional(),
  reference: z.string().min(1).max(100).optional(),
});
export type SandboxCreditBody = z.infer<typeof SandboxCreditBody>;

/** A virtual account as the API shows it. closure_reason and closed_at are kept but never shown. */
export const VirtualAccountView = z.object({
  id: z.string(),
  tenant_id: z.string(),
  customer_id: z.string(),
  account_number: z.string(),
  account_name: z.string(),
  bank_code: z.string(),
  bank_name: z.string(),
  provider: z.string(),
  status: z.enum(VIRTUAL_ACCOUNT_STATUSES),
  account_type: z.string(),
  total_received_minor: z.number().int(),
  transaction_count: z.number().int(),
  metadata: metadataField(),
  expires_at: z.string().nullable(),
  ...timestampFields(),
});
export type VirtualAccountView = z.infer<typeof VirtualAccountView>;

export const VirtualAccountList = listOf(VirtualAccountView);

/** An applied inbound credit of a virtual account (GET /api/v1/virtual-accounts/:id/credits). */
export const InboundCreditView = z.object({
  id: z.string(),
  virtual_account_id: z.string(),
  amount_minor: z.number().int().meta({ description: 'What the sender paid, in kobo' }),
  fee_minor: z.number().int().meta({ description: 'What the provider kept of it (0 where it keeps none)' }),
  transaction_reference: z.string(),
  sender_name: z.string().nullable(),
  session_id: z.string().nullable(),
  provider: z.string(),
  created_at: z.string(),
});
export type InboundCreditView = z.infer<typeof InboundCreditView>;

export const InboundCreditList = listOf(InboundCreditView);

export const SandboxCreditView = z.object({
  virtual_account_id: z.string(),
  amount_minor: z.number().int(),
  reference: z.string().nullable(),
  transaction_reference: z.string(),
  status: z.literal('sent'),
});
