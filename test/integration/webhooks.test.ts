// Webhooks end to end with a real local receiver: registration and its SSRF guard, fan-out from
// events, Standard Webhooks signatures checked with the `standardwebhooks` library, retries,
// Retry-After, 410, replay, a worker that dies during a retry wait, and tenant isolation.
import type { FastifyInstance } from 'fastify';
import { Webhook } from 'standardwebhooks';
import { describe, expect, inject, it } from 'vitest';
import { auth, expectFieldRefused, newSigningSecret, registerEndpoint, transferBody } from '../support/api.ts';
import { createFundedTenant } from '../support/app.ts';
import { runAdmin } from '../support/cli.ts';
import type { TestDatabase } from '../support/database.ts';
import { eventually } from '../support/eventually.ts';
import { recordHistory } from '../support/histories.ts';
import { deliveryWorkflowId } from '../../workflows/webhooks/definitions.ts';
import { type Receiver, startReceiver } from '../support/receiver.ts';
import { type GatewayStack, fakeDns, useGatewayStack } from '../support/stack.ts';

const TASK_QUEUE = `webhooks-${process.pid}`;
const SCHEDULE_MS = [0, 800, 1_500, 3_000];
// DNS as the tests want it, without the network: one public name, one that points inside.
const resolver = fakeDns({
  'hooks.example.com': ['93.184.216.34'],
  'internal.example.com': ['10.1.2.3'],
  'pinned.test': ['127.0.0.1'],
});

let stack: GatewayStack;
let db: TestDatabase;
let app: FastifyInstance;
let receiver: Receiver;

useGatewayStack(
  { taskQueue: TASK_QUEUE, resolver, bank: { completionDelayMs: 100 }, webhookScheduleMs: SCHEDULE_MS },
  async (started) => {
    stack = started;
    ({ db, app } = started);
    receiver = await startReceiver();
  },
  () => receiver.close(),
);

const register = (apiKey: string, body: Record<string, unknown>, url?: string) =>
  registerEndpoint(app, apiKey, body, url);

/** Registers the receiver's `path` for `events` under a fresh secret, as most delivery tests need. */
const listen = (apiKey: string, path: string, events = ['transfer.settled']) =>
  register(apiKey, { url: `${receiver.url}${path}`, events, signing_secret: newSigningSecret() });

async function settledTransfer(apiKey: string, account = '0123456789') {
  const response = await app.inject({
    method: 'POST',
    url: '/api/v1/transfers',
    headers: auth(apiKey),
    payload: transferBody('webhook test', { recipient_account: account }),
  });
  expect(response.statusCode).toBe(201);
  return response.json().data.id as string;
}

async function deliveries(apiKey: string, query = '') {
  const response = await app.inject({
    method: 'GET',
    url: `/api/v1/webhook-deliveries${query}`,
    headers: auth(apiKey),
  });
  return response.json().data;
}

const getDelivery = (apiKey: string, id: string) =>
  app.inject({ method: 'GET', url: `/api/v1/webhook-deliveries/${id}`, headers: auth(apiKey) });

const replayDelivery = (apiKey: string, id: string) =>
  app.inject({ method: 'POST', url: `/api/v1/webhook-deliveries/${id}/replay`, headers: auth(apiKey) });

/** The delivery as the tenant reads it by id, once it has had `count` attempts. */
const deliveryWithAttempts = (apiKey: string, id: string, count: number) =>
  eventually(async () => {
    const found = (await getDelivery(apiKey, id)).json().data;
    return found.attempt_count === count ? found : undefined;
  });

async function deliveryClosed(delivery: { event_id: string; endpoint_id: string }) {
  return eventually(async () => {
    const described = await stack.client.workflow
      .getHandle(deliveryWorkflowId(delivery.event_id, delivery.endpoint_id))
      .describe();
    return described.status.name === 'COMPLETED' ? true : undefined;
  });
}

async function fannedOut(eventId: string) {
  return eventually(async () => {
    const [row] = await db.orm.em
      .fork()
      .execute<{ done: boolean }[]>('select fanned_out_at is not null as done from events where id = ?', [eventId]);
    return row?.done ? true : undefined;
  });
}

async function eventIdOf(apiKey: string, type: string, transferId: string): Promise<string> {
  return eventually(async () => {
    const response = await app.inject({
      method: 'GET',
      url: `/api/v1/events?type=${type}&limit=100`,
      headers: auth(apiKey),
    });
    return response.json().data.items.find((event: { data: { id: string } }) => event.data.id === transferId)?.id as
      string | undefined;
  });
}

describe('registration', () => {
  it('registers an endpoint, listening, with the id of its webhook.endpoint.created event, and never returns the secret', async () => {
    const tenant = await createFundedTenant(db.orm);
    const response = await listen(tenant.apiKey, '/reg');
    expect(response.statusCode).toBe(201);
    const data = response.json().data;
    expect(Object.keys(data).sort()).toEqual(['created_at', 'event_id', 'events', 'id', 'status', 'url']);
    expect(data).toMatchObject({ url: `${receiver.url}/reg`, events: ['transfer.settled'], status: 'listening' });
    const event = await app.inject({
      method: 'GET',
      url: `/api/v1/events/${data.event_id}`,
      headers: auth(tenant.apiKey),
    });
    expect(event.json().data).toMatchObject({
      id: data.event_id,
      type: 'webhook.endpoint.created',
      data: { id: data.id },
    });

    const listed = await app.inject({ method: 'GET', url: '/api/v1/webhook-endpoints', headers: auth(tenant.apiKey) });
    expect(listed.json().data.items).toHaveLength(1);
    expect(JSON.stringify(listed.json())).not.toMatch(/whsec_|secret/);
    // Also reachable unversioned, as the interface shows it.
    const legacy = await register(
      tenant.apiKey,
      { url: `${receiver.url}/reg2`, events: ['*'], signing_secret: newSigningSecret() },
      '/webhook-endpoints',
    );
    expect(legacy.statusCode).toBe(201);
  });

  it('refuses bad bodies with 400 naming the field', async () => {
    const tenant = await createFundedTenant(db.orm);
    const cases: [Record<string, unknown>, string][] = [
      [{ url: 'not a url', events: ['*'], signing_secret: newSigningSecret() }, 'url'],
      [{ url: `${receiver.url}/x`, events: ['transfer.teleported'], signing_secret: newSigningSecret() }, 'events[0]'],
      [{ url: `${receiver.url}/x`, events: [], signing_secret: newSigningSecret() }, 'events'],
      [{ url: `${receiver.url}/x`, events: ['*'], signing_secret: 'short' }, 'signing_secret'],
      [{ url: `${receiver.url}/x`, events: ['*'] }, 'signing_secret'],
    ];
    for (const [body, field] of cases) expectFieldRefused(await register(tenant.apiKey, body), field);
  });

  it('lets live keys register only https URLs on public addresses', async () => {
    const live = await createFundedTenant(db.orm, 0, 'live tenant', 'live');
    const refused = [
      'http://hooks.example.com/x',
      'https://127.0.0.1/x',
      'https://localhost/x',
      'https://10.0.0.8/x',
      'https://192.168.1.1/x',
      'https://169.254.169.254/latest/meta-data',
      'https://[::1]/x',
      'https://[::ffff:127.0.0.1]/x',
      'https://2130706433/x',
      'https://0x7f.1/x',
      'https://internal.example.com/x',
    ];
    for (const url of refused) {
      const response = await register(live.apiKey, { url, events: ['*'], signing_secret: newSigningSecret() });
      expect({ url, status: response.statusCode }).toEqual({ url, status: 400 });
      expect(response.json().error.details.fields[0].path).toBe('url');
    }
    const accepted = await register(live.apiKey, {
      url: 'https://hooks.example.com/x',
      events: ['*'],
      signing_secret: newSigningSecret(),
    });
    expect(accepted.statusCode).toBe(201);
    // Sandbox keys may use loopback over http, but not private networks.
    const sandbox = await createFundedTenant(db.orm);
    expect(
      (
        await register(sandbox.apiKey, {
          url: 'http://127.0.0.1:9/x',
          events: ['*'],
          signing_secret: newSigningSecret(),
        })
      ).statusCode,
    ).toBe(201);
    expect(
      (await register(sandbox.apiKey, { url: 'http://10.0.0.8/x', events: ['*'], signing_secret: newSigningSecret() }))
        .statusCode,
    ).toBe(400);
  });

  it('holds a tenant to 20 endpoints, even when 40 registrations race; disabled endpoints count, deleted ones do not', async () => {
    const tenant = await createFundedTenant(db.orm, 0, 'endpoint cap');
    // The receiver answers 410 to the endpoint's own webhook.endpoint.created: the gateway disables it.
    receiver.plan('/cap-gone', { status: 410 });
    const disabled = (await listen(tenant.apiKey, '/cap-gone', ['webhook.endpoint.created'])).json().data.id as string;
    await eventually(async () => {
      const [row] = await db.orm.em
        .fork()
        .execute<{ status: string }[]>('select status from webhook_endpoints where id = ?', [disabled]);
      return row?.status === 'disabled' ? true : undefined;
    });
    // 40 at once, with 19 places left.
    const raced = await Promise.all(
      Array.from({ length: 40 }, (_, i) => listen(tenant.apiKey, `/cap-${i}`, ['transfer.settled'])),
    );
    const statuses = raced.map((response) => response.statusCode);
    expect(statuses.filter((status) => status === 201)).toHaveLength(19);
    expect(statuses.filter((status) => status === 422)).toHaveLength(21);
    const refusal = raced.find((response) => response.statusCode === 422)!.json();
    expect(refusal).toMatchObject({
      error: { code: 'FAILED_PRECONDITION', details: { limit: 20, endpoints: 20 } },
      meta: { path: '/api/v1/webhook-endpoints', method: 'POST', requestId: expect.any(String) },
    });
    expect(refusal.error.message).toMatch(/at most 20 webhook endpoints/);
    const counted = async () => {
      const [row] = await db.orm.em
        .fork()
        .execute<{ n: string }[]>(
          `select count(*) as n from webhook_endpoints where tenant_id = ? and status <> 'deleted'`,
          [tenant.tenantId],
        );
      return Number(row!.n);
    };
    expect(await counted()).toBe(20);
    // Not one more, not even through the unversioned route; another tenant is not held to this one's count.
    expect((await listen(tenant.apiKey, '/cap-more')).statusCode).toBe(422);
    expect(
      (
        await register(
          tenant.apiKey,
          { url: `${receiver.url}/cap-legacy`, events: ['*'], signing_secret: newSigningSecret() },
          '/webhook-endpoints',
        )
      ).statusCode,
    ).toBe(422);
    const other = await createFundedTenant(db.orm, 0, 'endpoint cap, other tenant');
    expect((await listen(other.apiKey, '/cap-other')).statusCode).toBe(201);
    // The disabled endpoint counts until it is deleted; then its place is free again, once.
    const deleted = await app.inject({
      method: 'DELETE',
      url: `/api/v1/webhook-endpoints/${disabled}`,
      headers: auth(tenant.apiKey),
    });
    expect(deleted.statusCode).toBe(200);
    expect((await listen(tenant.apiKey, '/cap-after-delete')).statusCode).toBe(201);
    expect((await listen(tenant.apiKey, '/cap-after-delete-2')).statusCode).toBe(422);
    expect(await counted()).toBe(20);
  });
});

describe('delivery', () => {
  it('delivers transfer.settled signed per Standard Webhooks, verifiable with the standardwebhooks library', async () => {
    const tenant = await createFundedTenant(db.orm, 1_000_000);
    const secret = newSigningSecret();
    const eagerBefore = stack.fanout!.startedEagerly;
    await register(tenant.apiKey, {
      url: `${receiver.url}/signed`,
      events: ['transfer.settled'],
      signing_secret: secret,
    });
    const transferId = await settledTransfer(tenant.apiKey);
    const request = await eventually(() => receiver.on('/signed')[0]);
    const payload = new Webhook(secret).verify(request.body, request.headers as Record<string, string>) as Record<
      string,
      any
    >;
    expect(payload).toMatchObject({
      type: 'transfer.settled',
      data: { id: transferId, status: 'successful', amount_minor: 100_000 },
    });
    expect(request.headers['webhook-id']).toBe(payload.id);
    expect(Object.keys(payload).sort()).toEqual(['created_at', 'data', 'id', 'type']);
    expect(() =>
      new Webhook(newSigningSecret()).verify(request.body, request.headers as Record<string, string>),
    ).toThrow();
    // Only the subscribed type arrived.
    expect(receiver.on('/signed')).toHaveLength(1);
    // Its workflow was started eagerly, as worker/webhooks.ts starts them: the server handed its first
    // task to the webhook worker with the start (0 when the fan-out's client is not the worker's).
    expect(stack.fanout!.startedEagerly - eagerBefore).toBeGreaterThanOrEqual(1);

    // The attempt is recorded once the receiver has answered: wait for that, not just the request.
    const delivery = await eventually(async () => {
      const [found] = (await deliveries(tenant.apiKey, `?event_id=${payload.id}&status=succeeded`)).items;
      return found;
    });
    expect(delivery).toMatchObject({
      event_id: payload.id,
      event_type: 'transfer.settled',
      status: 'succeeded',
      attempt_count: 1,
      endpoint_status: 200,
      endpoint_state: 'listening',
      signature: request.headers['webhook-signature'],
      replay_id: null,
    });
    expect(delivery.attempts).toEqual([
      expect.objectContaining({ number: 1, status_code: 200, error: null, response_body: 'ok', replay_id: null }),
    ]);
  });

  it('signs with the raw bytes of a secret that is not whsec_', async () => {
    const tenant = await createFundedTenant(db.orm, 1_000_000);
    const secret = 'plain-text-secret-of-our-tenant';
    await register(tenant.apiKey, { url: `${receiver.url}/raw`, events: ['transfer.settled'], signing_secret: secret });
    await settledTransfer(tenant.apiKey);
    const request = await eventually(() => receiver.on('/raw')[0]);
    expect(() =>
      new Webhook(secret, { format: 'raw' }).verify(request.body, request.headers as Record<string, string>),
    ).not.toThrow();
  });

  it('connects to the addresses it checked, never resolving the host a second time', async () => {
    // The system resolver has never heard of pinned.test: only the checked address can be used.
    const tenant = await createFundedTenant(db.orm, 1_000_000);
    const port = new URL(receiver.url).port;
    await register(tenant.apiKey, {
      url: `http://pinned.test:${port}/pinned`,
      events: ['transfer.settled'],
      signing_secret: newSigningSecret(),
    });
    await settledTransfer(tenant.apiKey);
    const request = await eventually(() => receiver.on('/pinned')[0]);
    expect(request.headers.host).toBe(`pinned.test:${port}`);
  });

  it('retries a receiver that answers 500, with the same webhook-id, and records both attempts', async () => {
    const tenant = await createFundedTenant(db.orm, 1_000_000);
    receiver.plan('/flaky', { status: 500, body: 'boom' });
    await listen(tenant.apiKey, '/flaky');
    await settledTransfer(tenant.apiKey);
    const [first, second] = await eventually(() =>
      receiver.on('/flaky').length >= 2 ? receiver.on('/flaky') : undefined,
    );
    expect(second!.headers['webhook-id']).toBe(first!.headers['webhook-id']);
    expect(second!.at - first!.at).toBeGreaterThanOrEqual(700);
    const delivery = await eventually(async () => {
      const [found] = (await deliveries(tenant.apiKey, '?status=succeeded')).items;
      return found;
    });
    expect(delivery).toMatchObject({ status: 'succeeded', attempt_count: 2 });
    expect(
      delivery.attempts.map((a: { number: number; status_code: number; response_body: string }) => [
        a.number,
        a.status_code,
        a.response_body,
      ]),
    ).toEqual([
      [1, 500, 'boom'],
      [2, 200, 'ok'],
    ]);
    recordHistory('webhook-retry-then-success', deliveryWorkflowId(delivery.event_id, delivery.endpoint_id));
  });

  it('honours Retry-After on 503', async () => {
    const tenant = await createFundedTenant(db.orm, 1_000_000);
    receiver.plan('/busy', { status: 503, headers: { 'retry-after': '2' } });
    await listen(tenant.apiKey, '/busy');
    await settledTransfer(tenant.apiKey);
    const [first, second] = await eventually(() =>
      receiver.on('/busy').length >= 2 ? receiver.on('/busy') : undefined,
    );
    // The schedule's next step would be 0.8 s; the receiver asked for 2 s.
    expect(second!.at - first!.at).toBeGreaterThanOrEqual(1_900);
  });

  it('disables the endpoint on 410 and stops', async () => {
    const tenant = await createFundedTenant(db.orm, 1_000_000);
    receiver.plan('/gone', { status: 410 });
    const endpoint = await listen(tenant.apiKey, '/gone');
    await settledTransfer(tenant.apiKey);
    const delivery = await eventually(async () => {
      const [found] = (await deliveries(tenant.apiKey, `?endpoint_id=${endpoint.json().data.id}&status=failed`)).items;
      return found;
    });
    expect(delivery).toMatchObject({
      status: 'failed',
      attempt_count: 1,
      endpoint_status: 410,
      endpoint_state: 'disabled',
    });
    // The delivery has ended for good: its workflow is closed, after one request.
    await deliveryClosed(delivery);
    expect(receiver.on('/gone')).toHaveLength(1);
  });

  it('sends nothing for a settled transfer to an endpoint subscribed only to transfer.failed', async () => {
    const tenant = await createFundedTenant(db.orm, 1_000_000);
    await listen(tenant.apiKey, '/failed-only', ['transfer.failed']);
    const settled = await settledTransfer(tenant.apiKey);
    const failed = await settledTransfer(tenant.apiKey, '1111111111');
    const request = await eventually(() => receiver.on('/failed-only')[0]);
    expect(JSON.parse(request.body)).toMatchObject({ type: 'transfer.failed', data: { id: failed } });
    const settledEvent = await eventIdOf(tenant.apiKey, 'transfer.settled', settled);
    // The settled event has been fanned out, and made no delivery to this endpoint.
    await fannedOut(settledEvent);
    expect((await deliveries(tenant.apiKey, `?event_id=${settledEvent}`)).items).toEqual([]);
    expect(receiver.on('/failed-only')).toHaveLength(1);
  });

  it('records event.delivery.* events and delivers them only to endpoints that name them', async () => {
    const tenant = await createFundedTenant(db.orm, 1_000_000);
    await listen(tenant.apiKey, '/all', ['*']);
    await listen(tenant.apiKey, '/ops', ['event.delivery.succeeded']);
    const transferId = await settledTransfer(tenant.apiKey);
    const settledEvent = await eventIdOf(tenant.apiKey, 'transfer.settled', transferId);
    const opsRequest = await eventually(() =>
      receiver.on('/ops').find((request) => JSON.parse(request.body).data.event_id === settledEvent),
    );
    expect(JSON.parse(opsRequest.body)).toMatchObject({
      type: 'event.delivery.succeeded',
      data: { event_type: 'transfer.settled', attempt: 1 },
    });
    // Every event of the tenant has been fanned out and every delivery has ended.
    await eventually(async () => {
      const [row] = await db.orm.em.fork().execute<{ n: string }[]>(
        `select (select count(*) from events where tenant_id = ? and fanned_out_at is null)
                + (select count(*) from webhook_deliveries where tenant_id = ? and status in ('queued', 'retrying'))
                  as n`,
        [tenant.tenantId, tenant.tenantId],
      );
      return Number(row?.n) === 0 ? true : undefined;
    });
    expect(
      receiver
        .on('/all')
        .map((request) => JSON.parse(request.body).type as string)
        .filter((type) => type.startsWith('event.delivery.')),
    ).toEqual([]);
    // No event about the delivery of a delivery event.
    const queued = await app.inject({
      method: 'GET',
      url: '/api/v1/events?type=event.delivery.queued&limit=100',
      headers: auth(tenant.apiKey),
    });
    expect(
      queued
        .json()
        .data.items.every(
          (event: { data: { event_type: string } }) => !event.data.event_type.startsWith('event.delivery.'),
        ),
    ).toBe(true);
  });
});

describe('replay and durability', () => {
  it('replays a succeeded delivery now, with the same webhook-id and a replay_id', async () => {
    const tenant = await createFundedTenant(db.orm, 1_000_000);
    await listen(tenant.apiKey, '/replay');
    await settledTransfer(tenant.apiKey);
    const first = await eventually(() => receiver.on('/replay')[0]);
    const delivery = await eventually(async () => (await deliveries(tenant.apiKey, '?status=succeeded')).items[0]);
    const replay = await replayDelivery(tenant.apiKey, delivery.id);
    expect(replay.statusCode).toBe(202);
    expect(replay.json().data).toEqual({
      delivery_id: delivery.id,
      replay_id: expect.stringMatching(/^rpl_[0-9a-f]{32}$/),
    });
    const second = await eventually(() => receiver.on('/replay')[1]);
    expect(second.headers['webhook-id']).toBe(first.headers['webhook-id']);
    const after = await deliveryWithAttempts(tenant.apiKey, delivery.id, 2);
    expect(after).toMatchObject({ status: 'succeeded', replay_id: replay.json().data.replay_id });
    expect(after.attempts[1]).toMatchObject({ number: 2, status_code: 200, replay_id: replay.json().data.replay_id });
    recordHistory('webhook-replay-after-success', deliveryWorkflowId(delivery.event_id, delivery.endpoint_id));
  });

  it('lists a delivery with its latest 20 attempts and its true attempt_count; GET by id has every attempt', async () => {
    const tenant = await createFundedTenant(db.orm, 1_000_000);
    await listen(tenant.apiKey, '/many');
    await settledTransfer(tenant.apiKey);
    const delivery = await eventually(async () => (await deliveries(tenant.apiKey, '?status=succeeded')).items[0]);
    // 24 replays, one after another: 25 attempts in all.
    for (let replayed = 1; replayed <= 24; replayed++) {
      const replay = await replayDelivery(tenant.apiKey, delivery.id);
      expect(replay.statusCode).toBe(202);
      await eventually(() => (receiver.on('/many').length === replayed + 1 ? true : undefined));
    }
    const one = await deliveryWithAttempts(tenant.apiKey, delivery.id, 25);
    expect(one.attempts.map((attempt: { number: number }) => attempt.number)).toEqual(
      Array.from({ length: 25 }, (_, i) => i + 1),
    );
    const [listed] = (await deliveries(tenant.apiKey, `?event_id=${delivery.event_id}`)).items;
    expect(listed).toMatchObject({ id: delivery.id, attempt_count: 25, endpoint_status: 200 });
    expect(listed.attempts.map((attempt: { number: number }) => attempt.number)).toEqual(
      Array.from({ length: 20 }, (_, i) => i + 6),
    );
    expect(listed.attempts).toEqual(one.attempts.slice(5));
  });

  it('still delivers when the worker dies during the retry wait', async () => {
    const tenant = await createFundedTenant(db.orm, 1_000_000);
    // Retry-After: 4 s, long enough to stop the worker while the delivery waits on its timer.
    receiver.plan('/durable', { status: 503, headers: { 'retry-after': '4' } });
    await listen(tenant.apiKey, '/durable');
    await settledTransfer(tenant.apiKey);
    await eventually(() => receiver.on('/durable')[0]);
    const waiting = await eventually(async () => (await deliveries(tenant.apiKey, '?status=retrying')).items[0]);
    const history = async () =>
      (await stack.client.workflow.getHandle(deliveryWorkflowId(waiting.event_id, waiting.endpoint_id)).fetchHistory())
        .events ?? [];
    // The workflow waits on the retry's timer (recorded on the server) before the worker goes.
    await eventually(async () => (await history()).some((event) => event.timerStartedEventAttributes));
    await stack.stopWorker();
    // The retry is due (its timer has fired) but no worker is there to make it: the attempt waits.
    await eventually(async () => (await history()).some((event) => event.timerFiredEventAttributes), 20_000);
    expect(receiver.on('/durable')).toHaveLength(1);
    await stack.startWorker();
    const second = await eventually(() => receiver.on('/durable')[1]);
    expect(second.headers['webhook-id']).toBe(receiver.on('/durable')[0]!.headers['webhook-id']);
    const delivery = await eventually(async () => (await deliveries(tenant.apiKey, '?status=succeeded')).items[0]);
    expect(delivery.attempts.map((a: { status_code: number }) => a.status_code)).toEqual([503, 200]);
  });

  it("shows another tenant's key none of these deliveries or events", async () => {
    const owner = await createFundedTenant(db.orm, 1_000_000);
    const stranger = await createFundedTenant(db.orm);
    await listen(owner.apiKey, '/private');
    await settledTransfer(owner.apiKey);
    const delivery = await eventually(async () => (await deliveries(owner.apiKey)).items[0]);
    expect((await deliveries(stranger.apiKey)).pagination.total).toBe(0);
    const get = await getDelivery(stranger.apiKey, delivery.id);
    expect(get.statusCode).toBe(404);
    expect(get.json().error.code).toBe('NOT_FOUND');
    const replay = await replayDelivery(stranger.apiKey, delivery.id);
    expect(replay.statusCode).toBe(404);
    const event = await app.inject({
      method: 'GET',
      url: `/api/v1/events/${delivery.event_id}`,
      headers: auth(stranger.apiKey),
    });
    expect(event.statusCode).toBe(404);
    const events = await app.inject({ method: 'GET', url: '/api/v1/events', headers: auth(stranger.apiKey) });
    expect(events.json().data.pagination.total).toBe(0);
  });
});

describe('bulk replay by operators', () => {
  it('replays an endpoint’s failed deliveries of a time range at once, with their webhook-ids, and audits it', async () => {
    const since = new Date();
    const tenant = await createFundedTenant(db.orm, 1_000_000, 'bulk replay');
    const endpoint = (await listen(tenant.apiKey, '/bulk')).json().data.id as string;
    // The endpoint is down through every scheduled attempt of both deliveries.
    receiver.plan('/bulk', ...Array.from({ length: 2 * SCHEDULE_MS.length }, () => ({ status: 500 })));
    await settledTransfer(tenant.apiKey);
    await settledTransfer(tenant.apiKey);
    const failed = await eventually(async () => {
      const listed = await deliveries(tenant.apiKey, '?status=failed');
      return listed.pagination.total === 2 ? (listed.items as { id: string }[]) : undefined;
    }, 30_000);
    expect(receiver.on('/bulk')).toHaveLength(2 * SCHEDULE_MS.length);
    const idsBefore = new Set(receiver.on('/bulk').map((hook) => hook.headers['webhook-id']));
    expect(idsBefore.size).toBe(2);

    // Back up: the operator replays what failed since the outage began.
    const replay = await runAdmin(
      {
        DATABASE_URL: db.url,
        TEMPORAL_ADDRESS: inject('temporalAddress'),
        TEMPORAL_TASK_QUEUE: TASK_QUEUE,
        GATEWAY_OPERATOR: 'on-call',
      },
      'webhooks',
      'replay',
      '--endpoint',
      endpoint,
      '--since',
      since.toISOString(),
      '--status',
      'failed',
    );
    expect(replay.code).toBe(0);
    expect(replay.json).toMatchObject({ endpoint_id: endpoint, status: 'failed', count: 2 });
    expect(new Set((replay.json.replayed as { delivery_id: string }[]).map((row) => row.delivery_id))).toEqual(
      new Set(failed.map((delivery) => delivery.id)),
    );
    await eventually(async () => (await deliveries(tenant.apiKey, '?status=succeeded')).pagination.total === 2, 20_000);
    const after = receiver.on('/bulk');
    expect(after).toHaveLength(2 * SCHEDULE_MS.length + 2);
    // The same events, the same webhook-ids: receivers deduplicate as they would any retry.
    expect(new Set(after.slice(-2).map((hook) => hook.headers['webhook-id']))).toEqual(idsBefore);

    const [audited] = await db.orm.em
      .fork()
      .execute<{ operator: string; outcome: string; arguments: Record<string, string> }[]>(
        `select operator, outcome, arguments from admin_audit where command = 'webhooks replay'`,
      );
    expect(audited).toEqual({
      operator: 'on-call',
      outcome: 'succeeded',
      arguments: { endpoint, since: since.toISOString(), status: 'failed' },
    });
  }, 60_000);
});
