// verifyWebhook: checks a delivery's Standard Webhooks signature with the `standardwebhooks`
// library, the same check any other stack would make, and returns the event it carries. A `whsec_`
// secret's key is its base64 part; any other secret is used as its UTF-8 bytes, as the gateway
// signs (docs/webhooks.md). Give it the body exactly as received: re-serialised JSON never matches.
import { Webhook, WebhookVerificationError as LibraryVerificationError } from 'standardwebhooks';
import type { paths } from './schema.ts';

type Subscribable =
  paths['/api/v1/webhook-endpoints']['post']['requestBody']['content']['application/json']['events'][number];

/** Every event type the gateway sends (what an endpoint can subscribe to, less the wildcard). */
export type WebhookEventType = Exclude<Subscribable, '*'>;

/** A webhook's body: `{id, type, created_at, data}`; `data` is the resource as the event saw it. */
export interface WebhookEvent<Type extends WebhookEventType = WebhookEventType> {
  id: string;
  type: Type;
  created_at: string;
  data: Record<string, unknown>;
}

/**
 * Why a delivery was refused: a `webhook-*` header missing, the timestamp more than five minutes
 * from now (a replayed capture), no signature matching the secret (tampered body or wrong secret),
 * or a signed body that is not an event.
 */
export type WebhookRefusal = 'missing_headers' | 'timestamp' | 'signature' | 'body';

export class WebhookVerificationError extends Error {
  readonly reason: WebhookRefusal;

  constructor(reason: WebhookRefusal, message: string, options: { cause?: unknown } = {}) {
    super(message, options);
    this.name = 'WebhookVerificationError';
    this.reason = reason;
  }
}

/** Headers as Node (`req.headers`), fetch (`Headers`) or a framework hands them over. */
export type WebhookHeaders = Headers | Record<string, string | string[] | undefined>;

const SIGNED_HEADERS = ['webhook-id', 'webhook-timestamp', 'webhook-signature'] as const;

function headerOf(headers: WebhookHeaders, name: string): string | undefined {
  if (headers instanceof Headers) return headers.get(name) ?? undefined;
  const key = Object.keys(headers).find((candidate) => candidate.toLowerCase() === name);
  const value = key === undefined ? undefined : headers[key];
  return Array.isArray(value) ? value[0] : value;
}

/** The library's refusals by message: it has one error class for all of them. */
function refusalOf(error: LibraryVerificationError): WebhookRefusal {
  if (error.message === 'Missing required headers') return 'missing_headers';
  // A timestamp that is not a number, too old or too new.
  if (error.message === 'Invalid Signature Headers' || /timestamp/i.test(error.message)) return 'timestamp';
  return 'signature';
}

const isRecord = (value: unknown): value is Record<string, unknown> =>
  typeof value === 'object' && value !== null && !Array.isArray(value);

/**
 * The event of a signed delivery, or a WebhookVerificationError saying why it is not one. `body`
 * is the raw body (a string, or the bytes as received); `secret` the endpoint's signing secret.
 */
export function verifyWebhook(body: string | Uint8Array, headers: WebhookHeaders, secret: string): WebhookEvent {
  const signed: Record<string, string> = {};
  for (const name of SIGNED_HEADERS) {
    const value = headerOf(headers, name);
    if (value === undefined) throw new WebhookVerificationError('missing_headers', `the ${name} header is missing`);
    signed[name] = value;
  }
  const webhook = secret.startsWith('whsec_') ? new Webhook(secret) : new Webhook(secret, { format: 'raw' });
  const text = typeof body === 'string' ? body : new TextDecoder().decode(body);
  let event: unknown;
  try {
    event = webhook.verify(text, signed);
  } catch (error) {
    if (error instanceof LibraryVerificationError) {
      throw new WebhookVerificationError(refusalOf(error), error.message, { cause: error });
    }
    // A verified signature over bytes that are not JSON.
    throw new WebhookVerificationError('body', 'the signed body is not JSON', { cause: error });
  }
  if (
    !isRecord(event) ||
    typeof event.id !== 'string' ||
    typeof event.type !== 'string' ||
    typeof event.created_at !== 'string' ||
    !isRecord(event.data)
  ) {
    throw new WebhookVerificationError('body', 'the signed body is not an event {id, type, created_at, data}');
  }
  return event as unknown as WebhookEvent;
}
