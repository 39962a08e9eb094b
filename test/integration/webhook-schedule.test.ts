// The full webhook retry schedule of decisions §8 (0 s, 5 s, 5 min, 30 min, 2 h, 5 h, 10 h, 14 h,
// 20 h, 24 h: about three days) under the time-skipping test server, against a receiver that
// always fails: the delivery ends `failed` with every attempt recorded.
import type { TestWorkflowEnvironment } from '@temporalio/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { defaultWebhookTaskQueue, parseDurationsMs } from '../../src/config.ts';
import { EventFanout } from '../../worker/webhook-fanout.ts';
import { deliveryIdFor } from '../../src/webhooks/store.ts';
import { WebhookService } from '../../src/webhooks/service.ts';
import { deliveryWorkflowId } from '../../workflows/webhooks/definitions.ts';
import { TEST_WEBHOOK_KEY, createFundedTenant, resolvedTestKey } from '../support/app.ts';
import type { TestDatabase } from '../support/database.ts';
import { type Receiver, startReceiver } from '../support/receiver.ts';
import { useTimeSkippingStack } from '../support/time-skipping.ts';

const TASK_QUEUE = 'webhook-schedule';
const SCHEDULE_MS = parseDurationsMs('0s,5s,5m,30m,2h,5h,10h,14h,20h,24h');

let env: TestWorkflowEnvironment;
let db: TestDatabase;
let receiver: Receiver;

useTimeSkippingStack({ taskQueue: TASK_QUEUE, bank: false, providerTimeoutMs: 500 }, (stack) => {
  ({ env, db } = stack);
});
beforeAll(async () => {
  receiver = await startReceiver();
});
afterAll(async () => {
  await receiver?.close();
});

describe('the full retry schedule', () => {
  it('makes ten attempts over about three days, then fails the delivery with every attempt recorded', async () => {
    const tenant = await createFundedTenant(db.orm);
    receiver.plan('/down', ...Array.from({ length: 10 }, () => ({ status: 500, body: 'still down' })));
    const webhooks = new WebhookService({
      orm: db.orm,
      client: env.client,
      taskQueue: defaultWebhookTaskQueue(TASK_QUEUE),
      encryptionKey: TEST_WEBHOOK_KEY,
      scheduleMs: SCHEDULE_MS,
      egress: {},
    });
    const endpoint = await webhooks.register(resolvedTestKey(tenant.tenantId, []), {
      url: `${receiver.url}/down`,
      events: ['webhook.endpoint.created'],
      signing_secret: 'whsec_c2VjcmV0LXNlY3JldC1zZWNyZXQtc2VjcmV0',
    });
    const fanout = new EventFanout({
      orm: db.orm,
      client: env.client,
      taskQueue: defaultWebhookTaskQueue(TASK_QUEUE),
      scheduleMs: SCHEDULE_MS,
    });
    expect(await fanout.tick()).toBe(1);

    const handle = env.client.workflow.getHandle(deliveryWorkflowId(endpoint.event_id, endpoint.id));
    const state = await handle.result();
    const { startTime, closeTime } = await handle.describe();
    const elapsedHours = (closeTime!.getTime() - startTime.getTime()) / 3_600_000;

    expect(state).toMatchObject({ status: 'failed', attempts: 10 });
    // 75 h 35 min 5 s of delays, each ±20%.
    expect(elapsedHours).toBeGreaterThan(75.6 * 0.8);
    expect(elapsedHours).toBeLessThan(75.6 * 1.2);
    expect(receiver.on('/down')).toHaveLength(10);
    expect(new Set(receiver.on('/down').map((request) => request.headers['webhook-id']))).toEqual(
      new Set([endpoint.event_id]),
    );

    const delivery = await webhooks.getDelivery(tenant.tenantId, deliveryIdFor(endpoint.event_id, endpoint.id));
    expect(delivery).toMatchObject({ status: 'failed', attempt_count: 10 });
    expect(delivery.attempts.map((attempt) => [attempt.number, attempt.status_code, attempt.response_body])).toEqual(
      Array.from({ length: 10 }, (_, i) => [i + 1, 500, 'still down']),
    );
  }, 120_000);
});
