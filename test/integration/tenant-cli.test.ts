// The tenant CLI (`npm run gateway`, src/client/cli/) as a developer runs it, a process against the
// real stack: `listen --forward-to` a local receiver while `trigger` makes real events, each
// forwarded once with its webhook body and a signature under the session secret it printed, and
// resumed after the last event when the connection drops; `statement --csv`; the listings; the
// refusals (unknown type, live key, no key).
import { type ChildProcess, spawn } from 'node:child_process';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { verifyWebhook } from '../../src/client/index.ts';
import { PROJECT_ROOT } from '../../src/stack/tools.ts';
import { createFundedTenant } from '../support/app.ts';
import type { TestDatabase } from '../support/database.ts';
import { eventually } from '../support/eventually.ts';
import { type Receiver, startReceiver } from '../support/receiver.ts';
import { runGateway } from '../support/cli.ts';
import { type GatewayStack, useGatewayStack } from '../support/stack.ts';
import { type TcpProxy, startTcpProxy } from '../support/tcp-proxy.ts';

const TASK_QUEUE = `tenant-cli-${process.pid}`;
const CLI = join(PROJECT_ROOT, 'src/client/cli/main.ts');

let stack: GatewayStack;
let db: TestDatabase;
let receiver: Receiver;
let proxy: TcpProxy;

useGatewayStack(
  { taskQueue: TASK_QUEUE, bank: { completionDelayMs: 100 }, webhookScheduleMs: [0, 500, 1_000] },
  async (started) => {
    stack = started;
    db = started.db;
    receiver = await startReceiver();
    // The CLI reaches the API through a proxy the test can cut, as a network drops a connection.
    proxy = await startTcpProxy({ host: '127.0.0.1', port: Number(new URL(started.gatewayUrl).port) });
  },
  async () => {
    await proxy.close();
    await receiver.close();
  },
);

const viaProxy = () => `http://127.0.0.1:${proxy.port}`;

/** Runs the CLI to its end, through the proxy: exit code and output. */
const gateway = (apiKey: string | undefined, ...args: string[]) =>
  runGateway({ GATEWAY_URL: viaProxy(), GATEWAY_API_KEY: apiKey ?? '' }, ...args);

/** `listen` as a long-running process, its stdout lines parsed as they come. */
function startListen(apiKey: string, forwardTo: string) {
  const child: ChildProcess = spawn(process.execPath, [CLI, 'listen', '--forward-to', forwardTo, '--json'], {
    env: { ...process.env, GATEWAY_URL: viaProxy(), GATEWAY_API_KEY: apiKey },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const lines: Record<string, any>[] = [];
  let stderr = '';
  let buffered = '';
  child.stdout!.on('data', (chunk: Buffer) => {
    buffered += chunk.toString();
    let end;
    while ((end = buffered.indexOf('\n')) >= 0) {
      lines.push(JSON.parse(buffered.slice(0, end)) as Record<string, any>);
      buffered = buffered.slice(end + 1);
    }
  });
  child.stderr!.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  const exited = new Promise<number | null>((resolve) => child.once('exit', resolve));
  return {
    lines,
    stderr: () => stderr,
    async stop() {
      child.kill('SIGINT');
      return exited;
    },
  };
}

describe('gateway listen and trigger', () => {
  it('forwards each real event once, signed with the session secret, and resumes after a dropped connection', async () => {
    const tenant = await createFundedTenant(db.orm, 5_000_000);
    const listener = startListen(tenant.apiKey, `${receiver.url}/cli-hooks`);
    try {
      const ready = await eventually(() => listener.lines[0]);
      expect(ready).toMatchObject({ ready: true, forward_to: `${receiver.url}/cli-hooks` });
      const secret = ready.signing_secret as string;
      expect(secret).toMatch(/^whsec_[A-Za-z0-9+/]{43}=$/);
      await eventually(() => stack.app.eventStreams.size === 1);

      const triggered = await gateway(tenant.apiKey, 'trigger', 'transfer.settled', '--json');
      expect(triggered.code).toBe(0);
      const { transfer_id } = JSON.parse(triggered.stdout) as { transfer_id: string };
      // transfer.created, then transfer.settled about 100 ms later.
      const forwarded = await eventually(() =>
        receiver.on('/cli-hooks').length >= 2 ? receiver.on('/cli-hooks') : undefined,
      );
      const events = forwarded.map((hook) => verifyWebhook(hook.body, hook.headers as Record<string, string>, secret));
      expect(events.map((event) => [event.type, event.data.id])).toEqual([
        ['transfer.created', transfer_id],
        ['transfer.settled', transfer_id],
      ]);
      // The body is the webhook body, byte for byte as the event stream sent it.
      for (const [i, hook] of forwarded.entries()) {
        const stored = await db.orm.em
          .fork()
          .execute<{ id: string }[]>('select id from events where id = ?', [events[i]!.id]);
        expect(stored).toHaveLength(1);
        expect(Object.keys(JSON.parse(hook.body) as object)).toEqual(['id', 'type', 'created_at', 'data']);
      }
      await eventually(() => listener.lines.length === 3);
      expect(listener.lines.slice(1).map((line) => [line.type, line.status])).toEqual([
        ['transfer.created', 200],
        ['transfer.settled', 200],
      ]);

      // The network drops; two more transfers happen meanwhile; the listener resumes after the last.
      proxy.drop();
      const second = await gateway(tenant.apiKey, 'trigger', 'transfer.failed', '--json');
      expect(second.code).toBe(0);
      const failedId = (JSON.parse(second.stdout) as { transfer_id: string }).transfer_id;
      await eventually(() => receiver.on('/cli-hooks').length >= 4, 30_000);
      const after = receiver
        .on('/cli-hooks')
        .slice(2)
        .map((hook) => JSON.parse(hook.body) as { type: string; data: { id: string } });
      expect(after.map((event) => [event.type, event.data.id])).toEqual([
        ['transfer.created', failedId],
        ['transfer.failed', failedId],
      ]);
      expect(listener.stderr()).toContain('stream lost');
      await new Promise((resolve) => setTimeout(resolve, 500));
      expect(receiver.on('/cli-hooks')).toHaveLength(4);
    } finally {
      expect(await listener.stop()).toBe(0);
    }
  }, 90_000);

  it('lists what trigger can make, and refuses an unknown type, a live key and no key with exit 2', async () => {
    const tenant = await createFundedTenant(db.orm);
    const listed = await gateway(tenant.apiKey, 'trigger', '--list', '--json');
    expect(listed.code).toBe(0);
    expect(JSON.parse(listed.stdout)).toContain('card.authorization.declined');
    const unknown = await gateway(tenant.apiKey, 'trigger', 'reconciliation.mismatch');
    expect(unknown.code).toBe(2);
    expect(unknown.stderr).toContain('trigger cannot make reconciliation.mismatch');
    const live = await gateway(`sk_live_${'a'.repeat(40)}`, 'trigger', 'transfer.settled');
    expect(live.code).toBe(2);
    expect(live.stderr).toContain('sandbox keys');
    const none = await gateway(undefined, 'events', 'list');
    expect(none.code).toBe(2);
    expect(none.stderr).toContain('GATEWAY_API_KEY');
    const refused = await gateway(`sk_test_${'b'.repeat(40)}`, 'events', 'list');
    expect(refused.code).toBe(1);
    expect(refused.stderr).toContain('401');
  });
});

describe('gateway statement, events and deliveries', () => {
  it('exports the statement as CSV and lists events and deliveries', async () => {
    const tenant = await createFundedTenant(db.orm, 2_000_000);
    const triggered = await gateway(tenant.apiKey, 'trigger', 'virtual_account.credited', '--json');
    expect(triggered.code).toBe(0);
    const accountId = (JSON.parse(triggered.stdout) as { virtual_account_id: string }).virtual_account_id;
    await eventually(async () => {
      const csv = await gateway(tenant.apiKey, 'statement', '--csv');
      return csv.stdout.split('\r\n').length === 4;
    });
    const csv = await gateway(tenant.apiKey, 'statement', '--csv');
    expect(csv.code).toBe(0);
    const [header, ...rows] = csv.stdout.trimEnd().split('\r\n');
    expect(header).toBe(
      'created_at,id,entry_id,type,amount_minor,balance_after_minor,reference,resource_type,resource_id',
    );
    expect(rows.map((row) => row.split(',').slice(3))).toEqual([
      ['wallet_funding', '2000000', '2000000', 'test-initial', 'journal_entry', expect.any(String)],
      ['inbound_credit', '10000', '2010000', expect.stringMatching(/^SBXCR/), 'virtual_account', accountId],
    ]);
    // The same CSV the operator's export gives.
    const admin = await stack.admin('wallet', 'statement', '--tenant', tenant.tenantId, '--csv');
    expect(admin.stdout).toBe(csv.stdout);

    const events = await gateway(tenant.apiKey, 'events', 'list', '--json');
    expect(events.code).toBe(0);
    expect((JSON.parse(events.stdout) as { items: { type: string }[] }).items.map((event) => event.type)).toEqual([
      'virtual_account.credited',
      'virtual_account.created',
    ]);
    const table = await gateway(tenant.apiKey, 'events', 'list');
    expect(table.stdout.split('\n')[0]).toMatch(/^ID\s+TYPE\s+CREATED_AT$/);
    const deliveries = await gateway(tenant.apiKey, 'deliveries', 'list', '--json');
    expect(JSON.parse(deliveries.stdout)).toMatchObject({ items: [], pagination: { total: 0 } });
  }, 60_000);
});
