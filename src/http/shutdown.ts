// Stopping without dropping anyone (decisions §12): once the API starts closing, requests already
// in flight run to their answer, and a request that arrives on a kept-alive connection meanwhile
// gets 503 UNAVAILABLE in the contract's envelope (with Retry-After and `connection: close`),
// never Fastify's own body. The process entry (src/server.ts) caps the whole drain at 25 s.
import type { FastifyInstance } from 'fastify';
import { unavailable } from './deadlines.ts';
import { sendError } from './error-handler.ts';

export const DRAIN_LIMIT_MS = 25_000;

export function registerGracefulClose(app: FastifyInstance): void {
  let closing = false;
  app.addHook('preClose', (done) => {
    closing = true;
    done();
  });
  app.addHook('onRequest', (request, reply, done) => {
    if (!closing) return done();
    reply.header('connection', 'close');
    sendError(request, reply, unavailable('the API is restarting; retry shortly'));
  });
  // A request that was in flight when closing began is answered, then its connection is closed
  // (a kept-alive connection would otherwise hold the server open).
  app.addHook('onSend', (_request, reply, payload, done) => {
    if (closing) reply.header('connection', 'close');
    done(null, payload);
  });
}
