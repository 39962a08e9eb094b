// Event names tenants can subscribe to. `*` subscribes to all of them except the delivery
// events, which an endpoint must name explicitly (decisions §8).
export const EVENT_TYPES = [
  'transfer.created',
  'transfer.settled',
  'transfer.failed',
  'transfer_batch.completed',
  'webhook.endpoint.created',
  'webhook.endpoint.test',
  'event.delivery.queued',
  'event.delivery.failed',
  'event.delivery.succeeded',
  'virtual_account.created',
  'virtual_account.credited',
  'virtual_account.closed',
  'card.created',
  'card.locked',
  'card.unlocked',
  'card.funded',
  'card.funding_failed',
  'card.security_settings.updated',
  'card.authorization.approved',
  'card.authorization.declined',
  'card.authorization.cleared',
  'card.authorization.reversed',
  'card.auto_reloaded',
  'identity.customer.created',
  'identity.customer.verified',
  'identity.customer.verification_failed',
  'reconciliation.completed',
  'reconciliation.mismatch',
] as const;

export type EventType = (typeof EVENT_TYPES)[number];

/** Whether `type` is one of the catalog's event types (any of them may be sent as a test event). */
export function isEventType(type: string): type is EventType {
  return (EVENT_TYPES as readonly string[]).includes(type);
}

export function isDeliveryEvent(type: string): boolean {
  return type.startsWith('event.delivery.');
}

/** Whether an endpoint subscribed to `subscribed` receives events of `type`. */
export function subscribes(subscribed: readonly string[], type: string): boolean {
  if (subscribed.includes(type)) return true;
  return subscribed.includes('*') && !isDeliveryEvent(type);
}
