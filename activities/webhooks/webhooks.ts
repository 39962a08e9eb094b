// Webhook delivery attempts: sign the event, POST it (15 s timeout, redirects not followed), and
// record the attempt, the delivery's new state and the event.delivery.* event in one transaction.
// With tracing on, the POST is a client span `POST webhook` under the attempt's activity span.
// An attempt asked to (`slot`) first takes one of its tenant's attempt slots, or answers `wait`
// having queued for one; afterwards it hands the slot on and signals the workflow it went to.
// An attempt whose endpoint its tenant or its failures disabled sends nothing and answers `paused`
// (the delivery waits for it; one disabled by a 410, or deleted, ends). Every attempt's outcome
// feeds the endpoint's run of failures, which disables it once every attempt has failed for
// WEBHOOK_DISABLE_AFTER_HOURS (decisions §21).
import type { EntityManager, MikroORM } from '@mikro-orm/postgresql';
import { log } from '@temporalio/activity';
import { type Client, WorkflowNotFoundError } from '@temporalio/client';
import { eventBody } from '../../src/events/body.ts';
import { findEvent, recordEvent } from '../../src/events/events.ts';
import {
  findDelivery,
  findEndpoint,
  noteEndpointOutcome,
  pauseDelivery,
  recordAttempt,
  setDeliveryStatus,
  unpauseDelivery,
} from '../../src/webhooks/store.ts';
import {
  DISABLED_BY_GONE,
  disableEndpoint,
  disabledForFailing,
  holdsDeliveries,
} from '../../src/webhooks/lifecycle.ts';
import type { KeyMode } from '../../src/tenants/api-keys.ts';
import { DestinationRefused, type EgressPolicy, checkDestination } from '../../src/webhooks/destinations.ts';
import { isDeliveryEvent } from '../../src/events/event-types.ts';
import { decryptSecret } from '../../src/webhooks/secrets.ts';
import { postPinned } from '../../src/webhooks/pinned-post.ts';
import { withHttpClientSpan } from '../../src/telemetry/http-client-span.ts';
import { webhookHeaders } from '../../src/webhooks/signing.ts';
import { type SlotBounds, type SlotHolder, releaseSlot, takeSlot } from '../../src/webhooks/attempt-slots.ts';
import { type AttemptResult, deliveryWorkflowId, slotSignal } from '../../workflows/webhooks/definitions.ts';
import type { WebhookActivities } from '../../workflows/webhooks/definitions.ts';

export interface WebhookActivityDeps {
  orm: MikroORM;
  encryptionKey: Buffer;
  timeoutMs: number;
  /** The SSRF policy, checked again at every attempt on the addresses actually dialled. */
  egress: EgressPolicy;
  /** Tells a waiting delivery's workflow that a slot is its own. */
  client: Client;
  /** The per-tenant bound on attempts in flight (WEBHOOK_TENANT_CONCURRENCY). */
  slots: SlotBounds;
  /** WEBHOOK_DISABLE_AFTER_HOURS in ms: an endpoint failing every attempt for this long is disabled. */
  disableAfterMs: number;
}

/** A granted slot's lease: longer than any attempt (its HTTP call is bounded by the timeout) may run. */
export function slotLeaseMs(timeoutMs: number): number {
  return timeoutMs + 60_000;
}

const RESPONSE_BODY_LIMIT = 1_024;

interface DeliveryContext {
  delivery_id: string;
  tenant_id: string;
  event_id: string;
  event_type: string;
  event_payload: Record<string, unknown>;
  event_created_at: Date;
  /** A test event: sent with `"test": true`, and no delivery events are recorded of it. */
  event_test: boolean;
  endpoint_id: string;
  endpoint_url: string;
  endpoint_mode: KeyMode;
  endpoint_status: string;
  /** The endpoint is disabled and holds its deliveries (its tenant or its failures disabled it, not a 410). */
  endpoint_holds: boolean;
  secret_ciphertext: string;
  /** The secret a rotation replaced, while it still signs beside the new one. */
  previous_secret_ciphertext: string | null;
  /** The delivery was waiting for its endpoint to be enabled. */
  paused: boolean;
}

/** The delivery with its event and endpoint, as an attempt needs them. */
async function deliveryContext(em: EntityManager, deliveryId: string): Promise<DeliveryContext | undefined> {
  const delivery = await findDelivery(em, deliveryId);
  if (!delivery) return undefined;
  const event = await findEvent(em, delivery.tenant_id, delivery.event_id);
  const endpoint = await findEndpoint(em, delivery.endpoint_id);
  if (!event || !endpoint) return undefined;
  return {
    delivery_id: delivery.id,
    tenant_id: delivery.tenant_id,
    event_id: event.id,
    event_type: event.type,
    event_payload: event.payload,
    event_created_at: event.created_at,
    event_test: event.test,
    endpoint_id: endpoint.id,
    endpoint_url: endpoint.url,
    endpoint_mode: endpoint.mode,
    endpoint_status: endpoint.status,
    endpoint_holds: holdsDeliveries(endpoint),
    secret_ciphertext: endpoint.secret_ciphertext,
    previous_secret_ciphertext:
      endpoint.previous_secret_ciphertext &&
      endpoint.previous_secret_expires_at &&
      endpoint.previous_secret_expires_at.getTime() > Date.now()
        ? endpoint.previous_secret_ciphertext
        : null,
    paused: delivery.paused_at !== null && delivery.paused_at !== undefined,
  };
}

/** Retry-After as seconds or an HTTP date, in ms; null when absent or unreadable. */
export function retryAfterMs(header: string | null, now = Date.now()): number | null {
  if (!header) return null;
  if (/^\d+$/.test(header.trim())) return Number(header.trim()) * 1000;
  const date = Date.parse(header);
  return Number.isNaN(date) ? null : Math.max(0, date - now);
}

async function recordDeliveryEvent(
  em: EntityManager,
  context: DeliveryContext,
  type: 'event.delivery.succeeded' | 'event.delivery.failed',
  extra: { attempt: number; status_code: number | null; error: string | null; replay_id?: string },
) {
  // Delivery events are never about the delivery of a delivery event, nor of a test event.
  if (isDeliveryEvent(context.event_type) || context.event_test) return;
  await recordEvent(em, {
    tenantId: context.tenant_id,
    type,
    sourceKey: `delivery:${context.delivery_id}:${type}:${extra.attempt}`,
    payload: {
      delivery_id: context.delivery_id,
      event_id: context.event_id,
      endpoint_id: context.endpoint_id,
      event_type: context.event_type,
      ...extra,
    },
  });
}

export function createWebhookActivities(deps: WebhookActivityDeps): WebhookActivities {
  /**
   * Gives the delivery's slot (or its place in the queue) back and tells the workflows the freed
   * slots went to. A workflow that is gone (terminated) cannot take its slot: it is passed on too.
   */
  async function handOn(holder: Pick<SlotHolder, 'tenantId' | 'deliveryId'>): Promise<void> {
    let next = [holder];
    // Bounded: each round passes on only the slots of workflows found gone.
    for (let round = 0; next.length > 0 && round < 10; round++) {
      const gone: SlotHolder[] = [];
      for (const from of next) {
        for (const granted of await releaseSlot(deps.orm.em.fork(), from, deps.slots)) {
          try {
            await deps.client.workflow.getHandle(granted.workflowId).signal(slotSignal);
          } catch (error) {
            // Any other failure: the grant lapses after its lease, and the waiting workflow asks again.
            if (error instanceof WorkflowNotFoundError) gone.push(granted);
          }
        }
      }
      next = gone;
    }
  }

  return {
    async attemptDelivery(input: {
      deliveryId: string;
      attemptNumber: number;
      replayId?: string;
    }): Promise<AttemptResult> {
      const em = deps.orm.em.fork();
      let context = await deliveryContext(em, input.deliveryId);
      if (context?.endpoint_holds) {
        // Marked as waiting first, then read again: an enable committed before the mark is seen
        // here (and the attempt goes on), and one committed after it finds the mark and wakes the
        // delivery (src/webhooks/service.ts), so no delivery sleeps through its wake-up.
        await pauseDelivery(em, input.deliveryId);
        context = await deliveryContext(em, input.deliveryId);
      }
      if (!context) throw new Error(`no webhook delivery ${input.deliveryId}`);
      const holder = { tenantId: context.tenant_id, deliveryId: context.delivery_id };
      if (context.endpoint_holds) {
        // Nothing is sent and nothing fails: the delivery waits for its endpoint, and a slot or a
        // place in the queue it had goes to the next.
        await handOn(holder);
        return { outcome: 'paused', statusCode: null, retryAfterMs: null };
      }
      // It waits no more: its endpoint listens again, or is deleted.
      if (context.paused) await unpauseDelivery(em, input.deliveryId);
      if (context.endpoint_status !== 'listening') {
        // Deleted, or gone (410): nothing is sent, and the delivery ends failed.
        await setDeliveryStatus(em, input.deliveryId, 'failed', { evenIfSucceeded: true });
        await handOn(holder);
        return { outcome: 'endpoint_disabled', statusCode: null, retryAfterMs: null };
      }
      // A slot of the tenant first: with its limit of attempts in flight, the delivery waits.
      const workflowId = deliveryWorkflowId(context.event_id, context.endpoint_id);
      if (!(await takeSlot(deps.orm.em.fork(), { ...holder, workflowId }, deps.slots))) {
        return { outcome: 'wait', statusCode: null, retryAfterMs: null };
      }
      try {
        return await send(em, context, input);
      } finally {
        // Never the attempt's outcome: a slot not handed on now lapses after its lease.
        await handOn(holder).catch((error: unknown) => {
          log.warn('webhook attempt slot not handed on', { deliveryId: input.deliveryId, error: String(error) });
        });
      }
    },

    async finishDelivery(input: { deliveryId: string; status: 'failed' }): Promise<void> {
      await setDeliveryStatus(deps.orm.em.fork(), input.deliveryId, input.status, { evenIfSucceeded: false });
    },
  };

  /** One attempt: signs, POSTs and records it. */
  async function send(
    em: EntityManager,
    context: DeliveryContext,
    input: { deliveryId: string; attemptNumber: number; replayId?: string },
  ): Promise<AttemptResult> {
    const body = eventBody({
      id: context.event_id,
      type: context.event_type,
      created_at: context.event_created_at,
      payload: context.event_payload,
      test: context.event_test,
    });
    const timestamp = Math.floor(Date.now() / 1000);
    const headers = webhookHeaders(
      // During a rotation's overlap, signed with both: the new secret first.
      [
        context.secret_ciphertext,
        ...(context.previous_secret_ciphertext ? [context.previous_secret_ciphertext] : []),
      ].map((sealed) => decryptSecret(deps.encryptionKey, sealed)),
      context.event_id,
      timestamp,
      body,
    );
    const started = Date.now();
    let statusCode: number | null = null;
    let error: string | null = null;
    let responseBody: string | null = null;
    let retryAfter: number | null = null;
    try {
      // Checked again at every attempt, after DNS resolution: the name may point elsewhere now.
      const { url, addresses } = await checkDestination(context.endpoint_url, context.endpoint_mode, deps.egress);
      const response = await withHttpClientSpan(
        'POST webhook',
        {
          method: 'POST',
          url,
          attributes: { 'gateway.delivery_id': input.deliveryId, 'gateway.attempt': input.attemptNumber },
        },
        () => postPinned(url, addresses, headers, body, deps.timeoutMs, deps.egress.proxy),
      );
      statusCode = response.status;
      responseBody = response.body.slice(0, RESPONSE_BODY_LIMIT);
      const header = response.headers['retry-after'];
      if (response.status === 429 || response.status === 503) {
        retryAfter = retryAfterMs(typeof header === 'string' ? header : null);
      }
    } catch (cause) {
      error =
        cause instanceof DestinationRefused
          ? `destination refused: ${cause.message}`
          : cause instanceof Error && (cause.name === 'AbortError' || cause.name === 'TimeoutError')
            ? `no answer within ${deps.timeoutMs} ms`
            : `request failed: ${cause instanceof Error ? (cause.cause instanceof Error ? cause.cause.message : cause.message) : String(cause)}`;
    }
    const durationMs = Date.now() - started;
    const succeeded = statusCode !== null && statusCode >= 200 && statusCode < 300;
    const gone = statusCode === 410;
    const status = succeeded ? 'succeeded' : gone ? 'failed' : 'retrying';

    await em.transactional(async (tx) => {
      await recordAttempt(
        tx,
        {
          delivery_id: input.deliveryId,
          number: input.attemptNumber,
          attempted_at: new Date(started),
          status_code: statusCode,
          error,
          duration_ms: durationMs,
          response_body: responseBody,
          replay_id: input.replayId ?? null,
        },
        { status, signature: headers['webhook-signature'] ?? null },
      );
      if (gone) {
        await disableEndpoint(tx, context.endpoint_id, { by: 'gone', reason: DISABLED_BY_GONE });
      } else {
        const failingSince = await noteEndpointOutcome(tx, context.endpoint_id, {
          succeeded,
          attemptedAt: new Date(started),
          disableAfterMs: deps.disableAfterMs,
        });
        if (failingSince) {
          await disableEndpoint(tx, context.endpoint_id, {
            by: 'failures',
            reason: disabledForFailing(deps.disableAfterMs / 3_600_000, failingSince),
          });
        }
      }
      await recordDeliveryEvent(tx, context, succeeded ? 'event.delivery.succeeded' : 'event.delivery.failed', {
        attempt: input.attemptNumber,
        status_code: statusCode,
        error,
        ...(input.replayId ? { replay_id: input.replayId } : {}),
      });
    });
    return { outcome: succeeded ? 'succeeded' : gone ? 'gone' : 'failed', statusCode, retryAfterMs: retryAfter };
  }
}

export type { WebhookActivities };
