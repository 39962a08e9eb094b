// Test events (decisions §15): what `POST /api/v1/webhook-endpoints/{id}/test` sends. Without a
// type, a `webhook.endpoint.test` event; with one, that type's sample from the event catalog, whose
// schema it satisfies, so that a receiver can be tried on every event it will get.
import { type EventData, type EventType, sampleData } from './catalog.ts';

export const TEST_EVENT_TYPE = 'webhook.endpoint.test' satisfies EventType;

/** What a test event carries: `webhook.endpoint.test`'s own data for an endpoint, or a type's sample. */
export function testEventData(
  type: EventType | undefined,
  endpoint: { id: string; url: string },
): { type: EventType; payload: unknown } {
  if (type === undefined) {
    return {
      type: TEST_EVENT_TYPE,
      payload: {
        endpoint_id: endpoint.id,
        url: endpoint.url,
        message: 'A test event: your endpoint received and verified it.',
      } satisfies EventData<typeof TEST_EVENT_TYPE>,
    };
  }
  return { type, payload: sampleData(type) };
}
