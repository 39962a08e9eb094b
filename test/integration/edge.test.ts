// The edge as a client sees it (decisions §12): rate limits per API key id and per client address
// for requests without a valid key, and every error raised before a route answers (router, body
// parser, Node's HTTP parser) in the resource-style envelope with meta.requestId equal to the
// x-request-id header, never Fastify's own body. Framework errors go over real HTTP, because
// `inject` skips Node's parser and some of Fastify's paths.
import { connect } from 'node:net';
import { z } from 'zod';
import { beforeAll, describe, expect, it } from 'vitest';
import type { FastifyInstance } from 'fastify';
import { ApiError } from '../../src/http/errors.ts';
import { revokeKey } from '../../src/tenants/tenants.ts';
import {
  type FundedTenant,
  type TestAppOptions,
  createFundedTenant,
  listenLocally,
  useTestApp,
  withTestApp,
} from '../support/app.ts';
import { postSignedCallback } from '../support/callbacks.ts';
import { roomInWindow } from '../support/rate-limits.ts';

function probes(instance: FastifyInstance) {
  instance.post(
    '/api/v1/edge-probe',
    { schema: { body: z.object({ amount_minor: z.number().int() }) } },
    async (request) => ({ received: request.body }),
  );
  instance.get('/api/v1/edge-probe/:probe_id', async (request) => ({ params: request.params }));
  // Authenticated POSTs honour Idempotency-Key without doing anything themselves.
  instance.post('/api/v1/edge-probe/refused', async () => {
    throw new ApiError('failed_precondition', 'the probe always refuses');
  });
}

const own = useTestApp({
  extend: probes,
  routeScopes: {
    'POST /api/v1/edge-probe': 'read',
    'GET /api/v1/edge-probe/:probe_id': 'read',
    'POST /api/v1/edge-probe/refused': 'read',
  },
});
let base: string;
let port: number;
let tenant: FundedTenant;
let other: FundedTenant;

beforeAll(async () => {
  ({ url: base, port } = await listenLocally(own.app));
  tenant = await createFundedTenant(own.db.orm, 0, 'edge tenant');
  other = await createFundedTenant(own.db.orm, 0, 'edge other');
});

/** Room left in the rate limits' window before a test counts a small budget down (a few requests). */
const WINDOW_ROOM_MS = 5_000;

const bearer = (key: string, scheme = 'Bearer') => ({ authorization: `${scheme} ${key}` });
const unknownKey = () => `sk_test_${crypto.randomUUID().replaceAll('-', '')}`;

interface Answer {
  status: number;
  requestId: string | undefined;
  retryAfter: string | undefined;
  text: string;
  body: {
    error: { code: string; message: string; details: { fields?: { path: string }[] } | null };
    meta: { requestId: string; path: string; method: string };
  };
}

async function call(path: string, init: RequestInit = {}): Promise<Answer> {
  const response = await fetch(`${base}${path}`, init);
  const text = await response.text();
  return {
    status: response.status,
    requestId: response.headers.get('x-request-id') ?? undefined,
    retryAfter: response.headers.get('retry-after') ?? undefined,
    text,
    body: JSON.parse(text) as Answer['body'],
  };
}

/** Writes raw bytes to the server and reads the response until the server closes the connection. */
function rawExchange(bytes: string, toPort = port): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const socket = connect(toPort, '127.0.0.1', () => socket.write(bytes));
    let received = '';
    socket.setEncoding('utf8');
    socket.on('data', (chunk: string) => (received += chunk));
    socket.on('error', reject);
    socket.on('close', () => {
      const [head = '', text = ''] = received.split('\r\n\r\n', 2);
      const [statusLine = '', ...headerLines] = head.split('\r\n');
      const headers = Object.fromEntries(
        headerLines.map((line) => [
          line.slice(0, line.indexOf(':')).toLowerCase(),
          line.slice(line.indexOf(':') + 1).trim(),
        ]),
      );
      try {
        resolve({
          status: Number(statusLine.split(' ')[1]),
          requestId: headers['x-request-id'],
          retryAfter: headers['retry-after'],
          text,
          body: JSON.parse(text) as Answer['body'],
        });
      } catch (error) {
        reject(new Error(`unparseable response: ${received}`, { cause: error }));
      }
    });
  });
}

/** A POST of `body` to the probe route over real HTTP with the tenant's key, as `contentType`. */
function postProbe(body: string, contentType = 'application/json'): Promise<Answer> {
  return call('/api/v1/edge-probe', {
    method: 'POST',
    headers: { ...bearer(tenant.apiKey), 'content-type': contentType },
    body,
  });
}

/** The fields a validation error names, in its order. */
const namedFields = (answer: Answer) => answer.body.error.details?.fields?.map((field) => field.path);

function expectResourceError(answer: Answer, status: number, code: string) {
  expect(answer.status).toBe(status);
  expect(answer.body.error.code).toBe(code);
  expect(answer.requestId).toMatch(/^[A-Za-z0-9._:-]{1,128}$/);
  expect(answer.body.meta.requestId).toBe(answer.requestId);
  expect(answer.text).not.toContain('FST_');
}

const withApp = (options: TestAppOptions, work: (app: FastifyInstance) => Promise<void>) =>
  withTestApp(own.db.orm, options, work);

/** `withApp` with the app listening on a port of its own, for clients that need Node's HTTP parser and timers. */
const withListeningApp = (options: TestAppOptions, work: (port: number) => Promise<void>) =>
  withApp(options, async (app) => work((await listenLocally(app)).port));

// The budgets are counted in this file's database, shared by every app made on it (as by API
// replicas): each test counts a key or a client address of its own, from a window with room left.
describe('rate limits (decisions §12)', () => {
  const withLimits = async (options: TestAppOptions, work: (app: FastifyInstance) => Promise<void>) => {
    await roomInWindow(own.db.orm, WINDOW_ROOM_MS);
    await withApp(options, work);
  };

  it('counts every spelling of the Bearer scheme against one budget per key id', async () => {
    const counted = await createFundedTenant(own.db.orm, 0, 'edge spellings');
    await withLimits({ rateLimitPerMinute: 4 }, async (app) => {
      const statuses = [];
      for (const scheme of ['Bearer', 'bearer', 'BEARER', 'bEaReR', 'Bearer']) {
        const response = await app.inject({
          method: 'GET',
          url: '/api/v1/wallet',
          headers: bearer(counted.apiKey, scheme),
        });
        statuses.push(response.statusCode);
        if (response.statusCode === 429) {
          expect(response.json().error.code).toBe('RATE_LIMITED');
          expect(response.json().meta.requestId).toBe(response.headers['x-request-id']);
          expect(Number(response.headers['retry-after'])).toBeGreaterThan(0);
        }
      }
      expect(statuses).toEqual([200, 200, 200, 200, 429]);
      // Another key has its own budget.
      const another = await app.inject({ method: 'GET', url: '/api/v1/wallet', headers: bearer(other.apiKey) });
      expect(another.statusCode).toBe(200);
    });
  });

  it('limits missing, malformed, unknown and revoked keys per client address, each key different', async () => {
    const doomed = await createFundedTenant(own.db.orm, 0, 'edge doomed');
    await revokeKey(own.db.orm.em.fork(), doomed.keyPrefix);
    const remoteAddress = '198.18.0.1';
    await withLimits({ rateLimitUnauthenticatedPerMinute: 4 }, async (app) => {
      const attempts = [{}, { authorization: 'Basic dXNlcjpwYXNz' }, bearer(unknownKey()), bearer(doomed.apiKey)];
      const statuses = [];
      for (const headers of attempts) {
        statuses.push((await app.inject({ method: 'GET', url: '/api/v1/wallet', headers, remoteAddress })).statusCode);
      }
      expect(statuses).toEqual([401, 401, 401, 401]);
      const refused = await app.inject({
        method: 'GET',
        url: '/api/v1/wallet',
        headers: bearer(unknownKey()),
        remoteAddress,
      });
      expect(refused.statusCode).toBe(429);
      expect(refused.json().error.code).toBe('RATE_LIMITED');
      expect(refused.json().error.message).toContain('without a valid API key');
      expect(refused.json().meta.requestId).toBe(refused.headers['x-request-id']);
      expect(Number(refused.headers['retry-after'])).toBeGreaterThan(0);
    });
  });

  it('counts clients behind a trusted proxy (TRUST_PROXY) apart, and ignores X-Forwarded-For from anyone else', async () => {
    const unknownFrom = async (app: FastifyInstance, client: string, peer = '127.0.0.1') =>
      (
        await app.inject({
          method: 'GET',
          url: '/api/v1/wallet',
          headers: { ...bearer(unknownKey()), 'x-forwarded-for': client },
          remoteAddress: peer,
        })
      ).statusCode;
    // Behind the balancer (the peer, 127.0.0.1, is trusted): each client has its own budget.
    await withLimits({ rateLimitUnauthenticatedPerMinute: 2, trustProxy: ['127.0.0.1'] }, async (app) => {
      expect([await unknownFrom(app, '203.0.113.7'), await unknownFrom(app, '203.0.113.7')]).toEqual([401, 401]);
      expect(await unknownFrom(app, '203.0.113.7')).toBe(429);
      expect(await unknownFrom(app, '198.51.100.9')).toBe(401);
    });
    // Trusting no proxy, a forged X-Forwarded-For buys no new budget: the peer's address counts.
    await withLimits({ rateLimitUnauthenticatedPerMinute: 2 }, async (app) => {
      const peer = '198.18.0.2';
      expect([await unknownFrom(app, '203.0.113.1', peer), await unknownFrom(app, '203.0.113.2', peer)]).toEqual([
        401, 401,
      ]);
      expect(await unknownFrom(app, '203.0.113.3', peer)).toBe(429);
    });
  });

  it('serves a valid key while its address has used the budget for requests without one', async () => {
    const remoteAddress = '198.18.0.3';
    await withLimits({ rateLimitUnauthenticatedPerMinute: 2 }, async (app) => {
      const unknown = async () =>
        (await app.inject({ method: 'GET', url: '/api/v1/wallet', headers: bearer(unknownKey()), remoteAddress }))
          .statusCode;
      expect([await unknown(), await unknown(), await unknown()]).toEqual([401, 401, 429]);
      const valid = await app.inject({
        method: 'GET',
        url: '/api/v1/wallet',
        headers: bearer(tenant.apiKey),
        remoteAddress,
      });
      expect(valid.statusCode).toBe(200);
      expect(await unknown()).toBe(429);
    });
  });

  it('answers 429 in the transfer style on transfer routes', async () => {
    const remoteAddress = '198.18.0.4';
    await withLimits({ rateLimitUnauthenticatedPerMinute: 1 }, async (app) => {
      const get = () =>
        app.inject({ method: 'GET', url: '/api/v1/transfers', headers: bearer(unknownKey()), remoteAddress });
      expect((await get()).statusCode).toBe(401);
      const refused = await get();
      expect(refused.statusCode).toBe(429);
      expect(refused.json()).toEqual({
        success: false,
        error: { code: 'rate_limited', message: expect.stringContaining('without a valid API key'), status: 429 },
      });
      expect(Number(refused.headers['retry-after'])).toBeGreaterThan(0);
    });
  });

  it('keeps public routes on the general budget per client address', async () => {
    const remoteAddress = '198.18.0.5';
    await withLimits({ rateLimitPerMinute: 2, rateLimitUnauthenticatedPerMinute: 1 }, async (app) => {
      const statuses = [];
      for (let i = 0; i < 3; i += 1)
        statuses.push((await app.inject({ method: 'GET', url: '/openapi.json', remoteAddress })).statusCode);
      expect(statuses).toEqual([200, 200, 429]);
    });
  });

  it('keeps signed provider callbacks off that budget: a processor asks about every purchase from one address', async () => {
    const remoteAddress = '198.18.0.6';
    await withLimits({ rateLimitPerMinute: 2, rateLimitUnauthenticatedPerMinute: 1 }, async (app) => {
      const statuses = [];
      for (let i = 0; i < 5; i += 1) {
        const body = { id: `edge-signed-${i}`, type: 'edge.probe', data: {} };
        statuses.push((await postSignedCallback(app, body, remoteAddress)).statusCode);
      }
      expect(statuses).toEqual([200, 200, 200, 200, 200]);
      // An unsigned one is refused by the route itself, the address's budget still whole.
      const unsigned = await app.inject({
        method: 'POST',
        url: '/provider-callbacks/sandbox',
        headers: { 'content-type': 'application/json' },
        payload: '{"id":"x","type":"edge.probe","data":{}}',
        remoteAddress,
      });
      expect(unsigned.statusCode).toBe(401);
    });
  });
});

describe('errors before routing, over real HTTP (decisions §12)', () => {
  it('answers an unknown route 404 NOT_FOUND', async () => {
    const answer = await call('/nowhere/at-all');
    expectResourceError(answer, 404, 'NOT_FOUND');
    expect(answer.body.meta).toMatchObject({ path: '/nowhere/at-all', method: 'GET' });
  });

  it('answers malformed JSON 400 VALIDATION_ERROR', async () => {
    const answer = await postProbe('{"amount_minor": 12');
    expectResourceError(answer, 400, 'VALIDATION_ERROR');
    expect(answer.body.error.details?.fields).toEqual([{ path: 'body', message: 'is not valid JSON' }]);
  });

  it("answers bad URL encoding 400 VALIDATION_ERROR, keeping the client's request id", async () => {
    const answer = await call('/api/v1/%E0%A4%A', { headers: { 'x-request-id': 'edge-bad-url-1' } });
    expectResourceError(answer, 400, 'VALIDATION_ERROR');
    expect(answer.requestId).toBe('edge-bad-url-1');
    expect(namedFields(answer)).toEqual(['url']);
    expect(answer.body.meta).toMatchObject({ path: '/api/v1/%E0%A4%A', method: 'GET' });
  });

  it('answers a path parameter over 100 characters 400 VALIDATION_ERROR naming it', async () => {
    expect((await call(`/api/v1/edge-probe/${'p'.repeat(100)}`, { headers: bearer(tenant.apiKey) })).status).toBe(200);
    const answer = await call(`/api/v1/edge-probe/${'p'.repeat(101)}`, { headers: bearer(tenant.apiKey) });
    expectResourceError(answer, 400, 'VALIDATION_ERROR');
    expect(answer.body.error.details).toEqual({
      fields: [{ path: 'probe_id', message: 'must be at most 100 characters' }],
    });
  });

  it('answers a URL over the 16 KB header limit 400 VALIDATION_ERROR', async () => {
    const answer = await call(`/api/v1/edge-probe/${'u'.repeat(20_000)}`);
    expectResourceError(answer, 400, 'VALIDATION_ERROR');
    expect(namedFields(answer)).toEqual(['request']);
  });

  it('answers an unsupported content type 400 VALIDATION_ERROR naming content-type', async () => {
    const answer = await postProbe('<amount_minor>12</amount_minor>', 'application/xml');
    expectResourceError(answer, 400, 'VALIDATION_ERROR');
    expect(namedFields(answer)).toEqual(['content-type']);
  });

  it('answers a body over 1 MB 413 PAYLOAD_TOO_LARGE', async () => {
    const answer = await postProbe(JSON.stringify({ amount_minor: 1, padding: 'x'.repeat(1_100_000) }));
    expectResourceError(answer, 413, 'PAYLOAD_TOO_LARGE');
  });

  it('answers a malformed request line 400 VALIDATION_ERROR, written by hand on the socket', async () => {
    const answer = await rawExchange('GARBAGE\r\n\r\n');
    expectResourceError(answer, 400, 'VALIDATION_ERROR');
    expect(answer.requestId).toMatch(/^req_[0-9a-f]{32}$/);
  });

  it("answers a malformed header 400 VALIDATION_ERROR with the client's request id and request line", async () => {
    const answer = await rawExchange(
      'GET /api/v1/wallet?x=1 HTTP/1.1\r\nHost: gateway\r\nX-Request-Id: edge-raw-1\r\nthis is no header\r\n\r\n',
    );
    expectResourceError(answer, 400, 'VALIDATION_ERROR');
    expect(answer.requestId).toBe('edge-raw-1');
    expect(answer.body.meta).toEqual({ path: '/api/v1/wallet', method: 'GET', requestId: 'edge-raw-1' });
  });

  it('answers headers not received in time 408 REQUEST_TIMEOUT', async () => {
    // HEADERS_TIMEOUT_MS, checked every quarter of it.
    await withListeningApp({ headersTimeoutMs: 300, requestTimeoutMs: 600 }, async (slowPort) => {
      const answer = await rawExchange('GET /api/v1/wallet HTTP/1.1\r\nHost: gateway\r\n', slowPort);
      expectResourceError(answer, 408, 'REQUEST_TIMEOUT');
    });
  });
});

describe('slow clients (#14: slowloris, a body dripped a byte at a time)', () => {
  /**
   * Sends `head` at once, then `body` one byte per `everyMs` until the server answers or closes;
   * resolves with the answer and how many body bytes had gone out by then.
   */
  function drip(toPort: number, head: string, body: string, everyMs: number) {
    return new Promise<{ answer: string; sentBodyBytes: number }>((resolve, reject) => {
      let sent = 0;
      let answer = '';
      let timer: NodeJS.Timeout | undefined;
      const socket = connect(toPort, '127.0.0.1', () => {
        socket.write(head);
        timer = setInterval(() => {
          if (sent < body.length && socket.writable) socket.write(body[sent++]!);
        }, everyMs);
      });
      socket.setEncoding('utf8');
      socket.on('data', (chunk: string) => (answer += chunk));
      socket.on('error', (error: NodeJS.ErrnoException) => {
        // The server may reset the connection once it has answered; the answer is what counts.
        if (answer === '') reject(error);
      });
      socket.on('close', () => {
        clearInterval(timer);
        resolve({ answer, sentBodyBytes: sent });
      });
    });
  }

  /** A transfer body of some 230 bytes, and the head of its POST (with the tenant's key, when given) that announces it. */
  function transferPost(apiKey?: string) {
    const body = JSON.stringify({ amount_minor: 12, padding: 'x'.repeat(200) });
    const head =
      'POST /api/v1/transfers HTTP/1.1\r\nHost: gateway\r\ncontent-type: application/json\r\n' +
      (apiKey === undefined ? '' : `authorization: Bearer ${apiKey}\r\n`) +
      `content-length: ${Buffer.byteLength(body)}\r\n\r\n`;
    return { head, body };
  }

  it('answers a body that does not arrive within REQUEST_TIMEOUT_MS 408, before the client has sent it, while serving others', async () => {
    await withListeningApp({ headersTimeoutMs: 200, requestTimeoutMs: 500 }, async (slowPort) => {
      const { head, body } = transferPost(tenant.apiKey);
      // Twenty such clients at once, a byte every 50 ms: 11 s each to finish if they were let.
      const dripping = Array.from({ length: 20 }, () => drip(slowPort, head, body, 50));
      // A client that sends at a normal pace is answered meanwhile.
      const normal = await fetch(`http://127.0.0.1:${slowPort}/api/v1/wallet`, { headers: bearer(tenant.apiKey) });
      expect(normal.status).toBe(200);
      for (const { answer, sentBodyBytes } of await Promise.all(dripping)) {
        expect(answer).toMatch(/^HTTP\/1\.1 408 /);
        expect(JSON.parse(answer.slice(answer.indexOf('\r\n\r\n') + 4))).toMatchObject({
          error: { code: 'REQUEST_TIMEOUT' },
        });
        expect(sentBodyBytes).toBeLessThan(Buffer.byteLength(body));
      }
    });
  });

  it('closes the connection after an answer given before the body arrived, so no second answer follows', async () => {
    await withListeningApp({ headersTimeoutMs: 200, requestTimeoutMs: 500 }, async (slowPort) => {
      // No API key: refused with 401 at once, before the body, which keeps coming a byte at a time.
      const { head, body } = transferPost();
      const { answer, sentBodyBytes } = await drip(slowPort, head, body, 50);
      expect(answer.match(/HTTP\/1\.1 \d{3}/g)).toEqual(['HTTP/1.1 401']);
      expect(answer).toMatch(/\r\nconnection: close\r\n/i);
      expect(sentBodyBytes).toBeLessThan(Buffer.byteLength(body));
    });
  });

  it('answers headers dripped a byte at a time 408 within HEADERS_TIMEOUT_MS, however long they keep coming', async () => {
    await withListeningApp({ headersTimeoutMs: 300, requestTimeoutMs: 600 }, async (slowPort) => {
      const headers = `GET /api/v1/wallet HTTP/1.1\r\nHost: gateway\r\n${'x-padding: slow\r\n'.repeat(40)}\r\n`;
      const { answer, sentBodyBytes } = await drip(slowPort, '', headers, 20);
      expect(answer).toMatch(/^HTTP\/1\.1 408 /);
      expect(sentBodyBytes).toBeLessThan(headers.length);
    });
  });
});

describe('security headers (#14)', () => {
  it('serves the docs page under a strict CSP that forbids framing, with nosniff and no referrer', async () => {
    const page = await fetch(`${base}/docs/static/index.html`);
    expect(page.status).toBe(200);
    const headers = Object.fromEntries(page.headers);
    const csp = headers['content-security-policy'] ?? '';
    expect(csp).toMatch(/default-src 'self'/);
    expect(csp).toMatch(/script-src 'self'\s*;/);
    expect(csp).toMatch(/object-src 'none'/);
    expect(csp).not.toMatch(/unsafe-inline|unsafe-eval/);
    expect(csp).toMatch(/; frame-ancestors 'none'$/);
    expect(csp.match(/frame-ancestors/g)).toHaveLength(1);
    expect(headers).toMatchObject({
      'x-frame-options': 'DENY',
      'x-content-type-options': 'nosniff',
      'referrer-policy': 'no-referrer',
      'cross-origin-opener-policy': 'same-origin',
    });
  });

  it('marks API answers, errors included, not to be cached or sniffed', async () => {
    const answers = [
      await fetch(`${base}/api/v1/wallet`, { headers: bearer(tenant.apiKey) }),
      await fetch(`${base}/api/v1/wallet`),
    ];
    expect(
      answers.map((answer) => [
        answer.status,
        answer.headers.get('cache-control'),
        answer.headers.get('x-content-type-options'),
      ]),
    ).toEqual([
      [200, 'no-store', 'nosniff'],
      [401, 'no-store', 'nosniff'],
    ]);
  });
});

describe('meta.requestId on resource-style errors (decisions §1)', () => {
  it('is on 401s and on stored idempotent answers, which replay the first answer', async () => {
    const unauthorized = await call('/api/v1/wallet');
    expectResourceError(unauthorized, 401, 'UNAUTHORIZED');

    const send = () =>
      call('/api/v1/edge-probe/refused', {
        method: 'POST',
        headers: { ...bearer(tenant.apiKey), 'content-type': 'application/json', 'idempotency-key': 'edge-idem-1' },
        body: '{}',
      });
    const first = await send();
    expectResourceError(first, 422, 'FAILED_PRECONDITION');
    const replay = await send();
    expect(replay.status).toBe(422);
    expect(replay.body).toEqual(first.body);
    expect(replay.requestId).not.toBe(first.requestId);
  });
});
