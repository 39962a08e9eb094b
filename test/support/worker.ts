// A real Temporal worker for a test file: the project's workflow bundle (built once per file) and
// its activities, against that file's database and sandbox bank, on the file's own task queue and
// its batches and sandbox lanes beside it (a Worker each, with production's lane slots, as
// worker/main.ts runs them); or the webhook worker beside it, on the file's webhook queue, with
// production's slot settings.
import { createRequire } from 'node:module';
import {
  NativeConnection,
  Runtime,
  Worker,
  bundleWorkflowCode,
  DefaultLogger,
  type ActivityInterceptorsFactory,
  type WorkflowBundleWithSourceMap,
} from '@temporalio/worker';
import { Client } from '@temporalio/client';
import { inject } from 'vitest';
import { createActivities, webhookActivityDeps } from '../../activities/index.ts';
import { createWebhookActivities } from '../../activities/webhooks/webhooks.ts';
import { laneTaskQueues, loadConfig } from '../../src/config.ts';
import { laneWorkerSlots, webhookWorkerSlots } from '../../worker/options.ts';
import type { MikroORM } from '../../src/orm.ts';
import type { Providers } from '../../src/connectors/registry.ts';
import type { EgressPolicy } from '../../src/webhooks/destinations.ts';
import { TEST_BVN_SECRET, TEST_WEBHOOK_KEY } from './app.ts';
import { bvnKeysFrom } from '../../src/identity/bvn.ts';

const require = createRequire(import.meta.url);
export const WORKFLOWS_PATH = require.resolve('../../workflows/index.ts');

/** Production's defaults for what a test does not set (WEBHOOK_TENANT_CONCURRENCY, WEBHOOK_WORKER_SLOTS, the lanes' slots). */
const PRODUCTION = loadConfig({});

let runtimeInstalled = false;
let bundle: WorkflowBundleWithSourceMap | undefined;

/** Quiet SDK logs; must run before the first connection or worker of the process. */
export function installRuntime(): void {
  if (runtimeInstalled) return;
  Runtime.install({ logger: new DefaultLogger('ERROR'), shutdownSignals: [] });
  runtimeInstalled = true;
}

export async function workflowBundle(): Promise<WorkflowBundleWithSourceMap> {
  bundle ??= await bundleWorkflowCode({ workflowsPath: WORKFLOWS_PATH, logger: new DefaultLogger('WARN') });
  return bundle;
}

/** How long a stop waits before it says what it is still waiting for (and again as often). */
const STOP_REPORT_MS = 30_000;

/**
 * The activities (local ones too) a test worker is running, by type, workflow and start: what a stop
 * that does not end is waiting for. It only watches: every call goes on to the activity unchanged.
 */
function activitiesInFlight(): {
  interceptor: ActivityInterceptorsFactory;
  describe(): string;
} {
  const running = new Map<symbol, string>();
  return {
    interceptor: (ctx) => ({
      inbound: {
        async execute(input, next) {
          const key = Symbol(ctx.info.activityType);
          const { activityType, workflowType, workflowExecution, isLocal, attempt } = ctx.info;
          running.set(
            key,
            `${isLocal ? 'local ' : ''}${activityType} (attempt ${attempt}) of ${workflowType} ${workflowExecution?.workflowId}, since ${new Date().toISOString()}`,
          );
          try {
            return await next(input);
          } finally {
            running.delete(key);
          }
        },
      },
    }),
    describe: () => (running.size === 0 ? 'none' : [...running.values()].join('; ')),
  };
}

export interface TestWorker {
  /** The Worker of the queue named (beside it, for `gateway`, its lanes' Workers). */
  worker: Worker;
  stop(): Promise<void>;
}

export async function startTestWorker(options: {
  orm: MikroORM;
  providers: Providers;
  taskQueue: string;
  /**
   * `gateway` (default): every activity, on the gateway's queue and its batches and sandbox lanes,
   * as worker/main.ts runs them.
   * `webhooks`: the webhook activities only, with the webhook worker's slots, as worker/webhooks.ts
   * runs them (on the webhook queue the caller names).
   */
  role?: 'gateway' | 'webhooks';
  connection?: NativeConnection;
  namespace?: string;
  webhookTimeoutMs?: number;
  egress?: EgressPolicy;
  temporalAddress?: string;
  /** The client activities start workflows with (required with `connection`: the same server). */
  client?: Client;
  /** WEBHOOK_TENANT_CONCURRENCY and WEBHOOK_WORKER_SLOTS (production's defaults unless given). */
  webhookTenantConcurrency?: number;
  webhookWorkerSlots?: number;
  /** WEBHOOK_DISABLE_AFTER_HOURS (production's default unless given; a fraction shortens it to seconds). */
  webhookDisableAfterHours?: number;
}): Promise<TestWorker> {
  installRuntime();
  const address = options.temporalAddress ?? inject('temporalAddress');
  const connection = options.connection ?? (await NativeConnection.connect({ address }));
  if (options.connection && !options.client) throw new Error('startTestWorker: pass the client of that connection');
  // As worker/bootstrap.ts: the activities' client shares the worker's native connection.
  const client = options.client ?? new Client({ connection });
  const deps = {
    orm: options.orm,
    client,
    providers: options.providers,
    webhooks: {
      encryptionKey: TEST_WEBHOOK_KEY,
      timeoutMs: options.webhookTimeoutMs ?? 2_000,
      egress: options.egress ?? {},
      tenantConcurrency: options.webhookTenantConcurrency ?? PRODUCTION.WEBHOOK_TENANT_CONCURRENCY,
      disableAfterMs: (options.webhookDisableAfterHours ?? PRODUCTION.WEBHOOK_DISABLE_AFTER_HOURS) * 3_600_000,
    },
    bvnKeys: bvnKeysFrom(TEST_BVN_SECRET),
  };
  const inFlight = activitiesInFlight();
  const common = {
    connection,
    namespace: options.namespace ?? 'default',
    workflowBundle: await workflowBundle(),
    interceptors: { activity: [inFlight.interceptor] },
  };
  const workers: Worker[] = [];
  if (options.role === 'webhooks') {
    workers.push(
      await Worker.create({
        ...common,
        taskQueue: options.taskQueue,
        activities: createWebhookActivities(webhookActivityDeps(deps)),
        ...webhookWorkerSlots(options.webhookWorkerSlots ?? PRODUCTION.WEBHOOK_WORKER_SLOTS),
      }),
    );
  } else {
    const activities = createActivities(deps);
    const lanes = laneTaskQueues(options.taskQueue);
    workers.push(
      await Worker.create({ ...common, taskQueue: options.taskQueue, activities }),
      await Worker.create({
        ...common,
        taskQueue: lanes.batches,
        activities,
        ...laneWorkerSlots(PRODUCTION.BATCH_WORKER_SLOTS),
      }),
      await Worker.create({
        ...common,
        taskQueue: lanes.sandbox,
        activities,
        ...laneWorkerSlots(PRODUCTION.SANDBOX_WORKER_SLOTS),
      }),
    );
  }
  const running = Promise.all(workers.map((worker) => worker.run()));
  return {
    worker: workers[0]!,
    async stop() {
      for (const worker of workers) if (worker.getState() === 'RUNNING') worker.shutdown();
      // A stop that does not end (a file's afterAll timing out) says what its Workers still hold.
      const since = Date.now();
      const report = setInterval(() => {
        const held = workers.map((worker) => {
          const status = worker.getStatus();
          return `${worker.options.taskQueue} ${status.runState}: ${status.numInFlightWorkflowActivations} activations, ${status.numInFlightNonLocalActivities} activities, ${status.numInFlightLocalActivities} local activities`;
        });
        console.error(
          `test worker still stopping after ${Math.round((Date.now() - since) / 1000)} s: ${held.join(' | ')}; activities running: ${inFlight.describe()}`,
        );
      }, STOP_REPORT_MS);
      try {
        await running;
      } finally {
        clearInterval(report);
      }
      if (!options.connection) await connection.close();
    },
  };
}
