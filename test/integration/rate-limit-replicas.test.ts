// Rate limits across API replicas (decisions §12, §21): two apps, each with its own connection pool,
// on one database, count one budget per API key and one per client address. Every answer a limit
// applies to carries RateLimit-Policy and RateLimit (IETF httpapi draft) beside X-RateLimit-*, and
// a 429 Retry-After, from either replica. When the counter (PostgreSQL) does not answer, requests
// go on uncounted (fail open), counted by a metric, and the liveness probe never waits on it.
import { randomUUID } from 'node:crypto';
import type { LightMyRequestResponse } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type MikroORM, openOrm } from '../../src/orm.ts';
import { COUNT_WAIT_MS, PAUSE_MS, RATE_LIMIT_WINDOW_MS } from '../../src/http/rate-limits.ts';
import { postgresRateLimitCounter } from '../../src/http/rate-limit-windows.ts';
import { auth } from '../support/api.ts';
import { type TestApp, createFundedTenant, createTestApp } from '../support/app.ts';
import { type TestDatabase, createTestDatabase } from '../support/database.ts';
import { eventually } from '../support/eventually.ts';
import { rateLimitItem, roomInWindow } from '../support/rate-limits.ts';
import { type TcpProxy, startTcpProxy } from '../support/tcp-proxy.ts';
import { timed } from '../support/timing.ts';

const PER_KEY = 6;
const UNAUTHENTICATED = 3;
/** Room left in the window before a test counts a budget down: far more than its requests take. */
const ROOM_MS = 15_000;

let db: TestDatabase;
const orms: MikroORM[] = [];
const replicas: TestApp[] = [];

beforeAll(async () => {
  db = await createTestDatabase();
  // Two replicas: two pools, two apps, one database, as two API processes behind a balancer are.
  for (let index = 0; index < 2; index += 1) {
    const orm = await openOrm({ databaseUrl: db.url, poolMax: 4 });
    orms.push(orm);
    replicas.push(
      await createTestApp(orm, { rateLimitPerMinute: PER_KEY, rateLimitUnauthenticatedPerMinute: UNAUTHENTICATED }),
    );
  }
});
afterAll(async () => {
  for (const replica of replicas) await replica.close();
  for (const orm of orms) await orm.close();
  await db?.drop();
});

/** The answer's rate-limit fields, parsed: the policy, the count, and the X-RateLimit-* beside them. */
function limitsOf(response: LightMyRequestResponse) {
  return {
    policy: rateLimitItem(response.headers['ratelimit-policy']),
    limit: rateLimitItem(response.headers.ratelimit),
    x: {
      limit: Number(response.headers['x-ratelimit-limit']),
      remaining: Number(response.headers['x-ratelimit-remaining']),
      reset: Number(response.headers['x-ratelimit-reset']),
    },
  };
}

/** `t` of a sequence of answers in one window: each at most the one before, all within the window. */
function expectOneWindow(resets: number[]): void {
  for (const [index, reset] of resets.entries()) {
    expect(reset).toBeGreaterThanOrEqual(1);
    expect(reset).toBeLessThanOrEqual(60);
    if (index > 0) expect(reset).toBeLessThanOrEqual(resets[index - 1]!);
  }
}

describe('one budget per API key across two replicas', () => {
  it('counts down by one per request on either replica, then answers 429 with Retry-After from both', async () => {
    const tenant = await createFundedTenant(db.orm, 0, 'replicas tenant');
    const other = await createFundedTenant(db.orm, 0, 'replicas other');
    await roomInWindow(db.orm, ROOM_MS);
    const wallet = (replica: TestApp, key = tenant.apiKey) =>
      replica.app.inject({ method: 'GET', url: '/api/v1/wallet', headers: auth(key) });

    const resets: number[] = [];
    for (let index = 0; index < PER_KEY; index += 1) {
      const response = await wallet(replicas[index % 2]!);
      expect([index, response.statusCode]).toEqual([index, 200]);
      const { policy, limit, x } = limitsOf(response);
      expect(policy).toEqual({ name: 'per-key', q: PER_KEY, w: 60 });
      expect(limit).toEqual({ name: 'per-key', r: PER_KEY - index - 1, t: limit.t });
      expect(x).toEqual({ limit: PER_KEY, remaining: PER_KEY - index - 1, reset: limit.t });
      expect(response.headers['retry-after']).toBeUndefined();
      resets.push(Number(limit.t));
    }

    // The budget is spent: the next request is refused by whichever replica takes it.
    for (const replica of replicas) {
      const refused = await wallet(replica);
      expect(refused.statusCode).toBe(429);
      expect(refused.json()).toMatchObject({
        error: { code: 'RATE_LIMITED', message: expect.stringContaining(`rate limit of ${PER_KEY} requests a minute`) },
        meta: { requestId: refused.headers['x-request-id'] },
      });
      const { policy, limit, x } = limitsOf(refused);
      expect(policy).toEqual({ name: 'per-key', q: PER_KEY, w: 60 });
      expect(limit).toEqual({ name: 'per-key', r: 0, t: limit.t });
      expect(x).toEqual({ limit: PER_KEY, remaining: 0, reset: limit.t });
      expect(refused.headers['retry-after']).toBe(String(limit.t));
      resets.push(Number(limit.t));
    }
    expectOneWindow(resets);

    // Another key has a budget of its own, whole.
    const another = await wallet(replicas[1]!, other.apiKey);
    expect(another.statusCode).toBe(200);
    expect(limitsOf(another).limit).toMatchObject({ name: 'per-key', r: PER_KEY - 1 });

    // The count is the database's, one row for the key in this window.
    const rows = await db.orm.em
      .fork()
      .execute<{ count: number }[]>(`select count from rate_limit_windows where bucket like 'per-key:%'`);
    expect(rows.map((row) => row.count).sort((a, b) => a - b)).toEqual([1, PER_KEY + 2]);
  });
});

describe('one budget per client address for requests without a valid key, across two replicas', () => {
  it('counts the 401s of an address down on either replica, then answers 429 from the other', async () => {
    const address = '203.0.113.21';
    await roomInWindow(db.orm, ROOM_MS);
    const guess = (replica: TestApp) =>
      replica.app.inject({
        method: 'GET',
        url: '/api/v1/wallet',
        remoteAddress: address,
        headers: auth(`sk_test_${randomUUID().replaceAll('-', '')}`),
      });

    const resets: number[] = [];
    for (let index = 0; index < UNAUTHENTICATED; index += 1) {
      const response = await guess(replicas[index % 2]!);
      expect([index, response.statusCode]).toEqual([index, 401]);
      const { policy, limit, x } = limitsOf(response);
      expect(policy).toEqual({ name: 'per-address', q: UNAUTHENTICATED, w: 60 });
      expect(limit).toEqual({ name: 'per-address', r: UNAUTHENTICATED - index - 1, t: limit.t });
      expect(x).toEqual({ limit: UNAUTHENTICATED, remaining: UNAUTHENTICATED - index - 1, reset: limit.t });
      resets.push(Number(limit.t));
    }
    // The fourth goes to the replica that did not answer the third.
    const refused = await guess(replicas[UNAUTHENTICATED % 2]!);
    expect(refused.statusCode).toBe(429);
    expect(refused.json().error).toMatchObject({
      code: 'RATE_LIMITED',
      message: expect.stringContaining('without a valid API key from this address'),
    });
    const { policy, limit, x } = limitsOf(refused);
    expect(policy).toEqual({ name: 'per-address', q: UNAUTHENTICATED, w: 60 });
    expect(limit).toEqual({ name: 'per-address', r: 0, t: limit.t });
    expect(x).toEqual({ limit: UNAUTHENTICATED, remaining: 0, reset: limit.t });
    expect(refused.headers['retry-after']).toBe(String(limit.t));
    resets.push(Number(limit.t));
    expectOneWindow(resets);

    // Another address still has its own budget for requests without a key.
    const elsewhere = await replicas[0]!.app.inject({
      method: 'GET',
      url: '/api/v1/wallet',
      remoteAddress: '203.0.113.22',
    });
    expect(elsewhere.statusCode).toBe(401);
    expect(limitsOf(elsewhere).limit).toMatchObject({ name: 'per-address', r: UNAUTHENTICATED - 1 });
  });

  it('counts public routes per address on the general budget, policy "public", across both replicas', async () => {
    const address = '203.0.113.31';
    await roomInWindow(db.orm, ROOM_MS);
    const remaining = [];
    for (let index = 0; index < 3; index += 1) {
      const response = await replicas[index % 2]!.app.inject({
        method: 'GET',
        url: '/openapi.json',
        remoteAddress: address,
      });
      expect(response.statusCode).toBe(200);
      const { policy, limit } = limitsOf(response);
      expect(policy).toEqual({ name: 'public', q: PER_KEY, w: 60 });
      remaining.push(limit.r);
    }
    expect(remaining).toEqual([PER_KEY - 1, PER_KEY - 2, PER_KEY - 3]);
    // The liveness probe is on no budget.
    const live = await replicas[0]!.app.inject({ method: 'GET', url: '/health/live', remoteAddress: address });
    expect(live.statusCode).toBe(200);
    expect(live.headers['ratelimit-policy']).toBeUndefined();
    expect(live.headers.ratelimit).toBeUndefined();
  });
});

describe('a counter that does not answer', () => {
  let proxy: TcpProxy;
  let orm: MikroORM;
  let stalled: TestApp;

  beforeAll(async () => {
    const url = new URL(db.url);
    proxy = await startTcpProxy({ host: url.hostname, port: Number(url.port) });
    url.port = String(proxy.port);
    orm = await openOrm({ databaseUrl: url.toString(), poolMax: 4, timeoutMs: 10_000 });
    stalled = await createTestApp(orm, { rateLimitPerMinute: PER_KEY });
  });
  afterAll(async () => {
    proxy?.resume();
    await stalled?.close();
    await orm?.close();
    await proxy?.close();
  });

  const uncounted = async () => {
    const metric = await stalled.app.metrics.registry.getSingleMetric('gateway_rate_limit_uncounted_total')?.get();
    return metric?.values.find((value) => value.labels.policy === 'public')?.value ?? 0;
  };
  const openapi = () => stalled.app.inject({ method: 'GET', url: '/openapi.json', remoteAddress: '198.51.100.5' });

  it('lets requests through uncounted (fail open) with a metric and one log line, then counts again', async () => {
    const counted = await openapi();
    expect(limitsOf(counted).limit).toMatchObject({ name: 'public', r: PER_KEY - 1 });
    expect(await uncounted()).toBe(0);

    proxy.pause();
    try {
      // The first waits for the counter at most COUNT_WAIT_MS; those after it, for PAUSE_MS, not at all.
      const first = await timed(openapi);
      expect(first.result.statusCode).toBe(200);
      expect(first.ms).toBeGreaterThanOrEqual(COUNT_WAIT_MS - 50);
      expect(first.ms).toBeLessThan(COUNT_WAIT_MS + 3_000);
      const second = await timed(openapi);
      expect(second.result.statusCode).toBe(200);
      expect(second.ms).toBeLessThan(1_000);
      for (const { result } of [first, second]) {
        // The policy still holds; what is left of it is unknown, so not said.
        expect(rateLimitItem(result.headers['ratelimit-policy'])).toEqual({ name: 'public', q: PER_KEY, w: 60 });
        expect(result.headers.ratelimit).toBeUndefined();
        expect(result.headers['x-ratelimit-remaining']).toBeUndefined();
      }
      expect(await uncounted()).toBe(2);
      // The liveness probe does not wait on the counter at all.
      const live = await timed(() => stalled.app.inject({ method: 'GET', url: '/health/live' }));
      expect(live.result.statusCode).toBe(200);
      expect(live.ms).toBeLessThan(1_000);
    } finally {
      proxy.resume();
    }
    const warnings = stalled.logs.filter((line) => String(line.msg).startsWith('rate-limit counter unavailable'));
    expect(warnings).toHaveLength(1);

    // Back: once the pause is over, requests are counted again.
    const again = await eventually(async () => {
      const response = await openapi();
      return response.headers.ratelimit === undefined ? undefined : response;
    }, PAUSE_MS + 10_000);
    expect(again.statusCode).toBe(200);
    expect(stalled.logs.some((line) => line.msg === 'rate-limit counter answers again: requests are counted')).toBe(
      true,
    );
  });
});

describe('requests counted at once share statements, each with the count it would have had alone', () => {
  it('gives concurrent requests on two replicas every count from 1 to their number once, and the row their total', async () => {
    await roomInWindow(db.orm, ROOM_MS);
    const run = randomUUID();
    const buckets = [`per-key:shared-${run}-a`, `per-key:shared-${run}-b`, `per-address:shared-${run}-c`];
    // Each replica's counter on its own pool, as each API process counts on its own.
    const counters = orms.map((orm) => postgresRateLimitCounter(orm));
    const PER_BUCKET_AND_REPLICA = 40;
    const counted = await Promise.all(
      counters.flatMap((counter) =>
        buckets.flatMap((bucket) =>
          Array.from({ length: PER_BUCKET_AND_REPLICA }, async () => ({
            bucket,
            ...(await counter.count(bucket, RATE_LIMIT_WINDOW_MS)),
          })),
        ),
      ),
    );
    const total = PER_BUCKET_AND_REPLICA * counters.length;
    for (const bucket of buckets) {
      const mine = counted.filter((entry) => entry.bucket === bucket);
      // No count given twice and none skipped: as if each request had had a statement of its own.
      expect(mine.map((entry) => entry.count).sort((a, b) => a - b)).toEqual(
        Array.from({ length: total }, (_, index) => index + 1),
      );
      expect(new Set(mine.map((entry) => entry.windowStart)).size).toBe(1);
      for (const entry of mine) {
        expect(entry.msLeft).toBeGreaterThan(0);
        expect(entry.msLeft).toBeLessThanOrEqual(RATE_LIMIT_WINDOW_MS);
      }
    }
    const rows = await db.orm.em
      .fork()
      .execute<{ bucket: string; count: number }[]>(
        `select bucket, count from rate_limit_windows where bucket like ? order by bucket`,
        [`%shared-${run}-%`],
      );
    expect(rows).toEqual([...buckets].sort().map((bucket) => ({ bucket, count: total })));
  });
});
