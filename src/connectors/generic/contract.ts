// The generic HTTP bank contract v1.1 (decisions §13, §21, docs/generic-bank-contract-v1.yaml) as code: its
// paths, the zod schemas of its requests, answers, error body and callback events, and the
// Standard Webhooks signature of its callbacks. The one module both sides of the contract share:
// the gateway's generic connector (the client, which checks every answer against these schemas)
// and the banks that speak it (the sandbox bank, src/sandbox-bank/, and the generic test bank,
// test/simulators/generic-bank/). So it imports nothing of the gateway: zod, node:crypto and the
// process-neutral src/runtime/ only.
import { timingSafeEqual } from 'node:crypto';
import type { IncomingHttpHeaders } from 'node:http';
import { z } from 'zod';
import { signWebhook, signedHeaders } from '../../runtime/standard-webhooks.ts';

/** The contract's paths, its parameters in braces; a deployment may serve them under a prefix. */
export const CONTRACT_PATHS = {
  banks: '/banks',
  nameEnquiry: '/name-enquiry',
  transfers: '/transfers',
  transfer: '/transfers/{reference}',
  virtualAccounts: '/virtual-accounts',
  closeVirtualAccount: '/virtual-accounts/{account_number}/close',
  settlementStatement: '/statements/settlement/{date}',
  bvnLookup: '/identity/bvn-lookup',
  cards: '/cards',
  lockCard: '/cards/{card_reference}/lock',
  unlockCard: '/cards/{card_reference}/unlock',
  fundCard: '/cards/{card_reference}/fund',
} as const;
export type ContractPath = (typeof CONTRACT_PATHS)[keyof typeof CONTRACT_PATHS];

/** A path in Fastify's words: `/transfers/{reference}` → `/transfers/:reference`. */
export function fastifyPath(path: string): string {
  return path.replace(/\{(\w+)\}/g, ':$1');
}

// ---- the error body ----

/** The contract's error body: `{code, message}` (a bare `{code}` is taken too). */
export const ContractError = z.object({
  code: z.string().min(1).max(200),
  message: z.string().max(2_000).optional(),
});
export type ContractError = z.infer<typeof ContractError>;

// ---- requests (what the gateway sends; a bank validates them, with rules of its own on top) ----

/** A NUBAN account number. */
export const AccountNumber = z.string().regex(/^\d{10}$/, 'must be 10 digits');
// Messages name the rule, never the value: a BVN is not repeated back, even to the gateway's logs.
const Bvn = z.string().regex(/^\d{11}$/, 'must be 11 digits');
const label = z.string().min(1).max(200);
const positiveMinor = z.number().int().positive();

export const NameEnquiryRequest = z.object({ bank_code: z.string(), account_number: AccountNumber });
export const TransferRequest = z.object({
  reference: z.string().min(1).max(100),
  amount_minor: positiveMinor,
  currency: z.literal('NGN'),
  bank_code: z.string(),
  account_number: AccountNumber,
  account_name: label,
  narration: z.string().max(100),
  // The name enquiry's session, if the gateway passes it on; the bank may start its own.
  session_id: z.string().max(100).optional(),
});
export const VirtualAccountRequest = z.object({
  reference: label,
  account_name: label,
  customer_id: label,
  bvn: Bvn.optional(),
  preferred_bank: z.string().optional(),
});
export const CloseVirtualAccountRequest = z.object({ reason: z.string().max(200).optional() });
export const BvnLookupRequest = z.object({ bvn: Bvn, first_name: label, last_name: label });
export const IssueCardRequest = z.object({ reference: label, customer_id: label });
export const FundCardRequest = z.object({ reference: label, amount_minor: positiveMinor });

// ---- answers (checked field by field by the gateway: a 2xx without them is no answer) ----

const text = z.string().max(2_000);
const optionalText = text.nullish();

export const Bank = z.object({ code: z.string().min(1).max(20), name: z.string().min(1).max(200) });
export type Bank = z.infer<typeof Bank>;
export const BankListAnswer = z.object({ banks: z.array(Bank).max(10_000) });
export const NameEnquiryAnswer = z.object({ account_name: z.string().min(1).max(200), session_id: text });
/**
 * A transfer as the bank reports it: the submission's answer and the status query's. `reversed`
 * (v1.1): paid out, then reversed by the bank; a v1.0 bank never says it.
 */
export const TransferAnswer = z.object({
  reference: z.string().min(1).max(200),
  status: z.enum(['pending', 'successful', 'failed', 'reversed']),
  session_id: optionalText,
  code: optionalText,
  message: optionalText,
});
export type TransferAnswer = z.infer<typeof TransferAnswer>;
export const TransferStatusAnswer = TransferAnswer.extend({ session_id: text });
export const VirtualAccountAnswer = z.object({
  account_number: AccountNumber,
  bank_code: z.string().min(1).max(20),
  bank_name: z.string().min(1).max(200),
});
/** One line of the settlement statement: a transfer that ended that day, or an inbound credit. */
export const StatementItem = z.object({
  kind: z.enum(['transfer', 'inbound_credit']),
  reference: z.string().min(1),
  session_id: z.string(),
  amount_minor: positiveMinor,
  status: z.enum(['successful', 'failed']),
  /** The account range (virtual-account provider) a credit came through; null for transfers. */
  provider: z.string().nullable(),
  account_number: z.string(),
  value_time: z.string(),
});
export type StatementItem = z.infer<typeof StatementItem>;
/** The statement as the bank sends it: checked field by field, since reconciliation trusts nothing it reads. */
export const SettlementStatementAnswer = z.object({
  date: z.string(),
  generated_at: z.string(),
  items: z.array(StatementItem),
});
export const BvnHolderAnswer = z.object({ first_name: label, last_name: label });
export const CardAnswer = z.object({ card_reference: label, last4: z.string().regex(/^\d{4}$/) });
export const CardStatusAnswer = z.object({ card_reference: label, status: z.enum(['locked', 'active']) });
export const CardFundingAnswer = z.object({ reference: label, status: z.literal('successful') });

/** `Guaranty Trust Bank` → `guaranty-trust-bank`: the contract's banks carry code and name only. */
export function bankSlug(name: string): string {
  return name
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, '-')
    .replace(/^-+|-+$/g, '');
}

// ---- callbacks (the bank to the gateway, at POST /provider-callbacks/<connector name>) ----

export const CallbackEnvelope = z.object({
  id: z.string().min(1).max(200),
  type: z.string().min(1).max(100),
  data: z.record(z.string(), z.unknown()),
});
export const TransferCompletedData = z.object({
  reference: z.string().min(1).max(200),
  status: z.enum(['successful', 'failed']),
  session_id: optionalText,
  code: optionalText,
  message: optionalText,
});
/** `transfer.reversed`'s data (v1.1): a transfer the bank paid out, then reversed; the status query says `reversed`. */
export const TransferReversedData = z.object({
  reference: z.string().min(1).max(200),
  session_id: optionalText,
  code: optionalText,
  message: optionalText,
});
export const VirtualAccountCreditedData = z.object({
  account_number: z.string().min(1).max(20),
  amount_minor: positiveMinor,
  transaction_reference: z.string().min(1).max(200),
  sender_name: z.string().max(200),
  session_id: optionalText,
  sender_account_number: optionalText,
  sender_bank_code: optionalText,
  provider: z.string().min(1).max(50).nullish(),
});
/** `card.authorization.request`'s data: a purchase waiting for the gateway's decision (decisions §11). */
export const CardAuthorizationRequestData = z.object({
  authorization_id: z.string().min(1).max(100),
  card_reference: z.string().min(1).max(200),
  amount_minor: positiveMinor.max(Number.MAX_SAFE_INTEGER),
  currency: z.string().length(3),
  merchant_name: z.string().min(1).max(200),
  merchant_category: z.string().regex(/^[0-9]{4}$/),
  channel: z.enum(['pos', 'web', 'atm']),
});
export type CardAuthorizationRequestData = z.infer<typeof CardAuthorizationRequestData>;
/** The gateway's decision, in its answer to `card.authorization.request` (`data.authorization`). */
export const CardAuthorizationDecision = z.object({
  authorization_id: z.string(),
  decision: z.enum(['approved', 'declined']),
  reason: z.string().nullable(),
});

// ---- the callbacks' signature ----

/** A callback's timestamp may be this far off the gateway's clock, in seconds (a replay window). */
export const SIGNATURE_TOLERANCE_SECONDS = 300;

/** A callback's headers: Standard Webhooks over the exact body, signed now. */
export function callbackHeaders(secret: string, id: string, body: string): Record<string, string> {
  return signedHeaders(secret, id, Math.floor(Date.now() / 1000), body);
}

const SIGNATURE_HEADERS = ['webhook-id', 'webhook-timestamp', 'webhook-signature'] as const;

function header(headers: IncomingHttpHeaders, name: string): string | undefined {
  const value = headers[name];
  return Array.isArray(value) ? value[0] : value;
}

/**
 * Whether the headers sign `rawBody` with `secret` (a `whsec_…` secret's base64 key, otherwise the
 * secret's UTF-8 bytes) at a time within the tolerance of `now`; checked in constant time.
 */
export function verifyStandardWebhook(
  secret: string,
  rawBody: string,
  headers: IncomingHttpHeaders,
  now = Math.floor(Date.now() / 1000),
): { ok: true } | { ok: false; reason: string } {
  const missing = SIGNATURE_HEADERS.filter((name) => !header(headers, name));
  if (missing.length > 0) return { ok: false, reason: `missing ${missing.join(', ')} header` };
  const id = header(headers, 'webhook-id')!;
  const stamp = header(headers, 'webhook-timestamp')!;
  if (id.length > 256 || !/^\d{1,12}$/.test(stamp))
    return { ok: false, reason: 'malformed webhook-id or webhook-timestamp' };
  const timestamp = Number(stamp);
  if (Math.abs(now - timestamp) > SIGNATURE_TOLERANCE_SECONDS) {
    return { ok: false, reason: 'signature timestamp outside the 5 minute tolerance' };
  }
  const expected = Buffer.from(signWebhook(secret, id, timestamp, rawBody).slice('v1,'.length), 'base64');
  // Several space-separated signatures may come (a bank rotating its secret): one match suffices.
  for (const entry of header(headers, 'webhook-signature')!.split(' ').slice(0, 10)) {
    const [version, signature] = entry.split(',', 2);
    if (version !== 'v1' || !signature) continue;
    const given = Buffer.from(signature, 'base64');
    if (given.length === expected.length && timingSafeEqual(given, expected)) return { ok: true };
  }
  return { ok: false, reason: 'signature does not match' };
}
