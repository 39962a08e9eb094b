// Signatures on provider callbacks: `t=<unix seconds>,v1=<hex HMAC-SHA256(secret, "<t>.<raw body>")>`,
// the scheme the sandbox bank uses (as Stripe and many switches do). Verification is constant
// time and refuses timestamps outside the tolerance, so a captured callback cannot be replayed
// later.
import { createHmac, timingSafeEqual } from 'node:crypto';
import { z } from 'zod';
import type { CallbackReceiver, SignatureCheck } from '../connectors/types.ts';

export const SIGNATURE_HEADER = 'x-sandbox-bank-signature';
export const SIGNATURE_TOLERANCE_SECONDS = 300;

export function signPayload(secret: string, rawBody: string, timestamp = Math.floor(Date.now() / 1000)): string {
  const digest = createHmac('sha256', secret).update(`${timestamp}.${rawBody}`).digest('hex');
  return `t=${timestamp},v1=${digest}`;
}

export function verifySignature(
  secret: string,
  rawBody: string,
  header: string | undefined,
  now = Math.floor(Date.now() / 1000),
): SignatureCheck {
  if (!header) return { ok: false, reason: `missing ${SIGNATURE_HEADER} header` };
  const parts = new Map<string, string>();
  for (const part of header.split(',')) {
    const [key, value] = part.split('=', 2);
    if (key && value) parts.set(key.trim(), value.trim());
  }
  const timestamp = Number(parts.get('t'));
  const signature = parts.get('v1');
  if (!Number.isInteger(timestamp) || !signature || !/^[0-9a-f]{64}$/.test(signature)) {
    return { ok: false, reason: 'malformed signature header' };
  }
  if (Math.abs(now - timestamp) > SIGNATURE_TOLERANCE_SECONDS) {
    return { ok: false, reason: 'signature timestamp outside the 5 minute tolerance' };
  }
  const expected = createHmac('sha256', secret).update(`${timestamp}.${rawBody}`).digest();
  const given = Buffer.from(signature, 'hex');
  return given.length === expected.length && timingSafeEqual(given, expected)
    ? { ok: true }
    : { ok: false, reason: 'signature does not match' };
}

const SandboxCallbackBody = z.object({
  event_id: z.string().min(1).max(200),
  type: z.string().min(1).max(100),
  occurred_at: z.string().optional(),
  data: z.record(z.string(), z.unknown()),
});

/** The sandbox bank's callbacks: this header's signature, and `{event_id, type, occurred_at?, data}`. */
export function sandboxBankReceiver(secret: string): CallbackReceiver {
  return {
    verify(rawBody, headers, now) {
      const header = headers[SIGNATURE_HEADER];
      return verifySignature(secret, rawBody, Array.isArray(header) ? header[0] : header, now);
    },
    normalize(rawBody) {
      let json: unknown;
      try {
        json = JSON.parse(rawBody);
      } catch {
        return { ok: false, issues: [{ path: 'body', message: 'is not valid JSON' }] };
      }
      const parsed = SandboxCallbackBody.safeParse(json);
      if (!parsed.success) {
        return {
          ok: false,
          issues: parsed.error.issues.map((issue) => ({
            path: issue.path.join('.') || 'body',
            message: issue.message,
          })),
        };
      }
      const { event_id, type, occurred_at, data } = parsed.data;
      return { ok: true, callback: { eventId: event_id, type, occurredAt: occurred_at, data } };
    },
  };
}
