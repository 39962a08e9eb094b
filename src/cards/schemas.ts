// Cards' request and response shapes (decisions §6, endpoints 7–11). Types come from these schemas
// (z.infer), so a view and its documented shape cannot drift.
import { z } from 'zod';
import { Metadata } from '../http/hostile-input.ts';
import { PaginationQuery, PaginationSchema } from '../http/pagination.ts';
import { MAX_CARD_FUNDING_MINOR, MIN_CARD_FUNDING_MINOR } from '../ledger/money.ts';

const Currency = z.literal('NGN', { error: 'only NGN is supported' });

export const CardParams = z.object({ card_id: z.string() });

export const CreateCardBody = z.object({
  customer_id: z.string({ error: 'is required' }).trim().min(1, 'is required').max(200),
  currency: Currency.optional(),
  metadata: Metadata.optional(),
});
export type CreateCardBody = z.infer<typeof CreateCardBody>;

export const ListCardsQuery = PaginationQuery.extend({
  customer_id: z.string().optional(),
  status: z.enum(['active', 'locked'], { error: 'must be active or locked' }).optional(),
});

export const LockCardBody = z
  .object({
    reason: z.string().max(500).optional(),
    request_id: z.string().max(200).optional(),
    idempotency_key: z.string().min(1).max(255).optional(),
  })
  .nullish();

export const FundCardBody = z.object({
  amount_minor: z
    .number({ error: 'is required' })
    .int('must be a whole number of kobo')
    .min(MIN_CARD_FUNDING_MINOR, `must be at least ${MIN_CARD_FUNDING_MINOR} kobo (₦1)`)
    .max(MAX_CARD_FUNDING_MINOR, `must be at most ${MAX_CARD_FUNDING_MINOR} kobo (₦10,000,000)`),
  currency: Currency.optional(),
  transaction_reference: z.string().min(1).max(200).optional(),
  idempotency_key: z.string().min(1).max(255).optional(),
});
export type FundCardBody = z.infer<typeof FundCardBody>;

export const CardView = z.object({
  id: z.string(),
  customer_id: z.string(),
  status: z.enum(['active', 'locked']),
  last4: z.string(),
  currency: z.string(),
  metadata: z.record(z.string(), z.unknown()).nullable(),
  created_at: z.string(),
  updated_at: z.string(),
});
export type CardView = z.infer<typeof CardView>;

export const CardList = z.object({ items: z.array(CardView), pagination: PaginationSchema });

export const FundingView = z.object({
  id: z.string(),
  amount_minor: z.number().int(),
  currency: z.string(),
  status: z.enum(['pending', 'succeeded', 'failed']),
  transaction_reference: z.string().nullable(),
  idempotency_key: z.string().nullable(),
  failure_reason: z.string().nullable(),
  created_at: z.string(),
  completed_at: z.string().nullable(),
});
export type FundingView = z.infer<typeof FundingView>;

export const FundingHistory = z.object({ items: z.array(FundingView) });

/** Lock, unlock and fund answer 202 once the card's workflow has the operation. */
export const OperationAccepted = z.object({
  card_id: z.string(),
  operation_id: z.string(),
  action: z.enum(['lock', 'unlock', 'fund']),
  status: z.literal('accepted'),
  funding_id: z.string().optional(),
});

export const CardBalance = z.object({
  card_id: z.string(),
  currency: z.string(),
  available_minor: z.number().int(),
  updated_at: z.string(),
});
