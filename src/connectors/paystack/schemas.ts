// The parts of Paystack's answers the connector reads (PaystackOSS/openapi), checked field by field:
// money moves on what they say, so a field we need and do not find makes the answer unreadable
// (transient), never a default. Everything else Paystack sends is let through unread.
import { z } from 'zod';

const text = z.string();
const nullableText = z.string().nullish();

/** `GET /bank`: one bank of the list; `meta.next` is the cursor of the next page, if any. */
export const BankItem = z.object({ name: text.min(1), code: text.min(1), slug: z.string().nullish() });
export const BankList = z.array(z.unknown());
export const CursorMeta = z.object({ next: z.string().nullish() }).nullish();

/** `GET /bank/resolve`. */
export const ResolvedAccount = z.object({ account_number: text.min(1), account_name: text.min(1) });

/** `POST /transferrecipient`. */
export const Recipient = z.object({ recipient_code: text.min(1) });

/**
 * A transfer, as `POST /transfer`, `GET /transfer/verify/{reference}`, `GET /transfer` and the
 * transfer.* events give it. `session` carries the NIP session id once the switch has one.
 */
export const Transfer = z.object({
  reference: text.min(1),
  status: text.min(1),
  amount: z.number().int().nonnegative().optional(),
  transfer_code: z.string().optional(),
  session: z.object({ id: z.union([z.string(), z.number()]).nullish() }).nullish(),
  gateway_response: nullableText,
  transferred_at: nullableText,
  createdAt: nullableText,
  created_at: nullableText,
  updatedAt: nullableText,
  updated_at: nullableText,
  recipient: z
    .union([
      z.object({ details: z.object({ account_number: nullableText }).nullish() }).loose(),
      z.number(),
      z.string(),
    ])
    .nullish(),
});
export type Transfer = z.infer<typeof Transfer>;

/** A list item of `GET /transfer`: what a settlement line needs. */
export const ListedTransfer = Transfer.extend({ amount: z.number().int().positive() });

/** `meta` of the page-numbered lists (`GET /transfer`, `GET /transaction`, `GET /dedicated_account`). */
export const PageMeta = z.object({
  page: z.coerce.number().int().positive(),
  pageCount: z.coerce.number().int().nonnegative(),
});

/** The dedicated-account fields of a charge's `authorization` (channel `dedicated_nuban`). */
const DedicatedAuthorization = z
  .object({
    channel: nullableText,
    receiver_bank_account_number: nullableText,
    sender_name: nullableText,
    sender_bank: nullableText,
    sender_bank_account_number: nullableText,
    narration: nullableText,
  })
  .loose();

/** A transaction (`GET /transaction`, charge.success): an inbound credit when its channel is `dedicated_nuban`. */
export const Charge = z.object({
  reference: text.min(1),
  status: text.min(1),
  amount: z.number().int().positive(),
  /** What Paystack keeps of the amount, in kobo: a dedicated-account credit needs it (creditFee). */
  fees: z.number().int().nonnegative().nullish(),
  currency: z.string().nullish(),
  channel: nullableText,
  paid_at: nullableText,
  paidAt: nullableText,
  created_at: nullableText,
  createdAt: nullableText,
  authorization: DedicatedAuthorization.nullish(),
  metadata: z.object({ receiver_account_number: nullableText }).loose().nullish(),
});
export type Charge = z.infer<typeof Charge>;

/**
 * What Paystack keeps of a dedicated-account charge: required, and less than the charge, or the
 * credit is unreadable (booking it without its fee would credit the wallet more than Paystack settles).
 */
export function creditFee(charge: Charge): number | { path: string; message: string } {
  if (charge.fees === null || charge.fees === undefined) {
    return { path: 'data.fees', message: "Paystack's fee is missing" };
  }
  if (charge.fees >= charge.amount) return { path: 'data.fees', message: 'the fee is not less than the amount' };
  return charge.fees;
}

/** `POST /customer`. */
export const Customer = z.object({ id: z.number().int(), customer_code: text.min(1) });

/** A dedicated account (`POST /dedicated_account`, `GET /dedicated_account`, `DELETE …/{id}`). */
export const DedicatedAccount = z.object({
  id: z.number().int(),
  account_number: text.min(1),
  active: z.boolean(),
  bank: z.object({ name: text, id: z.number().int().optional(), slug: nullableText }),
});
export type DedicatedAccount = z.infer<typeof DedicatedAccount>;

/** A webhook: `{event, data}`. */
export const WebhookEnvelope = z.object({ event: text.min(1).max(100), data: z.record(z.string(), z.unknown()) });
