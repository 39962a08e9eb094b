// Webhooks' and events' request and response shapes. Types come from these schemas (z.infer), so a
// view and its documented shape cannot drift.
import { z } from 'zod';
import { timestampFields } from '../http/view-fields.ts';
import { PaginationQuery, listOf } from '../http/pagination.ts';
import { type EventType, eventTypes, isEventType } from '../events/event-types.ts';

/** The catalog's event types (and `extra`) as a zod enum, made when first used: by then every feature has declared its own. */
const eventTypeEnum = <Extra extends string>(extra: readonly Extra[], error?: () => string) =>
  z.lazy(() =>
    z.enum([...eventTypes(), ...extra] as [EventType | Extra, ...(EventType | Extra)[]], error && { error: error() }),
  );

const EventName = eventTypeEnum(['*'], () => `must be one of ${eventTypes().join(', ')} or *`);

const EndpointUrl = z
  .string({ error: 'is required' })
  .min(1, 'is required')
  .max(2_048, 'must be at most 2048 characters');
const EndpointEvents = z
  .array(EventName, { error: 'must be a list of event names' })
  .min(1, 'must name at least one event');
const SigningSecret = z
  .string({ error: 'is required' })
  .min(16, 'must be at least 16 characters')
  .max(256, 'must be at most 256 characters')
  .refine(
    (secret) => !secret.startsWith('whsec_') || Buffer.from(secret.slice(6), 'base64').length >= 16,
    'a whsec_ secret must carry at least 16 base64-encoded bytes',
  );

export const RegisterEndpointBody = z.object({
  url: EndpointUrl,
  events: EndpointEvents,
  signing_secret: SigningSecret,
});
export type RegisterEndpointBody = z.infer<typeof RegisterEndpointBody>;

/** PATCH: what is given changes (decisions §21); a new URL is checked as at registration. */
export const UpdateEndpointBody = z
  .strictObject(
    {
      url: EndpointUrl.optional(),
      events: EndpointEvents.optional(),
      enabled: z.boolean({ error: 'must be true or false' }).optional(),
    },
    { error: 'must be an object with url, events or enabled only' },
  )
  .refine((body) => body.url !== undefined || body.events !== undefined || body.enabled !== undefined, {
    error: 'must give url, events or enabled',
  });
export type UpdateEndpointBody = z.infer<typeof UpdateEndpointBody>;

/** The most a rotation's overlap may last, in hours, and what it lasts unless told. */
export const MAX_OVERLAP_HOURS = 72;
export const DEFAULT_OVERLAP_HOURS = 24;

export const RotateSecretBody = z.strictObject(
  {
    signing_secret: SigningSecret,
    overlap_hours: z
      .number({ error: `must be a number of hours from 0 to ${MAX_OVERLAP_HOURS}` })
      .int('must be a whole number of hours')
      .min(0, 'must be at least 0')
      .max(MAX_OVERLAP_HOURS, `must be at most ${MAX_OVERLAP_HOURS}`)
      .default(DEFAULT_OVERLAP_HOURS)
      .meta({ description: 'How long the replaced secret still signs beside the new one (default 24)' }),
  },
  { error: 'must be an object with signing_secret and overlap_hours only' },
);
export type RotateSecretBody = z.infer<typeof RotateSecretBody>;

/** How far back recover-since may reach (decisions §21). */
export const RECOVER_MAX_DAYS = 14;

export const RecoverBody = z.strictObject(
  {
    since: z.iso
      .datetime({ offset: true, error: 'must be an ISO 8601 date-time, e.g. 2026-11-23T08:00:00Z' })
      .meta({ description: `Deliveries created since then (at most ${RECOVER_MAX_DAYS} days back)` }),
  },
  { error: 'must be an object with since only' },
);
export type RecoverBody = z.infer<typeof RecoverBody>;

export const RecoverAccepted = z.object({ recovering: z.number().int() });

export const IdParams = z.object({ id: z.string() });

export const ListDeliveriesQuery = PaginationQuery.extend({
  event_id: z.string().optional(),
  endpoint_id: z.string().optional(),
  status: z
    .enum(['queued', 'retrying', 'succeeded', 'failed'], { error: 'must be queued, retrying, succeeded or failed' })
    .optional(),
});

export const ListEventsQuery = PaginationQuery.extend({
  type: z.string().optional(),
  data_id: z
    .string()
    .max(100)
    .optional()
    .meta({ description: "Only events whose data is this object (data.id: a transfer's, a batch's, a card's id)" }),
});

const EndpointStatus = z.enum(['listening', 'disabled', 'deleted']);

export const EndpointView = z.object({
  id: z.string(),
  url: z.string(),
  events: z.array(z.string()),
  status: EndpointStatus,
  /** Whether deliveries go out (status `listening`): what PATCH's `enabled` changes. */
  enabled: z.boolean(),
  disabled_reason: z.string().optional(),
  /** When a disabled endpoint was disabled. */
  disabled_at: z.string().optional(),
  /** When the first attempt failed of the unbroken run of failures up to now (absent after a success). */
  failing_since: z.string().optional(),
  /** During a rotation's overlap, when the replaced secret stops signing beside the new one. */
  previous_secret_expires_at: z.string().optional(),
  ...timestampFields(),
});
export type EndpointView = z.infer<typeof EndpointView>;

export const EndpointList = listOf(EndpointView);

/** Registration answers the endpoint and the id of its webhook.endpoint.created event. */
export const RegisteredEndpoint = z.object({
  id: z.string(),
  url: z.string(),
  events: z.array(z.string()),
  status: EndpointStatus,
  event_id: z.string(),
  created_at: z.string(),
});

export const AttemptView = z.object({
  number: z.number().int(),
  attempted_at: z.string(),
  status_code: z.number().int().nullable(),
  error: z.string().nullable(),
  duration_ms: z.number().int(),
  response_body: z.string().nullable(),
  replay_id: z.string().nullable(),
});

export const DeliveryView = z.object({
  id: z.string(),
  event_id: z.string(),
  endpoint_id: z.string(),
  event_type: z.string(),
  status: z.enum(['queued', 'retrying', 'succeeded', 'failed']),
  attempt_count: z.number().int(),
  /** The HTTP status the endpoint answered to the latest attempt; null without an answer. */
  endpoint_status: z.number().int().nullable(),
  endpoint_state: EndpointStatus,
  signature: z.string().nullable(),
  replay_id: z.string().nullable(),
  attempts: z.array(AttemptView),
  ...timestampFields(),
});
export type DeliveryView = z.infer<typeof DeliveryView>;

export const DeliveryList = listOf(DeliveryView);

export const TestEventBody = z
  .object({
    type: z
      .string()
      .max(100, 'must be at most 100 characters')
      .refine(isEventType, { error: 'must be an event type of GET /api/v1/event-types' })
      .optional(),
  })
  .strict()
  // No body at all sends webhook.endpoint.test.
  .nullish();
export const TestEventAccepted = z.object({ event_id: z.string(), delivery_id: z.string() });

export const ReplayAccepted = z.object({ delivery_id: z.string(), replay_id: z.string() });

export const EventView = z.object({
  id: z.string(),
  type: z.string(),
  created_at: z.string(),
  data: z.record(z.string(), z.unknown()),
});
export type EventView = z.infer<typeof EventView>;

export const EventList = listOf(EventView);

/** An event type of the catalog (decisions §15): `schema` is the JSON Schema (draft 2020-12) of its `data`. */
export const EventTypeView = z.object({
  type: eventTypeEnum([]),
  description: z.string(),
  schema: z.record(z.string(), z.unknown()),
});

/** The whole catalog, in one answer: it is short and the same for every tenant. */
export const EventTypeList = z.object({ items: z.array(EventTypeView) });
