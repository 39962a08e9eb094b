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
  RecoverAccepted,
  RecoverBody,
  RegisterEndpointBody,
  RegisteredEndpoint,
  ReplayAccepted,
  RotateSecretBody,
  TestEventAccepted,
  TestEventBody,
  UpdateEndpointBody,
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

  typed.patch(
    '/api/v1/webhook-endpoints/:id',
    {
      schema: doc('Change a webhook endpoint: its URL, its events, or whether it is enabled', {
        description:
          'Only what is given changes. A new `url` is checked as at registration (400 naming `url`). ' +
          '`enabled: false` disables the endpoint: nothing is attempted and nothing fails, its deliveries wait, and ' +
          '`webhook.endpoint.disabled` goes to the other endpoints and streams. `enabled: true` enables it again, ' +
          'and the deliveries that waited go out.',
        params: IdParams,
        body: UpdateEndpointBody,
        response: { 200: envelopeSchema(EndpointView) },
      }),
    },
    async (request) =>
      ok(request, await deps.webhooks.updateEndpoint(tenantOf(request), request.params.id, request.body)),
  );

  typed.post(
    '/api/v1/webhook-endpoints/:id/rotate-secret',
    {
      schema: doc("Replace a webhook endpoint's signing secret, with an overlap", {
        description:
          'From now on deliveries are signed with `signing_secret`; for `overlap_hours` (0 to 72, default 24) the ' +
          'replaced secret signs too: `webhook-signature` carries two space-separated `v1,…` signatures, the new ' +
          "one's first, and a receiver holding either secret verifies. Rotating again drops the oldest secret.",
        params: IdParams,
        body: RotateSecretBody,
        response: { 200: envelopeSchema(EndpointView) },
      }),
    },
    async (request) =>
      ok(request, await deps.webhooks.rotateSecret(tenantOf(request).tenantId, request.params.id, request.body)),
  );

  typed.post(
    '/api/v1/webhook-endpoints/:id/recover',
    {
      schema: doc('Deliver again every delivery that has not succeeded since a time', {
        description:
          'Every delivery of this endpoint created since `since` (at most 14 days back, else 400) that failed, or ' +
          'is retrying after a failed attempt, is delivered again now, as a replay is (same `webhook-id`, a new ' +
          '`replay_id`). Answers how many. A disabled endpoint → 422 `FAILED_PRECONDITION`: enable it first.',
        params: IdParams,
        body: RecoverBody,
        response: { 202: envelopeSchema(RecoverAccepted) },
      }),
    },
    async (request, reply) =>
      reply
        .status(202)
        .send(ok(request, await deps.webhooks.recover(tenantOf(request).tenantId, request.params.id, request.body))),
  );

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
