// One workflow per webhook delivery. Attempts are activities without Temporal retries: this
// workflow owns the schedule, as durable timers (±jitter), so a worker that dies during a wait
// resumes the schedule where it was. Retry-After is honoured; 410 ends the delivery and disables
// the endpoint. A `replay` signal delivers again at once, without moving the schedule on.
import {
  allHandlersFinished,
  condition,
  log,
  patched,
  proxyActivities,
  proxyLocalActivities,
  setHandler,
} from '@temporalio/workflow';
import type { WebhookActivities } from '../activities/webhooks.ts';
import {
  type AttemptResult,
  type DeliveryInput,
  type DeliveryState,
  deliveryStatusQuery,
  replaySignal,
} from './webhook-delivery-definitions.ts';

const MAX_RETRY_AFTER_MS = 24 * 60 * 60 * 1000;

/**
 * Attempts run as local activities, in the workflow task that reaches them: a delivery then costs
 * one workflow task per attempt instead of a round trip through the server for the activity too.
 * Runs recorded before keep their attempts as activities.
 */
export const ATTEMPTS_LOCAL = 'attempts-local';

const ATTEMPT = {
  // The HTTP call itself times out at 15 s; the rest is bookkeeping.
  startToCloseTimeout: '1 minute',
  retry: { maximumAttempts: 1 },
} as const;
const attemptActivities = proxyActivities<WebhookActivities>(ATTEMPT);
const attemptsLocal = proxyLocalActivities<WebhookActivities>(ATTEMPT);
const bookkeeping = proxyActivities<WebhookActivities>({
  startToCloseTimeout: '30s',
  retry: { initialInterval: '1s', maximumInterval: '1 minute' },
});

/** A delay with ±jitter drawn from the workflow's deterministic random source. */
function jittered(delayMs: number, jitter: number): number {
  if (delayMs <= 0 || jitter <= 0) return delayMs;
  return Math.round(delayMs * (1 - jitter + Math.random() * 2 * jitter));
}

export async function webhookDeliveryWorkflow(input: DeliveryInput): Promise<DeliveryState> {
  const state: DeliveryState = { status: 'queued', attempts: 0, nextAttemptInMs: undefined, lastReplayId: undefined };
  const replays: string[] = [];
  setHandler(replaySignal, ({ replayId }) => {
    replays.push(replayId);
  });
  setHandler(deliveryStatusQuery, () => state);

  const attempts = patched(ATTEMPTS_LOCAL) ? attemptsLocal : attemptActivities;
  let step = 0;
  let overrideMs: number | undefined;
  for (;;) {
    // A replay asked for goes now. At the first step it is the first scheduled attempt; later it
    // cuts the wait short, and the scheduled attempt still comes at its time.
    const replayWaiting = replays.length > 0;
    const delay = replayWaiting
      ? 0
      : (overrideMs ?? (step === 0 ? (input.scheduleMs[0] ?? 0) : jittered(input.scheduleMs[step] ?? 0, input.jitter)));
    overrideMs = undefined;
    state.nextAttemptInMs = delay;
    const interrupted =
      (replayWaiting && step > 0) || (delay > 0 ? await condition(() => replays.length > 0, delay) : false);
    state.nextAttemptInMs = undefined;
    const replayId = replays.shift();
    if (replayId) state.lastReplayId = replayId;

    let result: AttemptResult;
    try {
      result = await attempts.attemptDelivery({
        deliveryId: input.deliveryId,
        attemptNumber: (input.previousAttempts ?? 0) + state.attempts + 1,
        ...(replayId ? { replayId } : {}),
      });
    } catch (error) {
      // The attempt could not even be made or recorded (database, worker restart): it counts as a
      // failed attempt, and the schedule goes on.
      log.warn('webhook attempt failed before completing', { deliveryId: input.deliveryId, error: String(error) });
      result = { outcome: 'failed', statusCode: null, retryAfterMs: null };
    }
    state.attempts += 1;
    if (!interrupted) step += 1;

    if (result.outcome === 'succeeded') {
      state.status = 'succeeded';
      if (replays.length === 0) break;
      continue;
    }
    if (result.outcome === 'gone' || result.outcome === 'endpoint_disabled') {
      state.status = 'failed';
      break;
    }
    if (step >= input.scheduleMs.length && replays.length === 0) {
      state.status = 'failed';
      await bookkeeping.finishDelivery({ deliveryId: input.deliveryId, status: 'failed' });
      break;
    }
    state.status = 'retrying';
    if (result.retryAfterMs !== null) overrideMs = Math.min(Math.max(result.retryAfterMs, 0), MAX_RETRY_AFTER_MS);
  }
  await condition(allHandlersFinished);
  return state;
}
