// Webhook delivery attempts: sign the event, POST it (15 s timeout, redirects not followed), and
// record the attempt, the delivery's new state and the event.delivery.* event in one transaction.
import type { EntityManager, MikroORM } from '@mikro-orm/postgresql';
import { recordEvent } from '../src/events/events.ts';
import type { KeyMode } from '../src/tenants/api-keys.ts';
import { DestinationRefused, type EgressPolicy, checkDestination } from '../src/webhooks/destinations.ts';
import { isDeliveryEvent } from '../src/webhooks/event-types.ts';
import { decryptSecret } from '../src/webhooks/secrets.ts';
import { postPinned } from '../src/webhooks/pinned-post.ts';
import { webhookHeaders } from '../src/webhooks/signing.ts';
import type { AttemptResult } from '../workflows/webhook-delivery-definitions.ts';

export interface WebhookActivityDeps {
  orm: MikroORM;
  encryptionKey: Buffer;
  timeoutMs: number;
  /** The SSRF policy, checked again at every attempt on the addresses actually dialled. */
  egress: EgressPolicy;
}

const RESPONSE_BODY_LIMIT = 1_024;

interface DeliveryContext {
  delivery_id: string;
  tenant_id: string;
  event_id: string;
  event_type: string;
  event_payload: Record<string, unknown>;
  event_created_at: Date;
  endpoint_id: string;
  endpoint_url: string;
  endpoint_mode: KeyMode;
  endpoint_status: string;
  secret_ciphertext: string;
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
  type: string,
  extra: { attempt: number; status_code: number | null; error: string | null; replay_id?: string },
) {
  // Delivery events are never about the delivery of a delivery event.
  if (isDeliveryEvent(context.event_type)) return;
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

export function createWebhookActivities(deps: WebhookActivityDeps) {
  return {
    async attemptDelivery(input: {
      deliveryId: string;
      attemptNumber: number;
      replayId?: string;
    }): Promise<AttemptResult> {
      const em = deps.orm.em.fork();
      const [context] = await em.execute<DeliveryContext[]>(
        `select d.id as delivery_id, d.tenant_id, e.id as event_id, e.type as event_type, e.payload as event_payload,
                e.created_at as event_created_at, w.id as endpoint_id, w.url as endpoint_url, w.mode as endpoint_mode,
                w.status as endpoint_status, w.secret_ciphertext
           from webhook_deliveries d join events e on e.id = d.event_id join webhook_endpoints w on w.id = d.endpoint_id
          where d.id = ?`,
        [input.deliveryId],
      );
      if (!context) throw new Error(`no webhook delivery ${input.deliveryId}`);
      if (context.endpoint_status !== 'listening') {
        await em.execute(`update webhook_deliveries set status = 'failed', updated_at = now() where id = ?`, [
          input.deliveryId,
        ]);
        return { outcome: 'endpoint_disabled', statusCode: null, retryAfterMs: null };
      }

      const body = JSON.stringify({
        id: context.event_id,
        type: context.event_type,
        created_at: new Date(context.event_created_at).toISOString(),
        data: context.event_payload,
      });
      const timestamp = Math.floor(Date.now() / 1000);
      const headers = webhookHeaders(
        decryptSecret(deps.encryptionKey, context.secret_ciphertext),
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
        const response = await postPinned(url, addresses, headers, body, deps.timeoutMs);
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
        await tx.execute(
          `insert into webhook_attempts (delivery_id, number, attempted_at, status_code, error, duration_ms, response_body, replay_id)
           values (?, ?, ?, ?, ?, ?, ?, ?) on conflict on constraint webhook_attempts_number do nothing`,
          [
            input.deliveryId,
            input.attemptNumber,
            new Date(started),
            statusCode,
            error,
            durationMs,
            responseBody,
            input.replayId ?? null,
          ],
        );
        await tx.execute(
          `update webhook_deliveries set status = ?, attempt_count = greatest(attempt_count, ?), signature = ?,
                  replay_id = coalesce(?, replay_id), updated_at = now() where id = ?`,
          [status, input.attemptNumber, headers['webhook-signature'], input.replayId ?? null, input.deliveryId],
        );
        if (gone) {
          await tx.execute(
            `update webhook_endpoints set status = 'disabled', disabled_reason = ?, updated_at = now() where id = ? and status = 'listening'`,
            ['the receiver answered 410 Gone', context.endpoint_id],
          );
        }
        await recordDeliveryEvent(tx, context, succeeded ? 'event.delivery.succeeded' : 'event.delivery.failed', {
          attempt: input.attemptNumber,
          status_code: statusCode,
          error,
          ...(input.replayId ? { replay_id: input.replayId } : {}),
        });
      });
      return { outcome: succeeded ? 'succeeded' : gone ? 'gone' : 'failed', statusCode, retryAfterMs: retryAfter };
    },

    async finishDelivery(input: { deliveryId: string; status: 'failed' }): Promise<void> {
      await deps.orm.em
        .fork()
        .execute(
          `update webhook_deliveries set status = ?, updated_at = now() where id = ? and status <> 'succeeded'`,
          [input.status, input.deliveryId],
        );
    },
  };
}

export type WebhookActivities = ReturnType<typeof createWebhookActivities>;
