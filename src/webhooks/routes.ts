// Webhook endpoints (registration also at the unversioned POST /webhook-endpoints, as the
// interface shows it), deliveries with their attempts and replay, the tenant's events, and the
// catalog of event types.
import type { FastifyInstance } from 'fastify';
import type { MikroORM } from '@mikro-orm/postgresql';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import type { z } from 'zod';
import { routeSchemasOf, tenantRouteSchema } from '../http/route-docs.ts';
import { tenantOf } from '../http/auth.ts';
import { ResourceErrorSchema, envelopeSchema, ok } from '../http/envelope.ts';
import { PaginationQuery, windowOf } from '../http/pagination.ts';
import { describeEventTypes } from '../events/catalog.ts';
import {
  DeliveryList,
  DeliveryView,
  EndpointList,
  EndpointView,
  EventList,
  EventTypeList,
  EventView,
  IdParams,
  ListDeliveriesQuery,
  ListEventsQuery,
  RegisterEndpointBody,
  RegisteredEndpoint,
  ReplayAccepted,
  TestEventAccepted,
  TestEventBody,
} from './schemas.ts';
import type { WebhookService } from './service.ts';

const doc = routeSchemasOf('webhooks');
/** The schema of a route on one endpoint or delivery, by its id. */
const byId = <const Response extends object>(summary: string, response: Response) =>
  doc(summary, { params: IdParams, response });

export function webhookRoutes(app: FastifyInstance, deps: { orm: MikroORM; webhooks: WebhookService }) {
  const typed = app.withTypeProvider<ZodTypeProvider>();

  // A route on one endpoint or delivery, by its id, answered with what the service says of it.
  // Fastify cannot resolve the reply type of a schema that is a type parameter, so the answer's
  // type is checked against `View` here instead.
  const routeById = <View>(
    method: 'GET' | 'POST' | 'DELETE',
    url: string,
    summary: string,
    route: {
      answer: [status: 200 | 202, view: z.ZodType<View>];
      act: (tenantId: string, id: string) => Promise<View>;
    },
  ) => {
    const [status, view] = route.answer;
    typed.route({
      method,
      url,
      schema: byId(summary, { [status]: envelopeSchema(view) }),
      handler: async (request, reply) =>
        reply.status(status).send(ok(request, await route.act(tenantOf(request).tenantId, request.params.id))) as never,
    });
  };

  for (const url of ['/api/v1/webhook-endpoints', '/webhook-endpoints']) {
    typed.post(
      url,
      {
        schema: doc('Register a webhook endpoint', {
          description:
            'Deliveries are signed per Standard Webhooks with `signing_secret` (a `whsec_…` secret or any string). ' +
            'Live keys need an https URL on a public address; sandbox keys may also use http and loopback. ' +
            'A tenant has at most 20 endpoints (disabled ones count, deleted ones do not): the 21st is 422 `FAILED_PRECONDITION`.',
          body: RegisterEndpointBody,
          response: {
            201: envelopeSchema(RegisteredEndpoint),
            400: ResourceErrorSchema,
            401: ResourceErrorSchema,
            422: ResourceErrorSchema,
          },
        }),
      },
      async (request, reply) => {
        return reply.status(201).send(ok(request, await deps.webhooks.register(tenantOf(request), request.body)));
      },
    );
  }

  typed.get(
    '/api/v1/webhook-endpoints',
    {
      schema: doc('List webhook endpoints', {
        querystring: PaginationQuery,
        response: { 200: envelopeSchema(EndpointList) },
      }),
    },
    async (request) =>
      ok(request, await deps.webhooks.listEndpoints(tenantOf(request).tenantId, windowOf(request.query))),
  );

  routeById('GET', '/api/v1/webhook-endpoints/:id', 'One webhook endpoint (never its secret)', {
    answer: [200, EndpointView],
    act: (tenantId, id) => deps.webhooks.getEndpoint(tenantId, id),
  });

  routeById('DELETE', '/api/v1/webhook-endpoints/:id', 'Delete a webhook endpoint (its deliveries stop)', {
    answer: [200, EndpointView],
    act: (tenantId, id) => deps.webhooks.deleteEndpoint(tenantId, id),
  });

  typed.post(
    '/api/v1/webhook-endpoints/:id/test',
    {
      schema: doc('Send a test event to one endpoint', {
        description:
          'A signed `webhook.endpoint.test` event, or with `type` a sample of that event type, marked `"test": true` ' +
          'in the body, delivered to this endpoint only, now (retried on its schedule like any delivery). Test events ' +
          'move no money and appear in no statement, list, stream or metric.',
        params: IdParams,
        body: TestEventBody,
        response: { 202: envelopeSchema(TestEventAccepted) },
      }),
    },
    async (request, reply) =>
      reply
        .status(202)
        .send(
          ok(
            request,
            await deps.webhooks.sendTestEvent(tenantOf(request).tenantId, request.params.id, request.body?.type),
          ),
        ),
  );

  typed.get(
    '/api/v1/webhook-deliveries',
    {
      schema: doc('List deliveries with their attempts', {
        description:
          'Each delivery carries at most its latest 20 attempts, oldest of them first; `attempt_count` is the true ' +
          'total, and GET /api/v1/webhook-deliveries/{id} has them all.',
        querystring: ListDeliveriesQuery,
        response: { 200: envelopeSchema(DeliveryList) },
      }),
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

  routeById('GET', '/api/v1/webhook-deliveries/:id', 'One delivery with its attempts', {
    answer: [200, DeliveryView],
    act: (tenantId, id) => deps.webhooks.getDelivery(tenantId, id),
  });

  routeById('POST', '/api/v1/webhook-deliveries/:id/replay', 'Deliver the event again now (same webhook-id)', {
    answer: [202, ReplayAccepted],
    act: (tenantId, id) => deps.webhooks.replay(tenantId, id),
  });

  typed.get(
    '/api/v1/events',
    {
      schema: tenantRouteSchema('events', "The tenant's events, newest first", {
        querystring: ListEventsQuery,
        response: { 200: envelopeSchema(EventList) },
      }),
    },
    async (request) =>
      ok(
        request,
        await deps.webhooks.listEvents(
          tenantOf(request).tenantId,
          { type: request.query.type, data_id: request.query.data_id },
          windowOf(request.query),
        ),
      ),
  );

  typed.get(
    '/api/v1/events/:id',
    {
      schema: tenantRouteSchema('events', 'One event', {
        params: IdParams,
        response: { 200: envelopeSchema(EventView) },
      }),
    },
    async (request) => ok(request, await deps.webhooks.getEvent(tenantOf(request).tenantId, request.params.id)),
  );

  typed.get(
    '/api/v1/event-types',
    {
      schema: tenantRouteSchema('events', 'The event catalog: every event type, with the JSON Schema of its data', {
        description:
          'Each item is an event type an endpoint may subscribe to, what it announces, and `schema`, the JSON Schema ' +
          '(draft 2020-12) of the `data` its webhooks and `GET /api/v1/events` carry. Every payload is recorded ' +
          'through the schema shown, so none carries a field the schema does not name.',
        response: { 200: envelopeSchema(EventTypeList) },
      }),
    },
    (request) => Promise.resolve(ok(request, { items: [...describeEventTypes()] })),
  );
}
