// Who receives which event types. `*` subscribes to all of them except the delivery events, which
// an endpoint must name explicitly (decisions §8). The types themselves are the catalog's
// (catalog.ts), each declared by its feature.
export { type EventType, eventTypes, isEventType } from './catalog.ts';

export function isDeliveryEvent(type: string): boolean {
  return type.startsWith('event.delivery.');
}

/**
 * Whether an endpoint subscribed to `subscribed` receives events of `type`. The event insert asks
 * the same rule of the database, over the tenant's listening endpoints (`webhook_endpoint_listens`,
 * migration 0046).
 */
export function subscribes(subscribed: readonly string[], type: string): boolean {
  if (subscribed.includes(type)) return true;
  return subscribed.includes('*') && !isDeliveryEvent(type);
}
