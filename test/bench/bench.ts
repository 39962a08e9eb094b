// `npm run bench`: what the gateway costs on top of Temporal and PostgreSQL, measured in one run
// beside the floors on the same machine and servers (docs/performance.md):
//   create   POST /api/v1/transfers  vs  a bare Update-with-Start of an empty workflow
//   get      GET /api/v1/transfers/{id}  vs  Fastify's hello world in its own process
//   ratelimit  the rate limits' count, one key's row (src/http/rate-limit-windows.ts)  vs  one
//            PostgreSQL round trip: what every limited request pays for budgets shared by replicas
//   cost     what one transfer costs: statements, rows, Temporal events and writes (cost.ts)
//   e2e      create → signed transfer.settled received (sequential)  vs  empty workflow start → result
//   webhooks deliveries per second to a local receiver
//   jit      JIT fundings per second on one card and across 100 cards
//   credits  virtual-account credits per second
//   authorizations  card authorization decisions  vs  one PostgreSQL round trip
//   bulk     one batch of 1,000 transfers: until every item is reserved, submitted, settled, beside
//            the single-create throughput of the same run
// with the API's and worker's CPU and RSS per phase. Starts its own gateway (`npm start`'s launcher,
// fresh state, sandbox bank completing at once, rate limit out of the way) unless DATABASE_URL /
// TEMPORAL_ADDRESS point elsewhere. Prints the tables and writes them to the output folder as
// latest.json, latest.md (the same tables as a page) and latest.svg, and checks at the end that
// every posting ever made sums to zero and that `ledger verify` passes.
//   npm run bench -- [--duration 4] [--concurrency 1,8,16,32,128]
//                    [--phases create,get,ratelimit,cost,e2e,webhooks,jit,credits,authorizations,bulk,stream]
//                    [--e2e-count 20] [--batch 100] [--cost-count 20] [--bulk-size 1000] [--out test/bench/results]
import { execFileSync, spawn } from 'node:child_process';
import { randomBytes, randomUUID } from 'node:crypto';
import { cpus, totalmem } from 'node:os';
import { join, resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { Client, Connection, WithStartWorkflowOperation } from '@temporalio/client';
import { DefaultLogger, NativeConnection, Runtime, Worker } from '@temporalio/worker';
import pg from 'pg';
import { Webhook } from 'standardwebhooks';
import { assertNodeVersion } from '../../src/runtime/node-version.ts';
import { PROJECT_ROOT } from '../../src/stack/tools.ts';
import { startReceiver } from '../support/receiver.ts';
import { pingUpdate } from './floor-definitions.ts';
import type { floorEmptyWorkflow, floorUpdateWorkflow } from './floor-workflows.ts';
import {
  type CpuMeter,
  type PointResult,
  keepAlivePoster,
  processUsage,
  progress,
  runPoint,
  runSequential,
  sampler,
} from './load.ts';
import {
  type BenchResults,
  type DecisionWaits,
  bulkRows,
  cpuRows,
  decisionWaitRows,
  costRows,
  ledgerLine,
  measureRows,
  streamRows,
  pathRows,
  table,
  writeResults,
} from './report.ts';
import { type BenchStack, startBenchStack } from './stack.ts';
import { measureTransferCost, overTargets } from './cost.ts';
import { verifyLedger } from '../../src/ledger/verify.ts';
import { rateLimitCounterOn } from '../../src/http/rate-limit-windows.ts';
import { RATE_LIMIT_WINDOW_MS } from '../../src/http/rate-limits.ts';
import { streamEvents } from '../../src/client/stream.ts';
import { DEVELOPMENT_CALLBACK_SECRET } from '../../src/runtime/secrets.ts';
import { signWebhook } from '../../src/runtime/standard-webhooks.ts';

assertNodeVersion();

const { values: flags } = parseArgs({
  options: {
    duration: { type: 'string', default: '4' },
    concurrency: { type: 'string', default: '1,8,16,32,128' },
    phases: {
      type: 'string',
      default: 'create,get,ratelimit,cost,e2e,webhooks,jit,credits,authorizations,bulk,stream',
    },
    'cost-count': { type: 'string', default: '20' },
    'e2e-count': { type: 'string', default: '20' },
    batch: { type: 'string', default: '100' },
    'bulk-size': { type: 'string', default: '1000' },
    out: { type: 'string', default: 'test/bench/results' },
  },
});
const durationMs = Number(flags.duration) * 1000;
const concurrencies = flags.concurrency.split(',').map(Number);
const phases = new Set(flags.phases.split(','));
const e2eCount = Number(flags['e2e-count']);
const batch = Number(flags.batch);
const costCount = Number(flags['cost-count']);
const bulkSize = Number(flags['bulk-size']);
if (
  !(durationMs > 0) ||
  concurrencies.some((c) => !Number.isInteger(c) || c < 1) ||
  !(e2eCount > 0) ||
  !(batch > 0) ||
  !(costCount > 0) ||
  !(bulkSize >= 1 && bulkSize <= 1000)
) {
  console.error(
    'usage: npm run bench -- [--duration S] [--concurrency 1,8,…] [--phases …] [--e2e-count N] [--batch N] [--cost-count N] [--bulk-size N≤1000]',
  );
  process.exit(2);
}

const say = (line: string) => process.stdout.write(`${line}\n`);
const runId = randomUUID().slice(0, 8);
const FLOOR_QUEUE = `bench-floor-${runId}`;

say(
  `bench ${runId}: ${cpus().length} × ${cpus()[0]?.model ?? 'cpu'}, ${Math.round(totalmem() / 2 ** 30)} GiB, Node ${process.versions.node}`,
);
say('starting the gateway…');
// The stream phase holds 100 streams on the bench tenant's one key (the default is 5 per key).
const STREAMS = 100;
const stack: BenchStack = await startBenchStack(say, { env: { STREAM_MAX_PER_KEY: String(STREAMS) } });
const results: BenchResults = {
  machine: {
    cpus: cpus().length,
    model: cpus()[0]?.model ?? 'unknown',
    memoryGiB: Math.round(totalmem() / 2 ** 30),
    node: process.versions.node,
  },
  startedAt: new Date().toISOString(),
  ...codeVersion(),
  params: { durationMs, concurrencies, phases: [...phases], e2eCount, batch, costCount },
};
const usage: NonNullable<BenchResults['usage']> = {};
const closers: (() => Promise<unknown>)[] = [() => stack.stop()];

try {
  const tenant = stack.admin(
    'tenant',
    'create',
    '--name',
    `bench-${runId}`,
    '--wallet-minor',
    '10000000000000',
    '--daily-limit-minor',
    '10000000000000',
  ) as { tenant_id: string; api_key: string };
  const headers = { authorization: `Bearer ${tenant.api_key}`, 'content-type': 'application/json' };
  const api = (method: string, path: string, body?: unknown) =>
    fetch(`${stack.apiUrl}${path}`, { method, headers, ...(body === undefined ? {} : { body: JSON.stringify(body) }) });
  const transfer = (reference: string) =>
    api('POST', '/api/v1/transfers', {
      amount_minor: 100,
      recipient_account: '0123456789',
      recipient_bank_code: '058',
      narration: 'bench',
      reference,
    });

  // The floors: a worker of empty workflows on the gateway's Temporal server, and hello world.
  Runtime.install({ logger: new DefaultLogger('WARN') });
  const native = await NativeConnection.connect({ address: stack.temporalAddress });
  const floorWorker = await Worker.create({
    connection: native,
    taskQueue: FLOOR_QUEUE,
    workflowsPath: join(PROJECT_ROOT, 'test/bench/floor-workflows.ts'),
  });
  const floorRun = floorWorker.run();
  closers.unshift(async () => {
    floorWorker.shutdown();
    await floorRun;
    await native.close();
  });
  const connection = await Connection.connect({ address: stack.temporalAddress });
  closers.unshift(() => connection.close());
  const client = new Client({ connection });
  const hello = spawn(process.execPath, [join(PROJECT_ROOT, 'test/bench/hello.ts')], {
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  closers.unshift(async () => {
    hello.kill('SIGTERM');
  });
  const helloPort = await new Promise<number>((resolve) =>
    hello.stdout.once('data', (chunk: Buffer) => resolve(Number(String(chunk).trim()))),
  );
  // What the create and read points' calls cost in CPU, by process: the stack's, hello world's, and
  // this process's own (the load generator, and the floor's worker).
  const meter: CpuMeter = () => {
    const own = process.cpuUsage();
    return {
      ...stack.cpuMs(),
      ...(hello.pid === undefined ? {} : { hello: processUsage(hello.pid)?.cpuMs ?? 0 }),
      bench: (own.user + own.system) / 1000,
    };
  };

  // The tenant's receiver: every transfer.settled, its signature verified, keyed by transfer id,
  // when it arrived.
  const signingSecret = `whsec_${randomBytes(32).toString('base64')}`;
  const verifier = new Webhook(signingSecret);
  const receiver = await startReceiver();
  closers.unshift(() => receiver.close());
  const settledAt = new Map<string, number>();
  let seen = 0;
  const collect = () => {
    for (; seen < receiver.received.length; seen += 1) {
      const hook = receiver.received[seen]!;
      const event = verifier.verify(hook.body, hook.headers as Record<string, string>) as {
        type: string;
        data: { id: string };
      };
      if (event.type === 'transfer.settled') settledAt.set(event.data.id, hook.at);
    }
  };
  const db = new pg.Client({ connectionString: stack.databaseUrl });
  await db.connect();
  closers.unshift(() => db.end());
  const count = async (sql: string, params: unknown[]) =>
    Number((await db.query<{ n: string }>(sql, params)).rows[0]!.n);
  /** Polls `done`: every 2 ms for what is in memory, every `intervalMs` for database reads. */
  const waitFor = async (
    label: string,
    done: () => Promise<boolean> | boolean,
    intervalMs = 2,
    timeoutMs = 300_000,
  ) => {
    const deadline = Date.now() + timeoutMs;
    while (!(await done())) {
      if (Date.now() > deadline) throw new Error(`${label}: not done within ${timeoutMs / 1000} s`);
      await new Promise((resolve) => setTimeout(resolve, intervalMs));
    }
  };
  /** `total` calls, `concurrency` at a time. */
  const burst = async (total: number, concurrency: number, call: (n: number) => Promise<void>) => {
    let next = 0;
    await Promise.all(
      Array.from({ length: concurrency }, async () => {
        while (next < total) await call(next++);
      }),
    );
  };
  // Registered only when a phase needs deliveries: before that, creates fan out nothing.
  let listening = false;
  const listen = async () => {
    if (listening) return;
    const registered = await api('POST', '/api/v1/webhook-endpoints', {
      url: `${receiver.url}/hooks`,
      events: ['transfer.settled'],
      signing_secret: signingSecret,
    });
    if (registered.status !== 201) throw new Error(`webhook endpoint not registered: ${await registered.text()}`);
    listening = true;
  };
  /**
   * Each point starts on a quiet gateway: no transfer still on its way from the one before, no card
   * funding or operation its card's workflow has yet to apply, no event the fan-out has yet to
   * take (one failing for good would stop the run here, after 300 s: a fault to see), and no
   * webhook delivery queued. What an earlier phase left running would otherwise share the
   * machine with the point measured.
   */
  const settle = () =>
    waitFor(
      'the gateway to be quiet',
      async () => {
        const open = await count(
          `select ((select count(*) from transfers where status in ('pending', 'processing'))
                 + (select count(*) from card_fundings where status = 'pending')
                 + (select count(*) from card_operations where status = 'accepted')
                 + (select count(*) from events where fanned_out_at is null and not test)
                 + (select count(*) from webhook_deliveries where status = 'queued'))::text as n`,
          [],
        );
        return open === 0;
      },
      100,
    );
  /** The API's histogram `name` now: cumulative counts by upper bound (s), and its count. */
  const histogram = async (name: string) => {
    const text = await (await fetch(stack.metricsUrl)).text();
    const buckets = [...text.matchAll(new RegExp(`^${name}_bucket\\{le="([^"]+)"\\} (\\d+)`, 'gm'))].map((match) => ({
      le: match[1] === '+Inf' ? Number.POSITIVE_INFINITY : Number(match[1]),
      count: Number(match[2]),
    }));
    return buckets;
  };
  /** p50 and p99 (the upper bound of the bucket that holds each, in ms) of what a histogram gained. */
  const gained = (before: Awaited<ReturnType<typeof histogram>>, after: Awaited<ReturnType<typeof histogram>>) => {
    const counts = after.map((bucket, i) => ({ le: bucket.le, count: bucket.count - (before[i]?.count ?? 0) }));
    const total = counts.at(-1)?.count ?? 0;
    const at = (q: number) => {
      const bound = counts.find((bucket) => bucket.count >= q * total)?.le ?? Number.NaN;
      return Number.isFinite(bound) ? Number((bound * 1000).toPrecision(3)) : Number.NaN;
    };
    return { total, p50Ms: at(0.5), p99Ms: at(0.99) };
  };
  const measured = async <T>(phase: string, run: () => Promise<T>): Promise<T> => {
    await settle();
    say(`\n${phase}`);
    const stop = sampler(stack.pids);
    const value = await run();
    usage[phase] = stop();
    return value;
  };

  const created: string[] = [];
  if (phases.has('create')) {
    results.create = await measured('create: POST /api/v1/transfers vs a bare Update-with-Start', async () => {
      const gateway: PointResult[] = [];
      const floor: PointResult[] = [];
      for (const c of concurrencies) {
        await settle();
        gateway.push(
          await runPoint(
            'POST /api/v1/transfers',
            c,
            durationMs,
            async (n) => {
              const response = await transfer(`bench-${runId}-${c}-${n}`);
              if (response.status !== 201) return false;
              created.push(((await response.json()) as { data: { id: string } }).data.id);
              return true;
            },
            meter,
          ),
        );
        await settle();
        floor.push(
          await runPoint(
            'floor: Update-with-Start',
            c,
            durationMs,
            async (n) => {
              const start = new WithStartWorkflowOperation<typeof floorUpdateWorkflow>('floorUpdateWorkflow', {
                workflowId: `floor-${runId}-${c}-${n}`,
                taskQueue: FLOOR_QUEUE,
                workflowIdConflictPolicy: 'FAIL',
              });
              return (
                (await client.workflow.executeUpdateWithStart(pingUpdate, {
                  args: ['x'],
                  startWorkflowOperation: start,
                })) === 'x'
              );
            },
            meter,
          ),
        );
      }
      return { gateway, floor };
    });
  }

  if (phases.has('get')) {
    if (created.length === 0) {
      for (let i = 0; i < 50; i += 1) {
        const response = await transfer(`bench-${runId}-get-${i}`);
        created.push(((await response.json()) as { data: { id: string } }).data.id);
      }
    }
    results.get = await measured('get: GET /api/v1/transfers/{id} vs Fastify hello world', async () => {
      const gateway: PointResult[] = [];
      const floor: PointResult[] = [];
      for (const c of concurrencies) {
        gateway.push(
          await runPoint(
            'GET /api/v1/transfers/{id}',
            c,
            durationMs,
            async (n) => {
              const response = await api('GET', `/api/v1/transfers/${created[n % created.length]}`);
              await response.arrayBuffer();
              return response.status === 200;
            },
            meter,
          ),
        );
        floor.push(
          await runPoint(
            'floor: Fastify hello world',
            c,
            durationMs,
            async () => {
              const response = await fetch(`http://127.0.0.1:${helloPort}/hello`);
              await response.arrayBuffer();
              return response.status === 200;
            },
            meter,
          ),
        );
      }
      return { gateway, floor };
    });
  }

  if (phases.has('ratelimit')) {
    results.rateLimit = await measured(
      "ratelimit: the rate limits' count on one key's row vs one PostgreSQL round trip",
      async () => {
        const gateway: PointResult[] = [];
        const floor: PointResult[] = [];
        for (const c of concurrencies) {
          const pool = new pg.Pool({ connectionString: stack.databaseUrl, max: c });
          await Promise.all(Array.from({ length: c }, () => pool.query('select 1')));
          // One bucket for every client: one key's budget, all its requests on one row (the worst case).
          const counter = rateLimitCounterOn(() => Promise.resolve(pool));
          const bucket = `per-key:bench-${runId}-${c}`;
          gateway.push(
            await runPoint("rate limits' count", c, durationMs, async () => {
              await counter.count(bucket, RATE_LIMIT_WINDOW_MS);
              return true;
            }),
          );
          floor.push(
            await runPoint('floor: one PostgreSQL round trip', c, durationMs, async () => {
              await pool.query('select 1');
              return true;
            }),
          );
          await pool.end();
        }
        return { gateway, floor };
      },
    );
  }

  // Before any endpoint is registered: the cost of a transfer itself, without its deliveries.
  if (phases.has('cost')) {
    results.cost = await measured(`cost: ${costCount} transfers one after another, counted`, async () => {
      const cost = await measureTransferCost({
        db,
        client,
        tenantId: tenant.tenant_id,
        count: costCount,
        reference: (n) => `bench-${runId}-cost-${n}`,
        bankDatabase: decodeURIComponent(new URL(stack.bankDatabaseUrl).pathname.slice(1)),
        create: async (reference) => {
          const response = await transfer(reference);
          if (response.status !== 201) throw new Error(`create answered ${response.status}`);
        },
      });
      say(
        `  per transfer: ${cost.database ? `${cost.database.statementsPerTransfer} statements, ${cost.database.rowsWrittenPerTransfer} rows written, ` : ''}${cost.temporal.historyEvents} history events, ${cost.temporal.serverWrites} Temporal writes, ${cost.temporal.workflowTasks} workflow tasks, ${cost.temporal.activityTasks} activity tasks`,
      );
      say(`  the last one's history: ${(cost.lastHistory ?? []).join(', ')}`);
      const over = overTargets(cost);
      if (over.length > 0) {
        say(`  OVER TARGET: ${over.join('; ')}`);
        process.exitCode = 1;
      } else {
        say('  every count within its target');
      }
      return cost;
    });
  }

  if (phases.has('e2e')) {
    await listen();
    results.e2e = await measured('e2e: create → signed transfer.settled received, sequential', async () => {
      const gateway = await runSequential('create → transfer.settled webhook', e2eCount, async () => {
        const at = Date.now();
        const response = await transfer(`bench-${runId}-e2e-${randomUUID()}`);
        if (response.status !== 201) throw new Error(`create answered ${response.status}`);
        const id = ((await response.json()) as { data: { id: string } }).data.id;
        await waitFor('transfer.settled webhook', () => {
          collect();
          return (settledAt.get(id) ?? 0) >= at;
        });
      });
      const floor = await runSequential('floor: empty workflow start → result', e2eCount, async () => {
        await client.workflow.execute<typeof floorEmptyWorkflow>('floorEmptyWorkflow', {
          workflowId: `floor-e2e-${runId}-${randomUUID()}`,
          taskQueue: FLOOR_QUEUE,
        });
      });
      return { gateway, floor };
    });
  }

  if (phases.has('webhooks')) {
    await listen();
    results.webhooks = await measured(
      `webhooks: ${batch} transfers at 8 concurrent (below the create path's saturation), each one signed delivery`,
      async () => {
        const ids: string[] = [];
        const started = Date.now();
        let refused = 0;
        await burst(batch, 8, async (n) => {
          const response = await transfer(`bench-${runId}-hooks-${n}`);
          if (response.status === 201) ids.push(((await response.json()) as { data: { id: string } }).data.id);
          else refused += 1;
        });
        if (refused) say(`  ${refused} creates were refused (not retried); ${ids.length} deliveries expected`);
        await waitFor('webhook deliveries', () => {
          collect();
          return ids.every((id) => settledAt.has(id));
        });
        const times = ids.map((id) => settledAt.get(id)!).sort((a, b) => a - b);
        const perSecond = ids.length / Math.max(0.001, (times.at(-1)! - started) / 1000);
        // While they arrive: the delivery machinery's own pace, whatever the creates' pace was.
        const arriving = (ids.length - 1) / Math.max(0.001, (times.at(-1)! - times[0]!) / 1000);
        say(
          `  ${ids.length} deliveries: ${perSecond.toFixed(1)}/s from the first create to the last delivery, ` +
            `${arriving.toFixed(1)}/s from the first delivery to the last`,
        );
        return {
          deliveries: ids.length,
          refused,
          perSecond,
          arrivingPerSecond: arriving,
          spanMs: times.at(-1)! - started,
        };
      },
    );
  }

  if (phases.has('jit')) {
    results.jit = await measured(
      `jit: ${batch} fundings on one card, then across 100 cards (16 concurrent)`,
      async () => {
        const cards: string[] = [];
        await burst(100, 8, async () => {
          const response = await api('POST', '/api/v1/cards', { customer_id: `bench-${runId}` });
          cards.push(((await response.json()) as { data: { id: string } }).data.id);
        });
        const fund = async (label: string, cardOf: (n: number) => string) => {
          const bar = progress(label, batch);
          const started = Date.now();
          await burst(batch, 16, async (n) => {
            const response = await api('POST', `/api/v1/cards/${cardOf(n)}/jit-fund`, {
              amount_minor: 100,
              idempotency_key: `${label}-${runId}-${n}`,
            });
            if (response.status !== 202) throw new Error(`jit-fund answered ${response.status}`);
            bar.tick(n);
          });
          const ids = [...new Set(Array.from({ length: batch }, (_, n) => cardOf(n)))];
          await waitFor(
            label,
            async () => {
              const done = await count(
                `select count(*)::text as n from card_fundings where card_id = any($1::uuid[]) and status = 'succeeded'`,
                [ids],
              );
              return done >= batch;
            },
            50,
          );
          const perSecond = batch / ((Date.now() - started) / 1000);
          bar.end(`${batch} fundings succeeded, ${perSecond.toFixed(1)}/s`);
          return perSecond;
        };
        const oneCard = await fund('one card', () => cards[0]!);
        const acrossCards = await fund('100 cards', (n) => cards[1 + (n % 99)]!);
        return { fundings: batch, oneCardPerSecond: oneCard, acrossCardsPerSecond: acrossCards };
      },
    );
  }

  if (phases.has('credits')) {
    results.credits = await measured(`credits: ${batch} inbound credits to one account (16 concurrent)`, async () => {
      const account = await api('POST', '/api/v1/virtual-accounts', {
        customer_id: `bench-${runId}`,
        account_name: 'Bench Account',
      });
      const id = ((await account.json()) as { data: { id: string } }).data.id;
      const bar = progress('credits', batch);
      const started = Date.now();
      await burst(batch, 16, async (n) => {
        const response = await api('POST', `/api/v1/sandbox/virtual-accounts/${id}/credits`, {
          amount_minor: 100,
          reference: `bench-${runId}-${n}`,
        });
        if (response.status !== 202) throw new Error(`credit answered ${response.status}`);
        bar.tick(n);
      });
      await waitFor(
        'credits applied',
        async () => {
          const applied = await count(
            `select count(*)::text as n from inbound_credits where virtual_account_id = $1 and status = 'applied'`,
            [id],
          );
          return applied >= batch;
        },
        50,
      );
      const perSecond = batch / ((Date.now() - started) / 1000);
      bar.end(`${batch} credits applied, ${perSecond.toFixed(1)}/s`);
      return { credits: batch, perSecond };
    });
  }

  if (phases.has('bulk')) {
    results.bulk = await measured(`bulk: one batch of ${bulkSize} transfers of one tenant`, async () => {
      const batchReference = `bench-${runId}-bulk`;
      const transfers = Array.from({ length: bulkSize }, (_, i) => ({
        amount_minor: 100 + i,
        recipient_account: '0123456789',
        recipient_bank_code: '058',
        narration: 'bench bulk',
      }));
      const sent = Date.now();
      const response = await api('POST', '/api/v1/transfers/bulk', { batch_reference: batchReference, transfers });
      if (response.status !== 202) throw new Error(`bulk create answered ${response.status}: ${await response.text()}`);
      const answered = Date.now();
      const { id } = ((await response.json()) as { data: { id: string } }).data;
      // Reserved: decided, with its transfer made and its money moved (or refused). Submitted: the
      // bank took it (processing or final). Settled: final.
      const stage = async () => {
        const { rows } = await db.query<{ reserved: string; submitted: string; settled: string }>(
          `select count(*) filter (where i.status <> 'queued')::text as reserved,
                  count(*) filter (where t.status in ('processing', 'completed', 'failed'))::text as submitted,
                  count(*) filter (where t.status in ('completed', 'failed'))::text as settled
             from transfer_batch_items i left join transfers t on t.id = i.transfer_id where i.batch_id = $1`,
          [id],
        );
        return {
          reserved: Number(rows[0]!.reserved),
          submitted: Number(rows[0]!.submitted),
          settled: Number(rows[0]!.settled),
        };
      };
      const reached: { reserved?: number; submitted?: number; settled?: number } = {};
      const bar = progress('bulk', 60_000);
      await waitFor(
        'every item settled',
        async () => {
          const now = await stage();
          const at = Date.now() - answered;
          for (const key of ['reserved', 'submitted', 'settled'] as const) {
            if (reached[key] === undefined && now[key] >= bulkSize) reached[key] = at;
          }
          bar.tick(now.settled);
          return reached.settled !== undefined;
        },
        20,
        // Each item settles in its own transfer run: the Temporal server's throughput, not the batch's.
        1_200_000,
      );
      const best = Math.max(0, ...(results.create?.gateway ?? []).map((point) => point.perSecond));
      const submittedPerSecond = bulkSize / ((reached.submitted! + (answered - sent)) / 1000);
      bar.end(
        `answer ${answered - sent} ms; reserved ${reached.reserved} ms, submitted ${reached.submitted} ms, settled ${reached.settled} ms after it`,
      );
      return {
        items: bulkSize,
        answerMs: answered - sent,
        reservedMs: reached.reserved!,
        submittedMs: reached.submitted!,
        settledMs: reached.settled!,
        submittedPerSecond,
        settledPerSecond: bulkSize / ((reached.settled! + (answered - sent)) / 1000),
        singleCreatePerSecond: best,
      };
    });
  }

  if (phases.has('stream')) {
    await listen();
    results.stream = await measured(
      `stream: ${STREAMS} open event streams on one tenant, ${batch} transfers at 8 concurrent, beside their webhooks`,
      async () => {
        const stop = new AbortController();
        // When each stream received each transfer.settled, by transfer id.
        const received = Array.from({ length: STREAMS }, () => new Map<string, number>());
        const readers = received.map(async (got) => {
          for await (const { event } of streamEvents({
            baseUrl: stack.apiUrl,
            apiKey: tenant.api_key,
            signal: stop.signal,
          })) {
            if (event.type === 'transfer.settled') got.set((event.data as { id: string }).id, Date.now());
          }
        });
        const streamsOpen = async () => {
          const text = await (await fetch(stack.metricsUrl)).text();
          return Number(/^gateway_event_streams_open (\d+)/m.exec(text)?.[1] ?? 0);
        };
        await waitFor('every stream open', async () => (await streamsOpen()) >= STREAMS, 50, 30_000);
        const ids: string[] = [];
        await burst(batch, 8, async (n) => {
          const response = await transfer(`bench-${runId}-stream-${n}`);
          if (response.status === 201) ids.push(((await response.json()) as { data: { id: string } }).data.id);
        });
        await waitFor(
          'every settled event on every stream and at the webhook receiver',
          () => {
            collect();
            return ids.every((id) => settledAt.has(id) && received.every((got) => got.has(id)));
          },
          20,
        );
        stop.abort();
        await Promise.allSettled(readers);
        // From the event's transaction (created_at) to its receipt, for the same events both ways.
        const { rows } = await db.query<{ id: string; at: Date }>(
          `select payload->>'id' as id, created_at as at from events where type = 'transfer.settled' and payload->>'id' = any($1)`,
          [ids],
        );
        const recorded = new Map(rows.map((row) => [row.id, new Date(row.at).getTime()]));
        const percentile = (values: number[], p: number) => {
          const sorted = [...values].sort((a, b) => a - b);
          return sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)]!;
        };
        const streamMs = ids.flatMap((id) => received.map((got) => got.get(id)! - recorded.get(id)!));
        const webhookMs = ids.map((id) => settledAt.get(id)! - recorded.get(id)!);
        const result = {
          streams: STREAMS,
          events: ids.length,
          receipts: streamMs.length,
          streamP50Ms: percentile(streamMs, 50),
          streamP99Ms: percentile(streamMs, 99),
          webhookP50Ms: percentile(webhookMs, 50),
          webhookP99Ms: percentile(webhookMs, 99),
        };
        say(
          `  ${result.receipts} receipts on ${STREAMS} streams: p50 ${result.streamP50Ms} ms, p99 ${result.streamP99Ms} ms; ` +
            `the same ${ids.length} events by webhook: p50 ${result.webhookP50Ms} ms, p99 ${result.webhookP99Ms} ms`,
        );
        return result;
      },
    );
  }

  if (phases.has('authorizations')) {
    // The processor's question, signed, straight to the API's provider-callback route (what the
    // sandbox processor does, without its own HTTP hop), against one PostgreSQL round trip.
    results.authorizations = await measured(
      'authorizations: card.authorization.request decisions vs one PostgreSQL round trip',
      async () => {
        const cards: string[] = [];
        await burst(64, 8, async () => {
          const response = await api('POST', '/api/v1/cards', { customer_id: `bench-auth-${runId}` });
          cards.push(((await response.json()) as { data: { id: string } }).data.id);
        });
        await burst(cards.length, 8, async (n) => {
          const response = await api('POST', `/api/v1/cards/${cards[n]}/fund`, {
            amount_minor: 1_000_000_000,
            idempotency_key: `bench-auth-${runId}-${n}`,
          });
          if (response.status !== 202) throw new Error(`fund answered ${response.status}`);
        });
        await waitFor(
          'authorization cards funded',
          async () =>
            (await count(
              `select count(*)::text as n from card_fundings where card_id = any($1::uuid[]) and status = 'succeeded'`,
              [cards],
            )) === cards.length,
          50,
        );
        const references = (
          await db.query<{ processor_reference: string }>(
            'select processor_reference from cards where id = any($1::uuid[])',
            [cards],
          )
        ).rows.map((row) => row.processor_reference);
        const secret = process.env.PROVIDER_CALLBACK_SECRET ?? DEVELOPMENT_CALLBACK_SECRET;
        const authorize = async (poster: ReturnType<typeof keepAlivePoster>, concurrency: number, n: number) => {
          const id = `bench-${runId}-${concurrency}-${n}`;
          const body = JSON.stringify({
            id: `${id}:ask`,
            type: 'card.authorization.request',
            data: {
              authorization_id: id,
              card_reference: references[n % references.length],
              amount_minor: 100,
              currency: 'NGN',
              merchant_name: 'bench',
              merchant_category: '5411',
              channel: 'web',
            },
          });
          const timestamp = Math.floor(Date.now() / 1000);
          const response = await poster.post(
            '/provider-callbacks/sandbox',
            {
              'content-type': 'application/json',
              'webhook-id': `${id}:ask`,
              'webhook-timestamp': String(timestamp),
              'webhook-signature': signWebhook(secret, `${id}:ask`, timestamp, body),
            },
            body,
          );
          if (response.status !== 200) return false;
          const answer = JSON.parse(response.body) as { data: { authorization: { decision: string } } };
          return answer.data.authorization.decision === 'approved';
        };
        const gateway: PointResult[] = [];
        const floor: PointResult[] = [];
        const waits: DecisionWaits[] = [];
        const names = {
          connectionWait: 'gateway_card_decision_connection_wait_seconds',
          lockWait: 'gateway_card_decision_lock_wait_seconds',
          transaction: 'gateway_card_decision_transaction_seconds',
        } as const;
        const scrape = async () => ({
          connectionWait: await histogram(names.connectionWait),
          lockWait: await histogram(names.lockWait),
          transaction: await histogram(names.transaction),
        });
        for (const c of [1, 8, 32]) {
          await settle();
          const poster = keepAlivePoster(stack.apiUrl, c);
          const before = await scrape();
          try {
            gateway.push(await runPoint('authorization decision', c, durationMs, (n) => authorize(poster, c, n)));
          } finally {
            poster.close();
          }
          const after = await scrape();
          const lockWait = gained(before.lockWait, after.lockWait);
          const connectionWait = gained(before.connectionWait, after.connectionWait);
          const transaction = gained(before.transaction, after.transaction);
          waits.push({
            concurrency: c,
            decisions: lockWait.total,
            lockWait: { p50Ms: lockWait.p50Ms, p99Ms: lockWait.p99Ms },
            connectionWait: { p50Ms: connectionWait.p50Ms, p99Ms: connectionWait.p99Ms },
            transaction: { p50Ms: transaction.p50Ms, p99Ms: transaction.p99Ms },
          });
          say(
            `  ${lockWait.total} decisions: lock waits p50 ≤ ${lockWait.p50Ms} ms, p99 ≤ ${lockWait.p99Ms} ms; ` +
              `connection wait p50 ≤ ${connectionWait.p50Ms} ms, p99 ≤ ${connectionWait.p99Ms} ms; ` +
              `transaction p50 ≤ ${transaction.p50Ms} ms, p99 ≤ ${transaction.p99Ms} ms`,
          );
          const pool = new pg.Pool({ connectionString: stack.databaseUrl, max: c });
          await Promise.all(Array.from({ length: c }, () => pool.query('select 1')));
          floor.push(
            await runPoint('floor: one PostgreSQL round trip', c, durationMs, async () => {
              await pool.query('select 1');
              return true;
            }),
          );
          await pool.end();
        }
        return { gateway, floor, cards: cards.length, waits };
      },
    );
  }

  const total = (
    await db.query<{ total: string }>('select coalesce(sum(amount_minor), 0)::text as total from postings')
  ).rows[0]!.total;
  const verified = await verifyLedger(async (sql) => (await db.query<Record<string, unknown>>(sql)).rows);
  results.ledger = {
    postingsTotalMinor: Number(total),
    balanced: total === '0',
    verified: verified.ok,
    breaches: verified.checks.filter((check) => !check.ok),
    checks: verified.checks.length,
    entries: verified.counts.entries,
    transfers: verified.counts.transfers,
  };
  results.usage = usage;
  say(`\nledger: ${ledgerLine(results.ledger)}`);

  const paths = pathRows(results);
  const measures = measureRows(results);
  if (paths.length > 1) say(`\n${table(paths)}\n`);
  const cpu = cpuRows(results);
  if (cpu.length > 1) say(`${table(cpu)}\n`);
  if (measures.length > 1) say(`${table(measures)}\n`);
  if (results.bulk) say(`${table(bulkRows(results.bulk))}\n`);
  if (results.stream) say(`${table(streamRows(results.stream))}\n`);
  if (results.authorizations?.waits) say(`${table(decisionWaitRows(results.authorizations.waits))}\n`);
  if (results.cost) say(`${table(costRows(results.cost))}\n`);

  const written = writeResults(resolve(PROJECT_ROOT, flags.out), results);
  say(`written: ${written.map((file) => join(flags.out, file)).join(', ')}`);
  if (!results.ledger.balanced || !verified.ok) process.exitCode = 1;
} finally {
  for (const close of closers) await close().catch(() => undefined);
}

/** The code measured, as `git describe` names it; nothing when git cannot say (no repository). */
function codeVersion(): { commit?: string } {
  try {
    const commit = execFileSync('git', ['describe', '--always', '--dirty'], { cwd: PROJECT_ROOT, encoding: 'utf8' });
    return { commit: commit.trim() };
  } catch {
    return {};
  }
}
