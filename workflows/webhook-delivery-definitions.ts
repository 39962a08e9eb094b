// The webhook delivery workflow's contract: one workflow per (event, endpoint), id
// `delivery:<event_id>:<endpoint_id>`; a `replay` signal delivers again at once.
import { defineQuery, defineSignal } from '@temporalio/workflow';

export const DELIVERY_WORKFLOW_TYPE = 'webhookDeliveryWorkflow';

export function deliveryWorkflowId(eventId: string, endpointId: string): string {
  return `delivery:${eventId}:${endpointId}`;
}

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
}

export type DeliveryStatus = 'queued' | 'retrying' | 'succeeded' | 'failed';

export interface DeliveryState {
  status: DeliveryStatus;
  attempts: number;
  nextAttemptInMs: number | undefined;
  lastReplayId: string | undefined;
}

export interface AttemptResult {
  outcome: 'succeeded' | 'failed' | 'gone' | 'endpoint_disabled';
  statusCode: number | null;
  /** From a Retry-After header on 429/503. */
  retryAfterMs: number | null;
}

export const replaySignal = defineSignal<[{ replayId: string }]>('replay');
export const deliveryStatusQuery = defineQuery<DeliveryState>('status');
