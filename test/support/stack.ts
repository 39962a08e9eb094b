// The gateway as integration tests need it: a fresh database, the real app listening on a port,
// the sandbox bank calling it back, a worker for the file's own task queue and its batches and
// sandbox lanes and a webhook worker for its webhook queue (as worker/main.ts and worker/webhooks.ts
// run), and a Temporal client.
// The wiring order matters (the app must know the bank's address, the bank the app's), so it
// lives here once.
import { Client, Connection } from '@temporalio/client';
import { NativeConnection } from '@temporalio/worker';
import type { FastifyInstance } from 'fastify';
import { afterAll, afterEach, beforeAll, expect, inject } from 'vitest';
import { defaultWebhookTaskQueue } from '../../src/config.ts';
import { postingsTotal } from '../../src/ledger/ledger.ts';
import { readThrough, verifyLedger } from '../../src/ledger/verify.ts';
import { type Providers, createProviders } from '../../src/connectors/registry.ts';
import { loadConfig } from '../../src/config.ts';
import {
  type EgressPolicy,
  type ProtectedTarget,
  type Resolver,
  protectedTargetsFor,
} from '../../src/webhooks/destinations.ts';
import {
  TEST_CALLBACK_SECRET,
  TEST_SANDBOX_BANK_API_KEY,
  TEST_SANDBOX_CONTROL_TOKEN,
  type TestApp,
  type TestAppOptions,
  createTestApp,
} from './app.ts';
import { type TestDatabase, createTestDatabase } from './database.ts';
import { freePort } from './ports.ts';
import { type CliResult, runAdmin } from './cli.ts';
import { type TestSandboxBank, startSandboxBank } from './sandbox-bank.ts';
import { type TestWorker, installRuntime, startTestWorker } from './worker.ts';
import { EventFanout } from '../../worker/webhook-fanout.ts';
import { type PaystackSimulator, startPaystackSimulator } from '../simulators/paystack.ts';

export interface GatewayStack {
  db: TestDatabase;
  gateway: TestApp;
  app: FastifyInstance;
  /** Where the app listens: providers' callbacks go to `<gatewayUrl>/provider-callbacks/<name>`. */
  gatewayUrl: string;
  bank: TestSandboxBank;
  client: Client;
  /** Where webhook deliveries run: `<taskQueue>-webhooks`, served by the stack's webhook worker. */
  webhookTaskQueue: string;
  /**
   * As the webhook worker process has it (worker/bootstrap.ts): a client on the webhook worker's own
   * NativeConnection, kept across stopWorker/startWorker, so that the fan-out starts deliveries eagerly.
   */
  webhookClient: Client;
  /** Providers as the worker sees them (the sandbox bank over HTTP). */
  providers(): Providers;
  /** The operator CLI against this stack (its database, Temporal and task queue), as operator `ops-test`. */
  admin(...args: string[]): Promise<CliResult>;
  /** The Paystack simulator, the live connector of a stack started with `paystack: true`; closed by close(). */
  paystack: PaystackSimulator | undefined;
  /** The webhook worker's fan-out loop, when the stack was given a `webhookScheduleMs`; stopped by close(). */
  fanout: EventFanout | undefined;
  /** Stops both workers, as a crash would leave their workflows: waiting for another. */
  stopWorker(): Promise<void>;
  startWorker(): Promise<void>;
  close(): Promise<void>;
}

export type GatewayStackOptions = Parameters<typeof startGatewayStack>[0];

/** DNS as a test wants it, without the network: the addresses of each name; any other name does not resolve. */
export function fakeDns(names: Record<string, string[]>): Resolver {
  return async (host) => {
    if (!Object.hasOwn(names, host)) throw new Error(`no such host ${host}`);
    return names[host]!;
  };
}

/**
 * The webhook worker's fan-out loop (events to deliveries) on the stack's webhook queue, as
 * worker/webhooks.ts runs it (starting deliveries eagerly on the webhook worker's connection) but
 * without jitter and polling every 100 ms: started; the caller stops it.
 */
export function startWebhookFanout(
  stack: Pick<GatewayStack, 'db' | 'webhookClient' | 'webhookTaskQueue'>,
  scheduleMs: number[],
): EventFanout {
  const fanout = new EventFanout({
    orm: stack.db.orm,
    client: stack.webhookClient,
    eagerStart: true,
    taskQueue: stack.webhookTaskQueue,
    scheduleMs,
    jitter: 0,
    intervalMs: 100,
  });
  fanout.start();
  return fanout;
}

/**
 * A test file's stack: started before its tests, closed after them, and after each test the
 * ledger must balance (all postings ever made sum to 0) and keep every invariant that `admin
 * ledger verify` checks. The stack is what this returns, its fields there from the file's first
 * test on; `onStart` may also hand it to the file's variables and start what the file needs beside
 * it, which `onStop` stops.
 */
export function useGatewayStack(
  options: GatewayStackOptions,
  onStart: (stack: GatewayStack) => unknown = () => {},
  onStop?: () => Promise<void>,
): GatewayStack {
  const handle = {} as GatewayStack;
  let stack: GatewayStack | undefined;
  beforeAll(async () => {
    stack = await startGatewayStack(options);
    Object.assign(handle, stack);
    await onStart(stack);
  });
  afterEach(async () => {
    expect(await postingsTotal(stack!.db.orm.em.fork())).toBe(0);
    // Every invariant of the books (src/ledger/verify.ts), as `admin ledger verify` checks them.
    const report = await verifyLedger(readThrough(stack!.db.orm.em.fork()));
    expect(report.checks.filter((check) => !check.ok)).toEqual([]);
  });
  afterAll(async () => {
    if (stack) await onStop?.();
    await stack?.close();
  });
  return handle;
}

export async function startGatewayStack(options: {
  taskQueue: string;
  providerTimeoutMs?: number;
  bank?: { completionDelayMs?: number; hangMs?: number };
  resolver?: Resolver;
  /** WEBHOOK_PROXY_URL: deliveries go through this proxy. */
  webhookProxy?: URL;
  /** Another Temporal server than the run's (a test that pauses its own). */
  temporalAddress?: string;
  app?: Omit<TestAppOptions, 'sandboxBankUrl' | 'taskQueue' | 'providerTimeoutMs' | 'egress' | 'webhookScheduleMs'>;
  /** WEBHOOK_TENANT_CONCURRENCY and WEBHOOK_WORKER_SLOTS of the webhook worker (production's defaults). */
  webhookTenantConcurrency?: number;
  webhookWorkerSlots?: number;
  /** WEBHOOK_DISABLE_AFTER_HOURS of the workers (production's 120 h unless given). */
  webhookDisableAfterHours?: number;
  /** WEBHOOK_TIMEOUT_MS of the workers (2 s). */
  webhookTimeoutMs?: number;
  /**
   * WEBHOOK_RETRY_SCHEDULE, as a deployment sets it once for the app (replays) and the fan-out:
   * given, the stack also runs the webhook fan-out loop (`startWebhookFanout`) with it.
   */
  webhookScheduleMs?: number[];
  /**
   * Paystack as the live connector, its simulator started with the stack: LIVE_CONNECTORS=paystack
   * with its settings aimed at the simulator, whose webhooks go to the stack's callback route.
   */
  paystack?: boolean;
  /**
   * LIVE_CONNECTORS and their settings, read as src/config.ts reads them, for the app and the
   * workers (adding to, or overriding, `paystack`'s); a function, so that a simulator started
   * before the stack can give its address.
   */
  liveConnectorEnv?: () => Record<string, string>;
}): Promise<GatewayStack> {
  const providerTimeoutMs = options.providerTimeoutMs ?? 1_000;
  const temporalAddress = options.temporalAddress ?? inject('temporalAddress');
  const paystack = options.paystack ? await startPaystackSimulator() : undefined;
  const liveConnectorEnv = {
    ...(paystack
      ? { LIVE_CONNECTORS: 'paystack', PAYSTACK_SECRET_KEY: paystack.secretKey, PAYSTACK_BASE_URL: paystack.url }
      : {}),
    ...options.liveConnectorEnv?.(),
  };
  const liveConnectors = Object.keys(liveConnectorEnv).length > 0 ? loadConfig(liveConnectorEnv).liveConnectors : [];
  const db = await createTestDatabase();
  const bankPort = await freePort();
  const sandboxBankUrl = `http://127.0.0.1:${bankPort}`;
  // The SSRF policy of a real deployment: this stack's own services are never webhook targets.
  const protectedTargets: ProtectedTarget[] = [];
  const egress: EgressPolicy = {
    protectedTargets,
    ...(options.resolver ? { resolve: options.resolver } : {}),
    ...(options.webhookProxy ? { proxy: options.webhookProxy } : {}),
  };
  const gateway = await createTestApp(db.orm, {
    ...options.app,
    ...(options.webhookScheduleMs ? { webhookScheduleMs: options.webhookScheduleMs } : {}),
    sandboxBankUrl,
    taskQueue: options.taskQueue,
    providerTimeoutMs,
    egress,
    temporalAddress,
    liveConnectors,
  });
  const gatewayUrl = await gateway.app.listen({ host: '127.0.0.1', port: 0 });
  if (paystack) paystack.webhookUrl = `${gatewayUrl}/provider-callbacks/paystack`;
  const temporal = new URL(`grpc://${temporalAddress}`);
  const database = new URL(db.url);
  protectedTargets.push(
    { service: 'API', host: '127.0.0.1', port: Number(new URL(gatewayUrl).port) },
    { service: 'sandbox bank', host: '127.0.0.1', port: bankPort },
    { service: 'Temporal frontend', host: temporal.hostname, port: Number(temporal.port) },
    { service: 'PostgreSQL', host: database.hostname, port: Number(database.port) },
    // The API's and the worker's metrics where a deployment's configuration puts them (9464 and
    // 9465 on 127.0.0.1 by default), through the function the API and the worker use.
    ...protectedTargetsFor(loadConfig({})).filter((target) => target.service.endsWith('metrics')),
  );
  const bank = await startSandboxBank({ databaseUrl: db.url, gatewayUrl, port: bankPort, ...options.bank });
  const providers = () =>
    createProviders({
      sandboxBankUrl,
      PROVIDER_TIMEOUT_MS: providerTimeoutMs,
      SANDBOX_BANK_CONTROL_TOKEN: TEST_SANDBOX_CONTROL_TOKEN,
      liveConnectors,
      sandboxBankApiKey: TEST_SANDBOX_BANK_API_KEY,
      providerCallbackSecret: TEST_CALLBACK_SECRET,
    });
  // Two workers, as production runs two worker processes: the gateway's queue (and its lanes), and
  // the webhook queue.
  const webhookTaskQueue = defaultWebhookTaskQueue(options.taskQueue);
  installRuntime(); // before the first NativeConnection, which would otherwise install the SDK's default
  const webhookConnection = await NativeConnection.connect({ address: temporalAddress });
  const webhookClient = new Client({ connection: webhookConnection });
  let workers: TestWorker[] = [];
  const startWorker = async () => {
    const common = {
      orm: db.orm,
      providers: providers(),
      egress,
      temporalAddress,
      ...(options.webhookTimeoutMs ? { webhookTimeoutMs: options.webhookTimeoutMs } : {}),
      ...(options.webhookDisableAfterHours ? { webhookDisableAfterHours: options.webhookDisableAfterHours } : {}),
    };
    workers = await Promise.all([
      startTestWorker({ ...common, taskQueue: options.taskQueue }),
      startTestWorker({
        ...common,
        role: 'webhooks',
        taskQueue: webhookTaskQueue,
        connection: webhookConnection,
        client: webhookClient,
        ...(options.webhookTenantConcurrency ? { webhookTenantConcurrency: options.webhookTenantConcurrency } : {}),
        ...(options.webhookWorkerSlots ? { webhookWorkerSlots: options.webhookWorkerSlots } : {}),
      }),
    ]);
  };
  const stopWorker = async () => {
    await Promise.all(workers.map((worker) => worker.stop()));
    workers = [];
  };
  await startWorker();
  const connection = await Connection.connect({ address: temporalAddress });
  const client = new Client({ connection });
  const fanout = options.webhookScheduleMs
    ? startWebhookFanout({ db, webhookClient, webhookTaskQueue }, options.webhookScheduleMs)
    : undefined;
  return {
    db,
    gateway,
    app: gateway.app,
    gatewayUrl,
    bank,
    client,
    webhookTaskQueue,
    webhookClient,
    paystack,
    fanout,
    providers,
    admin: (...args) =>
      runAdmin(
        {
          DATABASE_URL: db.url,
          TEMPORAL_ADDRESS: temporalAddress,
          TEMPORAL_TASK_QUEUE: options.taskQueue,
          GATEWAY_OPERATOR: 'ops-test',
        },
        ...args,
      ),
    startWorker,
    stopWorker,
    async close() {
      await fanout?.stop();
      await stopWorker();
      await connection.close();
      await webhookConnection.close();
      await bank.close();
      await gateway.close();
      await db.drop();
      await paystack?.close();
    },
  };
}
