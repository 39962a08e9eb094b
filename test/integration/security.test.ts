// Attacks on the real stack (decisions §12): webhook targets inside the deployment in every IP
// spelling, at registration and at delivery time; live keys against a deployment with no
// production provider; NUL characters and hostile shapes; amounts out of bounds; replays of a
// deleted endpoint's delivery. Each refusal names its field, answers within a second, and changes
// nothing.
import { randomUUID } from 'node:crypto';
import type { AddressInfo } from 'node:net';
import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { postingsTotal, walletBalance } from '../../src/ledger/ledger.ts';
import type { Resolver } from '../../src/webhooks/destinations.ts';
import { deliveryWorkflowId } from '../../workflows/webhooks/definitions.ts';
import {
  auth,
  firstAttemptedDelivery,
  issueCard,
  newSigningSecret,
  registerEndpoint,
  transferBody,
} from '../support/api.ts';
import { createFundedTenant } from '../support/app.ts';
import type { TestDatabase } from '../support/database.ts';
import { eventually } from '../support/eventually.ts';
import { type Receiver, startReceiver } from '../support/receiver.ts';
import { type GatewayStack, startGatewayStack } from '../support/stack.ts';
import { documentOperations } from '../support/openapi.ts';
import { timed } from '../support/timing.ts';

const TASK_QUEUE = `security-${process.pid}`;

// DNS as the attacker arranges it: `rebind.test` points at a public address while the endpoint is
// registered, and at loopback by the time it is delivered to.
const dns = new Map<string, string[]>([
  ['localhost', ['127.0.0.1', '::1']],
  ['localhost.', ['127.0.0.1', '::1']],
  ['rebind.test', ['93.184.216.34']],
]);
// And one that answers a public address to the first question only (the registration), loopback
// to every later one (each delivery attempt): rebinding with no race against the test.
let rebindOnceAsked = 0;
const resolver: Resolver = async (host) => {
  if (host === 'rebind-once.test') return rebindOnceAsked++ === 0 ? ['93.184.216.34'] : ['127.0.0.1'];
  const found = dns.get(host);
  if (!found) throw new Error(`no such host ${host}`);
  return found;
};

let stack: GatewayStack;
let db: TestDatabase;
let app: FastifyInstance;
let receiver: Receiver;
let ports: { api: number; bank: number; temporal: number; postgres: number };

beforeAll(async () => {
  stack = await startGatewayStack({
    taskQueue: TASK_QUEUE,
    resolver,
    bank: { completionDelayMs: 100 },
    webhookScheduleMs: [0, 60_000],
  });
  ({ db, app } = stack);
  receiver = await startReceiver();
  ports = {
    api: (app.server.address() as AddressInfo).port,
    bank: Number(new URL(stack.bank.url).port),
    temporal: Number(inject('temporalAddress').split(':')[1]),
    postgres: Number(new URL(db.url).port),
  };
});
afterAll(async () => {
  await receiver?.close();
  await stack?.close();
});

async function count(sql: string, params: unknown[]): Promise<string | undefined> {
  const [row] = await db.orm.em.fork().execute<{ n: string }[]>(sql, params);
  return row?.n;
}

/**
 * Registers an endpoint for webhook.endpoint.created only: its own creation is then the one
 * delivery it gets, made at once.
 */
const registerForOwnCreation = (apiKey: string, url: string) =>
  registerEndpoint(app, apiKey, { url, events: ['webhook.endpoint.created'], signing_secret: newSigningSecret() });

/** A read with the tenant's key; the answer, for the test to check. */
const getWithKey = (apiKey: string, url: string) => app.inject({ method: 'GET', url, headers: auth(apiKey) });

/** Every spelling of a loopback address an attacker may try, with the port. */
function loopbackSpellings(port: number): string[] {
  return [
    `127.0.0.1:${port}`,
    `localhost:${port}`,
    `localhost.:${port}`,
    `2130706433:${port}`,
    `0x7f000001:${port}`,
    `0x7f.1:${port}`,
    `0177.0.0.1:${port}`,
    `017700000001:${port}`,
    `127.1:${port}`,
    `127.0.1:${port}`,
    `127.0.0.2:${port}`,
    `[::1]:${port}`,
    `[::ffff:127.0.0.1]:${port}`,
    `[::ffff:7f00:1]:${port}`,
    `[0:0:0:0:0:ffff:7f00:1]:${port}`,
    `0.0.0.0:${port}`,
    `0:${port}`,
    `[::]:${port}`,
  ];
}

describe('webhook egress cannot reach the deployment', () => {
  it("refuses the API's, the sandbox bank's, Temporal's, PostgreSQL's and the metrics' addresses in every spelling, dialling none", async () => {
    const tenant = await createFundedTenant(db.orm);
    const canary = `/api/v1/ssrf-canary-${randomUUID()}`;
    const targets = [
      ...loopbackSpellings(ports.bank).map((host) => `http://${host}/control/providers/nip/down`),
      ...loopbackSpellings(ports.api).map((host) => `http://${host}${canary}`),
      ...loopbackSpellings(ports.temporal).map((host) => `http://${host}/`),
      ...loopbackSpellings(ports.postgres).map((host) => `http://${host}/`),
      // The API's and the workers' metrics, where the default configuration serves them.
      ...loopbackSpellings(9464).map((host) => `http://${host}/metrics`),
      ...loopbackSpellings(9465).map((host) => `http://${host}/metrics`),
      ...loopbackSpellings(9466).map((host) => `http://${host}/metrics`),
    ];
    for (const url of targets) {
      const { result: response, ms } = await timed(() =>
        registerEndpoint(app, tenant.apiKey, { url, events: ['*'], signing_secret: newSigningSecret() }),
      );
      expect({ url, status: response.statusCode }).toEqual({ url, status: 400 });
      expect(response.json().error.code).toBe('VALIDATION_ERROR');
      expect(response.json().error.details.fields[0].path).toBe('url');
      expect(ms).toBeLessThan(1_000);
    }
    expect(targets).toHaveLength(126);
    const n = await count('select count(*)::text as n from webhook_endpoints where tenant_id = ?', [tenant.tenantId]);
    // No endpoint exists, so no delivery can ever be made; and nothing reached the bank or the API.
    expect(n).toBe('0');
    expect(await stack.bank.store.isDown('nip')).toBe(false);
    expect(stack.gateway.logs.some((line) => JSON.stringify(line).includes(canary))).toBe(false);
  });

  it('still accepts a loopback receiver of the tenant on another port (sandbox keys)', async () => {
    const tenant = await createFundedTenant(db.orm);
    const response = await registerForOwnCreation(tenant.apiKey, `${receiver.url}/ok`);
    expect(response.statusCode).toBe(201);
    await eventually(() => receiver.on('/ok')[0]);
  });

  it('refuses at delivery time a name that has since been pointed at the sandbox bank, sending nothing', async () => {
    const tenant = await createFundedTenant(db.orm);
    dns.set('rebind.test', ['93.184.216.34']);
    const response = await registerForOwnCreation(
      tenant.apiKey,
      `http://rebind.test:${ports.bank}/control/providers/nip/down`,
    );
    expect(response.statusCode).toBe(201);
    dns.set('rebind.test', ['127.0.0.1']);
    const delivery = await firstAttemptedDelivery(app, tenant.apiKey, response.json().data.id);
    expect(delivery.attempts[0]).toMatchObject({ status_code: null, response_body: null });
    expect(delivery.attempts[0].error).toMatch(
      /^destination refused: resolves to 127\.0\.0\.1 port \d+, where this deployment's sandbox bank listens/,
    );
    expect(delivery.endpoint_status).toBeNull();
    expect(await stack.bank.store.isDown('nip')).toBe(false);
  });
});

describe('webhook egress cannot read the metrics', () => {
  it.each([
    [9464, 'API metrics'],
    [9465, 'worker metrics'],
    [9466, 'webhook worker metrics'],
  ])('refuses at delivery time a name since pointed at :%i (%s), sending nothing', async (port, service) => {
    const tenant = await createFundedTenant(db.orm);
    const host = `metrics-${port}.test`;
    dns.set(host, ['93.184.216.34']);
    const response = await registerForOwnCreation(tenant.apiKey, `http://${host}:${port}/metrics`);
    expect(response.statusCode).toBe(201);
    dns.set(host, ['127.0.0.1']);
    const delivery = await firstAttemptedDelivery(app, tenant.apiKey, response.json().data.id);
    expect(delivery.attempts[0]).toMatchObject({ status_code: null, response_body: null });
    expect(delivery.attempts[0].error).toBe(
      `destination refused: resolves to 127.0.0.1 port ${port}, where this deployment's ${service} listens; ` +
        'webhooks may not target the gateway itself',
    );
  });
});

describe('DNS rebinding against a live key', () => {
  it('refuses at delivery time a name that answered a public address at registration and loopback now, sending nothing', async () => {
    const live = await createFundedTenant(db.orm, 1_000_000, 'live rebinder', 'live');
    const port = Number(new URL(receiver.url).port);
    const response = await registerForOwnCreation(live.apiKey, `https://rebind-once.test:${port}/rebound`);
    expect(response.statusCode).toBe(201);
    const delivery = await firstAttemptedDelivery(app, live.apiKey, response.json().data.id);
    expect(delivery.attempts[0]).toMatchObject({
      status_code: null,
      response_body: null,
      error: 'destination refused: resolves to 127.0.0.1 (loopback), which is not a public address',
    });
    expect(rebindOnceAsked).toBe(2);
    expect(receiver.on('/rebound')).toEqual([]);
  });
});

describe('live keys never reach the sandbox bank', () => {
  it('answers 403 on every operation that would reach a provider, reads included, reserving and sending nothing', async () => {
    const live = await createFundedTenant(db.orm, 1_000_000, 'live tenant', 'live');
    expect(live.apiKey).toMatch(/^sk_live_/);
    const bankCallsBefore = await stack.bank.requestCount();
    const calls = [
      ['POST', '/api/v1/transfers', transferBody('x', { reference: 'live-1' })],
      ['POST', '/api/v1/virtual-accounts', { customer_id: 'c', account_name: 'A B' }],
      ['POST', '/api/v1/cards', { customer_id: 'c' }],
      ['POST', `/api/v1/cards/${randomUUID()}/jit-fund`, { amount_minor: 10_000 }],
      ['POST', `/api/v1/cards/${randomUUID()}/fund`, { amount_minor: 10_000 }],
      ['POST', `/api/v1/sandbox/virtual-accounts/${randomUUID()}/credits`, { amount_minor: 10_000 }],
      // Reads and changes that reach a provider without moving money (decisions §16).
      ['GET', '/api/v1/banks', undefined],
      ['GET', '/api/v1/banks/resolve?bank_code=058&account_number=0123456789', undefined],
      ['POST', `/api/v1/cards/${randomUUID()}/lock`, {}],
      ['POST', `/api/v1/cards/${randomUUID()}/unlock`, undefined],
      ['POST', `/api/v1/virtual-accounts/${randomUUID()}/close`, {}],
      ['POST', `/api/v1/identity/customers/${randomUUID()}/bvn-verification`, { bvn: '22222222222' }],
    ] as const;
    for (const [method, url, payload] of calls) {
      const { result: response, ms } = await timed(() =>
        app.inject({ method, url, headers: auth(live.apiKey), payload }),
      );
      expect({ url, status: response.statusCode }).toEqual({ url, status: 403 });
      const error = response.json().error;
      expect(error.code).toBe(url === '/api/v1/transfers' ? 'forbidden' : 'FORBIDDEN');
      expect(error.message).toMatch(
        url.includes('/sandbox/')
          ? /sandbox \(sk_test_\) key/
          : /live mode has no connector for (transfers|virtual accounts|cards|identity) in this deployment/,
      );
      expect(ms).toBeLessThan(1_000);
    }
    // Not one of them reached the sandbox bank.
    expect(await stack.bank.requestCount()).toBe(bankCallsBefore);
    const wallet = await walletBalance(db.orm.em.fork(), live.tenantId);
    expect([wallet.availableMinor, wallet.pendingMinor]).toEqual([1_000_000, 0]);
    for (const table of ['transfers', 'virtual_accounts', 'cards']) {
      const n = await count(`select count(*)::text as n from ${table} where tenant_id = ?`, [live.tenantId]);
      expect({ table, n }).toEqual({ table, n: '0' });
    }
  });
});

describe('hostile strings and shapes are refused at the edge', () => {
  const transfer = (reference: string, overrides: Record<string, unknown> = {}) =>
    transferBody('Invoice 7', { reference, ...overrides });

  it('refuses a NUL in a transfer within a second, naming the field, and leaves the reference free', async () => {
    const tenant = await createFundedTenant(db.orm, 1_000_000);
    const reference = `nul-${randomUUID()}`;
    for (const [overrides, field] of [
      [{ narration: 'a\u0000b' }, 'narration'],
      [{ metadata: { note: 'x\u0000' } }, 'metadata.note'],
      [{ metadata: { list: ['ok', { deep: '\u0000' }] } }, 'metadata.list[1].deep'],
      [{ metadata: { 'a\u0000b': 1 } }, 'metadata.a\\u0000b'],
    ] as const) {
      const { result: response, ms } = await timed(() =>
        app.inject({
          method: 'POST',
          url: '/api/v1/transfers',
          headers: auth(tenant.apiKey),
          payload: transfer(reference, overrides),
        }),
      );
      expect({ field, status: response.statusCode }).toEqual({ field, status: 400 });
      expect(response.json()).toMatchObject({ success: false, error: { code: 'validation_error', status: 400 } });
      expect(response.json().error.details.fields).toEqual([
        { path: field, message: 'must not contain a NUL character (U+0000)' },
      ]);
      expect(ms).toBeLessThan(1_000);
    }
    const corrected = await app.inject({
      method: 'POST',
      url: '/api/v1/transfers',
      headers: auth(tenant.apiKey),
      payload: transfer(reference),
    });
    expect(corrected.statusCode).toBe(201);
    const wallet = await walletBalance(db.orm.em.fork(), tenant.tenantId);
    // 100,000 + the 1,000 fee left the wallet once (reserved, or settled already).
    expect(wallet.availableMinor).toBe(899_000);
  });

  it('refuses a NUL in a card customer_id, a query value and a path segment with 400, not 503', async () => {
    const tenant = await createFundedTenant(db.orm);
    const card = await issueCard(app, tenant.apiKey, 'cus\u0000tomer');
    expect(card.statusCode).toBe(400);
    expect(card.json().error.details.fields).toEqual([
      { path: 'customer_id', message: 'must not contain a NUL character (U+0000)' },
    ]);
    const list = await getWithKey(tenant.apiKey, '/api/v1/virtual-accounts?customer_id=%00abc');
    expect(list.statusCode).toBe(400);
    expect(list.json().error.details.fields[0].path).toBe('customer_id');
    const path = await getWithKey(tenant.apiKey, '/api/v1/cards/%00');
    expect(path.statusCode).toBe(400);
    expect(path.json().error.details.fields[0].path).toBe('card_id');
    const n = await count('select count(*)::text as n from cards where tenant_id = ?', [tenant.tenantId]);
    expect(n).toBe('0');
  });

  it('refuses bodies nested deeper than 32 levels, and metadata over 8 levels or 16 KiB, naming the field', async () => {
    const tenant = await createFundedTenant(db.orm, 1_000_000);
    const nest = (levels: number) => {
      let value: Record<string, unknown> = { leaf: true };
      for (let i = 1; i < levels; i += 1) value = { n: value };
      return value;
    };
    const deepBody = JSON.stringify(transfer(`deep-${randomUUID()}`)).replace(
      /}$/,
      `,"metadata":${'{"n":'.repeat(10_000)}1${'}'.repeat(10_000)}}`,
    );
    const deep = await app.inject({
      method: 'POST',
      url: '/api/v1/transfers',
      headers: { ...auth(tenant.apiKey), 'content-type': 'application/json' },
      payload: deepBody,
    });
    expect(deep.statusCode).toBe(400);
    expect(deep.json().error.details.fields).toEqual([
      { path: 'body', message: 'must not be nested deeper than 32 levels' },
    ]);
    const cases = [
      [{ metadata: nest(9) }, 'metadata', /at most 8 levels deep/],
      [{ metadata: { blob: 'x'.repeat(16 * 1024) } }, 'metadata', /at most 16384 bytes/],
    ] as const;
    for (const [overrides, field, message] of cases) {
      const { result: response, ms } = await timed(() =>
        app.inject({
          method: 'POST',
          url: '/api/v1/transfers',
          headers: auth(tenant.apiKey),
          payload: transfer(`deep-${randomUUID()}`, overrides),
        }),
      );
      expect({ field, status: response.statusCode }).toEqual({ field, status: 400 });
      expect(response.json().error.details.fields).toEqual([{ path: field, message: expect.stringMatching(message) }]);
      expect(ms).toBeLessThan(1_000);
    }
    // At the bounds exactly: accepted.
    const atBounds = await app.inject({
      method: 'POST',
      url: '/api/v1/transfers',
      headers: auth(tenant.apiKey),
      payload: transfer(`bounds-${randomUUID()}`, { metadata: nest(8) }),
    });
    expect(atBounds.statusCode).toBe(201);
    expect(atBounds.json().data.metadata).toEqual(nest(8));
  });
});

describe('amounts, replays and lookups', () => {
  it('bounds a JIT funding to 100 … 1,000,000,000 kobo, naming amount_minor', async () => {
    const tenant = await createFundedTenant(db.orm, 1_000_000);
    const card = await issueCard(app, tenant.apiKey);
    expect(card.statusCode).toBe(201);
    for (const amount of [99, 1_000_000_001, 10 ** 15]) {
      const response = await app.inject({
        method: 'POST',
        url: `/api/v1/cards/${card.json().data.id}/jit-fund`,
        headers: auth(tenant.apiKey),
        payload: { amount_minor: amount },
      });
      expect({ amount, status: response.statusCode }).toEqual({ amount, status: 400 });
      expect(response.json().error.details.fields).toEqual([{ path: 'amount_minor', message: expect.any(String) }]);
    }
    const funded = await app.inject({
      method: 'POST',
      url: `/api/v1/cards/${card.json().data.id}/jit-fund`,
      headers: auth(tenant.apiKey),
      payload: { amount_minor: 100 },
    });
    expect(funded.statusCode).toBe(202);
    await eventually(async () => {
      const balance = await getWithKey(tenant.apiKey, `/api/v1/cards/${card.json().data.id}/balance`);
      return balance.json().data.available_minor === 100 ? balance : undefined;
    });
    expect((await walletBalance(db.orm.em.fork(), tenant.tenantId)).availableMinor).toBe(999_900);
  });

  it("answers 422 FAILED_PRECONDITION to a replay of a deleted endpoint's delivery, sending nothing", async () => {
    const tenant = await createFundedTenant(db.orm);
    const endpoint = await registerForOwnCreation(tenant.apiKey, `${receiver.url}/deleted`);
    expect(endpoint.statusCode).toBe(201);
    const delivery = await eventually(async () => {
      const list = await getWithKey(
        tenant.apiKey,
        `/api/v1/webhook-deliveries?endpoint_id=${endpoint.json().data.id}&status=succeeded`,
      );
      return list.json().data.items[0];
    });
    // The delivery's workflow has ended (its record says succeeded a moment before it completes).
    const handle = stack.client.workflow.getHandle(deliveryWorkflowId(delivery.event_id, delivery.endpoint_id));
    await handle.result();
    const removed = await app.inject({
      method: 'DELETE',
      url: `/api/v1/webhook-endpoints/${endpoint.json().data.id}`,
      headers: auth(tenant.apiKey),
    });
    expect(removed.statusCode).toBe(200);
    const replay = await app.inject({
      method: 'POST',
      url: `/api/v1/webhook-deliveries/${delivery.id}/replay`,
      headers: auth(tenant.apiKey),
    });
    expect(replay.statusCode).toBe(422);
    expect(replay.json().error.code).toBe('FAILED_PRECONDITION');
    expect(replay.json().error.message).toMatch(/is deleted/);
    // The refusal came before any signal: the delivery's workflow is still closed (a replay would
    // have started it again) and its record unchanged.
    expect((await handle.describe()).status.name).toBe('COMPLETED');
    const after = await getWithKey(tenant.apiKey, `/api/v1/webhook-deliveries/${delivery.id}`);
    expect(after.json().data).toMatchObject({ attempt_count: 1, replay_id: null, endpoint_state: 'deleted' });
    expect(receiver.on('/deleted')).toHaveLength(1);
  });

  it('refuses list offsets beyond 100,000 on every paginated list of the document, naming offset or page', async () => {
    const tenant = await createFundedTenant(db.orm);
    // Every GET with a `limit` query parameter is a list, whatever it lists: one added later is covered.
    const lists = (await documentOperations(app)).filter(
      (operation) =>
        operation.method === 'GET' &&
        operation.spec.parameters?.some((parameter) => parameter.in === 'query' && parameter.name === 'limit'),
    );
    expect(lists.map((operation) => operation.template)).toEqual(
      expect.arrayContaining([
        '/api/v1/transfers',
        '/api/v1/virtual-accounts',
        '/api/v1/cards',
        '/api/v1/cards/{card_id}/authorizations',
        '/api/v1/webhook-endpoints',
        '/api/v1/webhook-deliveries',
        '/api/v1/events',
      ]),
    );
    const fieldOf = (response: { json(): any }) => response.json().error.details.fields[0].path as string;
    for (const operation of lists) {
      const path = operation.template.replace(/\{[^}]+\}/g, randomUUID());
      const get = (query: string) => getWithKey(tenant.apiKey, `${path}?${query}`);
      const takesOffset = operation.spec.parameters!.some((parameter) => parameter.name === 'offset');
      if (takesOffset) {
        const deep = await get('offset=100001');
        expect({ list: operation.template, status: deep.statusCode, field: fieldOf(deep) }).toEqual({
          list: operation.template,
          status: 400,
          field: 'offset',
        });
        expect((await get('offset=100000')).statusCode, operation.template).not.toBe(400);
      }
      // (page - 1) × limit is the offset: page 1002 of 100 starts at 100,100; page 1001 at 100,000.
      for (const query of ['page=1002&limit=100', 'page=100002&limit=1', 'page=5002']) {
        const deep = await get(query);
        expect({ list: operation.template, query, status: deep.statusCode, field: fieldOf(deep) }).toEqual({
          list: operation.template,
          query,
          status: 400,
          field: 'page',
        });
      }
      expect((await get('page=1001&limit=100')).statusCode, operation.template).not.toBe(400);
    }
  });

  it('answers 404 for a transfer id that is not a UUID, and 400 for odd dates and huge pages, never 500', async () => {
    const tenant = await createFundedTenant(db.orm);
    const get = await getWithKey(tenant.apiKey, `/api/v1/transfers/${'a'.repeat(36)}`);
    expect(get.statusCode).toBe(404);
    expect(get.json()).toMatchObject({ success: false, error: { code: 'not_found', status: 404 } });
    const odd = await getWithKey(tenant.apiKey, '/api/v1/transfers?page=7947&from=0752-01-28T09:04:14%2B23:17');
    expect(odd.statusCode).toBe(400);
    expect(odd.json().error.details.fields[0].path).toBe('from');
    for (const url of [
      '/api/v1/transfers?page=100000000000000000000',
      '/api/v1/transfers?limit=1e400',
      '/api/v1/virtual-accounts?offset=100000000000000000000',
      '/api/v1/virtual-accounts?page=1000001',
      '/api/v1/webhook-deliveries?page=-1',
      '/api/v1/events?limit=0',
    ]) {
      const response = await app.inject({ method: 'GET', url, headers: auth(tenant.apiKey) });
      expect({ url, status: response.statusCode }).toEqual({ url, status: 400 });
    }
    expect(await postingsTotal(db.orm.em.fork())).toBe(0);
  });
});
