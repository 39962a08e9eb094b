// The webhooks feature's event types (decisions §7, §8, §15): an endpoint's own, and those about
// deliveries, which an endpoint receives only when it names them.
import { z } from 'zod';
import { type EventDataOf, eventType } from '../events/catalog.ts';
import { SAMPLE_AT, SAMPLE_ENDPOINT_ID } from '../events/samples.ts';
import { EndpointView } from './schemas.ts';

const int = () => z.number().int();

/** Which delivery a delivery event is about. */
const deliveryFields = () => ({
  delivery_id: z.string(),
  event_id: z.string(),
  endpoint_id: z.string(),
  /** The type of the event delivered (never an event.delivery.* one). */
  event_type: z.string(),
});

const DeliveryQueuedData = z.object(deliveryFields());

/** One attempt's outcome: the receiver's HTTP status, or null and why there was none. */
const DeliveryAttemptData = z.object({
  ...deliveryFields(),
  attempt: int(),
  status_code: int().nullable(),
  error: z.string().nullable(),
  /** Present when the attempt was a replay. */
  replay_id: z.string().optional(),
});

const delivery = {
  delivery_id: '3c4d5e6f-7a8b-4c9d-8e0f-1a2b3c4d5e6f',
  event_id: '7e8f9a0b-1c2d-4e3f-9a4b-5c6d7e8f9a0b',
  endpoint_id: SAMPLE_ENDPOINT_ID,
  event_type: 'transfer.settled',
};

export const WEBHOOK_EVENT_TYPES = {
  'webhook.endpoint.created': eventType('A webhook endpoint was registered (never its signing secret).', EndpointView, {
    id: SAMPLE_ENDPOINT_ID,
    url: 'https://example.com/hooks',
    events: ['transfer.settled', 'transfer.failed'],
    status: 'listening',
    enabled: true,
    created_at: SAMPLE_AT,
    updated_at: SAMPLE_AT,
  }),
  'webhook.endpoint.disabled': eventType(
    "A webhook endpoint was disabled: by its tenant, because its receiver answered 410, or because every attempt to it failed for WEBHOOK_DISABLE_AFTER_HOURS (120 h). Sent to the tenant's other endpoints and streams; the endpoint's waiting deliveries go out once it is enabled again.",
    EndpointView,
    {
      id: SAMPLE_ENDPOINT_ID,
      url: 'https://example.com/hooks',
      events: ['transfer.settled', 'transfer.failed'],
      status: 'disabled',
      enabled: false,
      disabled_reason:
        'every attempt failed for more than 120 hours (WEBHOOK_DISABLE_AFTER_HOURS), since 2026-11-20T09:15:00.000Z',
      disabled_at: SAMPLE_AT,
      failing_since: '2026-11-20T09:15:00.000Z',
      created_at: '2026-11-01T08:00:00.000Z',
      updated_at: SAMPLE_AT,
    },
  ),
  'webhook.endpoint.test': eventType(
    'A test event, sent only to the endpoint it was sent to (POST /api/v1/webhook-endpoints/{id}/test), with "test": true in the body.',
    z.object({ endpoint_id: z.string(), url: z.string(), message: z.string() }),
    {
      endpoint_id: SAMPLE_ENDPOINT_ID,
      url: 'https://example.com/hooks',
      message: 'A test event: your endpoint received and verified it.',
    },
  ),
  'event.delivery.queued': eventType(
    'A delivery of an event to an endpoint was created. Sent only to endpoints that name it.',
    DeliveryQueuedData,
    delivery,
  ),
  'event.delivery.failed': eventType(
    "An attempt of a delivery failed: the receiver's status code, or null and the error. Sent only to endpoints that name it.",
    DeliveryAttemptData,
    { ...delivery, attempt: 1, status_code: 503, error: null },
  ),
  'event.delivery.succeeded': eventType(
    'An attempt of a delivery succeeded (a 2xx within 15 s). Sent only to endpoints that name it.',
    DeliveryAttemptData,
    { ...delivery, attempt: 2, status_code: 200, error: null },
  ),
};

declare module '../events/catalog.ts' {
  interface EventDataByType extends EventDataOf<typeof WEBHOOK_EVENT_TYPES> {}
}
