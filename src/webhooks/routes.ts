// Webhook endpoints (registration also at the unversioned POST /webhook-endpoints, as the
// interface shows it), deliveries with their attempts and replay, and the tenant's events.
import type { FastifyInstance } from 'fastify';
import type { MikroORM } from '@mikro-orm/postgresql';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import { z } from 'zod';
import { tenantOf } from '../http/auth.ts';
import { ResourceErrorSchema, envelopeSchema, ok } from '../http/envelope.ts';
import { PaginationQuery, windowOf } from '../http/pagination.ts';
import { EVENT_TYPES } from './event-types.ts';
import type { WebhookService } from './service.ts';

const EventName = z.enum([...EVENT_TYPES, '*'], {
  error: `must be one of ${EVENT_TYPES.join(', ')} or *`,
});

export const RegisterEndpointBody = z.object({
  url: z.string({ error: 'is required' }).min(1, 'is required').max(2_048, 'must be at most 2048 characters'),
  events: z.array(EventName, { error: 'must be a list of event names' }).min(1, 'must name at least one event'),
  signing_secret: z
    .string({ error: 'is required' })
    .min(16, 'must be at least 16 characters')
    .max(256, 'must be at most 256 characters')
    .refine(
      (secret) => !secret.startsWith('whsec_') || Buffer.from(secret.slice(6), 'base64').length >= 16,
      'a whsec_ secret must carry at least 16 base64-encoded bytes',
    ),
});

const uuidParam = z.object({ id: z.string() });
const security = [{ apiKey: [] }];

export function webhookRoutes(app: FastifyInstance, deps: { orm: MikroORM; webhooks: WebhookService }) {
  const typed = app.withTypeProvider<ZodTypeProvider>();

  for (const url of ['/api/v1/webhook-endpoints', '/webhook-endpoints']) {
    typed.post(
      url,
      {
        schema: {
          tags: ['webhooks'],
          summary: 'Register a webhook endpoint',
          description:
            'Deliveries are signed per Standard Webhooks with `signing_secret` (a `whsec_…` secret or any string). ' +
            'Live keys need an https URL on a public address; sandbox keys may also use http and loopback.',
          security,
          body: RegisterEndpointBody,
          response: { 201: envelopeSchema(z.unknown()), 400: ResourceErrorSchema, 401: ResourceErrorSchema },
        },
      },
      async (request, reply) => {
        return reply.status(201).send(ok(request, await deps.webhooks.register(tenantOf(request), request.body)));
      },
    );
  }

  typed.get(
    '/api/v1/webhook-endpoints',
    { schema: { tags: ['webhooks'], summary: 'List webhook endpoints', security, querystring: PaginationQuery } },
    async (request) =>
      ok(request, await deps.webhooks.listEndpoints(tenantOf(request).tenantId, windowOf(request.query))),
  );

  typed.delete(
    '/api/v1/webhook-endpoints/:id',
    {
      schema: {
        tags: ['webhooks'],
        summary: 'Delete a webhook endpoint (its deliveries stop)',
        security,
        params: uuidParam,
      },
    },
    async (request) => ok(request, await deps.webhooks.deleteEndpoint(tenantOf(request).tenantId, request.params.id)),
  );

  typed.get(
    '/api/v1/webhook-deliveries',
    {
      schema: {
        tags: ['webhooks'],
        summary: 'List deliveries with their attempts',
        security,
        querystring: PaginationQuery.extend({
          event_id: z.string().optional(),
          endpoint_id: z.string().optional(),
          status: z
            .enum(['queued', 'retrying', 'succeeded', 'failed'], {
              error: 'must be queued, retrying, succeeded or failed',
            })
            .optional(),
        }),
      },
    },
    async (request) => {
      const { event_id, endpoint_id, status } = request.query;
      return ok(
        request,
        await deps.webhooks.listDeliveries(
          tenantOf(request).tenantId,
          { event_id, endpoint_id, status },
          windowOf(request.query),
        ),
      );
    },
  );

  typed.get(
    '/api/v1/webhook-deliveries/:id',
    { schema: { tags: ['webhooks'], summary: 'One delivery with its attempts', security, params: uuidParam } },
    async (request) => ok(request, await deps.webhooks.getDelivery(tenantOf(request).tenantId, request.params.id)),
  );

  typed.post(
    '/api/v1/webhook-deliveries/:id/replay',
    {
      schema: {
        tags: ['webhooks'],
        summary: 'Deliver the event again now (same webhook-id)',
        security,
        params: uuidParam,
      },
    },
    async (request, reply) =>
      reply.status(202).send(ok(request, await deps.webhooks.replay(tenantOf(request).tenantId, request.params.id))),
  );

  typed.get(
    '/api/v1/events',
    {
      schema: {
        tags: ['events'],
        summary: "The tenant's events, newest first",
        security,
        querystring: PaginationQuery.extend({ type: z.string().optional() }),
      },
    },
    async (request) =>
      ok(
        request,
        await deps.webhooks.listEvents(
          tenantOf(request).tenantId,
          { type: request.query.type },
          windowOf(request.query),
        ),
      ),
  );

  typed.get(
    '/api/v1/events/:id',
    { schema: { tags: ['events'], summary: 'One event', security, params: uuidParam } },
    async (request) => ok(request, await deps.webhooks.getEvent(tenantOf(request).tenantId, request.params.id)),
  );
}
