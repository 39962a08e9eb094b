// The event stream feature (decisions §15): the tenant's events, live, over GET
// /api/v1/events/stream. It maps the event log's entity (src/events/events.ts, the outbox every
// feature records into), which the events feature's shared module owns and no feature's manifest
// else declares.
import type { Feature } from '../feature.ts';
import { Event } from '../events/events.ts';
import { eventStreamRoutes } from './routes.ts';
import { EventStreamHub } from './stream.ts';

declare module 'fastify' {
  interface FastifyInstance {
    /** The event streams open on this API process (src/event-stream/stream.ts). */
    eventStreams: EventStreamHub;
  }
}

export const eventStreamFeature: Feature = {
  name: 'event-stream',
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
