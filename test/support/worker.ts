// A real Temporal worker for a test file: the project's workflow bundle (built once per file) and
// its activities, against that file's database and sandbox bank, on the file's own task queue.
import { createRequire } from 'node:module';
import {
  NativeConnection,
  Runtime,
  Worker,
  bundleWorkflowCode,
  DefaultLogger,
  type WorkflowBundleWithSourceMap,
} from '@temporalio/worker';
import { Client, Connection } from '@temporalio/client';
import { inject } from 'vitest';
import { createActivities } from '../../activities/index.ts';
import type { MikroORM } from '../../src/db/orm.ts';
import type { Providers } from '../../src/providers/registry.ts';
import type { EgressPolicy } from '../../src/webhooks/destinations.ts';
import { TEST_BVN_SECRET, TEST_WEBHOOK_KEY } from './app.ts';
import { bvnKeysFrom } from '../../src/identity/bvn.ts';

const require = createRequire(import.meta.url);
export const WORKFLOWS_PATH = require.resolve('../../workflows/index.ts');

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
  worker: Worker;
  stop(): Promise<void>;
}

export async function startTestWorker(options: {
  orm: MikroORM;
  providers: Providers;
  taskQueue: string;
  connection?: NativeConnection;
  namespace?: string;
  webhookTimeoutMs?: number;
  egress?: EgressPolicy;
  temporalAddress?: string;
  /** The client activities start workflows with (required with `connection`: the same server). */
  client?: Client;
}): Promise<TestWorker> {
  installRuntime();
  const address = options.temporalAddress ?? inject('temporalAddress');
  const connection = options.connection ?? (await NativeConnection.connect({ address }));
  if (options.connection && !options.client) throw new Error('startTestWorker: pass the client of that connection');
  const clientConnection = options.client ? undefined : await Connection.connect({ address });
  const client = options.client ?? new Client({ connection: clientConnection! });
  const worker = await Worker.create({
    connection,
    namespace: options.namespace ?? 'default',
    taskQueue: options.taskQueue,
    workflowBundle: await workflowBundle(),
    activities: createActivities({
      orm: options.orm,
      client,
      providers: options.providers,
      webhooks: {
        encryptionKey: TEST_WEBHOOK_KEY,
        timeoutMs: options.webhookTimeoutMs ?? 2_000,
        egress: options.egress ?? {},
      },
      bvnKeys: bvnKeysFrom(TEST_BVN_SECRET),
    }),
  });
  const running = worker.run();
  return {
    worker,
    async stop() {
      if (worker.getState() === 'RUNNING') worker.shutdown();
      await running;
      if (!options.connection) await connection.close();
      await clientConnection?.close();
    },
  };
}
