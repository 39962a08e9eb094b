// `npm start` end to end, as a user runs it: the whole stack comes up on embedded defaults, answers
// /health, stops cleanly on SIGINT, and finds its data again on the next start.
import { type ChildProcess, spawn } from 'node:child_process';
import { chmodSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Connection } from '@temporalio/client';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { ensureSearchAttributes } from '../../src/stack/search-attributes.ts';
import { SEARCH_ATTRIBUTES } from '../../src/stack/temporal-dev.ts';
import { PROJECT_ROOT } from '../../src/stack/tools.ts';
import { runAdmin } from '../support/cli.ts';
import { eventually } from '../support/eventually.ts';
import { freePorts } from '../support/ports.ts';
import { type Receiver, startReceiver } from '../support/receiver.ts';

const dataDir = mkdtempSync(join(tmpdir(), 'gateway-stack-'));
chmodSync(dataDir, 0o755);
let hooks: Receiver;

beforeAll(async () => {
  hooks = await startReceiver();
});
afterAll(async () => {
  await hooks?.close();
  rmSync(dataDir, { recursive: true, force: true });
});

interface Stack {
  child: ChildProcess;
  output: () => string;
  exited: Promise<number | null>;
}

function start(env: Record<string, string>): Stack {
  const child = spawn(process.execPath, [join(PROJECT_ROOT, 'src/stack/start.ts')], {
    cwd: PROJECT_ROOT,
    env: { ...process.env, DATABASE_URL: '', TEMPORAL_ADDRESS: '', DATA_DIR: dataDir, ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  child.stdout.on('data', (chunk: Buffer) => (output += chunk.toString()));
  child.stderr.on('data', (chunk: Buffer) => (output += chunk.toString()));
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  return { child, output: () => output, exited };
}

async function waitFor(stack: Stack, text: string, timeoutMs = 120_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!stack.output().includes(text)) {
    if (Date.now() > deadline || stack.child.exitCode !== null) {
      throw new Error(`stack never printed '${text}':\n${stack.output().slice(-3000)}`);
    }
    await new Promise((resolve) => setTimeout(resolve, 250));
  }
}

describe('npm start', () => {
  it('brings the stack up, stops it cleanly on SIGINT, and keeps its data across restarts', async () => {
    // Every port the start binds is a free one: the suite must pass beside a running `npm start`.
    const [port, pgPort, temporalPort, uiPort, httpPort, bankPort, metricsPort, workerMetricsPort, webhookMetricsPort] =
      (await freePorts(9)) as [number, number, number, number, number, number, number, number, number];
    const env = {
      METRICS_PORT: String(metricsPort),
      WORKER_METRICS_PORT: String(workerMetricsPort),
      WEBHOOK_WORKER_METRICS_PORT: String(webhookMetricsPort),
      PORT: String(port),
      SANDBOX_BANK_PORT: String(bankPort),
      EMBEDDED_PG_PORT: String(pgPort),
      TEMPORAL_DEV_PORT: String(temporalPort),
      TEMPORAL_UI_PORT: String(uiPort),
      TEMPORAL_DEV_HTTP_PORT: String(httpPort),
    };
    const first = start(env);
    // The last line of the start-up banner: the whole banner has been printed.
    await waitFor(first, 'press Ctrl-C to stop');
    expect(first.output()).toContain(`API            http://127.0.0.1:${port}`);
    expect(first.output()).toContain(`API docs       http://127.0.0.1:${port}/docs`);
    expect(first.output()).toContain(`Temporal UI    http://127.0.0.1:${uiPort}`);
    expect(first.output()).toContain('migrations applied: 0001-platform, 0002-provider-callbacks, 0003-transfers');
    expect(first.output()).toContain(`Sandbox bank   http://127.0.0.1:${bankPort}`);

    const health = await fetch(`http://127.0.0.1:${port}/health`);
    expect(health.status).toBe(200);
    expect((await fetch(`http://127.0.0.1:${uiPort}/`)).status).toBe(200);

    const { json: created } = await runAdmin(
      { DATABASE_URL: '', EMBEDDED_PG_PORT: String(pgPort) },
      'tenant',
      'create',
      '--name',
      'kept',
      '--wallet-minor',
      '123456',
    );
    expect(created.api_key).toMatch(/^sk_test_/);
    first.child.kill('SIGINT');
    expect(await first.exited).toBe(0);
    for (const name of ['api', 'worker', 'webhook-worker', 'sandbox-bank', 'temporal', 'postgres']) {
      expect(first.output()).toContain(`[${name}] stopped`);
    }

    const second = start(env);
    try {
      await waitFor(second, 'press Ctrl-C to stop');
      expect(second.output()).toContain('database schema is up to date');
      const wallet = await fetch(`http://127.0.0.1:${port}/api/v1/wallet`, {
        headers: { authorization: `Bearer ${created.api_key}` },
      });
      expect(wallet.status).toBe(200);
      expect(((await wallet.json()) as { data: { available_minor: number } }).data.available_minor).toBe(123_456);
      // The sandbox bank runs with the rest, and the gateway reaches it.
      const banks = await fetch(`http://127.0.0.1:${port}/api/v1/banks`, {
        headers: { authorization: `Bearer ${created.api_key}` },
      });
      expect(banks.status).toBe(200);
      const items = ((await banks.json()) as { data: { items: { code: string }[] } }).data.items;
      expect(items.map((bank) => bank.code)).toContain('058');

      // A transfer goes all the way through the running topology: API, worker, sandbox bank, callback,
      // and its settlement's webhook through the webhook worker.
      const headers = { authorization: `Bearer ${created.api_key}`, 'content-type': 'application/json' };
      const registered = await fetch(`http://127.0.0.1:${port}/api/v1/webhook-endpoints`, {
        method: 'POST',
        headers,
        body: JSON.stringify({
          url: `${hooks.url}/stack`,
          events: ['transfer.settled'],
          signing_secret: 'stack-test-secret',
        }),
      });
      expect(registered.status).toBe(201);
      const posted = await fetch(`http://127.0.0.1:${port}/api/v1/transfers`, {
        method: 'POST',
        headers,
        body: JSON.stringify({
          amount_minor: 50_000,
          recipient_account: '0123456789',
          recipient_bank_code: '058',
          narration: 'stack test',
        }),
      });
      expect(posted.status).toBe(201);
      const transfer = ((await posted.json()) as { data: { id: string; total_minor: number } }).data;
      expect(transfer.total_minor).toBe(51_000);
      let status = 'pending';
      for (let i = 0; i < 100 && status === 'pending'; i += 1) {
        await new Promise((resolve) => setTimeout(resolve, 200));
        const got = await fetch(`http://127.0.0.1:${port}/api/v1/transfers/${transfer.id}`, { headers });
        status = ((await got.json()) as { data: { status: string } }).data.status;
      }
      expect(status).toBe('successful');
      const hook = await eventually(() => hooks.on('/stack')[0], 30_000);
      expect(JSON.parse(hook.body)).toMatchObject({ type: 'transfer.settled', data: { id: transfer.id } });
      const after = await fetch(`http://127.0.0.1:${port}/api/v1/wallet`, { headers });
      expect(((await after.json()) as { data: { available_minor: number } }).data.available_minor).toBe(
        123_456 - 51_000,
      );

      // Metrics on their own port (not the tenants'): the books as they now stand, and this process's requests.
      expect((await fetch(`http://127.0.0.1:${port}/metrics`)).status).toBe(404);
      const metrics = await (await fetch(`http://127.0.0.1:${metricsPort}/metrics`)).text();
      const value = (series: string) =>
        Number(new RegExp(`^${series.replace(/[{}]/g, '\\$&')} (\\S+)$`, 'm').exec(metrics)?.[1]);
      expect(value('gateway_metrics_database_up')).toBe(1);
      expect(value('gateway_transfers{status="completed"}')).toBe(1);
      expect(value('gateway_transfers_amount_minor{status="completed"}')).toBe(50_000);
      expect(value('gateway_transfers{status="pending"}')).toBe(0);
      expect(value('gateway_ledger_system_balance_minor{account="bank_settlement",currency="NGN"}')).toBe(50_000);
      expect(value('gateway_ledger_system_balance_minor{account="fee_revenue",currency="NGN"}')).toBe(1_000);
      expect(value('gateway_transfer_create_duration_seconds_count{outcome="created"}')).toBe(1);
      expect(value('gateway_http_requests_total{route="/api/v1/transfers",method="POST",status="201"}')).toBe(1);
      // The workers' Temporal SDK metrics, each on its own port; the webhook worker's on its own task queue.
      const sdk = await (await fetch(`http://127.0.0.1:${workerMetricsPort}/metrics`)).text();
      expect(sdk).toMatch(/^temporal_workflow_task_/m);
      const webhookSdk = await (await fetch(`http://127.0.0.1:${webhookMetricsPort}/metrics`)).text();
      expect(webhookSdk).toMatch(/^temporal_workflow_task_.*task_queue="gateway-webhooks"/m);
    } finally {
      second.child.kill('SIGINT');
      expect(await second.exited).toBe(0);
    }
  }, 300_000);
});

describe('search attributes', () => {
  it('are all registered on the Temporal server, and registering again adds nothing', async () => {
    const address = inject('temporalAddress');
    expect(await ensureSearchAttributes(address, 'default')).toEqual([]);
    const connection = await Connection.connect({ address });
    try {
      const listed = await connection.operatorService.listSearchAttributes({ namespace: 'default' });
      const custom = listed.customAttributes ?? {};
      for (const name of Object.keys(SEARCH_ATTRIBUTES)) expect(custom[name]).toBeDefined();
      expect(Object.keys(SEARCH_ATTRIBUTES)).toEqual([
        'TenantId',
        'TransferReference',
        'TransferStatus',
        'TransferConnector',
        'TransferBatchReference',
        'TransferApproval',
        'AmountMinor',
        'CardId',
      ]);
    } finally {
      await connection.close();
    }
  });
});
