// Request ids: a client's X-Request-Id is used when it is 1–128 of [A-Za-z0-9._:-]; otherwise
// the gateway makes one. Every response carries it back as x-request-id, and every log line of
// the request carries it as requestId.
import { randomUUID } from 'node:crypto';
import type { IncomingMessage } from 'node:http';

const CLIENT_REQUEST_ID = /^[A-Za-z0-9._:-]{1,128}$/;

export function requestIdFor(request: IncomingMessage): string {
  const sent = request.headers['x-request-id'];
  return requestIdFrom(Array.isArray(sent) ? sent[0] : sent);
}

/** The client's id when it is valid, otherwise a new one (also for requests Node could not parse). */
export function requestIdFrom(sent: string | undefined): string {
  return sent && CLIENT_REQUEST_ID.test(sent) ? sent : `req_${randomUUID().replaceAll('-', '')}`;
}
