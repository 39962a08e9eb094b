// The HTTP platform as a tenant's client sees it: envelopes of both styles, request ids, auth,
// health, body limits, OpenAPI, and that a 500 says nothing of the internals.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { z } from 'zod';
import { beforeAll, describe, expect, it } from 'vitest';
import type { FastifyInstance } from 'fastify';
import { PROJECT_ROOT } from '../../src/stack/tools.ts';
import { revokeKey } from '../../src/tenants/tenants.ts';
import { eventually } from '../support/eventually.ts';
import { auth, fieldPaths } from '../support/api.ts';
import { type FundedTenant, createFundedTenant, createTestApp, useTestApp, withTestApp } from '../support/app.ts';
import { createTestDatabase } from '../support/database.ts';
import { roomInWindow } from '../support/rate-limits.ts';

const own = useTestApp({
  extend: probes,
  routeScopes: {
    'POST /api/v1/probe': 'read',
    'GET /api/v1/probe/boom': 'read',
    'GET /api/v1/transfers/probe': 'read',
  },
});
/** An app whose Temporal address answers nothing. */
const TEMPORAL_AWAY = { temporalAddress: '127.0.0.1:1' };
let tenantA: FundedTenant;
let tenantB: FundedTenant;

/** Probe routes that exercise the platform's handling of bodies and failures. */
function probes(instance: FastifyInstance) {
  instance.post(
    '/api/v1/probe',
    { schema: { body: z.object({ amount_minor: z.number().int().positive(), narration: z.string().max(100) }) } },
    async (request) => ({ received: request.body }),
  );
  instance.get('/api/v1/probe/boom', async () => {
    throw new Error('connection to 10.0.0.7:5432 refused; password=hunter2');
  });
  instance.get('/api/v1/transfers/probe', async () => ({ status: 'success', data: [] }));
}

beforeAll(async () => {
  tenantA = await createFundedTenant(own.db.orm, 10_000_000, 'tenant a');
  tenantB = await createFundedTenant(own.db.orm, 2_500, 'tenant b');
});

/** Tenant A's wallet, read with any other headers the test sends. */
const getWallet = (headers: Record<string, string> = {}) =>
  own.app.inject({ method: 'GET', url: '/api/v1/wallet', headers: auth(tenantA.apiKey, headers) });

/** JSON text as written, not serialised by inject, to the probe route with tenant A's key. */
const postProbeText = (json: string) =>
  own.app.inject({
    method: 'POST',
    url: '/api/v1/probe',
    headers: auth(tenantA.apiKey, { 'content-type': 'application/json' }),
    payload: json,
  });

describe('GET /health', () => {
  it('answers 200 with both dependencies ok', async () => {
    const response = await own.app.inject({ method: 'GET', url: '/health' });
    expect(response.statusCode).toBe(200);
    expect(response.json()).toEqual({ status: 'ok', checks: { database: 'ok', temporal: 'ok' } });
  });

  it('answers 503 naming Temporal when it cannot be reached', async () => {
    await withTestApp(own.db.orm, TEMPORAL_AWAY, async (broken) => {
      const response = await broken.inject({ method: 'GET', url: '/health' });
      expect(response.statusCode).toBe(503);
      expect(response.json()).toEqual({ status: 'unavailable', checks: { database: 'ok', temporal: 'unavailable' } });
    });
  });
});

describe('GET /health/live and /health/ready', () => {
  it('answers live whenever the process answers, and ready with every check ok', async () => {
    const live = await own.app.inject({ method: 'GET', url: '/health/live' });
    expect(live.statusCode).toBe(200);
    expect(live.json()).toEqual({ status: 'ok' });
    const ready = await own.app.inject({ method: 'GET', url: '/health/ready' });
    expect(ready.statusCode).toBe(200);
    expect(ready.json()).toEqual({ status: 'ok', checks: { database: 'ok', temporal: 'ok', migrations: 'ok' } });
  });

  it('is live but not ready while a migration is pending or Temporal is away', async () => {
    const behind = await createTestDatabase();
    const stale = await createTestApp(behind.orm);
    try {
      await behind.orm.em.fork().execute(`delete from mikro_orm_migrations where name = '0011-event-notify'`);
      expect((await stale.app.inject({ method: 'GET', url: '/health/live' })).statusCode).toBe(200);
      const ready = await stale.app.inject({ method: 'GET', url: '/health/ready' });
      expect(ready.statusCode).toBe(503);
      expect(ready.json()).toEqual({
        status: 'unavailable',
        checks: { database: 'ok', temporal: 'ok', migrations: 'pending' },
      });
    } finally {
      await stale.close();
      await behind.drop();
    }
    await withTestApp(own.db.orm, TEMPORAL_AWAY, async (broken) => {
      expect((await broken.inject({ method: 'GET', url: '/health/live' })).statusCode).toBe(200);
      const ready = await broken.inject({ method: 'GET', url: '/health/ready' });
      expect(ready.statusCode).toBe(503);
      expect(ready.json().checks).toEqual({ database: 'ok', temporal: 'unavailable', migrations: 'ok' });
    });
  });
});

describe('GET /api/v1/wallet', () => {
  it("shows the calling tenant's funded balance in the resource envelope", async () => {
    const response = await getWallet();
    expect(response.statusCode).toBe(200);
    const body = response.json();
    expect(body.data).toMatchObject({ currency: 'NGN', available_minor: 10_000_000, pending_minor: 0 });
    expect(Number.isNaN(Date.parse(body.data.updated_at))).toBe(false);
    expect(body.meta.requestId).toBe(response.headers['x-request-id']);
    expect(Number.isNaN(Date.parse(body.meta.timestamp))).toBe(false);
  });

  it("scopes to the key's tenant", async () => {
    const response = await own.app.inject({ method: 'GET', url: '/api/v1/wallet', headers: auth(tenantB.apiKey) });
    expect(response.json().data.available_minor).toBe(2_500);
  });
});

describe('request ids', () => {
  it('uses a valid X-Request-Id as meta.requestId and echoes it', async () => {
    const response = await getWallet({ 'x-request-id': 'order-42:retry.1_A' });
    expect(response.headers['x-request-id']).toBe('order-42:retry.1_A');
    expect(response.json().meta.requestId).toBe('order-42:retry.1_A');
  });

  it('replaces an X-Request-Id outside 1–128 of [A-Za-z0-9._:-]', async () => {
    for (const bad of ['has space', 'x'.repeat(129), 'semi;colon']) {
      const response = await getWallet({ 'x-request-id': bad });
      expect(response.headers['x-request-id']).toMatch(/^req_[0-9a-f]{32}$/);
      expect(response.json().meta.requestId).toBe(response.headers['x-request-id']);
    }
  });

  it('carries the request id on errors and on every log line of the request', async () => {
    const response = await own.app.inject({
      method: 'GET',
      url: '/nowhere',
      headers: { 'x-request-id': 'trace-me-1' },
    });
    expect(response.headers['x-request-id']).toBe('trace-me-1');
    const lines = own.gateway.logs.filter((line) => line.requestId === 'trace-me-1');
    // One line when the request is answered, with what was asked and what was answered.
    expect(lines).toContainEqual(
      expect.objectContaining({
        msg: 'request completed',
        req: expect.objectContaining({ method: 'GET', url: '/nowhere' }),
        res: { statusCode: 404 },
        responseTime: expect.any(Number),
      }),
    );
    expect(lines.filter((line) => line.msg === 'request completed' || line.msg === 'incoming request')).toHaveLength(1);
    const requestLines = own.gateway.logs.filter((line) => line.req !== undefined || line.res !== undefined);
    expect(requestLines.every((line) => typeof line.requestId === 'string')).toBe(true);
  });
});

describe('authentication', () => {
  it('answers 401 in the resource style without a key', async () => {
    const response = await own.app.inject({ method: 'GET', url: '/api/v1/wallet' });
    expect(response.statusCode).toBe(401);
    expect(response.json()).toEqual({
      error: { code: 'UNAUTHORIZED', message: expect.stringContaining('missing API key'), details: null },
      meta: { path: '/api/v1/wallet', method: 'GET', requestId: response.headers['x-request-id'] },
    });
  });

  it('answers 401 in the transfer style on transfer routes', async () => {
    const response = await own.app.inject({ method: 'GET', url: '/api/v1/transfers/probe?page=2' });
    expect(response.statusCode).toBe(401);
    expect(response.json()).toEqual({
      success: false,
      error: { code: 'unauthorized', message: expect.stringContaining('missing API key'), status: 401 },
    });
  });

  it('answers 401 for malformed, unknown and revoked keys', async () => {
    const malformed = await own.app.inject({
      method: 'GET',
      url: '/api/v1/wallet',
      headers: { authorization: 'Basic dXNlcjpwYXNz' },
    });
    expect(malformed.statusCode).toBe(401);
    const unknown = await own.app.inject({
      method: 'GET',
      url: '/api/v1/wallet',
      headers: auth(`sk_test_${'A'.repeat(40)}`),
    });
    expect(unknown.statusCode).toBe(401);
    expect(unknown.json().error.message).toBe('invalid API key');

    const doomed = await createFundedTenant(own.db.orm, 0, 'doomed');
    expect(
      (await own.app.inject({ method: 'GET', url: '/api/v1/wallet', headers: auth(doomed.apiKey) })).statusCode,
    ).toBe(200);
    await revokeKey(own.db.orm.em.fork(), doomed.keyPrefix);
    // The key resolved a moment ago is remembered for at most API_KEY_CACHE_MS (1 s): then refused.
    const revoked = await eventually(async () => {
      const answer = await own.app.inject({ method: 'GET', url: '/api/v1/wallet', headers: auth(doomed.apiKey) });
      return answer.statusCode === 401 ? answer : false;
    }, 5_000);
    expect(revoked.json().error).toEqual({
      code: 'UNAUTHORIZED',
      message: 'this API key has been revoked',
      details: null,
    });
  });
});

describe('routing', () => {
  it('answers unknown routes 404 NOT_FOUND in the resource style', async () => {
    for (const url of ['/nowhere', '/api/v1/transfers/x/y/z']) {
      const response = await own.app.inject({ method: 'GET', url });
      expect(response.statusCode).toBe(404);
      expect(response.json()).toEqual({
        error: { code: 'NOT_FOUND', message: `no route GET ${url}`, details: null },
        meta: { path: url, method: 'GET', requestId: response.headers['x-request-id'] },
      });
    }
  });

  it('rejects legacy route forms with 404 naming the canonical path', async () => {
    const cases: [string, string][] = [
      ['/v1/wallet', '/api/v1/wallet'],
      ['/api/wallet', '/api/v1/wallet'],
      ['/v1/virtual-accounts', '/api/v1/virtual-accounts'],
      ['/api/transfers', '/api/v1/transfers'],
    ];
    for (const [legacy, canonical] of cases) {
      const response = await own.app.inject({ method: 'GET', url: legacy, headers: auth(tenantA.apiKey) });
      expect(response.statusCode).toBe(404);
      expect(response.json().error.code).toBe('NOT_FOUND');
      expect(response.json().error.message).toContain(canonical);
    }
  });
});

describe('request bodies', () => {
  it('answers malformed JSON with 400 VALIDATION_ERROR', async () => {
    const response = await postProbeText('{"amount_minor": 12');
    expect(response.statusCode).toBe(400);
    expect(response.json().error).toMatchObject({ code: 'VALIDATION_ERROR', details: { fields: [{ path: 'body' }] } });
  });

  it('names each bad field in details.fields', async () => {
    const response = await own.app.inject({
      method: 'POST',
      url: '/api/v1/probe',
      headers: auth(tenantA.apiKey),
      payload: { amount_minor: 12.5, narration: 'x'.repeat(101) },
    });
    expect(response.statusCode).toBe(400);
    expect(fieldPaths(response).sort()).toEqual(['amount_minor', 'narration']);
  });

  it('answers a body over 1 MB with 413 PAYLOAD_TOO_LARGE', async () => {
    const response = await postProbeText(JSON.stringify({ amount_minor: 1, narration: 'x'.repeat(1_100_000) }));
    expect(response.statusCode).toBe(413);
    expect(response.json().error.code).toBe('PAYLOAD_TOO_LARGE');
  });

  it('never leaks an internal message or stack from a 500', async () => {
    const response = await own.app.inject({ method: 'GET', url: '/api/v1/probe/boom', headers: auth(tenantA.apiKey) });
    expect(response.statusCode).toBe(500);
    expect(response.json()).toEqual({
      error: { code: 'INTERNAL', message: 'internal error', details: null },
      meta: { path: '/api/v1/probe/boom', method: 'GET', requestId: response.headers['x-request-id'] },
    });
    expect(response.body).not.toMatch(/hunter2|10\.0\.0\.7|at .*\.ts/);
    // …while the log keeps the real cause for operators.
    expect(JSON.stringify(own.gateway.logs)).toContain('hunter2');
  });
});

describe('rate limits', () => {
  it('answers 429 RATE_LIMITED with Retry-After past the per-key budget', async () => {
    // Budgets are counted in the database, shared with this file's other apps: a key of its own,
    // counted in a window with room left for its four requests.
    const counted = await createFundedTenant(own.db.orm, 0, 'rate-limited tenant');
    await roomInWindow(own.db.orm, 5_000);
    await withTestApp(own.db.orm, { rateLimitPerMinute: 3 }, async (limited) => {
      const responses = [];
      for (let i = 0; i < 4; i += 1) {
        responses.push(await limited.inject({ method: 'GET', url: '/api/v1/wallet', headers: auth(counted.apiKey) }));
      }
      expect(responses.map((response) => response.statusCode)).toEqual([200, 200, 200, 429]);
      const refused = responses[3]!;
      expect(refused.json().error.code).toBe('RATE_LIMITED');
      expect(Number(refused.headers['retry-after'])).toBeGreaterThan(0);
    });
  });
});

describe('API documentation', () => {
  it('serves an OpenAPI 3 document listing the endpoints', async () => {
    const response = await own.app.inject({ method: 'GET', url: '/openapi.json' });
    expect(response.statusCode).toBe(200);
    const doc = response.json();
    expect(doc.openapi).toMatch(/^3\./);
    expect(Object.keys(doc.paths)).toEqual(expect.arrayContaining(['/health', '/api/v1/wallet']));
    expect(doc.paths['/api/v1/wallet'].get.responses['200']).toBeDefined();
  });

  it('states every error status a route can answer, in its envelope style', async () => {
    const doc = (await own.app.inject({ method: 'GET', url: '/openapi.json' })).json();
    const statuses = (path: string, method: string) => Object.keys(doc.paths[path][method].responses).sort();
    expect(statuses('/api/v1/transfers', 'post')).toEqual(
      expect.arrayContaining(['200', '201', '400', '401', '409', '413', '422', '429', '503']),
    );
    expect(statuses('/api/v1/cards/{card_id}', 'get')).toEqual(
      expect.arrayContaining(['200', '400', '401', '404', '429', '503']),
    );
    expect(statuses('/api/v1/cards/{card_id}/jit-fund', 'post')).toEqual(
      expect.arrayContaining(['400', '401', '404', '409', '413', '422', '429', '503']),
    );
    // The transfer area's errors are in its own envelope; the resource areas' in theirs.
    const schemaOf = (path: string, method: string, status: string) =>
      JSON.stringify(doc.paths[path][method].responses[status].content['application/json'].schema);
    expect(schemaOf('/api/v1/transfers', 'post', '503')).toContain('success');
    expect(schemaOf('/api/v1/cards/{card_id}', 'get', '404')).toContain('requestId');
  });

  it('gives every operation a typed success answer (a response schema on every route)', async () => {
    type Answer = { content?: Record<string, { schema: object }> };
    const doc = (await own.app.inject({ method: 'GET', url: '/openapi.json' })).json<{
      paths: Record<string, Record<string, { responses: Record<string, Answer> }>>;
    }>();
    const untyped: string[] = [];
    // This file's own probe routes (error-handling fixtures) are not the gateway's.
    const routes = Object.entries(doc.paths).filter(([path]) => !path.includes('/probe'));
    for (const [path, operations] of routes) {
      for (const [method, operation] of Object.entries(operations)) {
        const success = Object.entries(operation.responses).filter(([status]) => /^2\d\d$/.test(status));
        const typed = success.some(([, answer]) => {
          // JSON, or for the event stream its text/event-stream.
          const schema =
            answer.content?.['application/json']?.schema ?? answer.content?.['text/event-stream']?.schema ?? {};
          return Object.keys(schema).length > 0;
        });
        if (!typed) untyped.push(`${method.toUpperCase()} ${path}`);
      }
    }
    expect(routes.length).toBeGreaterThan(20);
    expect(untyped).toEqual([]);
  });

  it("lists every operation of the document in docs/api.md's endpoint table", async () => {
    const doc = (await own.app.inject({ method: 'GET', url: '/openapi.json' })).json<{
      paths: Record<string, Record<string, unknown>>;
    }>();
    const page = readFileSync(join(PROJECT_ROOT, 'docs/api.md'), 'utf8');
    // This file's own probe routes (error-handling fixtures) are not the gateway's.
    const operations = Object.entries(doc.paths)
      .filter(([path]) => !path.includes('/probe'))
      .flatMap(([path, methods]) => Object.keys(methods).map((method) => `| ${method.toUpperCase()} | \`${path}\` |`));
    expect(operations.length).toBeGreaterThan(40);
    expect(operations.filter((row) => !page.includes(row))).toEqual([]);
  });

  it('serves the interactive docs page without a key', async () => {
    const response = await own.app.inject({ method: 'GET', url: '/docs/' });
    expect(response.statusCode).toBe(200);
    expect(response.headers['content-type']).toContain('text/html');
  });
});
