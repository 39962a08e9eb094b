// The bank's callbacks under the generic contract: Standard Webhooks signatures (`webhook-id`,
// `webhook-timestamp`, `webhook-signature: v1,<base64 HMAC-SHA256>` over "{id}.{timestamp}.{body}",
// the scheme of our own outgoing webhooks, src/webhooks/signing.ts) checked in constant time, with
// timestamps more than 5 minutes off refused so that a captured callback cannot be replayed later;
// and bodies `{id, type, data}` put into the gateway's vocabulary (NormalizedCallback).
import { timingSafeEqual } from 'node:crypto';
import type { IncomingHttpHeaders } from 'node:http';
import { z } from 'zod';
import type { CallbackReceiver, NormalizeResult, SignatureCheck } from '../types.ts';
import { signWebhook } from '../../webhooks/signing.ts';

export const SIGNATURE_TOLERANCE_SECONDS = 300;

const HEADERS = ['webhook-id', 'webhook-timestamp', 'webhook-signature'] as const;

function header(headers: IncomingHttpHeaders, name: string): string | undefined {
  const value = headers[name];
  return Array.isArray(value) ? value[0] : value;
}

/**
 * Whether the headers sign `rawBody` with `secret` (a `whsec_…` secret's base64 key, otherwise the
 * secret's UTF-8 bytes) at a time within the tolerance of `now`.
 */
export function verifyStandardWebhook(
  secret: string,
  rawBody: string,
  headers: IncomingHttpHeaders,
  now = Math.floor(Date.now() / 1000),
): SignatureCheck {
  const missing = HEADERS.filter((name) => !header(headers, name));
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

const Envelope = z.object({
  id: z.string().min(1).max(200),
  type: z.string().min(1).max(100),
  data: z.record(z.string(), z.unknown()),
});

const optionalText = z.string().max(2_000).nullish();
const TransferCompleted = z.object({
  reference: z.string().min(1).max(200),
  status: z.enum(['successful', 'failed']),
  session_id: optionalText,
  code: optionalText,
  message: optionalText,
});
const VirtualAccountCredited = z.object({
  account_number: z.string().min(1).max(20),
  amount_minor: z.number().int().positive(),
  transaction_reference: z.string().min(1).max(200),
  sender_name: z.string().max(200),
  session_id: optionalText,
  sender_account_number: optionalText,
  sender_bank_code: optionalText,
  provider: z.string().min(1).max(50).nullish(),
});

type Issues = { path: string; message: string }[];

function issuesOf(error: z.ZodError, prefix: string[] = []): Issues {
  return error.issues.map((issue) => ({
    path: [...prefix, ...issue.path.map(String)].join('.') || 'body',
    message: issue.message,
  }));
}

/** Only the keys whose values are strings: the dispatcher's handlers read strings or nothing. */
function strings(entries: Record<string, unknown>): Record<string, string> {
  return Object.fromEntries(
    Object.entries(entries).filter((entry): entry is [string, string] => typeof entry[1] === 'string'),
  );
}

/** The body in the gateway's vocabulary; never throws, whatever the body holds. */
export function normalizeContractCallback(
  rawBody: string,
  options: { virtualAccountProviders?: readonly string[] } = {},
): NormalizeResult {
  let json: unknown;
  try {
    json = JSON.parse(rawBody);
  } catch {
    return { ok: false, issues: [{ path: 'body', message: 'is not valid JSON' }] };
  }
  const envelope = Envelope.safeParse(json);
  if (!envelope.success) return { ok: false, issues: issuesOf(envelope.error) };
  const { id: eventId, type, data } = envelope.data;

  if (type === 'transfer.completed') {
    const parsed = TransferCompleted.safeParse(data);
    if (!parsed.success) return { ok: false, issues: issuesOf(parsed.error, ['data']) };
    const { reference, status, session_id, code, message } = parsed.data;
    return {
      ok: true,
      callback: {
        eventId,
        type: status === 'successful' ? 'transfer.successful' : 'transfer.failed',
        data: { reference, ...strings({ session_id, response_code: code, message }) },
      },
    };
  }

  if (type === 'virtual_account.credited') {
    const parsed = VirtualAccountCredited.safeParse(data);
    if (!parsed.success) return { ok: false, issues: issuesOf(parsed.error, ['data']) };
    const credit = parsed.data;
    const known = options.virtualAccountProviders;
    if (credit.provider && known && !known.includes(credit.provider)) {
      return {
        ok: false,
        issues: [{ path: 'data.provider', message: "is not one of this bank's virtual-account providers" }],
      };
    }
    return {
      ok: true,
      callback: {
        eventId,
        type: 'virtual_account.credit',
        data: {
          account_number: credit.account_number,
          amount_minor: credit.amount_minor,
          transaction_reference: credit.transaction_reference,
          sender_name: credit.sender_name,
          ...strings({ session_id: credit.session_id, provider: credit.provider }),
        },
      },
    };
  }

  // Card authorizations (their data checked where they are read: the callback route and
  // src/cards/callbacks.ts) and anything else, recorded for operators, as they came.
  return { ok: true, callback: { eventId, type, data } };
}

export function genericCallbackReceiver(
  webhookSecret: string,
  options: { virtualAccountProviders?: readonly string[] } = {},
): CallbackReceiver {
  return {
    verify: (rawBody, headers, now) => verifyStandardWebhook(webhookSecret, rawBody, headers, now),
    normalize: (rawBody) => normalizeContractCallback(rawBody, options),
  };
}
