// Every error the API can answer with, in one table: its HTTP status and its code in each of the
// two envelope styles of the contract (decisions §1–2). Handlers throw ApiError with a stable
// code; src/http/error-handler.ts renders it in the style of the route's area.

export const ERRORS = {
  validation_error: { status: 400, resource: 'VALIDATION_ERROR', transfer: 'validation_error' },
  unauthorized: { status: 401, resource: 'UNAUTHORIZED', transfer: 'unauthorized' },
  forbidden: { status: 403, resource: 'FORBIDDEN', transfer: 'forbidden' },
  not_found: { status: 404, resource: 'NOT_FOUND', transfer: 'not_found' },
  conflict: { status: 409, resource: 'CONFLICT', transfer: 'conflict' },
  duplicate_reference: { status: 409, resource: 'CONFLICT', transfer: 'duplicate_reference' },
  // A payout's approval already decided (decisions §20).
  already_decided: { status: 409, resource: 'CONFLICT', transfer: 'already_decided' },
  idempotency_key_in_use: { status: 409, resource: 'IDEMPOTENCY_KEY_IN_USE', transfer: 'idempotency_key_in_use' },
  failed_precondition: { status: 422, resource: 'FAILED_PRECONDITION', transfer: 'failed_precondition' },
  insufficient_balance: { status: 422, resource: 'FAILED_PRECONDITION', transfer: 'insufficient_balance' },
  invalid_account: { status: 422, resource: 'FAILED_PRECONDITION', transfer: 'invalid_account' },
  // Account-name resolution's "no such account" (decisions §11).
  // A transfer policy's saved_recipients_only refuses an account that is not saved (decisions §20).
  recipient_not_allowed: { status: 422, resource: 'FAILED_PRECONDITION', transfer: 'recipient_not_allowed' },
  account_not_found: { status: 422, resource: 'INVALID_ACCOUNT', transfer: 'invalid_account' },
  limit_exceeded: { status: 422, resource: 'FAILED_PRECONDITION', transfer: 'limit_exceeded' },
  idempotency_key_reused: { status: 422, resource: 'IDEMPOTENCY_KEY_REUSED', transfer: 'idempotency_key_reused' },
  payload_too_large: { status: 413, resource: 'PAYLOAD_TOO_LARGE', transfer: 'payload_too_large' },
  // Only for a client that does not finish sending its request headers in time (src/http/client-error.ts).
  request_timeout: { status: 408, resource: 'REQUEST_TIMEOUT', transfer: 'request_timeout' },
  rate_limited: { status: 429, resource: 'RATE_LIMITED', transfer: 'rate_limited' },
  internal: { status: 500, resource: 'INTERNAL', transfer: 'internal_error' },
  unavailable: { status: 503, resource: 'UNAVAILABLE', transfer: 'unavailable' },
} as const satisfies Record<string, { status: number; resource: string; transfer: string }>;

export type ErrorKind = keyof typeof ERRORS;

export interface FieldIssue {
  path: string;
  message: string;
}

export class ApiError extends Error {
  readonly kind: ErrorKind;
  readonly details: Record<string, unknown> | null;
  /** Extra response headers, e.g. Retry-After. */
  readonly headers: Record<string, string>;

  constructor(
    kind: ErrorKind,
    message: string,
    details: Record<string, unknown> | null = null,
    options: { headers?: Record<string, string>; cause?: unknown } = {},
  ) {
    super(message, { cause: options.cause });
    this.name = 'ApiError';
    this.kind = kind;
    this.details = details;
    this.headers = options.headers ?? {};
  }

  get status(): number {
    return ERRORS[this.kind].status;
  }

  static validation(fields: FieldIssue[], message?: string): ApiError {
    const summary = message ?? fields.map((field) => `${field.path}: ${field.message}`).join('; ');
    return new ApiError('validation_error', summary || 'invalid request', { fields });
  }

  static notFound(what: string): ApiError {
    return new ApiError('not_found', `${what} not found`);
  }
}

/** The two envelope styles; which one a route uses depends on its area (decisions §1). */
export type EnvelopeStyle = 'resource' | 'transfer';

export function envelopeStyleFor(path: string): EnvelopeStyle {
  return /^\/api\/v1\/transfers(\/|\?|$)/.test(path) ? 'transfer' : 'resource';
}

/** What a resource-style error's `meta` says about the request (decisions §1). */
export interface RequestMeta {
  path: string;
  method: string;
  requestId: string;
}

export function renderError(error: ApiError, style: EnvelopeStyle, request: RequestMeta): Record<string, unknown> {
  const entry = ERRORS[error.kind];
  if (style === 'transfer') {
    return {
      success: false,
      error: {
        code: entry.transfer,
        message: error.message,
        status: entry.status,
        ...(error.details ? { details: error.details } : {}),
      },
    };
  }
  return {
    error: { code: entry.resource, message: error.message, details: error.details },
    meta: { path: request.path, method: request.method, requestId: request.requestId },
  };
}
