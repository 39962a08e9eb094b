// An endpoint's lifecycle as tenants see it (decisions §21): its view, and the one way an endpoint
// is disabled — by its tenant, by a receiver's 410, or after every attempt has failed for
// WEBHOOK_DISABLE_AFTER_HOURS — which records `webhook.endpoint.disabled` in the same transaction,
// for the tenant's other endpoints and its streams (the disabled one no longer listens). Disabled
// by its tenant or its failures, an endpoint holds its deliveries until it is enabled again; a
// 410 ("gone for good") ends them, as it always has.
import type { EntityManager } from '@mikro-orm/postgresql';
import { recordEvent } from '../events/events.ts';
import type { EndpointView } from './schemas.ts';
import { type DisabledBy, type EndpointRow, changeEndpointStatus } from './store.ts';

/** Why an endpoint was disabled, as its view says it. */
export const DISABLED_BY_TENANT = 'disabled by the tenant';
export const DISABLED_BY_GONE = 'the receiver answered 410 Gone';

/** The reason of an endpoint disabled for failing: every attempt since `since` failed, for more than `hours`. */
export function disabledForFailing(hours: number, since: Date): string {
  return `every attempt failed for more than ${hours} hours (WEBHOOK_DISABLE_AFTER_HOURS), since ${since.toISOString()}`;
}

/** Whether a disabled endpoint's deliveries wait for it (its tenant or its failures disabled it), or end (a 410). */
export function holdsDeliveries(endpoint: Pick<EndpointRow, 'status' | 'disabled_by'>): boolean {
  return endpoint.status === 'disabled' && endpoint.disabled_by !== 'gone';
}

export function endpointView(row: EndpointRow, now = new Date()): EndpointView {
  const overlapEnds = row.previous_secret_expires_at;
  return {
    id: row.id,
    url: row.url,
    events: row.events,
    status: row.status,
    enabled: row.status === 'listening',
    ...(row.disabled_reason ? { disabled_reason: row.disabled_reason } : {}),
    ...(row.status === 'disabled' && row.disabled_at ? { disabled_at: row.disabled_at.toISOString() } : {}),
    ...(row.failing_since && row.status !== 'deleted' ? { failing_since: row.failing_since.toISOString() } : {}),
    ...(overlapEnds && overlapEnds > now ? { previous_secret_expires_at: overlapEnds.toISOString() } : {}),
    created_at: row.created_at.toISOString(),
    updated_at: row.updated_at.toISOString(),
  };
}

/**
 * Disables a listening endpoint with `reason` and records `webhook.endpoint.disabled` (its view),
 * in the caller's transaction. Null, and nothing recorded, if it was not listening (already
 * disabled, deleted, or not the tenant's when `tenantId` is given): a disable happens once.
 */
export async function disableEndpoint(
  em: EntityManager,
  id: string,
  change: { by: DisabledBy; reason: string; tenantId?: string },
): Promise<EndpointRow | null> {
  const row = await changeEndpointStatus(em, id, {
    from: ['listening'],
    to: 'disabled',
    by: change.by,
    reason: change.reason,
    ...(change.tenantId ? { tenantId: change.tenantId } : {}),
  });
  if (!row) return null;
  await recordEvent(em, {
    tenantId: row.tenant_id,
    type: 'webhook.endpoint.disabled',
    // Once per disable: an endpoint enabled and disabled again gets another event.
    sourceKey: `webhook_endpoint:${id}:disabled:${row.disabled_at!.toISOString()}`,
    payload: endpointView(row),
  });
  return row;
}
