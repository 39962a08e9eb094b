// The webhook endpoint's lifecycle on the real stack (decisions §21), with a real local receiver:
// PATCH of its URL and events, disabling it (its deliveries wait, attempting and failing nothing)
// and enabling it again (they go out), a secret rotation whose overlap deliveries verify with either
// secret through the `standardwebhooks` library unchanged and with only the new one afterwards, and
// recover-since delivering again exactly the deliveries of the window that have not succeeded.
// Auto-disable, under a shortened WEBHOOK_DISABLE_AFTER_HOURS, is webhook-auto-disable.test.ts.
import type { FastifyInstance } from 'fastify';
import { Webhook } from 'standardwebhooks';
import { describe, expect, it } from 'vitest';
import { auth, expectFieldRefused, newSigningSecret, registerEndpoint } from '../support/api.ts';
import { createFundedTenant } from '../support/app.ts';
import type { TestDatabase } from '../support/database.ts';
import { eventually } from '../support/eventually.ts';
import { recordHistory } from '../support/histories.ts';
import { deliveryWorkflowId } from '../../workflows/webhooks/definitions.ts';
import { type PlannedResponse, type ReceivedWebhook, type Receiver, startReceiver } from '../support/receiver.ts';
import { fakeDns, useGatewayStack } from '../support/stack.ts';

const TASK_QUEUE = `webhook-lifecycle-${process.pid}`;
// Three attempts over about a second: a delivery to a receiver that is down fails quickly.
const SCHEDULE_MS = [0, 300, 600];
const resolver = fakeDns({ 'hooks.example.com': ['93.184.216.34'], 'internal.example.com': ['10.1.2.3'] });

let db: TestDatabase;
let app: FastifyInstance;
let receiver: Receiver;
/**
 * How the receiver answers, by path and then by the event type in the body (`*`: any), else 200.
 * Set before an event is sent (test events of a chosen type), so that no attempt can come first.
 */
const answers = new Map<string, Record<string, PlannedResponse>>();

useGatewayStack(
  { taskQueue: TASK_QUEUE, resolver, bank: { completionDelayMs: 100 }, webhookScheduleMs: SCHEDULE_MS },
  async (started) => {
    ({ db, app } = started);
    receiver = await startReceiver({
      answer: (request) => {
        const byType = answers.get(request.path);
        return byType?.[JSON.parse(request.body).type] ?? byType?.['*'] ?? { status: 200, body: 'ok' };
      },
    });
  },
  () => receiver.close(),
);

const call = (apiKey: string, method: 'GET' | 'POST' | 'PATCH' | 'DELETE', url: string, payload?: object) =>
  app.inject({ method, url, headers: auth(apiKey), ...(payload ? { payload } : {}) });

async function listen(apiKey: string, path: string, events = ['transfer.settled'], secret = newSigningSecret()) {
  const response = await registerEndpoint(app, apiKey, {
    url: `${receiver.url}${path}`,
    events,
    signing_secret: secret,
  });
  expect(response.statusCode).toBe(201);
  return response.json().data.id as string;
}

/** A test event to the endpoint (`webhook.endpoint.test`, or a sample of `type`): its event and delivery ids. */
async function testEvent(apiKey: string, endpointId: string, type?: string) {
  const response = await call(
    apiKey,
    'POST',
    `/api/v1/webhook-endpoints/${endpointId}/test`,
    type ? { type } : undefined,
  );
  expect(response.statusCode).toBe(202);
  return response.json().data as { event_id: string; delivery_id: string };
}

const delivery = async (apiKey: string, id: string) =>
  (await call(apiKey, 'GET', `/api/v1/webhook-deliveries/${id}`)).json().data;

/** The delivery once it is in `status`. */
const deliveryIn = (apiKey: string, id: string, status: string, timeoutMs = 30_000) =>
  eventually(async () => {
    const found = await delivery(apiKey, id);
    return found.status === status ? found : undefined;
  }, timeoutMs);

/** The webhooks the receiver got for an event. */
const received = (eventId: string): ReceivedWebhook[] =>
  receiver.received.filter((request) => request.headers['webhook-id'] === eventId);

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

describe('PATCH /api/v1/webhook-endpoints/{id}', () => {
  it('changes the URL and the events, and the next deliveries go to the new URL, for the new events only', async () => {
    const tenant = await createFundedTenant(db.orm);
    const id = await listen(tenant.apiKey, '/patch-old', ['transfer.settled']);
    const patched = await call(tenant.apiKey, 'PATCH', `/api/v1/webhook-endpoints/${id}`, {
      url: `${receiver.url}/patch-new`,
      events: ['webhook.endpoint.disabled', 'webhook.endpoint.disabled', 'transfer.failed'],
    });
    expect(patched.statusCode).toBe(200);
    expect(patched.json().data).toEqual({
      id,
      url: `${receiver.url}/patch-new`,
      events: ['webhook.endpoint.disabled', 'transfer.failed'],
      status: 'listening',
      enabled: true,
      created_at: expect.any(String),
      updated_at: expect.any(String),
    });
    expect((await call(tenant.apiKey, 'GET', `/api/v1/webhook-endpoints/${id}`)).json().data).toEqual(
      patched.json().data,
    );
    const { event_id } = await testEvent(tenant.apiKey, id);
    const [request] = await eventually(() => (received(event_id).length > 0 ? received(event_id) : undefined));
    expect(request!.path).toBe('/patch-new');
    expect(receiver.on('/patch-old')).toEqual([]);

    // Another endpoint of the tenant, disabled: its webhook.endpoint.disabled reaches this one, which now names it.
    const other = await listen(tenant.apiKey, '/patch-other');
    expect(
      (await call(tenant.apiKey, 'PATCH', `/api/v1/webhook-endpoints/${other}`, { enabled: false })).statusCode,
    ).toBe(200);
    const announced = await eventually(() =>
      receiver.on('/patch-new').find((hook) => JSON.parse(hook.body).type === 'webhook.endpoint.disabled'),
    );
    expect(JSON.parse(announced.body).data).toMatchObject({
      id: other,
      status: 'disabled',
      enabled: false,
      disabled_reason: 'disabled by the tenant',
      disabled_at: expect.any(String),
    });
  });

  it('refuses a URL registration would refuse, an unknown event, an empty or unknown body, naming the field; another tenant’s endpoint is 404', async () => {
    const tenant = await createFundedTenant(db.orm);
    const live = await createFundedTenant(db.orm, 0, 'live lifecycle', 'live');
    const id = await listen(tenant.apiKey, '/patch-refused');
    const url = `/api/v1/webhook-endpoints/${id}`;
    expectFieldRefused(await call(tenant.apiKey, 'PATCH', url, { url: 'http://10.0.0.8/x' }), 'url');
    expectFieldRefused(await call(tenant.apiKey, 'PATCH', url, { url: 'not a url' }), 'url');
    expectFieldRefused(await call(tenant.apiKey, 'PATCH', url, { events: ['transfer.teleported'] }), 'events[0]');
    expectFieldRefused(await call(tenant.apiKey, 'PATCH', url, { events: [] }), 'events');
    expectFieldRefused(await call(tenant.apiKey, 'PATCH', url, { enabled: 'yes' }), 'enabled');
    const empty = await call(tenant.apiKey, 'PATCH', url, {});
    expect(empty.statusCode).toBe(400);
    expect(empty.json().error.message).toMatch(/must give url, events or enabled/);
    expect((await call(tenant.apiKey, 'PATCH', url, { signing_secret: newSigningSecret() })).statusCode).toBe(400);
    // A live key's endpoint: https on a public address only, as at registration.
    const liveId = (
      await registerEndpoint(app, live.apiKey, {
        url: 'https://hooks.example.com/x',
        events: ['*'],
        signing_secret: newSigningSecret(),
      })
    ).json().data.id as string;
    for (const refused of ['http://hooks.example.com/x', 'https://internal.example.com/x', `${receiver.url}/x`]) {
      expectFieldRefused(
        await call(live.apiKey, 'PATCH', `/api/v1/webhook-endpoints/${liveId}`, { url: refused }),
        'url',
      );
    }
    // Nothing changed.
    expect((await call(tenant.apiKey, 'GET', url)).json().data).toMatchObject({
      url: `${receiver.url}/patch-refused`,
      events: ['transfer.settled'],
      status: 'listening',
    });
    const stranger = await createFundedTenant(db.orm);
    const foreign = await call(stranger.apiKey, 'PATCH', url, { enabled: false });
    expect(foreign.statusCode).toBe(404);
    expect(foreign.json().error.code).toBe('NOT_FOUND');
    expect((await call(tenant.apiKey, 'GET', url)).json().data.status).toBe('listening');
    // A deleted endpoint is not found either.
    expect((await call(tenant.apiKey, 'DELETE', url)).statusCode).toBe(200);
    expect((await call(tenant.apiKey, 'PATCH', url, { enabled: true })).statusCode).toBe(404);
  });
});

describe('disabled and enabled again', () => {
  it('attempts and fails nothing while disabled; the deliveries waiting go out once it is enabled again', async () => {
    const tenant = await createFundedTenant(db.orm);
    const id = await listen(tenant.apiKey, '/paused', ['transfer.settled']);
    // The receiver is down: the first attempt fails and the delivery retries in 5 s.
    answers.set('/paused', { '*': { status: 503, headers: { 'retry-after': '5' } } });
    const first = await testEvent(tenant.apiKey, id);
    await eventually(() => received(first.event_id).length === 1);
    await deliveryIn(tenant.apiKey, first.delivery_id, 'retrying');

    const disabled = await call(tenant.apiKey, 'PATCH', `/api/v1/webhook-endpoints/${id}`, { enabled: false });
    expect(disabled.statusCode).toBe(200);
    expect(disabled.json().data).toMatchObject({
      status: 'disabled',
      enabled: false,
      disabled_reason: 'disabled by the tenant',
      disabled_at: expect.any(String),
      failing_since: expect.any(String),
    });
    // Disabling again changes nothing and announces nothing more.
    expect(
      (await call(tenant.apiKey, 'PATCH', `/api/v1/webhook-endpoints/${id}`, { enabled: false })).json().data,
    ).toEqual(disabled.json().data);
    const [announcements] = await db.orm.em
      .fork()
      .execute<{ n: string }[]>(
        `select count(*) as n from events where type = 'webhook.endpoint.disabled' and payload->>'id' = ?`,
        [id],
      );
    expect(Number(announcements!.n)).toBe(1);
    // A test event to a disabled endpoint is refused, as before.
    expect((await call(tenant.apiKey, 'POST', `/api/v1/webhook-endpoints/${id}/test`)).statusCode).toBe(422);

    // Its retry came due (5 s) and then some: nothing was sent, and the delivery has not failed.
    answers.delete('/paused');
    await eventually(async () => {
      const [row] = await db.orm.em
        .fork()
        .execute<{ paused: boolean }[]>('select paused_at is not null as paused from webhook_deliveries where id = ?', [
          first.delivery_id,
        ]);
      return row?.paused === true;
    });
    await sleep(1_500);
    expect(received(first.event_id)).toHaveLength(1);
    expect(await delivery(tenant.apiKey, first.delivery_id)).toMatchObject({
      status: 'retrying',
      attempt_count: 1,
      endpoint_state: 'disabled',
    });

    const enabled = await call(tenant.apiKey, 'PATCH', `/api/v1/webhook-endpoints/${id}`, { enabled: true });
    expect(enabled.statusCode).toBe(200);
    expect(enabled.json().data).toEqual({
      id,
      url: `${receiver.url}/paused`,
      events: ['transfer.settled'],
      status: 'listening',
      enabled: true,
      created_at: expect.any(String),
      updated_at: expect.any(String),
    });
    const done = await deliveryIn(tenant.apiKey, first.delivery_id, 'succeeded');
    expect(
      done.attempts.map((attempt: { number: number; status_code: number }) => [attempt.number, attempt.status_code]),
    ).toEqual([
      [1, 503],
      [2, 200],
    ]);
    expect(received(first.event_id)).toHaveLength(2);
    expect(received(first.event_id)[1]!.headers['webhook-id']).toBe(first.event_id);
    recordHistory('webhook-paused-then-enabled', deliveryWorkflowId(first.event_id, id));
  });
});

describe('deleted while disabled', () => {
  it('ends the deliveries that waited for it as failed, sending nothing', async () => {
    const tenant = await createFundedTenant(db.orm);
    answers.set('/deleted', { '*': { status: 503, headers: { 'retry-after': '1' } } });
    const id = await listen(tenant.apiKey, '/deleted');
    const one = await testEvent(tenant.apiKey, id);
    await deliveryIn(tenant.apiKey, one.delivery_id, 'retrying');
    expect((await call(tenant.apiKey, 'PATCH', `/api/v1/webhook-endpoints/${id}`, { enabled: false })).statusCode).toBe(
      200,
    );
    await eventually(async () => {
      const [row] = await db.orm.em
        .fork()
        .execute<{ paused: boolean }[]>('select paused_at is not null as paused from webhook_deliveries where id = ?', [
          one.delivery_id,
        ]);
      return row?.paused === true;
    });
    const sent = received(one.event_id).length;
    expect((await call(tenant.apiKey, 'DELETE', `/api/v1/webhook-endpoints/${id}`)).statusCode).toBe(200);
    // Woken by the delete, not by its six-hour recheck.
    const ended = await deliveryIn(tenant.apiKey, one.delivery_id, 'failed', 10_000);
    expect(ended).toMatchObject({ endpoint_state: 'deleted', attempt_count: sent });
    expect(received(one.event_id)).toHaveLength(sent);
  });
});

describe('disabled by a 410', () => {
  it('ends the endpoint’s other deliveries as failed, sending nothing (gone for good), and announces it', async () => {
    const tenant = await createFundedTenant(db.orm);
    await listen(tenant.apiKey, '/gone-watcher', ['webhook.endpoint.disabled']);
    // Busy for transfer.created samples (retry in 3 s), gone for transfer.failed ones.
    answers.set('/gone', {
      'transfer.created': { status: 503, headers: { 'retry-after': '3' } },
      'transfer.failed': { status: 410 },
    });
    const id = await listen(tenant.apiKey, '/gone');
    const waiting = await testEvent(tenant.apiKey, id, 'transfer.created');
    await deliveryIn(tenant.apiKey, waiting.delivery_id, 'retrying');
    const gone = await testEvent(tenant.apiKey, id, 'transfer.failed');
    await deliveryIn(tenant.apiKey, gone.delivery_id, 'failed');
    const ended = await deliveryIn(tenant.apiKey, waiting.delivery_id, 'failed');
    expect(ended).toMatchObject({ attempt_count: 1, endpoint_state: 'disabled' });
    expect(received(waiting.event_id)).toHaveLength(1);
    const announced = await eventually(() => receiver.on('/gone-watcher')[0]);
    expect(JSON.parse(announced.body)).toMatchObject({
      type: 'webhook.endpoint.disabled',
      data: { id, status: 'disabled', enabled: false, disabled_reason: 'the receiver answered 410 Gone' },
    });
  });
});

describe('secret rotation', () => {
  const verifies = (secret: string, hook: ReceivedWebhook) => {
    try {
      new Webhook(secret).verify(hook.body, hook.headers as Record<string, string>);
      return true;
    } catch {
      return false;
    }
  };

  it('signs with both secrets during the overlap, drops the oldest at a second rotation, and signs with the new one alone afterwards', async () => {
    const tenant = await createFundedTenant(db.orm);
    const [first, second, third, fourth] = [
      newSigningSecret(),
      newSigningSecret(),
      newSigningSecret(),
      newSigningSecret(),
    ];
    const id = await listen(tenant.apiKey, '/rotate', ['transfer.settled'], first);
    const rotate = (body: object) => call(tenant.apiKey, 'POST', `/api/v1/webhook-endpoints/${id}/rotate-secret`, body);
    const delivered = async () => {
      const { event_id } = await testEvent(tenant.apiKey, id);
      const [hook] = await eventually(() => (received(event_id).length > 0 ? received(event_id) : undefined));
      return hook!;
    };

    const before = await delivered();
    expect(before.headers['webhook-signature']).toMatch(/^v1,[A-Za-z0-9+/=]+$/);
    expect([verifies(first, before), verifies(second, before)]).toEqual([true, false]);

    // Rotation with the default overlap: 24 h during which both secrets sign.
    const rotated = await rotate({ signing_secret: second });
    expect(rotated.statusCode).toBe(200);
    const expires = Date.parse(rotated.json().data.previous_secret_expires_at);
    expect(Math.abs(expires - Date.now() - 24 * 3_600_000)).toBeLessThan(60_000);
    expect(JSON.stringify(rotated.json())).not.toMatch(/whsec_/);
    const overlap = await delivered();
    expect(String(overlap.headers['webhook-signature']).split(' ')).toHaveLength(2);
    expect(String(overlap.headers['webhook-signature'])).toMatch(/^v1,\S+ v1,\S+$/);
    // The receiver's library, unchanged, verifies it with either secret, and with no other.
    expect([verifies(first, overlap), verifies(second, overlap), verifies(third, overlap)]).toEqual([
      true,
      true,
      false,
    ]);

    // A second rotation during the overlap drops the oldest secret: the replaced one (second) still signs.
    expect((await rotate({ signing_secret: third, overlap_hours: 1 })).statusCode).toBe(200);
    const again = await delivered();
    expect([verifies(first, again), verifies(second, again), verifies(third, again)]).toEqual([false, true, true]);

    // The hour passes (the overlap's end moved to a second ago): the new secret alone signs.
    await db.orm.em
      .fork()
      .execute(`update webhook_endpoints set previous_secret_expires_at = now() - interval '1 second' where id = ?`, [
        id,
      ]);
    expect((await call(tenant.apiKey, 'GET', `/api/v1/webhook-endpoints/${id}`)).json().data).not.toHaveProperty(
      'previous_secret_expires_at',
    );
    const after = await delivered();
    expect(String(after.headers['webhook-signature'])).toMatch(/^v1,[A-Za-z0-9+/=]+$/);
    expect([verifies(second, after), verifies(third, after)]).toEqual([false, true]);

    // No overlap at all: the replaced secret stops at once.
    const abrupt = await rotate({ signing_secret: fourth, overlap_hours: 0 });
    expect(abrupt.json().data).not.toHaveProperty('previous_secret_expires_at');
    const last = await delivered();
    expect([verifies(third, last), verifies(fourth, last)]).toEqual([false, true]);
  });

  it('refuses a short secret or an overlap beyond 0 to 72 hours, naming the field; another tenant’s endpoint is 404', async () => {
    const tenant = await createFundedTenant(db.orm);
    const id = await listen(tenant.apiKey, '/rotate-refused');
    const url = `/api/v1/webhook-endpoints/${id}/rotate-secret`;
    expectFieldRefused(await call(tenant.apiKey, 'POST', url, { signing_secret: 'short' }), 'signing_secret');
    expectFieldRefused(await call(tenant.apiKey, 'POST', url, {}), 'signing_secret');
    for (const overlap of [-1, 73, 1.5, '24']) {
      expectFieldRefused(
        await call(tenant.apiKey, 'POST', url, { signing_secret: newSigningSecret(), overlap_hours: overlap }),
        'overlap_hours',
      );
    }
    const stranger = await createFundedTenant(db.orm);
    expect((await call(stranger.apiKey, 'POST', url, { signing_secret: newSigningSecret() })).statusCode).toBe(404);
    const [row] = await db.orm.em
      .fork()
      .execute<{ previous: string | null }[]>(
        'select previous_secret_ciphertext as previous from webhook_endpoints where id = ?',
        [id],
      );
    expect(row!.previous).toBeNull();
  });
});

describe('recover since', () => {
  it('delivers again exactly the deliveries of the window that failed or are retrying, once each, with their webhook-ids', async () => {
    const tenant = await createFundedTenant(db.orm);
    const id = await listen(tenant.apiKey, '/recover');
    // The receiver is down for transfer.failed samples, busy for a while for transfer.created ones.
    answers.set('/recover', {
      'transfer.failed': { status: 500, body: 'down' },
      'transfer.created': { status: 503, headers: { 'retry-after': '600' } },
    });

    // Before the window: failed, and left alone.
    const before = await testEvent(tenant.apiKey, id, 'transfer.failed');
    await deliveryIn(tenant.apiKey, before.delivery_id, 'failed');
    await sleep(20);
    const since = new Date();
    await sleep(20);

    // In the window: two that fail for good, one that succeeds, one still retrying (Retry-After: 10 min).
    const failedOnes = [
      await testEvent(tenant.apiKey, id, 'transfer.failed'),
      await testEvent(tenant.apiKey, id, 'transfer.failed'),
    ];
    const succeeded = await testEvent(tenant.apiKey, id);
    const retrying = await testEvent(tenant.apiKey, id, 'transfer.created');
    for (const one of failedOnes) await deliveryIn(tenant.apiKey, one.delivery_id, 'failed');
    await deliveryIn(tenant.apiKey, succeeded.delivery_id, 'succeeded');
    await deliveryIn(tenant.apiKey, retrying.delivery_id, 'retrying');
    const counts = () => [before, ...failedOnes, succeeded, retrying].map((one) => received(one.event_id).length);
    expect(counts()).toEqual([3, 3, 3, 1, 1]);

    // The receiver is back.
    answers.delete('/recover');
    const recovered = await call(tenant.apiKey, 'POST', `/api/v1/webhook-endpoints/${id}/recover`, {
      since: since.toISOString(),
    });
    expect(recovered.statusCode).toBe(202);
    expect(recovered.json()).toEqual({
      data: { recovering: 3 },
      meta: { timestamp: expect.any(String), requestId: expect.any(String) },
    });
    for (const one of [...failedOnes, retrying]) {
      const done = await deliveryIn(tenant.apiKey, one.delivery_id, 'succeeded');
      expect(done.replay_id).toMatch(/^rpl_[0-9a-f]{32}$/);
      expect(done.attempts.at(-1)).toMatchObject({ status_code: 200, replay_id: done.replay_id });
    }
    // Settled: one more request for each recovered delivery, none for the others.
    await sleep(1_000);
    expect(counts()).toEqual([3, 4, 4, 1, 2]);
    for (const one of [...failedOnes, retrying])
      expect(received(one.event_id).at(-1)!.headers['webhook-id']).toBe(one.event_id);
    expect((await delivery(tenant.apiKey, before.delivery_id)).status).toBe('failed');
    expect((await delivery(tenant.apiKey, succeeded.delivery_id)).attempt_count).toBe(1);
  });

  it('refuses a since more than 14 days back or in the future (400), a disabled endpoint (422), another tenant’s (404)', async () => {
    const tenant = await createFundedTenant(db.orm);
    const id = await listen(tenant.apiKey, '/recover-refused');
    const url = `/api/v1/webhook-endpoints/${id}/recover`;
    const day = 24 * 3_600_000;
    expectFieldRefused(
      await call(tenant.apiKey, 'POST', url, { since: new Date(Date.now() - 14 * day - 60_000).toISOString() }),
      'since',
    );
    expectFieldRefused(
      await call(tenant.apiKey, 'POST', url, { since: new Date(Date.now() + 60_000).toISOString() }),
      'since',
    );
    expectFieldRefused(await call(tenant.apiKey, 'POST', url, { since: 'yesterday' }), 'since');
    expectFieldRefused(await call(tenant.apiKey, 'POST', url, {}), 'since');
    const fine = await call(tenant.apiKey, 'POST', url, {
      since: new Date(Date.now() - 14 * day + 60_000).toISOString(),
    });
    expect(fine.statusCode).toBe(202);
    expect(fine.json().data).toEqual({ recovering: 0 });
    const stranger = await createFundedTenant(db.orm);
    expect((await call(stranger.apiKey, 'POST', url, { since: new Date().toISOString() })).statusCode).toBe(404);
    await call(tenant.apiKey, 'PATCH', `/api/v1/webhook-endpoints/${id}`, { enabled: false });
    const disabled = await call(tenant.apiKey, 'POST', url, { since: new Date().toISOString() });
    expect(disabled.statusCode).toBe(422);
    expect(disabled.json().error.code).toBe('FAILED_PRECONDITION');
  });
});
