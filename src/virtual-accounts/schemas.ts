// Virtual accounts' request and response shapes (interface §2.2). Types come from these schemas
// (z.infer), so a view and its documented shape cannot drift.
import { z } from 'zod';
import { metadataField, timestampFields } from '../http/view-fields.ts';
import { koboAmount } from '../http/kobo-amount.ts';
import { Metadata } from '../http/hostile-input.ts';
import { PaginationQuery, listOf } from '../http/pagination.ts';
import { MAX_MOVEMENT_MINOR } from '../lib/money.ts';
import { SORTS, VIRTUAL_ACCOUNT_STATUSES } from './store.ts';
import { CREDIT_STATUSES } from './domain.ts';
import { MAX_TRANSFER_MINOR, MIN_TRANSFER_MINOR } from '../transfers/domain.ts';
import { TransferCreateView } from '../transfers/schemas.ts';

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

/** A sender's account and bank, as a credit carries them (decisions §21): both, or neither. */
const senderAccountFields = {
  sender_account_number: z
    .string()
    .regex(/^\d{10}$/, 'must be exactly 10 digits')
    .optional()
    .meta({
      description: "The sender's account (10 digits), where a return of the credit goes; with sender_bank_code",
    }),
  sender_bank_code: z
    .string()
    .regex(/^\d{3,6}$/, 'must be a bank code of 3 to 6 digits (GET /api/v1/banks lists them)')
    .optional()
    .meta({ description: "The sender's bank code; with sender_account_number" }),
};

/** Each of the sender's account fields needs the other: a credit carries the account whole, or not at all. */
function senderAccountWhole(
  value: { sender_account_number?: string; sender_bank_code?: string },
  context: z.RefinementCtx,
) {
  if (value.sender_account_number !== undefined && value.sender_bank_code === undefined) {
    context.addIssue({ code: 'custom', path: ['sender_bank_code'], message: 'is required with sender_account_number' });
  }
  if (value.sender_bank_code !== undefined && value.sender_account_number === undefined) {
    context.addIssue({ code: 'custom', path: ['sender_account_number'], message: 'is required with sender_bank_code' });
  }
}

export const SandboxCreditBody = z
  .object({
    amount_minor: koboAmount(1, MAX_MOVEMENT_MINOR),
    sender_name: z.string().min(1).max(200).optional(),
    reference: z.string().min(1).max(100).optional(),
    ...senderAccountFields,
  })
  .superRefine(senderAccountWhole);
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

/** An inbound credit of a virtual account (GET /api/v1/virtual-accounts/:id/credits, decisions §21). */
export const InboundCreditView = z.object({
  id: z.string(),
  amount_minor: z.number().int().meta({ description: 'What the sender paid, in kobo' }),
  fee_minor: z.number().int().meta({ description: 'What the provider kept of it (0 where it keeps none)' }),
  sender_name: z.string().nullable(),
  sender_account_number: z.string().nullable().meta({
    description: "The sender's account, where the provider gave it: null means the credit cannot be returned",
  }),
  sender_bank_code: z.string().nullable(),
  transaction_reference: z.string(),
  status: z.enum(CREDIT_STATUSES).meta({
    description:
      'applied: in the wallet; held: the account was closed or expired and the sender unknown, kept in suspense ' +
      'for operators; returned / partially_returned: all or some of it sent back (returns not failed)',
  }),
  returned_minor: z
    .number()
    .int()
    .meta({ description: 'What returns not failed hold of it; at most amount_minor − fee_minor' }),
  created_at: z.string(),
});
export type InboundCreditView = z.infer<typeof InboundCreditView>;

export const InboundCreditList = listOf(InboundCreditView);

export const CreditParams = z.object({ id: z.string(), credit_id: z.string() });

/** A return's body (decisions §21): how much (all that is left when absent) and why (the transfer's narration). */
export const ReturnCreditBody = z
  .object({
    amount_minor: koboAmount(MIN_TRANSFER_MINOR, MAX_TRANSFER_MINOR, 'must be a whole number of kobo')
      .optional()
      .meta({ description: 'How much to send back; all that is left of the credit when absent' }),
    reason: z
      .string()
      .trim()
      .min(1, 'must not be empty')
      .max(100, 'must be at most 100 characters')
      .optional()
      .meta({ description: "Why: the return transfer's narration (`Return of <transaction_reference>` when absent)" }),
  })
  .nullish();
export type ReturnCreditBody = z.infer<typeof ReturnCreditBody>;

/** A return's answer: the credit as it now stands, and the transfer that sends the money back. */
export const ReturnedCreditView = z.object({ credit: InboundCreditView, transfer: TransferCreateView });
export type ReturnedCreditView = z.infer<typeof ReturnedCreditView>;

export const SandboxCreditView = z.object({
  virtual_account_id: z.string(),
  amount_minor: z.number().int(),
  reference: z.string().nullable(),
  transaction_reference: z.string(),
  status: z.literal('sent'),
});
