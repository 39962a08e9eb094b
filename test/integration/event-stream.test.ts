// The event stream and test events (decisions §15) on the real stack: each new event of the tenant
// in stream order as the webhook body, resumed after Last-Event-ID on the same API or another
// replica with nothing lost or repeated; ids of other tenants, unknown or malformed refused; at most
// five streams per key across replicas, a dead process's places lapsing; a hundred clients that stop reading disconnected while the one that reads
// gets everything; test events signed and delivered to one endpoint, never streamed or listed.
// (event-stream-crash.test.ts kills the API process between two reads.)
import { type Socket, connect } from 'node:net';
import { Writable } from 'node:stream';
import type { FastifyInstance } from 'fastify';
import { Webhook } from 'standardwebhooks';
import { describe, expect, it } from 'vitest';
import { lockFor } from '../../src/db/locks.ts';
import { sampleData } from '../../src/events/catalog.ts';
import { type NewEvent, recordEvents } from '../../src/events/events.ts';
import { positionOf, releasedTenantEvents } from '../../src/event-stream/positions.ts';
import { eventFrame } from '../../src/event-stream/stream.ts';
import { takeStreamLease } from '../../src/event-stream/stream-leases.ts';
import { issueKey, revokeKey, rollKeys } from '../../src/tenants/tenants.ts';
import { auth, expectFieldRefused, newSigningSecret } from '../support/api.ts';
import { createFundedTenant, createTestApp } from '../support/app.ts';
import type { TestDatabase } from '../support/database.ts';
import { eventually } from '../support/eventually.ts';
import { type Receiver, startReceiver } from '../support/receiver.ts';
import { openEventStream } from '../support/sse.ts';
import { type GatewayStack, useGatewayStack } from '../support/stack.ts';

const TASK_QUEUE = `event-stream-${process.pid}`;

let stack: GatewayStack;
let db: TestDatabase;
let app: FastifyInstance;
let receiver: Receiver;

useGatewayStack(
  { taskQueue: TASK_QUEUE, bank: { completionDelayMs: 100 }, webhookScheduleMs: [0, 500, 1_000] },
  async (started) => {
    stack = started;
    ({ db, app } = started);
    receiver = await startReceiver();
  },
  () => receiver.close(),
);

const streams = () => app.eventStreams;

/**
 * `n` events of the tenant recorded now, through the events table's owner, each its type's catalog
 * sample; with `padding`, card.created events whose metadata holds that many more characters.
 */
async function record(tenantId: string, n: number, label: string, padding = 0) {
  const types = ['transfer.created', 'transfer.settled', 'virtual_account.credited'] as const;
  const events = Array.from({ length: n }, (_, i): NewEvent => {
    const sourceKey = `stream-test:${label}:${i}`;
    if (padding > 0) {
      return {
        type: 'card.created',
        sourceKey,
        payload: { ...sampleData('card.created'), metadata: { note: 'x'.repeat(padding), i } },
      };
    }
    const type = types[i % types.length]!;
    return { type, sourceKey, payload: sampleData(type) } as NewEvent;
  });
  await recordEvents(db.orm.em.fork(), tenantId, events);
  return events;
}

/** The id of the API key with this prefix. */
async function keyIdOf(keyPrefix: string): Promise<string> {
  const [row] = await db.orm.em
    .fork()
    .execute<{ id: string }[]>('select id from api_keys where prefix = ?', [keyPrefix]);
  return row!.id;
}

/** The stream leases held under the key, lapsed or not. */
async function leasesOf(keyId: string): Promise<number> {
  const [row] = await db.orm.em
    .fork()
    .execute<{ n: string }[]>('select count(*) as n from event_stream_leases where api_key_id = ?', [keyId]);
  return Number(row!.n);
}

/** Requests of this database waiting for an advisory lock another transaction holds. */
async function waitingForAdvisoryLocks(): Promise<number> {
  const [row] = await db.orm.em.fork().execute<{ n: string }[]>(
    `select count(*) as n from pg_locks
      where locktype = 'advisory' and not granted
        and database = (select oid from pg_database where datname = current_database())`,
  );
  return Number(row!.n);
}

/** The tenant's events as the database has them, in stream order. */
async function eventIds(tenantId: string, label: string) {
  const rows = await db.orm.em
    .fork()
    .execute<{ id: string }[]>(`select id from events where tenant_id = ? and source_key like ? order by txid, seq`, [
      tenantId,
      `stream-test:${label}:%`,
    ]);
  return rows.map((row) => row.id);
}

describe('GET /api/v1/events/stream', () => {
  it("sends each new event of the tenant, in order, as its webhook body; another tenant's never", async () => {
    const tenant = await createFundedTenant(db.orm);
    const other = await createFundedTenant(db.orm);
    const stream = await openEventStream(stack.gatewayUrl, tenant.apiKey);
    expect(stream.status).toBe(200);
    expect(stream.headers.get('content-type')).toBe('text/event-stream; charset=utf-8');
    expect(stream.headers.get('cache-control')).toBe('no-store, no-transform');
    expect(stream.headers.get('x-content-type-options')).toBe('nosniff');
    expect(stream.headers.get('x-request-id')).toMatch(/^req_/);
    try {
      await record(tenant.tenantId, 3, 'order-a');
      await record(other.tenantId, 2, 'order-other');
      await record(tenant.tenantId, 2, 'order-b');
      // A real one too: registering an endpoint records webhook.endpoint.created.
      const registered = await app.inject({
        method: 'POST',
        url: '/api/v1/webhook-endpoints',
        headers: auth(tenant.apiKey),
        // Subscribed to nothing recorded here, so that no delivery events follow.
        payload: { url: `${receiver.url}/order`, events: ['transfer.failed'], signing_secret: newSigningSecret() },
      });
      expect(registered.statusCode).toBe(201);
      const got = await stream.take(6);
      const expected = [
        ...(await eventIds(tenant.tenantId, 'order-a')),
        ...(await eventIds(tenant.tenantId, 'order-b')),
      ];
      expect(got.slice(0, 5).map((message) => message.id)).toEqual(expected);
      expect(got.map((message) => message.event)).toEqual([
        'transfer.created',
        'transfer.settled',
        'virtual_account.credited',
        'transfer.created',
        'transfer.settled',
        'webhook.endpoint.created',
      ]);
      // The data line is the webhook body: the event as GET /api/v1/events/{id} shows it.
      for (const message of got) {
        const event = (
          await app.inject({ method: 'GET', url: `/api/v1/events/${message.id}`, headers: auth(tenant.apiKey) })
        ).json().data;
        expect(message.data).toEqual(event);
        expect(Object.keys(message.data)).toEqual(['id', 'type', 'created_at', 'data']);
      }
      expect(got[5]!.data.data.id).toBe(registered.json().data.id);
      // Nothing more: the other tenant's two never came.
      await new Promise((resolve) => setTimeout(resolve, 500));
      expect(stream.received).toHaveLength(6);
    } finally {
      stream.close();
    }
  });

  it('resumes after Last-Event-ID (or ?after=) with nothing lost or repeated, on another replica too', async () => {
    const tenant = await createFundedTenant(db.orm);
    const replica = await createTestApp(db.orm, { taskQueue: TASK_QUEUE });
    const replicaUrl = await replica.app.listen({ host: '127.0.0.1', port: 0 });
    try {
      const first = await openEventStream(stack.gatewayUrl, tenant.apiKey);
      await record(tenant.tenantId, 5, 'resume-1');
      const all = await eventIds(tenant.tenantId, 'resume-1');
      expect((await first.take(2)).map((message) => message.id)).toEqual(all.slice(0, 2));
      first.close();
      // While nobody listens, more happen.
      await record(tenant.tenantId, 4, 'resume-2');
      all.push(...(await eventIds(tenant.tenantId, 'resume-2')));

      // On the other replica, after the second event: the seven after it, once each, in order.
      const second = await openEventStream(replicaUrl, tenant.apiKey, { lastEventId: all[1] });
      expect(second.status).toBe(200);
      expect((await second.take(7)).map((message) => message.id)).toEqual(all.slice(2));
      await record(tenant.tenantId, 2, 'resume-3');
      all.push(...(await eventIds(tenant.tenantId, 'resume-3')));
      expect((await second.take(2)).map((message) => message.id)).toEqual(all.slice(9));
      second.close();

      // Back on the first API with ?after=, from the sixth.
      const third = await openEventStream(stack.gatewayUrl, tenant.apiKey, { query: `?after=${all[5]}` });
      expect((await third.take(5)).map((message) => message.id)).toEqual(all.slice(6));
      await new Promise((resolve) => setTimeout(resolve, 300));
      expect(third.received).toHaveLength(5);
      third.close();
    } finally {
      await replica.app.close();
    }
  });

  it("refuses an unknown, malformed, test or other tenant's event id with 400 naming the field", async () => {
    const tenant = await createFundedTenant(db.orm);
    const other = await createFundedTenant(db.orm);
    await record(other.tenantId, 1, 'refuse-other');
    const [othersEvent] = await eventIds(other.tenantId, 'refuse-other');
    const refused = async (options: { lastEventId?: string; query?: string }, field: string) => {
      const stream = await openEventStream(stack.gatewayUrl, tenant.apiKey, options);
      expect(stream.status).toBe(400);
      expect(stream.refusal).toMatchObject({ error: { code: 'VALIDATION_ERROR' } });
      expect(JSON.stringify(stream.refusal)).toContain(field);
    };
    await refused({ lastEventId: othersEvent! }, 'Last-Event-ID');
    await refused({ lastEventId: '00000000-0000-4000-8000-000000000000' }, 'Last-Event-ID');
    await refused({ lastEventId: "1' or '1'='1" }, 'Last-Event-ID');
    await refused({ query: `?after=${othersEvent}` }, 'after');
    await refused({ query: `?after=${'a'.repeat(101)}` }, 'after');
    expect(streams().size).toBe(0);
  });

  it('holds at most five streams per key across replicas: the sixth is 429 on either, a place frees when one closes', async () => {
    const tenant = await createFundedTenant(db.orm);
    const keyId = await keyIdOf(tenant.keyPrefix);
    const replica = await createTestApp(db.orm, { taskQueue: TASK_QUEUE });
    const replicaUrl = await replica.app.listen({ host: '127.0.0.1', port: 0 });
    try {
      // Three on this API, two on the other: the key's five places, wherever they are held.
      const open = await Promise.all(
        [stack.gatewayUrl, stack.gatewayUrl, stack.gatewayUrl, replicaUrl, replicaUrl].map((url) =>
          openEventStream(url, tenant.apiKey),
        ),
      );
      expect(open.map((stream) => stream.status)).toEqual([200, 200, 200, 200, 200]);
      for (const url of [stack.gatewayUrl, replicaUrl]) {
        const sixth = await openEventStream(url, tenant.apiKey);
        expect(sixth.status).toBe(429);
        expect(sixth.refusal).toMatchObject({ error: { code: 'RATE_LIMITED', details: { limit: 5 } } });
      }
      expect([streams().size, replica.app.eventStreams.size]).toEqual([3, 2]);
      expect(await leasesOf(keyId)).toBe(5);
      // Another key of the same tenant has places of its own.
      const second = await issueKey(db.orm.em.fork(), tenant.ownerTenantId, 'test');
      const byOtherKey = await openEventStream(replicaUrl, second.api_key);
      expect(byOtherKey.status).toBe(200);
      // A place given back on this API is free on the other, once its lease is deleted.
      open[0]!.close();
      await eventually(async () => (await leasesOf(keyId)) === 4);
      const again = await openEventStream(replicaUrl, tenant.apiKey);
      expect(again.status).toBe(200);
      for (const stream of [...open, again, byOtherKey]) stream.close();
      // A stream leaves its hub at once; its lease is deleted just after, by its own statement.
      await eventually(
        async () => streams().size === 0 && replica.app.eventStreams.size === 0 && (await leasesOf(keyId)) === 0,
      );
    } finally {
      await replica.app.close();
    }
  });

  it("lets a dead process's places lapse: held until their lease ends, then free", async () => {
    const tenant = await createFundedTenant(db.orm);
    const keyId = await keyIdOf(tenant.keyPrefix);
    // Five places taken by a process that then died: leases of 1.5 s that nobody renews.
    for (let i = 0; i < 5; i++) {
      const lease = await takeStreamLease(
        db.orm.em.fork(),
        { keyId, tenantId: tenant.tenantId },
        { perKey: 5, leaseMs: 1_500 },
      );
      expect(lease).toBeDefined();
    }
    expect((await openEventStream(stack.gatewayUrl, tenant.apiKey)).status).toBe(429);
    await eventually(async () => {
      const [lapsed] = await db.orm.em
        .fork()
        .execute<{ n: string }[]>(
          'select count(*) as n from event_stream_leases where api_key_id = ? and expires_at > clock_timestamp()',
          [keyId],
        );
      return Number(lapsed!.n) === 0;
    });
    const after = await openEventStream(stack.gatewayUrl, tenant.apiKey);
    expect(after.status).toBe(200);
    // The lapsed ones were cleared when this place was taken: one lease, this stream's.
    expect(await leasesOf(keyId)).toBe(1);
    after.close();
    await eventually(async () => (await leasesOf(keyId)) === 0);
  });

  it('frees at once the places of five clients gone before their streams opened: a sixth opens, no lease is left', async () => {
    const tenant = await createFundedTenant(db.orm);
    const keyId = await keyIdOf(tenant.keyPrefix);
    const port = Number(new URL(stack.gatewayUrl).port);
    // The API's end of each connection, by the client's port: closed once the API has seen it go.
    const served = new Map<number, Socket>();
    const onConnection = (socket: Socket) => served.set(socket.remotePort!, socket);
    app.server.on('connection', onConnection);
    try {
      await db.orm.em.fork().transactional(async (tx) => {
        // The key's lease lock held here: each request waits to take its place, its client still
        // there, and its client leaves before the API gets on to open its stream (no sleep decides
        // the order: every request is seen waiting, then every connection seen closed by the API).
        await lockFor(tx, 'event-stream-leases', keyId);
        const clients = await Promise.all(
          Array.from(
            { length: 5 },
            () =>
              new Promise<Socket>((resolve) => {
                const socket = connect(port, '127.0.0.1', () => {
                  socket.write(
                    `GET /api/v1/events/stream HTTP/1.1\r\nhost: gateway\r\nauthorization: Bearer ${tenant.apiKey}\r\n\r\n`,
                  );
                  resolve(socket);
                });
              }),
          ),
        );
        await eventually(async () => (await waitingForAdvisoryLocks()) === 5);
        const ports = clients.map((client) => client.localPort!);
        for (const client of clients) client.destroy();
        await eventually(() => ports.every((clientPort) => served.get(clientPort)?.closed));
      });
      // Each request then took a place for a client already gone and gives it back at once: a sixth
      // stream opens (429 only while one of them still holds its place), and holds the one lease.
      const sixth = await eventually(async () => {
        const stream = await openEventStream(stack.gatewayUrl, tenant.apiKey);
        return stream.status === 200 && stream;
      }, 30_000);
      await eventually(async () => (await leasesOf(keyId)) === 1 && streams().size === 1);
      sixth.close();
      await eventually(async () => (await leasesOf(keyId)) === 0);
    } finally {
      app.server.off('connection', onConnection);
    }
  });

  it.each(['revoked', 'expired'] as const)(
    'ends a stream whose key is %s, and sends it nothing recorded after that; other keys stream on',
    async (how) => {
      const tenant = await createFundedTenant(db.orm);
      const keyId = await keyIdOf(tenant.keyPrefix);
      // Revoked: another key of the tenant stays. Expired: rolled, with five seconds' overlap.
      const stays =
        how === 'revoked'
          ? await issueKey(db.orm.em.fork(), tenant.ownerTenantId, 'test')
          : (await rollKeys(db.orm.em.fork(), tenant.ownerTenantId, 'test', 5_000)).key;
      const stream = await openEventStream(stack.gatewayUrl, tenant.apiKey);
      const other = await openEventStream(stack.gatewayUrl, stays.api_key);
      expect([stream.status, other.status]).toEqual([200, 200]);
      await record(tenant.tenantId, 1, `${how}-before`);
      const [before] = await eventIds(tenant.tenantId, `${how}-before`);
      expect((await stream.take(1)).map((message) => message.id)).toEqual([before]);
      expect((await other.take(1)).map((message) => message.id)).toEqual([before]);

      // Nothing reads events while this transaction holds their table, so the stream cannot have
      // ended yet when the event below is committed, after the key stopped working.
      await db.orm.em.fork().transactional(async (tx) => {
        await tx.execute('lock table events in access exclusive mode');
        if (how === 'revoked') await revokeKey(db.orm.em.fork(), tenant.keyPrefix);
        else {
          await eventually(async () => {
            const [key] = await db.orm.em
              .fork()
              .execute<{ expired: boolean }[]>(
                'select expires_at <= clock_timestamp() as expired from api_keys where id = ?',
                [keyId],
              );
            return key!.expired;
          }, 10_000);
        }
        await recordEvents(tx, tenant.tenantId, [
          {
            type: 'transfer.created',
            sourceKey: `stream-test:${how}-after:0`,
            payload: sampleData('transfer.created'),
          },
        ]);
      });
      const [after] = await eventIds(tenant.tenantId, `${how}-after`);
      await eventually(() => streams().size === 1 && stream.hasEnded);
      // The event was released and streamed: the key that works got it, the other stream did not.
      expect((await other.take(1)).map((message) => message.id)).toEqual([after]);
      expect(stream.received.map((message) => message.id)).toEqual([before]);
      await eventually(async () => (await leasesOf(keyId)) === 0);
      other.close();
      await eventually(() => streams().size === 0);
    },
  );

  it('ends an idle stream when its key is revoked', async () => {
    const tenant = await createFundedTenant(db.orm);
    const stream = await openEventStream(stack.gatewayUrl, tenant.apiKey);
    expect(stream.status).toBe(200);
    await revokeKey(db.orm.em.fork(), tenant.keyPrefix);
    await eventually(() => stream.hasEnded, 15_000);
    expect(stream.received).toEqual([]);
    await eventually(async () => streams().size === 0 && (await leasesOf(await keyIdOf(tenant.keyPrefix))) === 0);
  });

  it('writes a stream catching up no further than STREAM_BUFFER_BYTES while its client reads nothing', async () => {
    const tenant = await createFundedTenant(db.orm);
    const keyId = await keyIdOf(tenant.keyPrefix);
    await record(tenant.tenantId, 1, 'catch-up-from');
    const [from] = await eventIds(tenant.tenantId, 'catch-up-from');
    // 300 events of about 2.3 KB to catch up on: one page, 690 KB, well past the 256 KiB bound.
    await record(tenant.tenantId, 300, 'catch-up', 2_000);
    const after = (await positionOf(db.orm.em.fork(), tenant.tenantId, from!))!;
    const { events } = await releasedTenantEvents(db.orm.em.fork(), tenant.tenantId, after, 500, keyId);
    expect(events).toHaveLength(300);
    // Written: every frame up to and including the first that takes the unsent bytes past the bound.
    const bound = streams().maxBufferBytes;
    let expected = 0;
    for (const event of events) {
      expected += Buffer.byteLength(eventFrame(event));
      if (expected > bound) break;
    }
    // A client that takes nothing: everything written waits in the response, counted in writableLength.
    const sink = new Writable({ write: () => {} });
    const release = await streams().reserve(keyId, tenant.tenantId);
    await streams().open({ tenantId: tenant.tenantId, keyId, after, sink, release, begin: () => {} });
    // The catch-up waits for the client to read…
    await eventually(() => sink.listenerCount('drain') > 0);
    // …having written just past the bound, as a live stream is.
    expect(sink.writableLength).toBe(expected);
    // The client goes: the stream ends and gives its place back.
    sink.destroy();
    await eventually(async () => streams().size === 0 && (await leasesOf(keyId)) === 0);
  });

  it('disconnects 100 clients that stop reading while the one that reads gets every event', async () => {
    const tenant = await createFundedTenant(db.orm);
    // 100 stalled streams need 20 keys at five streams each.
    const keys = [tenant.apiKey];
    for (let i = 1; i < 20; i++) keys.push((await issueKey(db.orm.em.fork(), tenant.ownerTenantId, 'test')).api_key);
    const port = Number(new URL(stack.gatewayUrl).port);
    const stalled = keys.flatMap((key) =>
      Array.from({ length: 5 }, () => {
        const socket = connect(port, '127.0.0.1');
        socket.write(`GET /api/v1/events/stream HTTP/1.1\r\nhost: gateway\r\nauthorization: Bearer ${key}\r\n\r\n`);
        // Never reads a byte.
        socket.pause();
        return socket;
      }),
    );
    await eventually(() => streams().size === 100);
    const reader = await openEventStream(
      stack.gatewayUrl,
      (await issueKey(db.orm.em.fork(), tenant.ownerTenantId, 'test')).api_key,
    );
    const heapBefore = process.memoryUsage().heapUsed;
    // 2,000 events of about 2 KB: 4 MB owed to each stalled client.
    for (let i = 0; i < 10; i++) await record(tenant.tenantId, 200, `stall-${i}`, 2_000);
    const got = await reader.take(2_000, 60_000);
    const expected: string[] = [];
    for (let i = 0; i < 10; i++) expected.push(...(await eventIds(tenant.tenantId, `stall-${i}`)));
    expect(got.map((message) => message.id)).toEqual(expected);
    // Every stalled client was cut off; only the reader's stream is open.
    // Each stalled stream stops being written at 256 KiB and is cut off after 10 s without a read.
    await eventually(() => streams().size === 1, 30_000);
    const heapAfter = process.memoryUsage().heapUsed;
    console.log(
      `event stream: 100 stalled clients disconnected; heap ${(heapBefore / 2 ** 20).toFixed(1)} MB before, ` +
        `${(heapAfter / 2 ** 20).toFixed(1)} MB after 2,000 events (${((2_000 * 2_300 * 100) / 2 ** 20).toFixed(0)} MB owed to them)`,
    );
    reader.close();
    for (const socket of stalled) socket.destroy();
    await eventually(() => streams().size === 0);
  }, 120_000);
});

describe('POST /api/v1/webhook-endpoints/{id}/test', () => {
  it('delivers a signed test event to that endpoint only, never streamed or listed', async () => {
    const tenant = await createFundedTenant(db.orm);
    const secret = newSigningSecret();
    const register = async (path: string, events: string[]) =>
      (
        await app.inject({
          method: 'POST',
          url: '/api/v1/webhook-endpoints',
          headers: auth(tenant.apiKey),
          payload: { url: `${receiver.url}${path}`, events, signing_secret: secret },
        })
      ).json().data;
    // A bystander subscribed to everything gets both endpoints' webhook.endpoint.created, and never a test event.
    await register('/test-bystander', ['*']);
    const target = await register('/test-target', ['transfer.failed']);
    await eventually(() => receiver.on('/test-bystander').length === 2);
    const stream = await openEventStream(stack.gatewayUrl, tenant.apiKey);
    try {
      const sent = await app.inject({
        method: 'POST',
        url: `/api/v1/webhook-endpoints/${target.id}/test`,
        headers: auth(tenant.apiKey),
      });
      expect(sent.statusCode).toBe(202);
      const { event_id, delivery_id } = sent.json().data;
      const delivered = await eventually(() =>
        receiver.on('/test-target').find((webhook) => JSON.parse(webhook.body).id === event_id),
      );
      const body = new Webhook(secret).verify(delivered.body, {
        'webhook-id': delivered.headers['webhook-id'] as string,
        'webhook-timestamp': delivered.headers['webhook-timestamp'] as string,
        'webhook-signature': delivered.headers['webhook-signature'] as string,
      }) as Record<string, any>;
      expect(body).toMatchObject({
        id: event_id,
        type: 'webhook.endpoint.test',
        test: true,
        data: { endpoint_id: target.id, url: `${receiver.url}/test-target` },
      });
      const delivery = await app.inject({
        method: 'GET',
        url: `/api/v1/webhook-deliveries/${delivery_id}`,
        headers: auth(tenant.apiKey),
      });
      expect(delivery.json().data).toMatchObject({ event_id, endpoint_id: target.id });

      // A sample of a type, marked test.
      const sample = await app.inject({
        method: 'POST',
        url: `/api/v1/webhook-endpoints/${target.id}/test`,
        headers: auth(tenant.apiKey),
        payload: { type: 'transfer.settled' },
      });
      expect(sample.statusCode).toBe(202);
      const sampled = await eventually(() =>
        receiver.on('/test-target').find((webhook) => JSON.parse(webhook.body).id === sample.json().data.event_id),
      );
      expect(JSON.parse(sampled.body)).toMatchObject({
        type: 'transfer.settled',
        test: true,
        data: sampleData('transfer.settled'),
      });

      // Only the target got them; the stream and the event list show neither; no delivery events.
      await new Promise((resolve) => setTimeout(resolve, 1_000));
      expect(receiver.on('/test-bystander')).toHaveLength(2);
      expect(receiver.on('/test-target')).toHaveLength(2);
      // Anything about a test event: the event itself, or a delivery event naming it.
      const tests = new Set([event_id as string, sample.json().data.event_id as string]);
      const aboutTests = (event: { id: string; data: { event_id?: string } }) =>
        tests.has(event.id) || tests.has(event.data.event_id ?? '');
      expect(
        stream.received
          .map((message) => message.data as { id: string; data: { event_id?: string } })
          .filter(aboutTests),
      ).toEqual([]);
      const listed = (
        await app.inject({ method: 'GET', url: '/api/v1/events?limit=100', headers: auth(tenant.apiKey) })
      ).json().data.items as { id: string; type: string; data: { event_id?: string } }[];
      expect(listed.filter(aboutTests)).toEqual([]);
      // The metrics count the bystander's two real deliveries, not the target's two test ones.
      const attempts = /^gateway_webhook_attempts\{outcome="succeeded"\} (\d+)$/m.exec(await app.metrics.scrape());
      expect(Number(attempts?.[1])).toBe(2);
      // Whatever the stream did send meanwhile is a real event of the tenant's, in the list.
      const listedIds = new Set(listed.map((event) => event.id));
      expect(stream.received.filter((message) => !listedIds.has(message.id))).toEqual([]);
    } finally {
      stream.close();
    }
  });

  it("refuses another tenant's endpoint (404), an unknown type or field (400), a deleted endpoint (404)", async () => {
    const tenant = await createFundedTenant(db.orm);
    const other = await createFundedTenant(db.orm);
    const endpoint = (
      await app.inject({
        method: 'POST',
        url: '/api/v1/webhook-endpoints',
        headers: auth(tenant.apiKey),
        payload: { url: `${receiver.url}/refusals`, events: ['transfer.settled'], signing_secret: newSigningSecret() },
      })
    ).json().data;
    const test = (apiKey: string, id: string, payload?: object) =>
      app.inject({
        method: 'POST',
        url: `/api/v1/webhook-endpoints/${id}/test`,
        headers: auth(apiKey),
        ...(payload ? { payload } : {}),
      });
    expect((await test(other.apiKey, endpoint.id)).statusCode).toBe(404);
    expect((await test(other.apiKey, 'not-a-uuid')).statusCode).toBe(404);
    expectFieldRefused(await test(tenant.apiKey, endpoint.id, { type: 'transfer.exploded' }), 'type');
    expectFieldRefused(await test(tenant.apiKey, endpoint.id, { type: '<script>' }), 'type');
    expect((await test(tenant.apiKey, endpoint.id, { type: 'transfer.settled', extra: 1 })).statusCode).toBe(400);
    await app.inject({
      method: 'DELETE',
      url: `/api/v1/webhook-endpoints/${endpoint.id}`,
      headers: auth(tenant.apiKey),
    });
    expect((await test(tenant.apiKey, endpoint.id)).statusCode).toBe(404);
  });
});
