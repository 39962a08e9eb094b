// Every call to Paystack goes through here: `Authorization: Bearer <secret key>`, a timeout, and one
// reading of the answer. Paystack wraps everything in `{status, message, data, meta}`; `status:
// false` is an error, which the HTTP status classifies as the generic contract does (decisions
// §13): 5xx, 408, 425, 429, timeouts and network faults are transient (ambiguous, decisions §17, but
// for a 425, a 429 or a connection never made), any other 4xx definitive.
// An answer we cannot read (an HTML page from a proxy, a body that is not JSON, a 2xx that does not
// say `status: true`) is transient too: it proves nothing, so the caller retries or asks again,
// never guesses. The key lives in a private field and never reaches a message, a span or a log.
import { withHttpClientSpan } from '../../telemetry/http-client-span.ts';
import { TRANSIENT_HTTP_STATUSES, mayHaveActed, neverSent } from '../codes.ts';
import { ProviderError } from '../capabilities.ts';
import { parseJsonText } from '../json-text.ts';
import { PROVIDER } from './settings.ts';

export { PROVIDER };

/** Paystack's messages are shown to operators; a hostile or broken one is cut short. */
const MAX_MESSAGE = 200;

export interface PaystackClientOptions {
  baseUrl: string;
  secretKey: string;
  timeoutMs: number;
}

/** A `status: true` answer: its `data` and `meta`, still to be checked by the caller's schema. */
export interface PaystackAnswer {
  httpStatus: number;
  message: string;
  data: unknown;
  meta: unknown;
}

/**
 * A definitive refusal (`status: false` with a 4xx other than 408, 425, 429), for the caller to
 * classify: what it proves depends on the call (an account that does not resolve, a reference
 * already used, a transfer that was not taken).
 */
export class PaystackRefusal extends Error {
  readonly httpStatus: number;
  /** Paystack's `code` (`duplicate_transfer_reference`…), when it sends one. */
  readonly code: string | undefined;
  /** Paystack's `type` (`validation_error`, `api_error`, `processor_error`), when it sends one. */
  readonly type: string | undefined;

  constructor(httpStatus: number, message: string, code: string | undefined, type: string | undefined) {
    super(message);
    this.name = 'PaystackRefusal';
    this.httpStatus = httpStatus;
    this.code = code;
    this.type = type;
  }

  /** The refusal as a ProviderError of the given outcome, never transient. */
  toProviderError(outcome: ProviderError['outcome'], extra: { notTaken?: boolean; message?: string } = {}) {
    return new ProviderError(PROVIDER, outcome, false, extra.message ?? `Paystack refused: ${this.message}`, {
      rawCode: this.code ?? `http_${this.httpStatus}`,
      httpStatus: this.httpStatus,
      notTaken: extra.notTaken === true,
      cause: this,
    });
  }
}

export interface Request {
  method: 'GET' | 'POST' | 'DELETE';
  /** The route with `{name}` placeholders: spans are named by it, never by an id. */
  route: string;
  params?: Record<string, string>;
  query?: Record<string, string | undefined>;
  body?: unknown;
}

function clip(text: string): string {
  return text.length > MAX_MESSAGE ? `${text.slice(0, MAX_MESSAGE)}…` : text;
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

export class PaystackClient {
  readonly #secretKey: string;
  private readonly baseUrl: string;
  private readonly timeoutMs: number;

  constructor(options: PaystackClientOptions) {
    this.#secretKey = options.secretKey;
    // A trailing slash would double up with the routes' leading one.
    this.baseUrl = options.baseUrl.replace(/\/+$/, '');
    this.timeoutMs = options.timeoutMs;
  }

  /** The answer's `data` and `meta` when Paystack says `status: true`; a ProviderError or a PaystackRefusal otherwise. */
  async call(request: Request): Promise<PaystackAnswer> {
    const { method, route } = request;
    const name = `${method} ${route}`;
    const path = route.replace(/\{(\w+)\}/g, (_, key: string) => encodeURIComponent(request.params?.[key] ?? ''));
    const url = new URL(`${this.baseUrl}${path}`);
    for (const [key, value] of Object.entries(request.query ?? {})) {
      if (value !== undefined) url.searchParams.set(key, value);
    }
    const signal = AbortSignal.timeout(this.timeoutMs);
    let response: Response;
    let text: string;
    try {
      response = await withHttpClientSpan(
        name,
        { method, url, attributes: { 'http.route': route, 'gateway.provider': PROVIDER } },
        () =>
          fetch(url, {
            method,
            headers: {
              authorization: `Bearer ${this.#secretKey}`,
              accept: 'application/json',
              ...(request.body === undefined ? {} : { 'content-type': 'application/json' }),
            },
            body: request.body === undefined ? undefined : JSON.stringify(request.body),
            // A redirect would carry the key to wherever it points: refused, as a network fault.
            redirect: 'error',
            signal,
          }),
      );
      // The timeout covers the body too: a server that sends headers and then stalls is a hang.
      text = await response.text();
    } catch (cause) {
      const timedOut = signal.aborted;
      throw new ProviderError(
        PROVIDER,
        timedOut ? 'timeout' : 'network_error',
        true,
        timedOut ? `Paystack did not answer ${name} within ${this.timeoutMs} ms` : `Paystack unreachable for ${name}`,
        // A connection that was never made sent nothing; any other fault may follow a request sent.
        { cause, ambiguous: timedOut || !neverSent(cause) },
      );
    }
    const status = response.status;
    const json = parseJsonText(text);
    const envelope = json.ok && isRecord(json.value) ? json.value : undefined;
    const message = typeof envelope?.message === 'string' ? clip(envelope.message) : '';
    if (status >= 500 || TRANSIENT_HTTP_STATUSES.has(status)) {
      throw new ProviderError(
        PROVIDER,
        status === 408 ? 'timeout' : 'unavailable',
        true,
        `Paystack answered ${name} with HTTP ${status}${message ? `: ${message}` : ''}`,
        { httpStatus: status, rawCode: `http_${status}`, ambiguous: mayHaveActed(status) },
      );
    }
    if (!envelope || typeof envelope.status !== 'boolean') {
      throw new ProviderError(
        PROVIDER,
        'unknown',
        true,
        `Paystack sent an unreadable answer to ${name} (HTTP ${status})`,
        { httpStatus: status },
      );
    }
    if (status >= 400) {
      if (envelope.status) {
        throw new ProviderError(
          PROVIDER,
          'unknown',
          true,
          `Paystack answered ${name} with HTTP ${status} and status true`,
          {
            httpStatus: status,
          },
        );
      }
      throw new PaystackRefusal(
        status,
        message || `HTTP ${status}`,
        typeof envelope.code === 'string' ? clip(envelope.code) : undefined,
        typeof envelope.type === 'string' ? clip(envelope.type) : undefined,
      );
    }
    if (!envelope.status || status < 200 || status >= 300) {
      // A 2xx saying `status: false` (or a stray 1xx/3xx) proves nothing either way.
      throw new ProviderError(
        PROVIDER,
        'unknown',
        true,
        `Paystack answered ${name} with HTTP ${status} and status ${String(envelope.status)}${message ? `: ${message}` : ''}`,
        { httpStatus: status },
      );
    }
    return { httpStatus: status, message, data: envelope.data, meta: envelope.meta };
  }

  /**
   * `call` for a read whose refusal says nothing more particular than "refused" (the bank list,
   * a page of a list): a definitive refusal becomes a ProviderError `rejected`, so that no
   * PaystackRefusal ever leaves the connector for a caller that reads only ProviderErrors.
   */
  async read(request: Request, what: string): Promise<PaystackAnswer> {
    try {
      return await this.call(request);
    } catch (error) {
      if (error instanceof PaystackRefusal) {
        throw error.toProviderError('rejected', { message: `Paystack refused the ${what}: ${error.message}` });
      }
      throw error;
    }
  }
}

/** A 2xx whose data does not have what the call needs: transient, like any unreadable answer. */
export function unreadable(what: string, httpStatus: number, issue: string | undefined): ProviderError {
  return new ProviderError(PROVIDER, 'unknown', true, `Paystack sent an unreadable ${what}: ${issue ?? 'no data'}`, {
    httpStatus,
  });
}
