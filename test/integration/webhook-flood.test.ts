// Issue #27's flood, at the endpoint cap, on the gateway as production runs it (the API, the worker
// and the webhook worker as processes with production's settings, on a Temporal dev server of this
// file's own, as `npm start` runs one): one sandbox tenant registers 10 catch-all and 10
// delivery-event endpoints, all on a receiver that answers 500, and changes a card's security
// settings 10 times, on a retry schedule of seconds. While its deliveries are being made and
// attempted, another tenant creates 20 transfers, one after another: every one must answer 201.
// The creates' latencies, and the same creates' before the flood, are printed for the record (no
// timing is asserted). Before webhook deliveries had their own queue and process, most of these
// creates answered 503 at the 10 s deadline (docs/performance.md, "A webhook flood").
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { postingsTotal } from '../../src/ledger/ledger.ts';
import { type TemporalDevServerHandle, startTemporalDevServer } from '../../src/stack/temporal-dev.ts';
import { newSigningSecret, timedCall, transferBody } from '../support/api.ts';
import { createFundedTenant } from '../support/app.ts';
import { type TestDatabase, createTestDatabase } from '../support/database.ts';
import { eventually } from '../support/eventually.ts';
import { freePorts } from '../support/ports.ts';
import { type GatewayProcesses, startGatewayProcesses } from '../support/processes.ts';
import { type TestSandboxBank, startSandboxBank } from '../support/sandbox-bank.ts';

const CATCH_ALL = 10;
const DELIVERY_EVENT_ENDPOINTS = 10;
const EVENTS = 10;
const CREATES = 20;
// Dense: ten attempts within 45 s of each delivery's start.
const SCHEDULE = '0s,1s,2s,3s,4s,5s,6s,7s,8s,9s';

let db: TestDatabase;
let temporal: TemporalDevServerHandle;
let temporalDir: string;
let bank: TestSandboxBank;
let gateway: GatewayProcesses;
const receiver = { requests: 0, server: createServer() };

beforeAll(async () => {
  const [temporalPort, apiPort] = (await freePorts(2)) as [number, number];
  temporalDir = mkdtempSync(join(tmpdir(), 'gateway-flood-'));
  db = await createTestDatabase();
  // Its own Temporal server, durable like `npm start`'s, so the flood loads no other test file's.
  temporal = await startTemporalDevServer({ port: temporalPort, dbFile: join(temporalDir, 'temporal.db') });
  bank = await startSandboxBank({ databaseUrl: db.url, gatewayUrl: `http://127.0.0.1:${apiPort}` });
  receiver.server.on('request', (request, response) => {
    request.resume();
    request.on('end', () => {
      receiver.requests += 1;
      response.writeHead(500).end('down');
    });
  });
  await new Promise<void>((resolve) => receiver.server.listen(0, '127.0.0.1', resolve));
  gateway = await startGatewayProcesses({
    databaseUrl: db.url,
    temporalAddress: temporal.address,
    taskQueue: 'gateway',
    bankUrl: bank.url,
    port: apiPort,
    env: { WEBHOOK_RETRY_SCHEDULE: SCHEDULE },
  });
}, 180_000);
afterAll(async () => {
  if (gateway) expect(await gateway.stop()).toEqual([0, 0, 0]);
  receiver.server.closeAllConnections();
  receiver.server.close();
  await bank?.close();
  await temporal?.stop();
  await db?.drop();
  if (temporalDir) rmSync(temporalDir, { recursive: true, force: true });
}, 120_000);

const call = (key: string, method: string, path: string, body?: unknown) =>
  timedCall(gateway.url, key, method, path, body);

async function sql<T>(query: string, params: unknown[] = []): Promise<T[]> {
  return db.orm.em.fork().execute<T[]>(query, params);
}

/** The flood tenant's deliveries and their attempts so far. */
async function flood(tenantId: string) {
  const [row] = await sql<{ deliveries: number; attempts: number }>(
    `select count(*)::int as deliveries, coalesce(sum(attempt_count), 0)::int as attempts
       from webhook_deliveries where tenant_id = ?`,
    [tenantId],
  );
  return row!;
}

function summary(label: string, creates: { status: number; ms: number; error?: string }[]) {
  const sorted = creates.map((create) => create.ms).sort((a, b) => a - b);
  return {
    phase: label,
    statuses: creates.reduce<Record<number, number>>((counts, { status }) => {
      counts[status] = (counts[status] ?? 0) + 1;
      return counts;
    }, {}),
    p50_ms: sorted[Math.floor(sorted.length / 2)],
    max_ms: sorted.at(-1),
    latencies_ms: creates.map((create) => create.ms),
    errors: creates.flatMap((create) => (create.error ? [create.error] : [])),
  };
}

it('answers another tenant’s transfer creates 201 while one tenant’s failing endpoints flood the webhook worker', async () => {
  const victim = await createFundedTenant(db.orm, 1_000_000_000, 'victim');
  const attacker = await createFundedTenant(db.orm, 0, 'flooder');
  let sequence = 0;
  const creates = async () => {
    const results: { status: number; ms: number; error?: string }[] = [];
    for (let i = 0; i < CREATES; i++) {
      const { status, ms, json } = await call(
        victim.apiKey,
        'POST',
        '/api/v1/transfers',
        transferBody('flood', { reference: `flood-${sequence++}` }),
      );
      results.push({
        status,
        ms: Math.round(ms),
        ...(status === 201 ? {} : { error: String(json.error?.message) }),
      });
    }
    return results;
  };

  // The quiet baseline: the same creates before any endpoint exists (registering them starts the flood).
  const quiet = await creates();
  expect(quiet.map((create) => create.status)).toEqual(Array.from({ length: CREATES }, () => 201));

  const card = await call(attacker.apiKey, 'POST', '/api/v1/cards', { customer_id: 'flood' });
  expect(card.status).toBe(201);
  const endpoints: string[] = [];
  for (let i = 0; i < DELIVERY_EVENT_ENDPOINTS + CATCH_ALL; i++) {
    const registered = await call(attacker.apiKey, 'POST', '/api/v1/webhook-endpoints', {
      url: `http://127.0.0.1:${(receiver.server.address() as AddressInfo).port}/hook-${i}`,
      events:
        i < DELIVERY_EVENT_ENDPOINTS
          ? ['event.delivery.queued', 'event.delivery.failed', 'event.delivery.succeeded']
          : ['*'],
      signing_secret: newSigningSecret(),
    });
    expect(registered.status).toBe(201);
    endpoints.push(registered.json.data.id as string);
  }
  // The cap holds: a 21st is refused.
  const refused = await call(attacker.apiKey, 'POST', '/api/v1/webhook-endpoints', {
    url: `http://127.0.0.1:${(receiver.server.address() as AddressInfo).port}/hook-21`,
    events: ['*'],
    signing_secret: newSigningSecret(),
  });
  expect(refused.status).toBe(422);
  for (let i = 0; i < EVENTS; i++) {
    const put = await call(attacker.apiKey, 'PUT', `/api/v1/cards/${card.json.data.id}/security-settings`, {
      per_transaction_limit_minor: 100_000 + i,
      daily_limit_minor: null,
      channels: { pos: true, web: true, atm: true },
      blocked_merchant_categories: [],
    });
    expect(put.status).toBe(200);
  }
  // The flood is running: hundreds of deliveries made, and attempts reaching the receiver.
  const started = await eventually(async () => {
    const now = await flood(attacker.tenantId);
    return now.deliveries >= 300 && receiver.requests >= 100 ? now : undefined;
  }, 120_000);

  const before = { ...(await flood(attacker.tenantId)), received: receiver.requests };
  const during = await creates();
  const after = { ...(await flood(attacker.tenantId)), received: receiver.requests };

  console.log(
    JSON.stringify({
      flood: {
        endpoints: { catch_all: CATCH_ALL, delivery_events: DELIVERY_EVENT_ENDPOINTS },
        events: EVENTS,
        schedule: SCHEDULE,
        when_creates_began: { ...before, first_seen: started },
        when_creates_ended: after,
      },
      quiet: summary('quiet baseline', quiet),
      during: summary('during the flood', during),
    }),
  );
  // Still flooding while the creates ran: more deliveries made and more attempts sent meanwhile.
  expect(after.deliveries).toBeGreaterThan(before.deliveries);
  expect(after.received).toBeGreaterThan(before.received);
  // No tenant has more than its bound in flight, at any moment: the slots table says so now.
  const [slots] = await sql<{ granted: number }>(
    `select count(*)::int as granted from webhook_attempt_slots where tenant_id = ? and state = 'granted'`,
    [attacker.tenantId],
  );
  expect(slots!.granted).toBeLessThanOrEqual(10);
  expect(during.map((create) => create.status)).toEqual(Array.from({ length: CREATES }, () => 201));
  // And the books balance: every posting of those transfers sums to zero.
  expect(await postingsTotal(db.orm.em.fork())).toBe(0);

  // The flood ends: its endpoints deleted, every delivery stops at its next attempt.
  for (const id of endpoints)
    expect((await call(attacker.apiKey, 'DELETE', `/api/v1/webhook-endpoints/${id}`)).status).toBe(200);
}, 600_000);
