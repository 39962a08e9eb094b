// Event fan-out: every event reaches every endpoint of its tenant that subscribes to its type, as
// one delivery per (event, endpoint) with its own workflow. Events are the outbox: an event
// stays unmarked until its deliveries exist and their workflows are started, and every step is
// idempotent (delivery ids derive from the pair, workflow ids from the same), so a process that
// dies between an event's commit and its fan-out loses nothing: the next pass finishes the job.
import { createHash } from 'node:crypto';
import type { MikroORM } from '@mikro-orm/postgresql';
import { type Client, WorkflowExecutionAlreadyStartedError } from '@temporalio/client';
import { recordEvent } from '../events/events.ts';
import { PollingLoop } from '../stack/polling-loop.ts';
import {
  DELIVERY_WORKFLOW_TYPE,
  type DeliveryInput,
  deliveryWorkflowId,
} from '../../workflows/webhook-delivery-definitions.ts';
import type { webhookDeliveryWorkflow } from '../../workflows/webhook-delivery.ts';
import { isDeliveryEvent, subscribes } from './event-types.ts';

/** The delivery id of an (event, endpoint) pair: a UUID drawn from their hash, the same every time. */
export function deliveryIdFor(eventId: string, endpointId: string): string {
  const hex = createHash('sha256').update(`${eventId}:${endpointId}`).digest('hex');
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-5${hex.slice(13, 16)}-a${hex.slice(17, 20)}-${hex.slice(20, 32)}`;
}

export interface FanoutOptions {
  orm: MikroORM;
  client: Client;
  taskQueue: string;
  scheduleMs: number[];
  jitter?: number;
  intervalMs?: number;
  log?: (message: string, fields?: Record<string, unknown>) => void;
}

export class EventFanout {
  private readonly options: FanoutOptions;
  private readonly loop: PollingLoop;

  constructor(options: FanoutOptions) {
    this.options = options;
    this.loop = new PollingLoop(
      () => this.tick(),
      options.intervalMs ?? 200,
      (error) => options.log?.('event fan-out pass failed', { error: String(error) }),
    );
  }

  start(): void {
    this.loop.start();
  }

  stop(): Promise<void> {
    return this.loop.stop();
  }

  /** One pass over events not yet fanned out; returns how many deliveries it started. */
  async tick(): Promise<number> {
    const em = this.options.orm.em.fork();
    const events = await em.execute<{ id: string; tenant_id: string; type: string }[]>(
      'select id, tenant_id, type from events where fanned_out_at is null order by created_at limit 100',
    );
    let started = 0;
    for (const event of events) {
      const endpoints = await em.execute<{ id: string; events: string[] }[]>(
        `select id, events from webhook_endpoints where tenant_id = ? and status = 'listening'`,
        [event.tenant_id],
      );
      for (const endpoint of endpoints.filter((candidate) => subscribes(candidate.events, event.type))) {
        await this.deliver(event, endpoint.id);
        started += 1;
      }
      await em.execute('update events set fanned_out_at = now() where id = ? and fanned_out_at is null', [event.id]);
    }
    return started;
  }

  private async deliver(event: { id: string; tenant_id: string; type: string }, endpointId: string): Promise<void> {
    const deliveryId = deliveryIdFor(event.id, endpointId);
    await this.options.orm.em.fork().transactional(async (tx) => {
      const inserted = await tx.execute<{ id: string }[]>(
        `insert into webhook_deliveries (id, tenant_id, event_id, endpoint_id, event_type, status)
         values (?, ?, ?, ?, ?, 'queued') on conflict on constraint webhook_deliveries_pair do nothing returning id`,
        [deliveryId, event.tenant_id, event.id, endpointId, event.type],
      );
      if (inserted.length > 0 && !isDeliveryEvent(event.type)) {
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
      await this.options.client.workflow.start<typeof webhookDeliveryWorkflow>(DELIVERY_WORKFLOW_TYPE, {
        workflowId: deliveryWorkflowId(event.id, endpointId),
        taskQueue: this.options.taskQueue,
        args: [input],
        workflowIdConflictPolicy: 'USE_EXISTING',
        workflowIdReusePolicy: 'REJECT_DUPLICATE',
      });
    } catch (error) {
      // Started by an earlier pass (and perhaps already finished): nothing to do.
      if (!(error instanceof WorkflowExecutionAlreadyStartedError)) throw error;
    }
  }
}
