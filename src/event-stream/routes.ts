// GET /api/v1/events/stream (decisions §15): the tenant's new events as server-sent events,
// resumed after `Last-Event-ID` (or `?after=`). The answer is refused with the contract's envelope
// while it can be (an unknown or another tenant's event id → 400, too many streams → 429); once
// accepted the response is handed to the stream hub (./stream.ts), which writes it until either
// side ends it.
import type { FastifyInstance } from 'fastify';
import type { MikroORM } from '@mikro-orm/postgresql';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import { z } from 'zod';
import { tenantOf } from '../http/auth.ts';
import { ApiError } from '../http/errors.ts';
import { isUuid } from '../http/ids.ts';
import { tenantRouteSchema } from '../http/route-docs.ts';
import { positionOf } from './positions.ts';
import { type EventStreamHub, StreamLimitError } from './stream.ts';

const StreamQuery = z.object({
  after: z.string().max(100).optional().meta({ description: 'An event id the stream sent: resume after it' }),
});

export function eventStreamRoutes(app: FastifyInstance, deps: { orm: MikroORM; streams: EventStreamHub }) {
  app.withTypeProvider<ZodTypeProvider>().get(
    '/api/v1/events/stream',
    {
      schema: tenantRouteSchema('events', "The tenant's new events, as they happen (text/event-stream)", {
        description:
          'Each event as `id: <event id>`, `event: <type>`, `data: <the webhook body>`, in commit order. ' +
          'Reconnect with `Last-Event-ID` (or `?after=`) set to the last id received to resume after it, with ' +
          'nothing lost or repeated, on any API replica. A comment line every 15 s keeps the connection open. ' +
          'At most 5 open streams per API key (429 beyond); a client that reads nothing for 10 s is disconnected.',
        querystring: StreamQuery,
        response: {
          200: {
            description: 'The stream: `id:`, `event:` and `data:` lines per event, and comment lines',
            content: { 'text/event-stream': { schema: z.string() } },
          },
        },
      }),
    },
    async (request, reply) => {
      const key = tenantOf(request);
      const header = request.headers['last-event-id'];
      const [field, lastId] =
        typeof header === 'string' && header !== ''
          ? (['Last-Event-ID', header] as const)
          : (['after', request.query.after] as const);
      let after = null;
      if (lastId !== undefined) {
        if (!isUuid(lastId)) throw ApiError.validation([{ path: field, message: 'must be the id of an event' }]);
        after = await positionOf(deps.orm.em.fork(), key.tenantId, lastId);
        if (!after) {
          throw ApiError.validation([
            { path: field, message: `no event ${lastId} of this tenant: resume after an id the stream sent` },
          ]);
        }
      }
      let release;
      try {
        release = await deps.streams.reserve(key.keyId, key.tenantId);
      } catch (error) {
        if (error instanceof StreamLimitError)
          throw new ApiError('rate_limited', error.message, { limit: error.limit });
        throw error;
      }
      const raw = reply.raw;
      // The response is ours from here: taken from Fastify only once the stream is registered, so
      // that a failure before that (the database away) is still answered in the contract's envelope.
      const begin = () => {
        reply.hijack();
        // A client already gone is written nothing: the hub sees it gone and ends its stream.
        if (raw.destroyed) return;
        raw.writeHead(200, {
          ...(reply.getHeaders() as Record<string, string>),
          'content-type': 'text/event-stream; charset=utf-8',
          // As every API answer (src/http/security-headers.ts, which a hijacked answer skips).
          'cache-control': 'no-store, no-transform',
          'x-content-type-options': 'nosniff',
          // Proxies (nginx) must pass each event on as it comes.
          'x-accel-buffering': 'no',
        });
        raw.write(': stream open\n\n');
        raw.socket?.setNoDelay(true);
      };
      try {
        await deps.streams.open({ tenantId: key.tenantId, keyId: key.keyId, after, sink: raw, release, begin });
      } catch (error) {
        release();
        throw error;
      }
    },
  );
}
