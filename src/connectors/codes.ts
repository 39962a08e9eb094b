// The one place where provider response codes become our outcomes. NIBSS NIP codes, as the
// sandbox bank (and real switches) answer them.
import type { BankTransferStatus, ProviderOutcome } from './capabilities.ts';

export type CodeMeaning =
  | { kind: 'status'; status: BankTransferStatus }
  | { kind: 'error'; outcome: ProviderOutcome; transient: boolean; description: string };

export const NIP_CODES: Record<string, CodeMeaning> = {
  '00': { kind: 'status', status: 'successful' },
  '09': { kind: 'status', status: 'pending' },
  '01': { kind: 'status', status: 'pending' }, // status unknown: query again later
  '07': { kind: 'error', outcome: 'invalid_account', transient: false, description: 'invalid account' },
  '25': { kind: 'error', outcome: 'not_found', transient: false, description: 'unable to locate record' },
  '51': { kind: 'error', outcome: 'transfer_failed', transient: false, description: 'insufficient funds at the bank' },
  '57': { kind: 'error', outcome: 'transfer_failed', transient: false, description: 'transaction not permitted' },
  '91': { kind: 'error', outcome: 'unavailable', transient: true, description: 'beneficiary bank not available' },
  '96': { kind: 'error', outcome: 'unavailable', transient: true, description: 'system malfunction' },
  '97': { kind: 'error', outcome: 'timeout', transient: true, description: 'timeout waiting for the destination' },
};

/** Codes we have never seen are treated as "status unknown": transient, so the status is queried again. */
export function meaningOf(code: string | undefined): CodeMeaning {
  return (
    (code !== undefined ? NIP_CODES[code] : undefined) ?? {
      kind: 'error',
      outcome: 'unknown',
      transient: true,
      description: `unrecognised response code ${code ?? '(none)'}`,
    }
  );
}

/** HTTP statuses that mean "not now" whatever the body says: request timeout, too early, too many requests. */
export const TRANSIENT_HTTP_STATUSES: ReadonlySet<number> = new Set([408, 425, 429]);

/**
 * Transient statuses by which the provider says it did not act on the request (too early, too
 * many requests): the only answers without a verdict that leave no doubt (decisions §17). A 408,
 * a 5xx or no answer at all may follow work already done.
 */
const NOT_ACTED_HTTP_STATUSES: ReadonlySet<number> = new Set([425, 429]);

/** Whether a transient answer of this HTTP status may follow work the provider did (decisions §17). */
export function mayHaveActed(httpStatus: number): boolean {
  return !NOT_ACTED_HTTP_STATUSES.has(httpStatus);
}

/**
 * Error codes of a connection that was never made: the request cannot have reached the provider.
 * A reset, a socket closed mid-exchange or a timeout may come after the request was sent.
 */
const NEVER_CONNECTED = new Set([
  'ECONNREFUSED',
  'ENOTFOUND',
  'EAI_AGAIN',
  'EHOSTUNREACH',
  'ENETUNREACH',
  'UND_ERR_CONNECT_TIMEOUT',
]);

/** Whether a failed fetch (its error, or a cause of it) proves that no byte of the request was sent. */
export function neverSent(error: unknown): boolean {
  for (let cause = error, depth = 0; cause instanceof Error && depth < 5; depth += 1) {
    const code = (cause as Error & { code?: unknown }).code;
    if (typeof code === 'string' && NEVER_CONNECTED.has(code)) return true;
    cause = cause.cause;
  }
  return false;
}

/**
 * What a 4xx answer to a submission means. 408, 425 and 429 are transient; any other 4xx is a
 * definitive refusal only when the provider's own response code says so, and otherwise (no code,
 * a code we do not know, or a transient one) the transfer's fate is unknown: retried, then asked.
 */
export function submissionRefusal(
  httpStatus: number,
  code: string | undefined,
): { outcome: ProviderOutcome; transient: boolean; description: string } {
  if (TRANSIENT_HTTP_STATUSES.has(httpStatus)) {
    return {
      outcome: httpStatus === 408 ? 'timeout' : 'unavailable',
      transient: true,
      description: `HTTP ${httpStatus}: try again later`,
    };
  }
  const meaning = meaningOf(code);
  if (meaning.kind === 'error' && !meaning.transient) return meaning;
  return {
    outcome: meaning.kind === 'error' ? meaning.outcome : 'unknown',
    transient: true,
    description: `HTTP ${httpStatus} with response code ${code ?? '(none)'}, which does not say the transfer was refused`,
  };
}
