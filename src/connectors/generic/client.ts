// The one HTTP client of the generic bank contract (docs/generic-bank-contract-v1.yaml): bearer
// key, a timeout on every call (the answer's body included), and every answer turned into either
// a value checked against its schema or a ProviderError that says whether trying again can help.
// What is transient: no answer (timeout, refused or reset connection), 5xx, 408, 425, 429, and
// anything that is not an answer of the contract — an HTML error page, a body that is not JSON, a
// 2xx whose fields are missing, a 4xx without the contract's `{code, message}` — since a proxy or
// a half-deployed bank can send those, and none of them is the bank's word. Of those, all but a
// 425, a 429 and a connection never made are ambiguous: the bank may have acted (decisions §17).
// Any other 4xx with the contract's body is definitive. With tracing on, each call is a client span named by its
// method and route (`POST /transfers`), never by an id in the path.
import type { z } from 'zod';
import { withHttpClientSpan } from '../../telemetry/http-client-span.ts';
import { TRANSIENT_HTTP_STATUSES, mayHaveActed, neverSent } from '../codes.ts';
import { ProviderError, type ProviderOutcome } from '../capabilities.ts';
import { parseJsonText } from '../json-text.ts';
import { ContractError } from './contract.ts';

export interface GenericClientOptions {
  /** Named on every error and span: the connector's (or its virtual-account provider's) name. */
  provider: string;
  baseUrl: string;
  /** Sent as `Authorization: Bearer <apiKey>` on every call. */
  apiKey: string;
  timeoutMs: number;
}

/** A call's route (`/transfers/{reference}`) and its parameters, filled in encoded. */
export interface Route {
  method: 'GET' | 'POST';
  route: string;
  params?: Record<string, string>;
}

/** A contract answer that is neither a 2xx nor transient: the status and the bank's `{code, message}`. */
export interface Refusal {
  status: number;
  error: ContractError;
}

/**
 * The outcome a definitive refusal stands for, by the contract's codes. A 404 means "not found"
 * only with the code `not_found`: a 404 for a path the bank does not serve (a wrong URL or prefix)
 * must never read as "the bank never took this transfer".
 */
export function refusalOutcome(refusal: Refusal): ProviderOutcome {
  if (refusal.error.code === 'invalid_account') return 'invalid_account';
  if (refusal.error.code === 'not_found') return 'not_found';
  return 'rejected';
}

/** Keeps a message the bank sent (or a path's own text) short enough for logs and errors. */
function clip(text: string, length = 300): string {
  return text.length > length ? `${text.slice(0, length)}…` : text;
}

export class GenericBankClient {
  readonly provider: string;
  private readonly options: GenericClientOptions;

  constructor(options: GenericClientOptions) {
    this.provider = options.provider;
    this.options = { ...options, baseUrl: options.baseUrl.replace(/\/+$/, '') };
  }

  /** The same bank under another name and path prefix (a virtual-account provider it serves at `/providers/<name>`). */
  withPrefix(provider: string, prefix: string): GenericBankClient {
    return new GenericBankClient({ ...this.options, provider, baseUrl: `${this.options.baseUrl}${prefix}` });
  }

  /**
   * One call. A 2xx is parsed with `answer` (a mismatch is transient); `refused` decides what a
   * definitive 4xx answer becomes: a value (e.g. null for "not found"), an error it throws, or —
   * when it returns undefined — a definitive ProviderError with the bank's code and message.
   */
  async call<T, R = never>(
    target: Route,
    answer: z.ZodType<T>,
    options: {
      body?: unknown;
      refused?: (refusal: Refusal) => R | undefined;
      timeoutMs?: number;
    } = {},
  ): Promise<T | R> {
    const { status, text } = await this.send(target, options);
    const name = `${target.method} ${target.route}`;
    if (status >= 500 || TRANSIENT_HTTP_STATUSES.has(status)) {
      const error = parseJson(text, ContractError);
      throw new ProviderError(
        this.provider,
        status === 408 ? 'timeout' : 'unavailable',
        true,
        `${this.provider} answered ${name} with HTTP ${status}${error ? `: ${clip(error.message ?? error.code)}` : ''}`,
        { rawCode: error?.code, httpStatus: status, ambiguous: mayHaveActed(status) },
      );
    }
    if (status >= 200 && status < 300) {
      const json = parseJsonValue(text);
      const parsed = json.ok ? answer.safeParse(json.value) : undefined;
      if (parsed?.success) return parsed.data;
      const issue = parsed?.error.issues[0];
      throw new ProviderError(
        this.provider,
        'unknown',
        true,
        `${this.provider} sent an answer to ${name} that is not the contract's (HTTP ${status}): ${
          issue ? `${issue.path.join('.') || 'body'} ${issue.message}` : 'not JSON'
        }`,
        { httpStatus: status },
      );
    }
    const error = status >= 400 ? parseJson(text, ContractError) : undefined;
    if (!error) {
      // A 3xx, or a 4xx without the contract's body: a proxy's page, not the bank's refusal.
      throw new ProviderError(
        this.provider,
        'unknown',
        true,
        `${this.provider} answered ${name} with HTTP ${status} and no {code, message} body`,
        { httpStatus: status },
      );
    }
    const refusal = { status, error };
    const decided = options.refused?.(refusal);
    if (decided !== undefined) return decided;
    throw this.definitive(name, refusal);
  }

  /** A definitive refusal as an error, with the bank's code kept for operators. */
  definitive(name: string, refusal: Refusal, extra: { notTaken?: boolean } = {}): ProviderError {
    return new ProviderError(
      this.provider,
      refusalOutcome(refusal),
      false,
      `${this.provider} refused ${name} (HTTP ${refusal.status}, ${refusal.error.code}): ${clip(refusal.error.message ?? refusal.error.code)}`,
      { rawCode: refusal.error.code, httpStatus: refusal.status, ...extra },
    );
  }

  private async send(
    target: Route,
    options: { body?: unknown; timeoutMs?: number },
  ): Promise<{ status: number; text: string }> {
    const { method, route } = target;
    const path = route.replace(/\{(\w+)\}/g, (_, name: string) => encodeURIComponent(target.params?.[name] ?? ''));
    const timeoutMs = options.timeoutMs ?? this.options.timeoutMs;
    const url = new URL(`${this.options.baseUrl}${path}`);
    // One deadline for the whole exchange: a bank that sends its headers and then stalls the body
    // times out like one that never answers.
    const signal = AbortSignal.timeout(timeoutMs);
    try {
      return await withHttpClientSpan(
        `${method} ${route}`,
        { method, url, attributes: { 'http.route': route, 'gateway.provider': this.provider } },
        async () => {
          const response = await fetch(url, {
            method,
            headers: {
              accept: 'application/json',
              authorization: `Bearer ${this.options.apiKey}`,
              ...(options.body === undefined ? {} : { 'content-type': 'application/json' }),
            },
            body: options.body === undefined ? undefined : JSON.stringify(options.body),
            signal,
            redirect: 'manual',
          });
          return { status: response.status, text: await response.text() };
        },
      );
    } catch (cause) {
      const timedOut = signal.aborted || (cause instanceof DOMException && cause.name === 'TimeoutError');
      throw new ProviderError(
        this.provider,
        timedOut ? 'timeout' : 'network_error',
        true,
        timedOut
          ? `${this.provider} did not answer ${method} ${route} within ${timeoutMs} ms`
          : `${this.provider} unreachable for ${method} ${route}: ${cause instanceof Error ? cause.message : String(cause)}`,
        // A connection that was never made sent nothing; any other fault may follow a request sent.
        { cause, ambiguous: timedOut || !neverSent(cause) },
      );
    }
  }
}

function parseJsonValue(text: string): { ok: true; value: unknown } | { ok: false } {
  // An empty body is no value: fine where the answer has no fields (a close), missing fields elsewhere.
  if (text.trim() === '') return { ok: true, value: undefined };
  return parseJsonText(text);
}

function parseJson<T>(text: string, schema: z.ZodType<T>): T | undefined {
  const json = parseJsonValue(text);
  if (!json.ok) return undefined;
  const parsed = schema.safeParse(json.value);
  return parsed.success ? parsed.data : undefined;
}
