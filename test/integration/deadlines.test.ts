// Bounded waits (decisions §12), on a Temporal server of this file's own so that it can be paused
// (SIGSTOP, then SIGCONT) without touching the other files' server, and PostgreSQL paused behind a
// TCP proxy for the API alone: every request answers 503 within DEPENDENCY_TIMEOUT_MS, and a retry
// after the dependency is back settles the one transfer. Also: SIGTERM lets the API answer the
// requests in flight before it exits.
import { type ChildProcess, spawn } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { join } from 'node:path';
import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type MikroORM, openOrm } from '../../src/orm.ts';
import { postingsTotal, walletBalance } from '../../src/ledger/ledger.ts';
import { PROJECT_ROOT } from '../../src/stack/tools.ts';
import { transferWorkflowId } from '../../workflows/transfers/definitions.ts';
import { type TemporalDevServerHandle, startTemporalDevServer } from '../../src/stack/temporal-dev.ts';
import { auth, issueCard, transferBody } from '../support/api.ts';
import { TEST_SANDBOX_BANK_API_KEY, type TestApp, createFundedTenant, createTestApp } from '../support/app.ts';
import { eventually } from '../support/eventually.ts';
import { freePort } from '../support/ports.ts';
import { type GatewayStack, startGatewayStack } from '../support/stack.ts';
import { timed } from '../support/timing.ts';
import { type TcpProxy, startTcpProxy } from '../support/tcp-proxy.ts';

const TASK_QUEUE = `deadlines-${process.pid}`;
const DEADLINE_MS = 3_000;
// The answer must come by the deadline; this much more covers the 503's own rendering under load.
const SLACK_MS = 2_000;

let temporal: TemporalDevServerHandle;
let stack: GatewayStack;
let app: FastifyInstance;

beforeAll(async () => {
  temporal = await startTemporalDevServer({ port: await freePort(), fastSqlite: true });
  stack = await startGatewayStack({
    taskQueue: TASK_QUEUE,
    temporalAddress: temporal.address,
    bank: { completionDelayMs: 100 },
    app: { dependencyTimeoutMs: DEADLINE_MS },
  });
  ({ app } = stack);
});
afterAll(async () => {
  if (temporal?.process.pid) process.kill(temporal.process.pid, 'SIGCONT');
  await stack?.close();
  await temporal?.stop();
});

function pauseTemporal(): void {
  process.kill(temporal.process.pid!, 'SIGSTOP');
}
function resumeTemporal(): void {
  process.kill(temporal.process.pid!, 'SIGCONT');
}

describe('a paused Temporal server', () => {
  it('answers 503 with Retry-After in time on creates, card operations and replays; a retry then makes one transfer', async () => {
    const tenant = await createFundedTenant(stack.db.orm, 5_000_000);
    const card = await issueCard(app, tenant.apiKey);
    expect(card.statusCode).toBe(201);
    const body = transferBody('paused', { amount_minor: 1_000_000, reference: `paused-${randomUUID()}` });
    // The one create, sent again and again with the same reference.
    const create = () =>
      app.inject({ method: 'POST', url: '/api/v1/transfers', headers: auth(tenant.apiKey), payload: body });
    // The bank list is cached before the pause; only Temporal is missing.
    await app.inject({ method: 'GET', url: '/api/v1/banks', headers: auth(tenant.apiKey) });

    pauseTemporal();
    try {
      const { result: created, ms } = await timed(create);
      expect(created.statusCode).toBe(503);
      expect(created.json()).toMatchObject({ success: false, error: { code: 'unavailable', status: 503 } });
      expect(created.headers['retry-after']).toBe('2');
      expect(ms).toBeLessThan(DEADLINE_MS + SLACK_MS);

      const { result: locked, ms: lockMs } = await timed(() =>
        app.inject({
          method: 'POST',
          url: `/api/v1/cards/${card.json().data.id}/lock`,
          headers: auth(tenant.apiKey),
        }),
      );
      expect(locked.statusCode).toBe(503);
      expect(locked.json().error.code).toBe('UNAVAILABLE');
      expect(locked.headers['retry-after']).toBe('2');
      expect(lockMs).toBeLessThan(DEADLINE_MS + SLACK_MS);

      // Reads need PostgreSQL only.
      const list = await app.inject({ method: 'GET', url: '/api/v1/transfers', headers: auth(tenant.apiKey) });
      expect(list.statusCode).toBe(200);
    } finally {
      resumeTemporal();
    }

    // After the pause: retrying with the same reference answers for the one transfer.
    const retried = await eventually(async () => {
      const response = await create();
      return response.statusCode === 200 || response.statusCode === 201 ? response : undefined;
    }, 30_000);
    const again = await create();
    expect(again.statusCode).toBe(200);
    expect(again.json().data.id).toBe(retried.json().data.id);
    const settled = await eventually(async () => {
      const response = await app.inject({
        method: 'GET',
        url: `/api/v1/transfers/${retried.json().data.id}`,
        headers: auth(tenant.apiKey),
      });
      return response.json().data.status === 'successful' ? response.json().data : undefined;
    }, 30_000);
    expect(settled.amount_minor).toBe(1_000_000);
    const rows = await stack.db.orm.em
      .fork()
      .execute<{ n: string }[]>('select count(*)::text as n from transfers where tenant_id = ? and reference = ?', [
        tenant.tenantId,
        body.reference,
      ]);
    expect(rows[0]?.n).toBe('1');
    const wallet = await walletBalance(stack.db.orm.em.fork(), tenant.tenantId);
    // 5,000,000 − (1,000,000 + the 2,500 fee), debited once; nothing left reserved.
    expect([wallet.availableMinor, wallet.pendingMinor]).toEqual([3_997_500, 0]);
    expect(await postingsTotal(stack.db.orm.em.fork())).toBe(0);
  });
});

describe('a paused PostgreSQL', () => {
  let proxy: TcpProxy;
  let orm: MikroORM;
  let paused: TestApp;

  beforeAll(async () => {
    const url = new URL(stack.db.url);
    proxy = await startTcpProxy({ host: url.hostname, port: Number(url.port) });
    url.port = String(proxy.port);
    orm = await openOrm({ databaseUrl: url.toString(), poolMax: 4, timeoutMs: DEADLINE_MS });
    paused = await createTestApp(orm, { temporalAddress: temporal.address, dependencyTimeoutMs: DEADLINE_MS });
  });
  afterAll(async () => {
    proxy?.resume();
    await paused?.close();
    await orm?.close();
    await proxy?.close();
  });

  it('answers 503 with Retry-After in time, and serves again once it is back', async () => {
    const tenant = await createFundedTenant(stack.db.orm, 700_000);
    const wallet = () => paused.app.inject({ method: 'GET', url: '/api/v1/wallet', headers: auth(tenant.apiKey) });
    expect((await wallet()).statusCode).toBe(200);

    proxy.pause();
    try {
      for (const request of [
        wallet,
        () =>
          paused.app.inject({
            method: 'POST',
            url: '/api/v1/transfers',
            headers: auth(tenant.apiKey),
            payload: transferBody('x', { reference: `pg-${randomUUID()}` }),
          }),
      ]) {
        const { result: response, ms } = await timed(request);
        expect(response.statusCode).toBe(503);
        expect(response.headers['retry-after']).toBe('2');
        expect(ms).toBeLessThan(DEADLINE_MS + SLACK_MS);
      }
    } finally {
      proxy.resume();
    }
    const back = await eventually(async () => {
      const response = await wallet();
      return response.statusCode === 200 ? response : undefined;
    }, 20_000);
    expect(back.json().data.available_minor).toBe(700_000);
    const [row] = await stack.db.orm.em
      .fork()
      .execute<{ n: string }[]>('select count(*)::text as n from transfers where tenant_id = ?', [tenant.tenantId]);
    expect(row?.n).toBe('0');
  });
});

describe('stopping the API', () => {
  let child: ChildProcess | undefined;
  afterAll(() => {
    child?.kill('SIGKILL');
  });

  it('answers the request in flight after SIGTERM, then exits 0', async () => {
    const tenant = await createFundedTenant(stack.db.orm, 1_000_000);
    const port = await freePort();
    child = spawn(process.execPath, [join(PROJECT_ROOT, 'src/server.ts')], {
      cwd: PROJECT_ROOT,
      env: {
        ...process.env,
        NODE_ENV: 'test',
        HOST: '127.0.0.1',
        PORT: String(port),
        DATABASE_URL: stack.db.url,
        TEMPORAL_ADDRESS: temporal.address,
        // No worker polls this queue: the create waits on Temporal until the deadline.
        TEMPORAL_TASK_QUEUE: `nobody-${randomUUID()}`,
        SANDBOX_BANK_URL: stack.bank.url,
        SANDBOX_BANK_API_KEY: TEST_SANDBOX_BANK_API_KEY,
        DEPENDENCY_TIMEOUT_MS: String(DEADLINE_MS),
        // This API alone needs no metrics port (and must not meet another process on the default one).
        METRICS_PORT: '0',
        LOG_LEVEL: 'warn',
      },
      stdio: 'ignore',
    });
    const exited = new Promise<number | null>((resolve) => child!.once('exit', (code) => resolve(code)));

    const base = `http://127.0.0.1:${port}`;
    await eventually(async () => {
      const health = await fetch(`${base}/health`).catch(() => undefined);
      return health?.status === 200 ? health : undefined;
    }, 30_000);

    const reference = `drain-${randomUUID()}`;
    const inFlight = fetch(`${base}/api/v1/transfers`, {
      method: 'POST',
      headers: { ...auth(tenant.apiKey), 'content-type': 'application/json' },
      body: JSON.stringify(transferBody('in flight', { reference })),
    });
    // In flight for certain: its workflow exists, waiting for a worker that never comes.
    await eventually(() =>
      stack.client.workflow
        .getHandle(transferWorkflowId(tenant.tenantId, reference))
        .describe()
        .then(() => true)
        .catch(() => undefined),
    );
    child.kill('SIGTERM');
    const response = await inFlight;
    expect(response.status).toBe(503);
    expect(((await response.json()) as { error: { code: string } }).error.code).toBe('unavailable');
    expect(await exited).toBe(0);
  });
});
