// Transfers' request and response shapes (interface §2.3–§2.5): the create area answers
// {success, data} with the create vocabulary; list and get answer {status, data} with theirs.
// Types come from these schemas (z.infer), so a view and its documented shape cannot drift.
import { z } from 'zod';
import { koboAmount } from '../http/kobo-amount.ts';
import { Metadata } from '../http/hostile-input.ts';
import { MAX_PAGE } from '../http/pagination.ts';
import { MAX_BATCH_ITEMS, MAX_TRANSFER_MINOR, MIN_TRANSFER_MINOR } from './domain.ts';

/** What `recipient_id` is refused with when it is not one of the tenant's saved recipients (decisions §20). */
export const NOT_A_SAVED_RECIPIENT = 'is not a saved recipient (GET /api/v1/recipients lists them)';

/** What `recipient_bank_code` is refused with when the mode's bank list has no such bank. */
export const NOT_A_SUPPORTED_BANK = 'is not a supported bank code (GET /api/v1/banks lists them)';

/** What `recipient_id` is refused with when its saved recipient's bank is no longer in the list. */
export const recipientBankGone = (bankCode: string) =>
  `is a recipient at bank ${bankCode}, which is not a supported bank code any more (GET /api/v1/banks lists them)`;

/** A transfer's fields; who it pays is checked as a whole by `namesOnePayee`. */
const TransferFields = z.object({
  amount_minor: koboAmount(MIN_TRANSFER_MINOR, MAX_TRANSFER_MINOR, 'is required and must be a whole number of kobo'),
  recipient_id: z
    .string({ error: 'must be the id of a saved recipient' })
    .max(64, 'must be at most 64 characters')
    .optional()
    .meta({
      description:
        'A saved recipient (POST /api/v1/recipients), instead of recipient_account and recipient_bank_code: ' +
        'paid under the name it was saved with, after a name enquiry that must still give that name',
    }),
  recipient_account: z
    .string({ error: 'is required' })
    .regex(/^\d{10}$/, 'must be exactly 10 digits')
    .optional()
    .meta({ description: 'Required with recipient_bank_code unless recipient_id is given' }),
  recipient_bank_code: z
    .string({ error: 'is required' })
    .min(1, 'is required')
    .max(10)
    .optional()
    .meta({ description: 'Required with recipient_account unless recipient_id is given' }),
  narration: z.string({ error: 'is required' }).min(1, 'is required').max(100, 'must be at most 100 characters'),
  reference: z
    .string()
    .regex(/^[A-Za-z0-9_-]{1,64}$/, 'must be 1 to 64 of A-Z, a-z, 0-9, _ and -')
    .optional(),
  currency: z.literal('NGN', { error: 'only NGN is supported' }).optional(),
  metadata: Metadata.optional(),
});

/**
 * A transfer names its payee once (decisions §20): `recipient_id`, or `recipient_account` with
 * `recipient_bank_code`. Both → refused naming `recipient_id`; neither → each account field
 * missing "is required", as when both were required. Runs even when other fields failed, so a body
 * missing everything names every missing field at once.
 */
function namesOnePayee(value: Record<string, unknown>, context: z.RefinementCtx) {
  const given = (field: string) => value[field] !== undefined;
  if (given('recipient_id')) {
    if (given('recipient_account') || given('recipient_bank_code')) {
      context.addIssue({
        code: 'custom',
        path: ['recipient_id'],
        message: 'give either recipient_id or recipient_account and recipient_bank_code, not both',
      });
    }
    return;
  }
  for (const field of ['recipient_account', 'recipient_bank_code']) {
    if (!given(field)) context.addIssue({ code: 'custom', path: [field], message: 'is required' });
  }
}

/**
 * The payee rule in the OpenAPI document: exactly one of the two ways to name it (the typed
 * client's body type is the union of the two).
 */
const ONE_PAYEE = {
  oneOf: [
    {
      properties: { recipient_id: { type: 'string' } },
      required: ['recipient_id'],
      not: { anyOf: [{ required: ['recipient_account'] }, { required: ['recipient_bank_code'] }] },
    },
    {
      properties: { recipient_account: { type: 'string' }, recipient_bank_code: { type: 'string' } },
      required: ['recipient_account', 'recipient_bank_code'],
      not: { required: ['recipient_id'] },
    },
  ],
};

/** Runs the payee check on any object parsed so far, whatever else failed. */
const onObjects = {
  when: (payload: { value: unknown }) =>
    typeof payload.value === 'object' && payload.value !== null && !Array.isArray(payload.value),
};

export const CreateTransferBody = TransferFields.superRefine(namesOnePayee, onObjects).meta(ONE_PAYEE);

// Any valid ISO 8601 instant between 1970 and 9999; the service hands PostgreSQL its UTC form.
const EARLIEST = Date.parse('1970-01-01T00:00:00Z');
const LATEST = Date.parse('9999-12-31T23:59:59Z');
const isoDate = z.iso
  .datetime({ offset: true, error: 'must be an ISO 8601 date-time' })
  .or(z.iso.date())
  .refine((value) => {
    const at = Date.parse(value);
    return at >= EARLIEST && at <= LATEST;
  }, 'must be a date between 1970 and 9999');

export const ListTransfersQuery = z.object({
  page: z.coerce.number().int().min(1, 'must be 1 or more').max(MAX_PAGE, `must be at most ${MAX_PAGE}`).default(1),
  limit: z.coerce.number().int().min(1, 'must be 1 or more').max(100, 'must be at most 100').default(20),
  status: z.enum(['pending', 'successful', 'failed'], { error: 'must be pending, successful or failed' }).optional(),
  from: isoDate.optional(),
  to: isoDate.optional(),
  reference: z.string().min(1).max(64).optional(),
  recipient_account: z
    .string()
    .regex(/^\d{10}$/, 'must be exactly 10 digits')
    .optional()
    .meta({ description: "Only transfers to this account number (the recipient's 10 digits)" }),
  approval: z
    .enum(['required', 'approved', 'rejected', 'expired'], {
      error: 'must be required, approved, rejected or expired',
    })
    .optional()
    .meta({ description: 'Only transfers the transfer policy held, with this approval status (decisions §20)' }),
  expand: z.literal('details', { error: 'must be details' }).optional().meta({
    description: 'details: each transfer also carries fee, total, bank name, narration, metadata and creator',
  }),
});

/** GET one transfer's query: `expand=details` adds the detail fields. */
export const GetTransferQuery = ListTransfersQuery.pick({ expand: true });

/** A held payout's approval (decisions §20); null for one the transfer policy did not hold. */
export const ApprovalView = z
  .object({
    status: z.enum(['required', 'approved', 'rejected', 'expired']),
    expires_at: z.string(),
    decided_by: z
      .object({ type: z.enum(['key', 'user']), id: z.string(), name: z.string() })
      .nullable()
      .describe('The key or console user that approved or rejected it; null while required and once expired'),
    decided_at: z.string().nullable(),
  })
  .nullable();

/** An approve's body: nothing is needed (an empty object is taken). */
export const ApproveBody = z.object({}).strict();

/** A reject's body (decisions §20). */
export const RejectBody = z.object({ reason: z.string().max(500).optional() }).strict();

/** The transfer as the create endpoint returns it (interface §2.3). */
export const TransferCreateView = z.object({
  id: z.string(),
  amount_minor: z.number().int(),
  fee_minor: z.number().int(),
  total_minor: z.number().int(),
  recipient_account: z.string(),
  recipient_name: z.string(),
  recipient_bank: z.string(),
  recipient_bank_code: z.string(),
  status: z.enum(['pending', 'processing', 'completed', 'failed']),
  reference: z.string(),
  narration: z.string(),
  session_id: z.string(),
  currency: z.string(),
  metadata: z.record(z.string(), z.unknown()),
  created_at: z.string(),
  approval: ApprovalView,
  return_of: z
    .string()
    .nullable()
    .describe('The inbound credit this transfer returns to its sender (decisions §21); null for any other transfer'),
});
/** The transfer as list and get return it, in their own field names and statuses. */
export const TransferItemView = z.object({
  id: z.string(),
  reference: z.string(),
  amount_minor: z.number().int(),
  currency: z.string(),
  status: z.enum(['pending', 'successful', 'failed']),
  bankCode: z.string(),
  accountNumber: z.string(),
  accountName: z.string(),
  createdAt: z.string(),
  completedAt: z.string().optional(),
  /**
   * Once failed: why (the bank's words, `rejected` / `approval_expired` for a held transfer, or
   * `reversed`: the bank paid it out and then reversed it, decisions §21).
   */
  failure_reason: z.string().optional(),
  /** When the bank's reversal of the paid-out transfer was applied (its amount and fee back in the wallet); only then. */
  reversed_at: z.string().optional(),
  approval: ApprovalView,
  return_of: z
    .string()
    .nullable()
    .describe('The inbound credit this transfer returns to its sender (decisions §21); null for any other transfer'),
});

/** A transfer with `expand=details`: the fields the list and get views leave out, as the create view names them. */
export const TransferDetailFields = z.object({
  fee_minor: z.number().int().optional(),
  total_minor: z.number().int().optional(),
  recipient_bank: z.string().optional(),
  narration: z.string().optional(),
  metadata: z.record(z.string(), z.unknown()).optional(),
  created_by_key_id: z
    .string()
    .nullable()
    .optional()
    .describe("The API key (or console person's key) that made it; null when unknown"),
  batch_id: z
    .string()
    .nullable()
    .optional()
    .describe('The bulk batch it is an item of (a held one is decided only with its batch); null for none'),
});
export const TransferExpandableView = TransferItemView.extend(TransferDetailFields.shape);

export type CreateTransferBody = z.infer<typeof CreateTransferBody>;
export type TransferCreateView = z.infer<typeof TransferCreateView>;
export type TransferItemView = z.infer<typeof TransferItemView>;
export type TransferExpandableView = z.infer<typeof TransferExpandableView>;

export const TransferParams = z.object({ id: z.string() });

export const CreatedTransferResponse = z.object({ success: z.literal(true), data: TransferCreateView });
export type CreatedTransferResponse = z.infer<typeof CreatedTransferResponse>;

export const TransferListResponse = z.object({
  status: z.literal('success'),
  data: z.array(TransferExpandableView),
  pagination: z.object({ page: z.number(), limit: z.number(), total: z.number(), totalPages: z.number() }),
});

export const TransferResponse = z.object({ status: z.literal('success'), data: TransferExpandableView });

// ---- bulk transfers (decisions §14) ------------------------------------------------------------

/** One item of a bulk request: a create's fields, without currency. */
export const BulkTransferItem = TransferFields.omit({ currency: true })
  .strict()
  .superRefine(namesOnePayee, onObjects)
  .meta(ONE_PAYEE);

export const CreateBulkTransferBody = z.object({
  batch_reference: z
    .string({ error: 'is required' })
    .regex(/^[A-Za-z0-9_-]{1,64}$/, 'must be 1 to 64 of A-Z, a-z, 0-9, _ and -'),
  transfers: z
    .array(BulkTransferItem, { error: 'is required and must be a list of transfers' })
    .min(1, 'must hold at least one transfer')
    .max(MAX_BATCH_ITEMS, `must hold at most ${MAX_BATCH_ITEMS} transfers`),
  atomic: z.boolean({ error: 'must be true or false' }).optional(),
  metadata: Metadata.optional(),
});
export type CreateBulkTransferBody = z.infer<typeof CreateBulkTransferBody>;

/** The batch as POST answers it. */
export const TransferBatchView = z.object({
  id: z.string(),
  batch_reference: z.string(),
  status: z.enum(['processing', 'completed']),
  total_count: z.number().int(),
  total_amount_minor: z.number().int(),
  total_fee_minor: z.number().int(),
  atomic: z.boolean(),
  created_at: z.string(),
  approval: ApprovalView,
});
export type TransferBatchView = z.infer<typeof TransferBatchView>;

/** …and as GET answers it, with its items by outcome. */
export const TransferBatchDetailView = TransferBatchView.extend({
  counts: z.object({
    refused: z.number().int(),
    pending: z.number().int(),
    successful: z.number().int(),
    failed: z.number().int(),
  }),
  completed_at: z.string().nullable(),
});
export type TransferBatchDetailView = z.infer<typeof TransferBatchDetailView>;

export const TransferBatchItemView = z.object({
  index: z.number().int(),
  reference: z.string(),
  transfer_id: z.string().nullable(),
  status: z.enum(['refused', 'pending', 'successful', 'failed']),
  error: z.object({ code: z.string(), message: z.string() }).nullable(),
});
export type TransferBatchItemView = z.infer<typeof TransferBatchItemView>;

export const CreatedBatchResponse = z.object({ success: z.literal(true), data: TransferBatchView });
export type CreatedBatchResponse = z.infer<typeof CreatedBatchResponse>;
export const TransferBatchResponse = z.object({ status: z.literal('success'), data: TransferBatchDetailView });
export const BatchItemsQuery = ListTransfersQuery.pick({ page: true, limit: true });
/** The batch list's query: newest first, optionally only batches whose approval stands so. */
export const ListBatchesQuery = ListTransfersQuery.pick({ page: true, limit: true, approval: true });
export const TransferBatchListResponse = z.object({
  status: z.literal('success'),
  data: z.array(TransferBatchView),
  pagination: z.object({ page: z.number(), limit: z.number(), total: z.number(), totalPages: z.number() }),
});
export const TransferBatchItemsResponse = z.object({
  status: z.literal('success'),
  data: z.array(TransferBatchItemView),
  pagination: z.object({ page: z.number(), limit: z.number(), total: z.number(), totalPages: z.number() }),
});
