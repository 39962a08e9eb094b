// Event fan-out: every event reaches every endpoint of its tenant that subscribes to its type, as
// one delivery per (event, endpoint) with its own workflow. Events are the outbox: an event
// stays unmarked until its deliveries exist and their workflows are started, and every step is
// idempotent (delivery ids derive from the pair, workflow ids from the same), so a process that
// dies between an event's commit and its fan-out loses nothing: the next pass finishes the job.
//
// Several worker replicas share the work through leases, not open transactions: a pass claims a
// batch of due events in one statement (FOR UPDATE SKIP LOCKED, so replicas take different
// events) by stamping `fanout_claimed_by`/`fanout_claimed_until`, calls Temporal with no
// transaction open, then marks each event. A claim whose holder died runs out and another replica
// takes the event. An event that fails goes back with a capped exponential backoff
// (`next_fanout_at`, `fanout_attempts`, `last_fanout_error`) and the pass goes on with the rest.
//
// Passes run every 200 ms, and at once when PostgreSQL notifies a new event (`listen`, see
// src/events/notifications.ts), so an event usually starts its deliveries within milliseconds.
//
// With tracing on, an event recorded inside a span keeps its traceparent, and its deliveries are
// started in that trace: the delivery workflows and their attempts join the trace of the request
// that caused the event.
import { randomUUID } from 'node:crypto';
import { hostname } from 'node:os';
import type { MikroORM } from '@mikro-orm/postgresql';
import { ROOT_CONTEXT, context, propagation } from '@opentelemetry/api';
import { type Client, WorkflowExecutionAlreadyStartedError } from '@temporalio/client';
import {
  type ClaimedEvent,
  claimDueEvents,
  markFannedOut,
  postponeFanout,
  recordEvent,
  releaseClaims,
} from '../src/events/events.ts';
import { EventNotifications } from '../src/events/notifications.ts';
import { PollingLoop } from '../src/runtime/polling-loop.ts';
import { DELIVERY_WORKFLOW_TYPE, type DeliveryInput, deliveryWorkflowId } from '../workflows/webhooks/definitions.ts';
import type { webhookDeliveryWorkflow } from '../workflows/webhooks/webhook-delivery.ts';
import { isDeliveryEvent, subscribes } from '../src/events/event-types.ts';
import { deliveryIdFor, fanoutTargets, queueDelivery } from '../src/webhooks/store.ts';

export interface FanoutOptions {
  orm: MikroORM;
  client: Client;
  taskQueue: string;
  scheduleMs: number[];
  jitter?: number;
  intervalMs?: number;
  log?: (message: string, fields?: Record<string, unknown>) => void;
  /** Events claimed per pass (100). */
  batchSize?: number;
  /** Events of a pass fanned out at the same time (8). */
  concurrency?: number;
  /** How long a claim holds (60 s): past it, another replica may take the event. */
  claimLeaseMs?: number;
  /** Wait before retrying a failed event: base × 2^(failures − 1), at most max (1 s, 5 min). */
  retryBaseMs?: number;
  retryMaxMs?: number;
  /** Names this replica in `fanout_claimed_by`, for operators (host:pid by default). */
  owner?: string;
  /** Passes also start at once when PostgreSQL notifies a new event (LISTEN on this database). */
  listen?: { connectionString: string; reconnectMs?: number };
  /**
   * Asks the server to start each delivery's workflow eagerly (`requestEagerStart`): its first task
   * comes back with the start's answer, to this process's worker, instead of through a poll. Only
   * where `client` shares its NativeConnection with a running Worker on `taskQueue` in this process
   * (worker/webhooks.ts); a start the server or the worker cannot take eagerly is a plain start.
   */
  eagerStart?: boolean;
}

/** How long an event waits after its n-th failed fan-out: doubling from base, capped at max. */
export function fanoutRetryDelayMs(failures: number, baseMs: number, maxMs: number): number {
  return Math.min(maxMs, baseMs * 2 ** Math.max(0, failures - 1));
}

export class EventFanout {
  private readonly options: FanoutOptions;
  private readonly loop: PollingLoop;
  private readonly batchSize: number;
  private readonly leaseMs: number;
  private readonly owner: string;
  private readonly notifications: EventNotifications | undefined;
  private eagerStarts = 0;

  constructor(options: FanoutOptions) {
    this.options = options;
    this.batchSize = options.batchSize ?? 100;
    this.leaseMs = options.claimLeaseMs ?? 60_000;
    this.owner = options.owner ?? `${hostname()}:${process.pid}`;
    this.loop = new PollingLoop(
      // A full batch means more are waiting: the loop goes again at once.
      async () => (await this.pass()).claimed >= this.batchSize,
      options.intervalMs ?? 200,
      (error) => options.log?.('event fan-out pass failed', { error: String(error) }),
    );
    this.notifications = options.listen
      ? new EventNotifications({
          connectionString: options.listen.connectionString,
          ...(options.listen.reconnectMs !== undefined ? { reconnectMs: options.listen.reconnectMs } : {}),
          onEvent: () => this.loop.wake(),
          ...(options.log ? { log: options.log } : {}),
        })
      : undefined;
  }

  start(): void {
    this.loop.start();
    void this.notifications?.start();
  }

  async stop(): Promise<void> {
    await this.notifications?.stop();
    await this.loop.stop();
  }

  /** How many delivery workflows this fan-out started eagerly (`eagerStart`): their first task ran here. */
  get startedEagerly(): number {
    return this.eagerStarts;
  }

  /** One pass over the events due; returns how many deliveries it handed over for the events it finished. */
  async tick(): Promise<number> {
    return (await this.pass()).started;
  }

  private async pass(): Promise<{ claimed: number; started: number }> {
    // One token per pass: a pass whose lease ran out cannot overwrite the claim of the next holder.
    const token = `${this.owner}:${randomUUID()}`;
    const em = this.options.orm.em.fork();
    const events = await claimDueEvents(em, token, this.batchSize, this.leaseMs);
    if (events.length === 0) return { claimed: 0, started: 0 };
    // Past half the lease, leave the rest of the batch to the next pass rather than race its expiry.
    const stopAt = Date.now() + this.leaseMs / 2;
    let started = 0;
    let finished = false;
    try {
      const owed = await this.owedDeliveries(events);
      // Most events (a card decision's, any event of a tenant with no endpoint for it) owe no
      // delivery: marked together at once, in one statement, none of them a statement of its own.
      await markFannedOut(
        em,
        events.filter((event) => owed.get(event.id)!.length === 0).map((event) => event.id),
      );
      const owing = events.filter((event) => owed.get(event.id)!.length > 0);
      let next = 0;
      let leftOver = false;
      const worker = async () => {
        while (next < owing.length) {
          if (Date.now() > stopAt) {
            leftOver = true;
            return;
          }
          const event = owing[next++]!;
          // Not `started += await …`: that would read `started` before the wait and lose the other workers' counts.
          const handedOver = await this.fanOutOrPostpone(event, owed.get(event.id)!, token);
          started += handedOver;
        }
      };
      await Promise.all(Array.from({ length: Math.min(this.options.concurrency ?? 8, owing.length) }, worker));
      finished = !leftOver;
    } finally {
      // What this pass did not finish (left over, or cut short by a failure) is due again at once,
      // not when the claims run out; an event already marked is not claimed any more.
      if (!finished) await releaseClaims(em, token).catch(() => undefined);
    }
    return { claimed: events.length, started };
  }

  /**
   * The endpoints each event is owed a delivery to, read for the whole batch at once: its tenants'
   * listening endpoints that subscribe to its type, and the deliveries it already has.
   */
  private async owedDeliveries(events: ClaimedEvent[]): Promise<Map<string, string[]>> {
    const { endpoints, queued } = await fanoutTargets(
      this.options.orm.em.fork(),
      events.map((event) => event.tenant_id),
      events.map((event) => event.id),
    );
    return new Map(
      events.map((event) => [
        event.id,
        [
          ...new Set([
            // A test event is owed only the delivery it was sent with (decisions §15).
            ...(event.test ? [] : (endpoints.get(event.tenant_id) ?? []))
              .filter((candidate) => subscribes(candidate.events, event.type))
              .map((endpoint) => endpoint.id),
            // A delivery an earlier pass queued (its workflow start then failed) is owed its workflow
            // even if its endpoint has stopped listening since: its first attempt finds the endpoint
            // disabled by its tenant or its failures (and waits for it to be enabled), or disabled by
            // a 410 or deleted (and ends it as failed), sending nothing. Without this it stayed `queued` for ever (found by `npm run chaos`).
            ...(queued.get(event.id) ?? []),
          ]),
        ],
      ]),
    );
  }

  /**
   * Hands one event's deliveries over and marks it; on failure records it and sets its next try.
   * Never throws.
   */
  private async fanOutOrPostpone(event: ClaimedEvent, targets: string[], token: string): Promise<number> {
    try {
      // The trace the event was recorded in (a no-op when tracing is off: nothing is extracted).
      const trace = event.traceparent
        ? propagation.extract(ROOT_CONTEXT, { traceparent: event.traceparent })
        : undefined;
      for (const endpointId of targets) {
        await (trace ? context.with(trace, () => this.deliver(event, endpointId)) : this.deliver(event, endpointId));
      }
      await markFannedOut(this.options.orm.em.fork(), [event.id]);
      return targets.length;
    } catch (error) {
      const failures = event.fanout_attempts + 1;
      const retryInMs = fanoutRetryDelayMs(
        failures,
        this.options.retryBaseMs ?? 1_000,
        this.options.retryMaxMs ?? 300_000,
      );
      const message = error instanceof Error ? error.message : String(error);
      const fields = {
        eventId: event.id,
        tenantId: event.tenant_id,
        type: event.type,
        failures,
        retryInMs,
        // traceparent is 00-<trace id>-<span id>-<flags>
        ...(event.traceparent ? { traceId: event.traceparent.split('-')[1] } : {}),
      };
      try {
        await postponeFanout(this.options.orm.em.fork(), event.id, token, { message, retryInMs });
      } catch (recordError) {
        // The claim runs out and the event is tried again then.
        this.options.log?.('event fan-out failure could not be recorded', { ...fields, error: String(recordError) });
      }
      this.options.log?.('event fan-out failed; retrying later', { ...fields, error: message });
      return 0;
    }
  }

  private async deliver(event: { id: string; tenant_id: string; type: string }, endpointId: string): Promise<void> {
    const deliveryId = deliveryIdFor(event.id, endpointId);
    await this.options.orm.em.fork().transactional(async (tx) => {
      const queued = await queueDelivery(tx, {
        id: deliveryId,
        tenant_id: event.tenant_id,
        event_id: event.id,
        endpoint_id: endpointId,
        event_type: event.type,
      });
      if (queued && !isDeliveryEvent(event.type)) {
        await recordEvent(tx, {
          tenantId: event.tenant_id,
          type: 'event.delivery.queued',
          sourceKey: `delivery:${deliveryId}:event.delivery.queued:queued`,
          payload: { delivery_id: deliveryId, event_id: event.id, endpoint_id: endpointId, event_type: event.type },
        });
      }
    });
    const input: DeliveryInput = {
      deliveryId,
      tenantId: event.tenant_id,
      eventId: event.id,
      endpointId,
      scheduleMs: this.options.scheduleMs,
      jitter: this.options.jitter ?? 0.2,
    };
    try {
      const handle = await this.options.client.workflow.start<typeof webhookDeliveryWorkflow>(DELIVERY_WORKFLOW_TYPE, {
        workflowId: deliveryWorkflowId(event.id, endpointId),
        taskQueue: this.options.taskQueue,
        args: [input],
        workflowIdConflictPolicy: 'USE_EXISTING',
        workflowIdReusePolicy: 'REJECT_DUPLICATE',
        ...(this.options.eagerStart ? { requestEagerStart: true } : {}),
      });
      if (handle.eagerlyStarted) this.eagerStarts += 1;
    } catch (error) {
      // Started by an earlier pass (and perhaps already finished): nothing to do.
      if (!(error instanceof WorkflowExecutionAlreadyStartedError)) throw error;
    }
  }
}
