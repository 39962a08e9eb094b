// Who receives which event types. `*` subscribes to all of them except the delivery events, which
// an endpoint must name explicitly (decisions §8). The types themselves are the catalog's
// (catalog.ts), each declared by its feature.
export { type EventType, eventTypes, isEventType } from './catalog.ts';

export function isDeliveryEvent(type: string): boolean {
  return type.startsWith('event.delivery.');
}

/** Whether an endpoint subscribed to `subscribed` receives events of `type`. */
export function subscribes(subscribed: readonly string[], type: string): boolean {
  if (subscribed.includes(type)) return true;
  return subscribed.includes('*') && !isDeliveryEvent(type);
}

/**
 * `subscribes` as SQL, for a statement that must decide it where the rows are (the event insert's
 * "owed to nobody", src/events/events.ts): `subscribed` a text[] expression, `type` a text one.
 */
export function subscribesSql(subscribed: string, type: string): string {
  return `(${type} = any (${subscribed}) or ('*' = any (${subscribed}) and not starts_with(${type}, 'event.delivery.')))`;
}
