// What a failed call gives a tenant: one discriminated union over the gateway's two error envelopes
// (decisions §1), a network failure, and an answer in neither envelope (a proxy's HTML 502). Each
// variant keeps what its envelope says: resource errors their `details` and `meta`, transfer
// errors their optional `details`. The codes are the gateway's table (src/http/errors.ts, kept
// equal by test/unit/client.test.ts); a code added later still types as a string.

/** Codes of the resource areas' envelope (wallet, virtual accounts, cards, identity, webhooks, events, sandbox). */
export const RESOURCE_ERROR_CODES = [
  'VALIDATION_ERROR',
  'UNAUTHORIZED',
  'FORBIDDEN',
  'NOT_FOUND',
  'CONFLICT',
  'IDEMPOTENCY_KEY_IN_USE',
  'FAILED_PRECONDITION',
  'INVALID_ACCOUNT',
  'IDEMPOTENCY_KEY_REUSED',
  'PAYLOAD_TOO_LARGE',
  'REQUEST_TIMEOUT',
  'RATE_LIMITED',
  'INTERNAL',
  'UNAVAILABLE',
] as const;

/** Codes of the transfers' envelope (`/api/v1/transfers…`). */
export const TRANSFER_ERROR_CODES = [
  'validation_error',
  'unauthorized',
  'forbidden',
  'not_found',
  'conflict',
  'duplicate_reference',
  'already_decided',
  'idempotency_key_in_use',
  'failed_precondition',
  'insufficient_balance',
  'invalid_account',
  'recipient_not_allowed',
  'limit_exceeded',
  'idempotency_key_reused',
  'payload_too_large',
  'request_timeout',
  'rate_limited',
  'internal_error',
  'unavailable',
] as const;

// `string & {}` keeps the literal codes in editors' completion while a newer gateway's code still fits.
export type ResourceErrorCode = (typeof RESOURCE_ERROR_CODES)[number] | (string & {});
export type TransferErrorCode = (typeof TRANSFER_ERROR_CODES)[number] | (string & {});

/** `{error:{code, message, details}, meta:{path, method, requestId}}`, codes in UPPER_CASE. */
export interface ResourceError {
  kind: 'resource';
  status: number;
  code: ResourceErrorCode;
  message: string;
  /** `{fields:[{path, message}]}` for a validation error; what else the code carries; or null. */
  details: Record<string, unknown> | null;
  requestId: string;
  path: string;
  method: string;
  /** Seconds, from `Retry-After` (429, 503). */
  retryAfter?: number;
}

/** `{success:false, error:{code, message, status, details?}}`, codes in lower_case. */
export interface TransferError {
  kind: 'transfer';
  status: number;
  code: TransferErrorCode;
  message: string;
  details?: Record<string, unknown>;
  /** From the `x-request-id` header: this envelope has no meta. */
  requestId: string | undefined;
  retryAfter?: number;
}

/** No answer at all: refused or reset connection, DNS, TLS, an abort signal. */
export interface NetworkError {
  kind: 'network';
  status: undefined;
  code: 'network_error';
  message: string;
  cause: unknown;
}

/** An answer in neither envelope: a balancer's or proxy's page, a health check's 503, a cut body. */
export interface UnexpectedResponseError {
  kind: 'unexpected';
  status: number;
  code: 'unexpected_response';
  message: string;
  /** The body, parsed as JSON when it was JSON. */
  body: unknown;
  requestId: string | undefined;
}

export type GatewayError = ResourceError | TransferError | NetworkError | UnexpectedResponseError;

/** Thrown where a value has to be returned (`paginate`, `unwrap`): the GatewayError in `error`. */
export class GatewayClientError extends Error {
  readonly error: GatewayError;

  constructor(error: GatewayError) {
    super(
      error.status === undefined
        ? `${error.code}: ${error.message}`
        : `${error.status} ${error.code}: ${error.message}`,
      error.kind === 'network' ? { cause: error.cause } : {},
    );
    this.name = 'GatewayClientError';
    this.error = error;
  }
}

const isRecord = (value: unknown): value is Record<string, unknown> =>
  typeof value === 'object' && value !== null && !Array.isArray(value);

function retryAfterOf(response: Response): { retryAfter?: number } {
  const seconds = Number(response.headers.get('retry-after') ?? Number.NaN);
  return Number.isFinite(seconds) ? { retryAfter: seconds } : {};
}

/** The GatewayError of a non-2xx answer, from its body (parsed as openapi-fetch parses it). */
export function errorOfResponse(response: Response, body: unknown): GatewayError {
  const requestId = response.headers.get('x-request-id') ?? undefined;
  const error = isRecord(body) ? body.error : undefined;
  if (isRecord(error) && typeof error.code === 'string' && typeof error.message === 'string') {
    if (isRecord(body) && body.success === false) {
      return {
        kind: 'transfer',
        status: response.status,
        code: error.code,
        message: error.message,
        ...(isRecord(error.details) ? { details: error.details } : {}),
        requestId,
        ...retryAfterOf(response),
      };
    }
    const meta = isRecord(body) && isRecord(body.meta) ? body.meta : {};
    if (typeof meta.requestId === 'string') {
      return {
        kind: 'resource',
        status: response.status,
        code: error.code,
        message: error.message,
        details: isRecord(error.details) ? error.details : null,
        requestId: meta.requestId,
        path: typeof meta.path === 'string' ? meta.path : '',
        method: typeof meta.method === 'string' ? meta.method : '',
        ...retryAfterOf(response),
      };
    }
  }
  return {
    kind: 'unexpected',
    status: response.status,
    code: 'unexpected_response',
    message: `HTTP ${response.status} in neither of the gateway's error envelopes`,
    body,
    requestId,
  };
}

export function networkError(cause: unknown): NetworkError {
  const message = cause instanceof Error ? cause.message : String(cause);
  // Node's fetch says only "fetch failed"; the reason (ECONNREFUSED…) is its cause.
  const reason = cause instanceof Error && cause.cause instanceof Error ? `: ${cause.cause.message}` : '';
  return { kind: 'network', status: undefined, code: 'network_error', message: message + reason, cause };
}
