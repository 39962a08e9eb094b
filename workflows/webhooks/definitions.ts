// The webhook delivery workflow's contract: one workflow per (event, endpoint), id
// `delivery:<event_id>:<endpoint_id>`; a `replay` signal delivers again at once, and
// `endpointEnabled` wakes a delivery that waits for its disabled endpoint.
import { defineQuery, defineSignal } from '@temporalio/workflow';
export { DELIVERY_WORKFLOW_TYPE, deliveryWorkflowId } from '../workflow-names.ts';

export interface DeliveryInput {
  deliveryId: string;
  tenantId: string;
  eventId: string;
  endpointId: string;
  /** Delay before each scheduled attempt, in ms; fixed when the delivery is created. */
  scheduleMs: number[];
  /** ± fraction of each delay drawn at random (0.2 = ±20%). */
  jitter: number;
  /** Attempts made by earlier runs of this delivery (a replay after it ended starts a new run). */
  previousAttempts?: number;
  /** Where a run that continued as new left off (absent in a delivery's first run). */
  resume?: DeliveryResume;
}

/** What a delivery's run hands the next when it continues as new: its place in the schedule. */
export interface DeliveryResume {
  status: DeliveryStatus;
  /** Schedule steps done (the next wait is scheduleMs[step]). */
  step: number;
  /** A Retry-After the next wait must honour instead of the schedule's. */
  overrideMs?: number;
  /** Replays asked for and not yet made, oldest first. */
  replays: string[];
  lastReplayId?: string;
  /** An attempt whose time had come but was still waiting for its tenant's slot. */
  due?: { replayId?: string; interrupted: boolean };
}

export type DeliveryStatus = 'queued' | 'retrying' | 'succeeded' | 'failed';

export interface DeliveryState {
  status: DeliveryStatus;
  /** Attempts made (the `status` query counts every run's; a run's own state, its own). */
  attempts: number;
  nextAttemptInMs: number | undefined;
  lastReplayId: string | undefined;
}

export interface AttemptResult {
  /**
   * `wait`: nothing was sent; the tenant has its limit of attempts in flight and the delivery is queued for a slot.
   * `paused`: nothing was sent and no attempt counts; the endpoint is disabled (by its tenant or its
   * failures), and the delivery waits for it.
   * `endpoint_disabled`: nothing was sent; the endpoint is deleted or disabled by a 410, and the delivery ends failed.
   */
  outcome: 'succeeded' | 'failed' | 'gone' | 'endpoint_disabled' | 'wait' | 'paused';
  statusCode: number | null;
  /** From a Retry-After header on 429/503. */
  retryAfterMs: number | null;
}

export const replaySignal = defineSignal<[{ replayId: string }]>('replay');
/** One of its tenant's attempt slots has been granted to the delivery (src/webhooks/attempt-slots.ts). */
export const slotSignal = defineSignal('slot');
/** The delivery's endpoint was enabled again (or deleted): a delivery waiting for it tries again now. */
export const endpointEnabledSignal = defineSignal('endpointEnabled');
export const deliveryStatusQuery = defineQuery<DeliveryState>('status');

/**
 * Replays a delivery keeps pending at most. Each is one more attempt "now"; beyond this many a new
 * one takes the place of the newest pending (the latest replay id is still the one attempted, as
 * the delivery's `replay_id` says), so that neither the run's state nor the input it continues as
 * new with can grow without bound (Temporal refuses payloads over 2 MB).
 */
export const MAX_PENDING_REPLAYS = 1_000;

/** Queues a replay id, within `max` pending. */
export function queueReplay(pending: string[], replayId: string, max = MAX_PENDING_REPLAYS): void {
  if (pending.length < max) pending.push(replayId);
  else pending[max - 1] = replayId;
}

/** What the webhook delivery workflow asks of its activities (activities/webhooks/webhooks.ts). */
export type WebhookActivities = {
  attemptDelivery(input: { deliveryId: string; attemptNumber: number; replayId?: string }): Promise<AttemptResult>;
  finishDelivery(input: { deliveryId: string; status: 'failed' }): Promise<void>;
};
