// The event log (the outbox every feature records into, decisions §7) and its stream to tenants
// (GET /api/v1/events/stream, decisions §15).
import type { Feature } from '../feature.ts';
import { Event } from './events.ts';
import { eventStreamRoutes } from './routes.ts';
import { EventStreamHub } from './stream.ts';

declare module 'fastify' {
  interface FastifyInstance {
    /** The event streams open on this API process (src/events/stream.ts). */
    eventStreams: EventStreamHub;
  }
}

export const eventsFeature: Feature = {
  name: 'events',
  entities: [Event],
  api(app, { config, orm, metrics }) {
    const streams = new EventStreamHub({
      orm,
      maxPerKey: config.STREAM_MAX_PER_KEY,
      maxBufferBytes: config.STREAM_BUFFER_BYTES,
      log: (message, fields) => app.log.warn(fields ?? {}, message),
    });
    // Before the server stops taking connections: open streams would hold it open for ever.
    app.decorate('eventStreams', streams);
    metrics.watch(
      'gateway_event_streams_open',
      'Event streams (GET /api/v1/events/stream) open on this API process',
      () => streams.size,
    );
    app.addHook('preClose', async () => streams.close());
    eventStreamRoutes(app, { orm, streams });
  },
};
