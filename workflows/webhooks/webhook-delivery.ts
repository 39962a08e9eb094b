// One workflow per webhook delivery. Attempts are activities without Temporal retries: this
// workflow owns the schedule, as durable timers (±jitter), so a worker that dies during a wait
// resumes the schedule where it was. Retry-After is honoured; 410 ends the delivery and disables
// the endpoint. A `replay` signal delivers again at once, without moving the schedule on.
// Bounded: each attempt first takes one of its tenant's attempt slots, waiting for a `slot` signal
// when the tenant has its limit in flight (src/webhooks/attempt-slots.ts), and a run continues as
// new every 50 attempts (or 1,000 history events, or when Temporal suggests it), carrying its place
// in the schedule, so a delivery replayed without end keeps a short history.
// An endpoint disabled by its tenant or for failing too long holds its deliveries: an
// attempt that finds it so sends nothing and counts for nothing, and the delivery waits for an
// `endpointEnabled` signal (or a recheck every few hours, should the signal be lost), then makes
// the attempt it was about to make.
import { allHandlersFinished, condition, log, proxyActivities, setHandler, workflowInfo } from '@temporalio/workflow';
import type { WebhookActivities } from './definitions.ts';
import {
  type AttemptResult,
  type DeliveryInput,
  type DeliveryResume,
  type DeliveryState,
  deliveryStatusQuery,
  endpointEnabledSignal,
  queueReplay,
  replaySignal,
  slotSignal,
} from './definitions.ts';
import { continueAsNewOnceHandled } from '../continue-as-new.ts';

const MAX_RETRY_AFTER_MS = 24 * 60 * 60 * 1000;

/** A run continues as new after this many attempts… */
export const ATTEMPTS_PER_RUN = 50;
/** …or once its history holds this many events (a long wait for a slot), or when Temporal suggests it. */
export const HISTORY_EVENTS_PER_RUN = 1_000;
/** A delivery waiting for a slot asks again this often, in case the signal that granted it was lost. */
const SLOT_RECHECK_MS = 5 * 60 * 1000;
/**
 * A delivery waiting for its disabled endpoint looks again this often, in case the signal that
 * woke it was lost (the webhook feature's sweep also resends it): a few events of history each
 * time, so a run continues as new after some days of waiting.
 */
const PAUSED_RECHECK_MS = 6 * 60 * 60 * 1000;

// Attempts are activities, not local activities: an attempt holds its tenant's slot and may wait
// 15 s on a receiver, and a local activity that long keeps its workflow task open while signals
// (replays, granted slots) arrive for the same run — which the SDK's core mishandled now and then
// ("Trying to send a new WFT for a run which already has one!"), delaying the run by a workflow
// task timeout or more (a replay seen 20 s late in CI). An activity's run is free to take its
// signals meanwhile.
const attempts = proxyActivities<WebhookActivities>({
  // The HTTP call itself times out at 15 s; the rest is bookkeeping.
  startToCloseTimeout: '1 minute',
  retry: { maximumAttempts: 1 },
});
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
  const resume = input.resume;
  const state: DeliveryState = {
    status: resume?.status ?? 'queued',
    attempts: 0,
    nextAttemptInMs: undefined,
    lastReplayId: resume?.lastReplayId,
  };
  const replays: string[] = [...(resume?.replays ?? [])];
  let slotGranted = false;
  let endpointEnabled = false;
  setHandler(replaySignal, ({ replayId }) => queueReplay(replays, replayId));
  setHandler(slotSignal, () => {
    slotGranted = true;
  });
  setHandler(endpointEnabledSignal, () => {
    endpointEnabled = true;
  });
  // Attempts of the whole delivery, earlier runs (continued as new, or ended and replayed) included.
  setHandler(deliveryStatusQuery, () => ({ ...state, attempts: (input.previousAttempts ?? 0) + state.attempts }));

  let step = resume?.step ?? 0;
  let overrideMs = resume?.overrideMs;
  let due = resume?.due;

  const historyLong = () =>
    workflowInfo().continueAsNewSuggested || workflowInfo().historyLength >= HISTORY_EVENTS_PER_RUN;
  /** Hands this run's place in the schedule to a new run (after every handler has finished). */
  const continueFrom = (dueNow?: DeliveryResume['due']): Promise<never> =>
    continueAsNewOnceHandled<typeof webhookDeliveryWorkflow>(() => [
      {
        ...input,
        previousAttempts: (input.previousAttempts ?? 0) + state.attempts,
        resume: {
          status: state.status,
          step,
          ...(overrideMs !== undefined ? { overrideMs } : {}),
          // Read after the wait for handlers: a replay signalled meanwhile is carried too.
          replays: [...replays],
          ...(state.lastReplayId ? { lastReplayId: state.lastReplayId } : {}),
          ...(dueNow ? { due: dueNow } : {}),
        },
      },
    ]);

  for (;;) {
    if (state.attempts > 0 && (state.attempts >= ATTEMPTS_PER_RUN || historyLong())) await continueFrom();
    let interrupted: boolean;
    let replayId: string | undefined;
    if (due) {
      // The previous run's attempt was due and waiting for a slot: it goes now, as it would have.
      ({ interrupted, replayId } = due);
      due = undefined;
    } else {
      // A replay asked for goes now. At the first step it is the first scheduled attempt; later it
      // cuts the wait short, and the scheduled attempt still comes at its time.
      const replayWaiting = replays.length > 0;
      const delay = replayWaiting
        ? 0
        : (overrideMs ??
          (step === 0 ? (input.scheduleMs[0] ?? 0) : jittered(input.scheduleMs[step] ?? 0, input.jitter)));
      overrideMs = undefined;
      state.nextAttemptInMs = delay;
      interrupted =
        (replayWaiting && step > 0) || (delay > 0 ? await condition(() => replays.length > 0, delay) : false);
      state.nextAttemptInMs = undefined;
      replayId = replays.shift();
    }
    if (replayId) state.lastReplayId = replayId;

    let result: AttemptResult;
    for (;;) {
      slotGranted = false;
      // Cleared before the attempt, so that an enable signalled while it runs is not lost.
      endpointEnabled = false;
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
      if (result.outcome === 'wait') {
        // The tenant has its limit of attempts in flight: wait for a slot, holding no worker slot.
        if (historyLong()) await continueFrom({ interrupted, ...(replayId ? { replayId } : {}) });
        await condition(() => slotGranted, SLOT_RECHECK_MS);
        continue;
      }
      if (result.outcome === 'paused') {
        // The endpoint is disabled: nothing was sent, nothing counts. The same attempt is made once
        // it is enabled again, or when a replay is asked for meanwhile (found paused still, the
        // delivery waits again: a replay wakes it once, never in a loop).
        if (historyLong()) await continueFrom({ interrupted, ...(replayId ? { replayId } : {}) });
        const replaysBefore = replays.length;
        await condition(() => endpointEnabled || replays.length > replaysBefore, PAUSED_RECHECK_MS);
        continue;
      }
      break;
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
