// Requests that Node's HTTP parser refuses before Fastify sees them: a malformed request line or
// header, a URL and headers over Node's 16 KB limit, a request not received in time. Fastify's
// `clientErrorHandler` gets only the socket, so the response is written here byte by byte, in the
// resource-style error envelope and with an x-request-id, like every other error (decisions §12).
import { STATUS_CODES, maxHeaderSize } from 'node:http';
import type { Socket } from 'node:net';
import type { FastifyInstance } from 'fastify';
import { ApiError, renderError } from './errors.ts';
import { requestIdFrom } from './request-id.ts';

/** Longest path echoed back in `meta.path`; the rest of a refused request is not worth keeping. */
const MAX_ECHOED_PATH = 1024;

export interface RawRequestInfo {
  method: string;
  path: string;
  /** The client's X-Request-Id, when the bytes received so far hold one. */
  requestId?: string;
}

/** What can be read from the bytes Node had received when it gave up on the request. */
export function describeRawRequest(raw: unknown): RawRequestInfo {
  if (!Buffer.isBuffer(raw)) return { method: '', path: '' };
  const text = raw.toString('latin1');
  const line = /^([A-Za-z]{1,20}) (\S+)/.exec(text);
  const sentId = /\r\nx-request-id:[ \t]*([^\r\n]*?)[ \t]*\r\n/i.exec(text)?.[1];
  return {
    method: line?.[1]?.toUpperCase() ?? '',
    path: (line?.[2]?.split('?')[0] ?? '').slice(0, MAX_ECHOED_PATH),
    ...(sentId ? { requestId: sentId } : {}),
  };
}

/** The envelope's error for a parser failure or timeout, by Node's error code. */
export function clientErrorFor(code: string | undefined): ApiError {
  switch (code) {
    case 'ERR_HTTP_REQUEST_TIMEOUT':
      return new ApiError('request_timeout', 'the request was not received in time');
    case 'HPE_HEADER_OVERFLOW':
      return ApiError.validation(
        [{ path: 'request', message: `URL and headers must be at most ${maxHeaderSize} bytes together` }],
        `request URL or headers too long (at most ${maxHeaderSize} bytes together)`,
      );
    default:
      return ApiError.validation(
        [{ path: 'request', message: 'is not a well-formed HTTP/1.1 request' }],
        'malformed HTTP request',
      );
  }
}

/** The full HTTP/1.1 response for a refused request, and its request id; the connection closes after it. */
export function clientErrorResponse(error: { code?: string; rawPacket?: unknown }): {
  requestId: string;
  bytes: string;
} {
  const apiError = clientErrorFor(error.code);
  const described = describeRawRequest(error.rawPacket);
  const requestId = requestIdFrom(described.requestId);
  const body = JSON.stringify(
    renderError(apiError, 'resource', { path: described.path, method: described.method, requestId }),
  );
  const bytes = [
    `HTTP/1.1 ${apiError.status} ${STATUS_CODES[apiError.status] ?? 'Error'}`,
    'content-type: application/json; charset=utf-8',
    `content-length: ${Buffer.byteLength(body)}`,
    `x-request-id: ${requestId}`,
    'connection: close',
    '',
    body,
  ].join('\r\n');
  return { requestId, bytes };
}

/** Fastify's `clientErrorHandler` option; Fastify calls it with the app as `this`. */
export function clientErrorHandler(
  this: FastifyInstance,
  error: Error & { code?: string; rawPacket?: unknown },
  socket: Socket,
): void {
  // A reset connection has nobody to answer.
  if (error.code === 'ECONNRESET' || socket.destroyed) return;
  // As Node's own handler: never write into a response that has already started on this socket.
  const inFlight = (socket as Socket & { _httpMessage?: { headersSent?: boolean } })._httpMessage;
  if (!socket.writable || inFlight?.headersSent) {
    socket.destroy(error);
    return;
  }
  const { requestId, bytes } = clientErrorResponse(error);
  this.log.info({ requestId, code: error.code }, 'malformed or timed-out request refused');
  socket.end(bytes, () => socket.destroy());
}

/**
 * An answer given before the request's body has arrived (a 401 at onRequest, a 429…) closes the
 * connection: otherwise Node goes on reading the body, and a client that keeps dribbling it would
 * get a second, unasked-for answer (408) on the same connection when REQUEST_TIMEOUT_MS passes.
 */
export function registerEarlyAnswerClose(app: FastifyInstance): void {
  app.addHook('onSend', async (request, reply, payload) => {
    const raw = request.raw;
    const hasBody = raw.headers['transfer-encoding'] !== undefined || Number(raw.headers['content-length'] ?? 0) > 0;
    if (hasBody && !raw.complete) reply.header('connection', 'close');
    return payload;
  });
}
