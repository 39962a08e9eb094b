import { describe, expect, it } from 'vitest';
import { ApiError, ERRORS, type ErrorKind, envelopeStyleFor, renderError } from '../../src/http/errors.ts';
import { NamespaceNotFoundError } from '@temporalio/client';
import { canonicalPathFor, overlongParameter, toApiError } from '../../src/http/error-handler.ts';
import { clientErrorFor, describeRawRequest } from '../../src/http/client-error.ts';

const request = { path: '/api/v1/x', method: 'POST', requestId: 'req-1' };

describe('error table (decisions §2)', () => {
  // By status, as decisions §2 groups them: each kind's resource-style and transfer-style codes.
  const byStatus: Record<number, Partial<Record<ErrorKind, [resource: string, transfer: string]>>> = {
    400: { validation_error: ['VALIDATION_ERROR', 'validation_error'] },
    401: { unauthorized: ['UNAUTHORIZED', 'unauthorized'] },
    403: { forbidden: ['FORBIDDEN', 'forbidden'] },
    404: { not_found: ['NOT_FOUND', 'not_found'] },
    408: { request_timeout: ['REQUEST_TIMEOUT', 'request_timeout'] },
    409: {
      conflict: ['CONFLICT', 'conflict'],
      duplicate_reference: ['CONFLICT', 'duplicate_reference'],
      idempotency_key_in_use: ['IDEMPOTENCY_KEY_IN_USE', 'idempotency_key_in_use'],
    },
    413: { payload_too_large: ['PAYLOAD_TOO_LARGE', 'payload_too_large'] },
    422: {
      failed_precondition: ['FAILED_PRECONDITION', 'failed_precondition'],
      insufficient_balance: ['FAILED_PRECONDITION', 'insufficient_balance'],
      invalid_account: ['FAILED_PRECONDITION', 'invalid_account'],
      limit_exceeded: ['FAILED_PRECONDITION', 'limit_exceeded'],
      idempotency_key_reused: ['IDEMPOTENCY_KEY_REUSED', 'idempotency_key_reused'],
    },
    429: { rate_limited: ['RATE_LIMITED', 'rate_limited'] },
    500: { internal: ['INTERNAL', 'internal_error'] },
    503: { unavailable: ['UNAVAILABLE', 'unavailable'] },
  };
  const cases = Object.entries(byStatus).flatMap(([status, kinds]) =>
    Object.entries(kinds).map(([kind, [resource, transfer]]) => [kind, Number(status), resource, transfer]),
  ) as [ErrorKind, number, string, string][];

  it.each(cases)('%s → %i, %s / %s', (kind, status, resource, transfer) => {
    expect(ERRORS[kind]).toEqual({ status, resource, transfer });
  });
});

describe('renderError', () => {
  it('renders the resource style with details null when there are none, and the request id in meta', () => {
    expect(renderError(new ApiError('not_found', 'account not found'), 'resource', request)).toEqual({
      error: { code: 'NOT_FOUND', message: 'account not found', details: null },
      meta: { path: '/api/v1/x', method: 'POST', requestId: 'req-1' },
    });
  });

  it('renders the transfer style with status, and details only when present', () => {
    expect(
      renderError(
        new ApiError('insufficient_balance', 'short', { required: 501_000, available: 500_999 }),
        'transfer',
        request,
      ),
    ).toEqual({
      success: false,
      error: {
        code: 'insufficient_balance',
        message: 'short',
        status: 422,
        details: { required: 501_000, available: 500_999 },
      },
    });
    expect(renderError(new ApiError('invalid_account', 'no such account'), 'transfer', request)).toEqual({
      success: false,
      error: { code: 'invalid_account', message: 'no such account', status: 422 },
    });
  });

  it('lists bad fields under details.fields', () => {
    const error = ApiError.validation([{ path: 'narration', message: 'must be at most 100 characters' }]);
    expect(error.message).toBe('narration: must be at most 100 characters');
    expect(error.details).toEqual({ fields: [{ path: 'narration', message: 'must be at most 100 characters' }] });
  });
});

/** What `read` makes of each path: a table of `path → expected`. */
function readsEach(read: (path: string) => string | undefined, cases: [path: string, expected: string][]): void {
  it.each(cases)('%s → %s', (path, expected) => {
    expect(read(path)).toBe(expected);
  });
}

describe('envelopeStyleFor', () => {
  readsEach(envelopeStyleFor, [
    ['/api/v1/transfers', 'transfer'],
    ['/api/v1/transfers/abc', 'transfer'],
    ['/api/v1/transfers?page=2', 'transfer'],
    ['/api/v1/transfersx', 'resource'],
    ['/api/v1/wallet', 'resource'],
    ['/api/v1/virtual-accounts', 'resource'],
  ]);
});

describe('canonicalPathFor', () => {
  readsEach(canonicalPathFor, [
    ['/v1/transfers', '/api/v1/transfers'],
    ['/v1/cards/c1/lock', '/api/v1/cards/c1/lock'],
    ['/api/transfers', '/api/v1/transfers'],
    ['/api/virtual-accounts/x', '/api/v1/virtual-accounts/x'],
  ]);

  it.each(['/api/v1/transfers', '/health', '/docs', '/apiary', '/v10/x'])('%s is not a legacy form', (path) => {
    expect(canonicalPathFor(path)).toBeUndefined();
  });
});

describe('toApiError', () => {
  it('turns unknown failures into a bare internal error, keeping the cause', () => {
    const cause = new Error('pg: password authentication failed for user "gateway"');
    const mapped = toApiError(cause);
    expect(mapped.kind).toBe('internal');
    expect(mapped.message).toBe('internal error');
    expect(mapped.cause).toBe(cause);
  });

  it("answers 503 with Retry-After when Temporal says the namespace is not found (a stalled dev server's moment), not 500", () => {
    // What signalWithStart threw for a card funding after Temporal's dev server was paused and resumed.
    const cause = new NamespaceNotFoundError('default');
    const mapped = toApiError(cause);
    expect(mapped.kind).toBe('unavailable');
    expect(mapped.status).toBe(503);
    expect(mapped.cause).toBe(cause);
    expect(toApiError(new Error('card operation failed', { cause })).kind).toBe('unavailable');
  });

  it('maps body-parser failures', () => {
    expect(toApiError({ code: 'FST_ERR_CTP_INVALID_JSON_BODY', statusCode: 400 }).kind).toBe('validation_error');
    expect(toApiError({ code: 'FST_ERR_CTP_BODY_TOO_LARGE', statusCode: 413 }).kind).toBe('payload_too_large');
    expect(toApiError({ code: 'FST_ERR_CTP_INVALID_MEDIA_TYPE', statusCode: 415 }).details).toEqual({
      fields: [{ path: 'content-type', message: 'must be application/json' }],
    });
  });
});

describe('overlongParameter', () => {
  const patterns = ['/api/v1/cards', '/api/v1/cards/:card_id', '/api/v1/cards/:card_id/lock', '/health'];
  const long = 'c'.repeat(101);

  it.each([
    [`/api/v1/cards/${long}`, 'card_id'],
    [`/api/v1/cards/${long}/lock`, 'card_id'],
    [`/api/v1/cards/${'%41'.repeat(101)}`, 'card_id'],
  ])('%s names %s', (path, name) => {
    expect(overlongParameter(patterns, path)).toBe(name);
  });

  it.each([`/api/v1/cards/${'c'.repeat(100)}`, `/api/v1/${long}`, `/api/v1/cards/${long}/unlock`])(
    '%s names no parameter',
    (path) => {
      expect(overlongParameter(patterns, path)).toBeUndefined();
    },
  );
});

describe('client errors (refused by the HTTP parser)', () => {
  it.each([
    ['ERR_HTTP_REQUEST_TIMEOUT', 408, 'request_timeout'],
    ['HPE_HEADER_OVERFLOW', 400, 'validation_error'],
    ['HPE_INVALID_METHOD', 400, 'validation_error'],
    [undefined, 400, 'validation_error'],
  ])('%s → %i %s', (code, status, kind) => {
    const error = clientErrorFor(code);
    expect([error.status, error.kind]).toEqual([status, kind]);
  });

  it("reads the request line and the client's X-Request-Id from the raw bytes", () => {
    const raw = Buffer.from(
      'post /api/v1/wallet?x=1 HTTP/1.1\r\nHost: a\r\nX-Request-Id:  trace-9 \r\nbad line\r\n\r\n',
    );
    expect(describeRawRequest(raw)).toEqual({ method: 'POST', path: '/api/v1/wallet', requestId: 'trace-9' });
    expect(describeRawRequest(Buffer.from('\u0001\u0002'))).toEqual({ method: '', path: '' });
    expect(describeRawRequest(undefined)).toEqual({ method: '', path: '' });
  });
});
