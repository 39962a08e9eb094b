// Request ids: a client's X-Request-Id is used when it is 1–128 of [A-Za-z0-9._:-]; otherwise
// the gateway makes one. Every response carries it back as x-request-id, and every log line of
// the request carries it as requestId.
import { randomUUID } from 'node:crypto';
import type { IncomingMessage } from 'node:http';

const CLIENT_REQUEST_ID = /^[A-Za-z0-9._:-]{1,128}$/;

export function requestIdFor(request: IncomingMessage): string {
  const sent = request.headers['x-request-id'];
  const value = Array.isArray(sent) ? sent[0] : sent;
  return value && CLIENT_REQUEST_ID.test(value) ? value : `req_${randomUUID().replaceAll('-', '')}`;
}
