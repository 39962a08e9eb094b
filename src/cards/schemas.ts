// Cards' request and response shapes (decisions §6, endpoints 7–11). Types come from these schemas
// (z.infer), so a view and its documented shape cannot drift.
import { z } from 'zod';
import { metadataField, timestampFields } from '../http/view-fields.ts';
import { koboAmount } from '../http/kobo-amount.ts';
import { Metadata } from '../http/hostile-input.ts';
import { PaginationQuery, listOf } from '../http/pagination.ts';
import { MAX_CARD_FUNDING_MINOR, MIN_CARD_FUNDING_MINOR } from '../lib/money.ts';

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
  amount_minor: koboAmount(MIN_CARD_FUNDING_MINOR, MAX_CARD_FUNDING_MINOR),
  currency: Currency.optional(),
  transaction_reference: z.string().min(1).max(200).optional(),
  idempotency_key: z.string().min(1).max(255).optional(),
});
export type FundCardBody = z.infer<typeof FundCardBody>;

export const CardView = z.object({
  id: z.string(),
  customer_id: z.string(),
  status: z.enum(['active', 'locked']),
  jit_funding: z.boolean(),
  last4: z.string(),
  currency: z.string(),
  metadata: metadataField(),
  ...timestampFields(),
});
export type CardView = z.infer<typeof CardView>;

export const CardList = listOf(CardView);

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

export const FundingHistory = listOf(FundingView);

/** Lock, unlock and fund answer 202 once the card's workflow has the operation. */
export const OperationAccepted = z.object({
  card_id: z.string(),
  operation_id: z.string(),
  action: z.enum(['lock', 'unlock', 'fund']),
  status: z.literal('accepted'),
  funding_id: z.string().optional(),
});

/** `available_minor` is what the card can spend; `held_minor` its pending authorizations' holds (decisions §11). */
export const CardBalance = z.object({
  card_id: z.string(),
  currency: z.string(),
  available_minor: z.number().int(),
  held_minor: z.number().int(),
  updated_at: z.string(),
});

/** `PATCH /api/v1/cards/{card_id}`: the card's JIT funding from the wallet (decisions §11). */
export const UpdateCardBody = z.strictObject(
  { jit_funding: z.boolean({ error: 'is required and must be true or false' }) },
  { error: 'must be an object with jit_funding only' },
);
export type UpdateCardBody = z.infer<typeof UpdateCardBody>;

const LimitMinor = z
  .number({ error: 'must be a whole number of kobo or null' })
  .int('must be a whole number of kobo')
  .min(1, 'must be at least 1 kobo, or null for no limit')
  .max(Number.MAX_SAFE_INTEGER, 'is too large')
  .nullable();

/** Merchant category codes (ISO 18245): four digits. */
export const MerchantCategory = z.string().regex(/^[0-9]{4}$/, 'must be a 4-digit merchant category code');

/** Security settings (decisions §11): PUT replaces the whole object, and answers it. */
export const SecuritySettings = z.strictObject({
  per_transaction_limit_minor: LimitMinor,
  daily_limit_minor: LimitMinor,
  channels: z.strictObject({
    pos: z.boolean({ error: 'must be true or false' }),
    web: z.boolean({ error: 'must be true or false' }),
    atm: z.boolean({ error: 'must be true or false' }),
  }),
  blocked_merchant_categories: z.array(MerchantCategory).max(1000, 'must list at most 1000 codes'),
});
export type SecuritySettings = z.infer<typeof SecuritySettings>;

/** Auto-reload (decisions §11): PUT replaces the settings, and answers them. */
export const AutoReloadSettings = z.strictObject({
  enabled: z.boolean({ error: 'is required and must be true or false' }),
  threshold_minor: koboAmount(0, MAX_CARD_FUNDING_MINOR, 'is required (kobo)'),
  amount_minor: koboAmount(MIN_CARD_FUNDING_MINOR, MAX_CARD_FUNDING_MINOR, 'is required (kobo)'),
});
export type AutoReloadSettings = z.infer<typeof AutoReloadSettings>;

/** Auto-reload as read: `amount_minor` is null until the tenant first sets it. */
export const AutoReloadView = AutoReloadSettings.extend({ amount_minor: z.number().int().nullable() });
export type AutoReloadView = z.infer<typeof AutoReloadView>;

/** One authorization as listed (decisions §11). */
export const AuthorizationView = z.object({
  id: z.string(),
  card_id: z.string(),
  amount_minor: z.number().int(),
  currency: z.string(),
  merchant_name: z.string(),
  merchant_category: z.string(),
  channel: z.enum(['pos', 'web', 'atm']),
  decision: z.enum(['approved', 'declined']),
  reason: z.string().nullable(),
  status: z.enum(['pending', 'cleared', 'reversed', 'declined']),
  cleared_minor: z.number().int(),
  jit_funded_minor: z.number().int(),
  ...timestampFields(),
});
export type AuthorizationView = z.infer<typeof AuthorizationView>;

export const AuthorizationList = listOf(AuthorizationView);

const AmountMinor = koboAmount(1, MAX_CARD_FUNDING_MINOR, 'is required (kobo)');

/** Sandbox keys: a purchase the sandbox card processor asks the gateway about (decisions §11). */
export const SandboxPurchaseBody = z.strictObject({
  amount_minor: AmountMinor,
  merchant_name: z.string({ error: 'is required' }).trim().min(1, 'is required').max(200),
  merchant_category: MerchantCategory,
  channel: z.enum(['pos', 'web', 'atm'], { error: 'must be pos, web or atm' }),
  authorization_id: z
    .string()
    .regex(/^[A-Za-z0-9_-]{1,100}$/, 'must be 1-100 letters, digits, _ or -')
    .optional(),
});
export type SandboxPurchaseBody = z.infer<typeof SandboxPurchaseBody>;

/** What the processor received: `declined` with `timeout` when the gateway did not answer within 2 s. */
export const SandboxPurchaseView = z.object({
  authorization_id: z.string(),
  decision: z.enum(['approved', 'declined']),
  reason: z.string().nullable(),
});

export const AuthorizationParams = z.object({ authorization_id: z.string() });

/**
 * Which card's authorization, when two of the tenant's cards have the id (ids are the processor's,
 * per card): required then, optional otherwise.
 */
const SettlementCardId = z.string().min(1, 'must be a card id').max(100).optional();

export const SandboxClearBody = z.strictObject({ amount_minor: AmountMinor, card_id: SettlementCardId });

/** `…/reverse` takes no body, or `{card_id}` to name the card. */
export const SandboxReverseBody = z.strictObject({ card_id: SettlementCardId }).nullish();

/** The processor has queued the clearing or reversal; the authorization changes when the gateway receives it. */
export const SandboxSettlementView = z.object({
  authorization_id: z.string(),
  card_id: z.string(),
  action: z.enum(['clear', 'reverse']),
  amount_minor: z.number().int().nullable(),
  status: z.literal('sent'),
});
