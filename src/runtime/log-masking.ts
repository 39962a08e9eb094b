// What logs may show of an account number: its last 4 digits (decisions §16). Log lines are made
// from URLs (the per-request line, the sandbox bank's request lines) and from error messages, and
// both can hold one: `GET /api/v1/banks/resolve?bank_code=058&account_number=0123456789`, a
// virtual account's number in a sandbox bank path, a provider's "no account …" message. The rule:
// - the value of an account parameter (`account_number`, `recipient_account`, and their camelCase
//   forms) keeps only its last 4 characters, whatever its shape;
// - any other run of 10 to 19 digits standing on its own (not inside a word; a UUID's last group
//   stays whole) keeps only its last 4: a NUBAN is 10, a BVN 11, a card number 12 to 19. Longer
//   runs (NIP session ids are 30 digits) are identifiers, not account numbers, and stay whole;
// - an API key (`sk_test_…`, `sk_live_…`) or a webhook secret (`whsec_…`) in a URL is cut to its
//   prefix. Query values are matched decoded, so percent-encoding does not hide a number.
// Masked characters become `*`, so `0123456789` is logged as `******6789`.
import type { LogLevel, LogMetadata, Logger } from '@temporalio/common';
import { stdSerializers } from 'pino';

const ACCOUNT_PARAMETERS = new Set(['account_number', 'recipient_account', 'accountnumber', 'recipientaccount']);

const DIGIT_RUN = /(?<![\p{L}\p{N}])\d{10,19}(?![\p{L}\p{N}])/gu;
/** A UUID up to its last group, which may be all digits (12): that group is an id, not an account. */
const UUID_HEAD = /[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-$/i;
const CREDENTIAL = /\b(sk_(?:test|live)_|whsec_)[A-Za-z0-9+/=_-]+/g;

/** Every character but the last 4 as `*`. */
export function maskLast4(value: string): string {
  return value.length <= 4 ? '*'.repeat(value.length) : `${'*'.repeat(value.length - 4)}${value.slice(-4)}`;
}

/** Text with every standalone run of 10 to 19 digits masked to its last 4, and credentials cut. */
export function maskAccountNumbers(text: string): string {
  return text
    .replace(DIGIT_RUN, (run: string, at: number) =>
      run.length === 12 && UUID_HEAD.test(text.slice(Math.max(0, at - 24), at)) ? run : maskLast4(run),
    )
    .replace(CREDENTIAL, (_whole, prefix: string) => `${prefix}***`);
}

function decoded(component: string): string {
  try {
    return decodeURIComponent(component.replace(/\+/g, ' '));
  } catch {
    return component;
  }
}

/** A URL component masked; kept as sent when nothing in it needs masking. */
function maskComponent(component: string, forceLast4 = false): string {
  const plain = decoded(component);
  const masked = forceLast4 ? maskLast4(plain) : maskAccountNumbers(plain);
  return masked === plain ? component : encodeURIComponent(masked);
}

/** A request URL (path and query) as a log line may show it. */
export function maskUrl(url: string): string {
  const at = url.indexOf('?');
  const path = at === -1 ? url : url.slice(0, at);
  const maskedPath = path
    .split('/')
    .map((segment) => maskComponent(segment))
    .join('/');
  if (at === -1) return maskedPath;
  const query = url
    .slice(at + 1)
    .split('&')
    .map((pair) => {
      const equals = pair.indexOf('=');
      if (equals === -1) return maskComponent(pair);
      const name = pair.slice(0, equals);
      const isAccount = ACCOUNT_PARAMETERS.has(decoded(name).toLowerCase());
      return `${maskComponent(name)}=${maskComponent(pair.slice(equals + 1), isAccount)}`;
    })
    .join('&');
  return `${maskedPath}?${query}`;
}

/** A value for a log line with maskAccountNumbers applied to every string in it (errors included). */
export function maskDeep(value: unknown, depth = 0): unknown {
  if (typeof value === 'string') return maskAccountNumbers(value);
  if (depth > 8 || value === null || typeof value !== 'object') return value;
  if (value instanceof Error) {
    const plain: Record<string, unknown> = { name: value.name, message: value.message, stack: value.stack };
    for (const [key, inner] of Object.entries(value)) plain[key] = inner;
    if (value.cause !== undefined) plain.cause = value.cause;
    return maskDeep(plain, depth + 1);
  }
  if (Array.isArray(value)) return value.map((item) => maskDeep(item, depth + 1));
  return Object.fromEntries(Object.entries(value).map(([key, inner]) => [key, maskDeep(inner, depth + 1)]));
}

/** pino's error serializer, then every string in the result masked (a provider's message can name an account). */
export function maskedErrorSerializer(error: Error): ReturnType<typeof stdSerializers.err> {
  return maskDeep(stdSerializers.err(error)) as ReturnType<typeof stdSerializers.err>;
}

const SEVERITY: Record<LogLevel, number> = { TRACE: 1, DEBUG: 2, INFO: 3, WARN: 4, ERROR: 5 };

/**
 * The worker's Temporal logger with every message and metadata string masked: the SDK logs an
 * activity's failure with its error, and a provider's error can quote an account number.
 * Symbol-keyed metadata (the SDK's timestamp) is passed on as it is. A line below the inner
 * logger's level is dropped before it is masked: the SDK logs every workflow's and activity's start
 * and end at DEBUG, and masking each of those only to drop it took 3.7% of the worker's main thread
 * under load (docs/performance.md, "Where a create's CPU goes").
 */
export function maskingLogger(inner: Logger & { readonly level?: LogLevel }): Logger {
  const least = inner.level === undefined ? 0 : SEVERITY[inner.level];
  const log = (level: LogLevel, message: string, meta?: LogMetadata): void => {
    if (SEVERITY[level] < least) return;
    let masked: LogMetadata | undefined;
    if (meta) {
      masked = maskDeep(meta) as LogMetadata;
      for (const symbol of Object.getOwnPropertySymbols(meta)) {
        (masked as Record<symbol, unknown>)[symbol] = (meta as Record<symbol, unknown>)[symbol];
      }
    }
    inner.log(level, maskAccountNumbers(message), masked);
  };
  return {
    log,
    trace: (message, meta) => log('TRACE', message, meta),
    debug: (message, meta) => log('DEBUG', message, meta),
    info: (message, meta) => log('INFO', message, meta),
    warn: (message, meta) => log('WARN', message, meta),
    error: (message, meta) => log('ERROR', message, meta),
  };
}
