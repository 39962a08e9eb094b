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
  const common = { connection, namespace: options.namespace ?? 'default', workflowBundle: await workflowBundle() };
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
      await running;
      if (!options.connection) await connection.close();
    },
  };
}
