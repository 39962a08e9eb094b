// Paystack's webhooks at `POST /provider-callbacks/paystack` (decisions §13). Paystack signs the raw
// body with the secret key (`x-paystack-signature`: hex HMAC-SHA512) and has no timestamp, so the
// check is the signature alone, in constant time. Paystack's events carry no id of their own, and
// it sends an event again until it is answered 200: the event id is made of the event's name and
// the reference it is about, which Paystack's repeats share and which differs between a transfer's
// `transfer.success` and its later `transfer.reversed`. A dedicated-account credit carries the fee
// Paystack keeps of it (`fees`), which the gateway books with it (decisions §18).
import { createHash, createHmac, timingSafeEqual } from 'node:crypto';
import type { IncomingHttpHeaders } from 'node:http';
import { parseJsonText } from '../json-text.ts';
import type { CallbackReceiver, NormalizeResult, NormalizedCallback, SignatureCheck } from '../types.ts';
import { PROVIDER } from './http.ts';
import { ourReference } from './reference.ts';
import { Charge, Transfer, WebhookEnvelope, creditFee } from './schemas.ts';
import type { z } from 'zod';

export const SIGNATURE_HEADER = 'x-paystack-signature';

/** Paystack's signature of a body: what the simulator sends and the receiver expects. */
export function paystackSignature(secretKey: string, rawBody: string): string {
  return createHmac('sha512', secretKey).update(rawBody, 'utf8').digest('hex');
}

function issuesOf(error: z.ZodError, prefix: string): { path: string; message: string }[] {
  return error.issues.map((issue) => ({
    path: [prefix, ...issue.path.map(String)].filter(Boolean).join('.'),
    message: issue.message,
  }));
}

function transferCallback(event: string, data: Record<string, unknown>): NormalizeResult {
  const parsed = Transfer.safeParse(data);
  if (!parsed.success) return { ok: false, issues: issuesOf(parsed.error, 'data') };
  const transfer = parsed.data;
  const sessionId = transfer.session?.id;
  return {
    ok: true,
    callback: {
      eventId: `${event}:${transfer.reference}`,
      type:
        event === 'transfer.success'
          ? 'transfer.successful'
          : event === 'transfer.reversed'
            ? 'transfer.reversed'
            : 'transfer.failed',
      occurredAt: transfer.updated_at ?? transfer.updatedAt ?? transfer.transferred_at ?? undefined,
      data: {
        // A digest reference (ours broke Paystack's rules) leads to no transfer of ours: passed as it is.
        reference: ourReference(transfer.reference) ?? transfer.reference,
        ...(sessionId !== null && sessionId !== undefined && String(sessionId) !== ''
          ? { session_id: String(sessionId) }
          : {}),
        response_code: transfer.status,
        message: transfer.gateway_response || `Paystack ${event}`,
      },
    },
  };
}

/** The account a dedicated-account charge reached: the authorization names it, the metadata too. */
function receivingAccount(charge: z.infer<typeof Charge>): string | undefined {
  return charge.authorization?.receiver_bank_account_number ?? charge.metadata?.receiver_account_number ?? undefined;
}

function isDedicatedCharge(data: Record<string, unknown>): boolean {
  const authorization = data.authorization;
  return (
    data.channel === 'dedicated_nuban' ||
    (typeof authorization === 'object' &&
      authorization !== null &&
      (authorization as Record<string, unknown>).channel === 'dedicated_nuban')
  );
}

function creditCallback(event: string, data: Record<string, unknown>): NormalizeResult {
  const parsed = Charge.safeParse(data);
  if (!parsed.success) return { ok: false, issues: issuesOf(parsed.error, 'data') };
  const charge = parsed.data;
  const accountNumber = receivingAccount(charge);
  if (!accountNumber) {
    return {
      ok: false,
      issues: [
        { path: 'data.authorization.receiver_bank_account_number', message: 'the receiving account is missing' },
      ],
    };
  }
  if (charge.currency && charge.currency !== 'NGN') {
    return {
      ok: false,
      issues: [{ path: 'data.currency', message: `a ${charge.currency} credit is not ours to apply` }],
    };
  }
  const fee = creditFee(charge);
  if (typeof fee !== 'number') return { ok: false, issues: [fee] };
  const authorization = charge.authorization;
  return {
    ok: true,
    callback: {
      eventId: `${event}:${charge.reference}`,
      type: 'virtual_account.credit',
      occurredAt: charge.paid_at ?? charge.paidAt ?? charge.created_at ?? charge.createdAt ?? undefined,
      data: {
        provider: PROVIDER,
        account_number: accountNumber,
        amount_minor: charge.amount,
        fee_minor: fee,
        transaction_reference: charge.reference,
        ...(authorization?.sender_name ? { sender_name: authorization.sender_name } : {}),
        ...(authorization?.sender_bank_account_number
          ? { sender_account_number: authorization.sender_bank_account_number }
          : {}),
        ...(authorization?.sender_bank ? { sender_bank: authorization.sender_bank } : {}),
      },
    },
  };
}

/** An event the gateway does not apply: recorded under its own name, with an id that its repeats share. */
function otherCallback(event: string, data: Record<string, unknown>, rawBody: string): NormalizedCallback {
  const key =
    typeof data.reference === 'string' && data.reference
      ? data.reference
      : typeof data.id === 'number' || (typeof data.id === 'string' && data.id)
        ? String(data.id)
        : createHash('sha256').update(rawBody, 'utf8').digest('hex');
  return { eventId: `${event}:${key}`, type: event, data };
}

export class PaystackCallbacks implements CallbackReceiver {
  readonly #secretKey: string;

  constructor(secretKey: string) {
    this.#secretKey = secretKey;
  }

  verify(rawBody: string, headers: IncomingHttpHeaders): SignatureCheck {
    const header = headers[SIGNATURE_HEADER];
    if (header === undefined || header === '') return { ok: false, reason: `missing ${SIGNATURE_HEADER} header` };
    if (typeof header !== 'string' || !/^[0-9a-fA-F]{128}$/.test(header.trim())) {
      return { ok: false, reason: `malformed ${SIGNATURE_HEADER} header` };
    }
    const expected = createHmac('sha512', this.#secretKey).update(rawBody, 'utf8').digest();
    const given = Buffer.from(header.trim(), 'hex');
    return given.length === expected.length && timingSafeEqual(given, expected)
      ? { ok: true }
      : { ok: false, reason: 'signature does not match' };
  }

  normalize(rawBody: string): NormalizeResult {
    const body = parseJsonText(rawBody);
    if (!body.ok) return { ok: false, issues: [{ path: '', message: 'the body is not JSON' }] };
    const envelope = WebhookEnvelope.safeParse(body.value);
    if (!envelope.success) return { ok: false, issues: issuesOf(envelope.error, '') };
    const { event, data } = envelope.data;
    switch (event) {
      case 'transfer.success':
      case 'transfer.failed':
      case 'transfer.reversed':
        return transferCallback(event, data);
      case 'charge.success':
        if (isDedicatedCharge(data)) return creditCallback(event, data);
        return { ok: true, callback: otherCallback(event, data, rawBody) };
      default:
        return { ok: true, callback: otherCallback(event, data, rawBody) };
    }
  }
}
