// Auto-disable on the real stack (decisions §21), under a WEBHOOK_DISABLE_AFTER_HOURS shortened to
// two seconds: an endpoint every attempt to which has failed for that long is disabled,
// `webhook.endpoint.disabled` reaches the tenant's other endpoint, its deliveries are kept (neither
// attempted nor failed) and go out once it is enabled again; a success in between starts the run
// of failures afresh; and the sweep wakes the waiting deliveries of an endpoint whose enable lost
// its wake-up.
import type { FastifyInstance } from 'fastify';
import { describe, expect, it } from 'vitest';
import { PausedDeliverySweep } from '../../src/webhooks/sweep.ts';
import { deliveryWorkflowId } from '../../workflows/workflow-names.ts';
import { auth, newSigningSecret, registerEndpoint } from '../support/api.ts';
import { createFundedTenant } from '../support/app.ts';
import type { TestDatabase } from '../support/database.ts';
import { eventually } from '../support/eventually.ts';
import { type PlannedResponse, type ReceivedWebhook, type Receiver, startReceiver } from '../support/receiver.ts';
import { type GatewayStack, useGatewayStack } from '../support/stack.ts';

const TASK_QUEUE = `webhook-auto-disable-${process.pid}`;
const DISABLE_AFTER_MS = 2_000;
// Thirteen attempts half a second apart: a delivery outlives the two seconds of failures.
const SCHEDULE_MS = [0, ...Array.from({ length: 12 }, () => 500)];

let stack: GatewayStack;
let db: TestDatabase;
let app: FastifyInstance;
let receiver: Receiver;
/** How the receiver answers each path (else 200). */
const answers = new Map<string, PlannedResponse>();

useGatewayStack(
  {
    taskQueue: TASK_QUEUE,
    bank: { completionDelayMs: 100 },
    webhookScheduleMs: SCHEDULE_MS,
    webhookDisableAfterHours: DISABLE_AFTER_MS / 3_600_000,
  },
  async (started) => {
    stack = started;
    ({ db, app } = started);
    receiver = await startReceiver({ answer: (request) => answers.get(request.path) ?? { status: 200, body: 'ok' } });
  },
  () => receiver.close(),
);

const call = (apiKey: string, method: 'GET' | 'POST' | 'PATCH', url: string, payload?: object) =>
  app.inject({ method, url, headers: auth(apiKey), ...(payload ? { payload } : {}) });

async function listen(apiKey: string, path: string, events = ['transfer.settled']) {
  const response = await registerEndpoint(app, apiKey, {
    url: `${receiver.url}${path}`,
    events,
    signing_secret: newSigningSecret(),
  });
  expect(response.statusCode).toBe(201);
  return response.json().data.id as string;
}

async function testEvent(apiKey: string, endpointId: string) {
  const response = await call(apiKey, 'POST', `/api/v1/webhook-endpoints/${endpointId}/test`);
  expect(response.statusCode).toBe(202);
  return response.json().data as { event_id: string; delivery_id: string };
}

const delivery = async (apiKey: string, id: string) =>
  (await call(apiKey, 'GET', `/api/v1/webhook-deliveries/${id}`)).json().data;
const endpoint = async (apiKey: string, id: string) =>
  (await call(apiKey, 'GET', `/api/v1/webhook-endpoints/${id}`)).json().data;
const received = (eventId: string): ReceivedWebhook[] =>
  receiver.received.filter((request) => request.headers['webhook-id'] === eventId);
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** Whether each of these deliveries is marked as waiting for its endpoint. */
async function paused(ids: string[]): Promise<boolean> {
  const rows = await db.orm.em
    .fork()
    .execute<{ paused: boolean }[]>(
      `select paused_at is not null as paused from webhook_deliveries where id in (${ids.map(() => '?').join(', ')})`,
      ids,
    );
  return rows.length === ids.length && rows.every((row) => row.paused);
}

describe('an endpoint failing every attempt for WEBHOOK_DISABLE_AFTER_HOURS', () => {
  it('is disabled and announced to the other endpoints; its deliveries are kept and go out once it is enabled again', async () => {
    const tenant = await createFundedTenant(db.orm);
    const watcher = await listen(tenant.apiKey, '/watcher', ['webhook.endpoint.disabled']);
    answers.set('/down', { status: 500, body: 'down' });
    const id = await listen(tenant.apiKey, '/down');
    const first = await testEvent(tenant.apiKey, id);
    await eventually(() => received(first.event_id).length >= 2);
    const second = await testEvent(tenant.apiKey, id);

    const announced = await eventually(
      () => receiver.on('/watcher').find((hook) => JSON.parse(hook.body).type === 'webhook.endpoint.disabled'),
      30_000,
    );
    const disabled = await endpoint(tenant.apiKey, id);
    expect(disabled).toMatchObject({
      status: 'disabled',
      enabled: false,
      disabled_reason: expect.stringMatching(
        /^every attempt failed for more than 0\.000555\d* hours \(WEBHOOK_DISABLE_AFTER_HOURS\), since \d{4}-/,
      ),
      disabled_at: expect.any(String),
      failing_since: expect.any(String),
    });
    expect(JSON.parse(announced.body).data).toEqual(disabled);
    // Its first failure began the run; it was disabled at the first failed attempt two seconds or more after it.
    const firstAttempt = (await delivery(tenant.apiKey, first.delivery_id)).attempts[0];
    expect(disabled.failing_since).toBe(firstAttempt.attempted_at);
    expect(Date.parse(disabled.disabled_at) - Date.parse(disabled.failing_since)).toBeGreaterThanOrEqual(
      DISABLE_AFTER_MS,
    );
    // Announced once, to the other endpoint only (the disabled one no longer listens), and on the tenant's events.
    const events = await call(tenant.apiKey, 'GET', '/api/v1/events?type=webhook.endpoint.disabled');
    expect(events.json().data.items.map((event: { data: { id: string } }) => event.data.id)).toEqual([id]);

    // Both deliveries wait: no attempt is made and neither fails, long past their schedule's end.
    await eventually(() => paused([first.delivery_id, second.delivery_id]), 30_000);
    const sent = receiver.on('/down').length;
    const before = [
      await delivery(tenant.apiKey, first.delivery_id),
      await delivery(tenant.apiKey, second.delivery_id),
    ];
    await sleep(SCHEDULE_MS.reduce((total, ms) => total + ms, 0));
    expect(receiver.on('/down')).toHaveLength(sent);
    for (const [index, one] of [first, second].entries()) {
      const now = await delivery(tenant.apiKey, one.delivery_id);
      expect(now).toMatchObject({ status: 'retrying', endpoint_state: 'disabled' });
      expect(now.attempt_count).toBe(before[index].attempt_count);
    }

    // The receiver is back, and the tenant enables the endpoint: both deliveries go out, once each.
    answers.delete('/down');
    const requestsBefore = [first, second].map((one) => received(one.event_id).length);
    const enabled = await call(tenant.apiKey, 'PATCH', `/api/v1/webhook-endpoints/${id}`, { enabled: true });
    expect(enabled.json().data).toMatchObject({ status: 'listening', enabled: true });
    expect(enabled.json().data).not.toHaveProperty('failing_since');
    for (const [index, one] of [first, second].entries()) {
      const done = await eventually(async () => {
        const found = await delivery(tenant.apiKey, one.delivery_id);
        return found.status === 'succeeded' ? found : undefined;
      });
      expect(done.attempt_count).toBe(before[index].attempt_count + 1);
      expect(done.attempts.at(-1)).toMatchObject({ status_code: 200 });
      expect(received(one.event_id)).toHaveLength(requestsBefore[index]! + 1);
    }
    expect(await paused([first.delivery_id])).toBe(false);
    expect((await endpoint(tenant.apiKey, id)).status).toBe('listening');
    // The watcher was never disabled.
    expect((await endpoint(tenant.apiKey, watcher)).status).toBe('listening');
  }, 90_000);

  it('is not disabled when a success breaks its failures: the run starts again at the next failure', async () => {
    const tenant = await createFundedTenant(db.orm);
    const id = await listen(tenant.apiKey, '/flapping');
    // Two failures half a second apart, a success; 2.5 s later two failures again, a success. The
    // first and last failures are more than 2 s apart, but never unbroken by a success.
    receiver.plan('/flapping', { status: 500 }, { status: 500 });
    const first = await testEvent(tenant.apiKey, id);
    const firstDone = await eventually(async () => {
      const found = await delivery(tenant.apiKey, first.delivery_id);
      return found.status === 'succeeded' ? found : undefined;
    }, 30_000);
    expect((await endpoint(tenant.apiKey, id)).failing_since).toBeUndefined();
    await sleep(DISABLE_AFTER_MS + 500);
    receiver.plan('/flapping', { status: 500 }, { status: 500 });
    const second = await testEvent(tenant.apiKey, id);
    const secondDone = await eventually(async () => {
      const found = await delivery(tenant.apiKey, second.delivery_id);
      return found.status === 'succeeded' ? found : undefined;
    }, 30_000);
    expect(
      Date.parse(secondDone.attempts[1].attempted_at) - Date.parse(firstDone.attempts[0].attempted_at),
    ).toBeGreaterThan(DISABLE_AFTER_MS);
    const after = await endpoint(tenant.apiKey, id);
    expect(after).toMatchObject({ status: 'listening', enabled: true });
    expect(after).not.toHaveProperty('failing_since');
    expect(received(first.event_id)).toHaveLength(3);
    expect(received(second.event_id)).toHaveLength(3);
  }, 60_000);

  it('wakes, by the sweep, the deliveries of an endpoint enabled while its wake-up was lost', async () => {
    const tenant = await createFundedTenant(db.orm);
    answers.set('/lost', { status: 503, headers: { 'retry-after': '5' } });
    const id = await listen(tenant.apiKey, '/lost');
    const one = await testEvent(tenant.apiKey, id);
    await eventually(() => received(one.event_id).length === 1);
    expect((await call(tenant.apiKey, 'PATCH', `/api/v1/webhook-endpoints/${id}`, { enabled: false })).statusCode).toBe(
      200,
    );
    answers.delete('/lost');
    await eventually(() => paused([one.delivery_id]));
    // The mark comes before the attempt reads its endpoint again (an enable just after the mark is
    // seen by that read, and the attempt goes on): the delivery waits only once the attempt that
    // found its endpoint disabled has answered `paused`, in the run's history.
    const run = stack.client.workflow.getHandle(deliveryWorkflowId(one.event_id, id));
    await eventually(async () => {
      const { events } = await run.fetchHistory();
      return (events ?? []).some((event) =>
        (event.activityTaskCompletedEventAttributes?.result?.payloads ?? []).some((payload) =>
          Buffer.from(payload.data ?? [])
            .toString('utf8')
            .includes('"outcome":"paused"'),
        ),
      );
    });
    // Enabled as an API process that died before its wake-up would leave it: listening, nobody told.
    await db.orm.em
      .fork()
      .execute(
        `update webhook_endpoints set status = 'listening', disabled_reason = null, disabled_at = null where id = ?`,
        [id],
      );
    await sleep(1_000);
    expect(received(one.event_id)).toHaveLength(1);
    const sweep = new PausedDeliverySweep({ orm: db.orm, client: stack.client, log: () => {}, graceMs: 0 });
    expect(await sweep.pass()).toBe(1);
    await eventually(async () => (await delivery(tenant.apiKey, one.delivery_id)).status === 'succeeded');
    expect(received(one.event_id)).toHaveLength(2);
    // Nothing waits any more: the next pass wakes nothing.
    expect(await sweep.pass()).toBe(0);
  });
});
