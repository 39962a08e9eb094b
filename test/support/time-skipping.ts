// Temporal's time-skipping test server from the pinned binary in .tools/ (nothing downloaded), and
// the stack the time-skipping files share: that server, a fresh database, the sandbox bank (with
// no gateway to call back: workflows learn outcomes by asking it), a worker on the file's queue and
// a webhook worker on its webhook queue.
import type { Client, WorkflowHandle } from '@temporalio/client';
import { optionalTsToDate } from '@temporalio/common/lib/time.js';
import { TestWorkflowEnvironment } from '@temporalio/testing';
import { afterAll, beforeAll } from 'vitest';
import { defaultWebhookTaskQueue } from '../../src/config.ts';
import type { MikroORM } from '../../src/orm.ts';
import { type Providers, createProviders } from '../../src/connectors/registry.ts';
import { allSearchAttributes } from '../../src/stack/search-attributes.ts';
import { findTool } from '../../src/stack/tools.ts';
import { TEST_CALLBACK_SECRET, TEST_SANDBOX_BANK_API_KEY } from './app.ts';
import { type TestDatabase, createTestDatabase } from './database.ts';
import { type TestSandboxBank, startSandboxBank } from './sandbox-bank.ts';
import { type TestWorker, installRuntime, startTestWorker } from './worker.ts';

/** `searchAttributes`: register the workflows' custom search attributes (those that upsert need them). */
export async function startTimeSkippingEnv(
  options: { searchAttributes?: boolean } = {},
): Promise<TestWorkflowEnvironment> {
  installRuntime();
  const env = await TestWorkflowEnvironment.createTimeSkipping({
    server: { executable: { type: 'existing-path', path: findTool('temporal-test-server') } },
  });
  if (options.searchAttributes) {
    // The time-skipping server knows no custom search attributes until told, like a real
    // cluster. (It cannot list them, so all are added at once.)
    await env.connection.operatorService.addSearchAttributes({
      namespace: 'default',
      searchAttributes: allSearchAttributes(),
    });
  }
  return env;
}

export interface TimeSkippingStack {
  env: TestWorkflowEnvironment;
  db: TestDatabase;
  /** Absent when the file asked for no bank (its providers then point at a closed port). */
  bank: TestSandboxBank | undefined;
  providers: Providers;
  /** What the API's services take of the stack: its database, the environment's client, the file's queue. */
  services: { orm: MikroORM; client: Client; taskQueue: string };
  worker: TestWorker;
  /** The webhook worker, on `<taskQueue>-webhooks`. */
  webhookWorker: TestWorker;
}

/** Starts the stack before the file's tests and hands it over; tears it down after them. */
export function useTimeSkippingStack(
  options: { taskQueue: string; bank: boolean; providerTimeoutMs: number; searchAttributes?: boolean },
  onStart: (stack: TimeSkippingStack) => void,
): void {
  let stack: Partial<TimeSkippingStack> = {};
  beforeAll(async () => {
    const env = await startTimeSkippingEnv({ searchAttributes: options.searchAttributes ?? false });
    stack.env = env;
    const db = await createTestDatabase();
    stack.db = db;
    const bank = options.bank
      ? await startSandboxBank({ databaseUrl: db.url, gatewayUrl: 'http://127.0.0.1:9' })
      : undefined;
    stack.bank = bank;
    const providers = createProviders({
      sandboxBankUrl: bank?.url ?? 'http://127.0.0.1:9',
      PROVIDER_TIMEOUT_MS: options.providerTimeoutMs,
      SANDBOX_BANK_CONTROL_TOKEN: bank?.controlToken,
      sandboxBankApiKey: TEST_SANDBOX_BANK_API_KEY,
      providerCallbackSecret: TEST_CALLBACK_SECRET,
    });
    stack.providers = providers;
    stack.services = { orm: db.orm, client: env.client, taskQueue: options.taskQueue };
    const common = { orm: db.orm, providers, connection: env.nativeConnection, client: env.client };
    stack.worker = await startTestWorker({ ...common, taskQueue: options.taskQueue });
    stack.webhookWorker = await startTestWorker({
      ...common,
      role: 'webhooks',
      taskQueue: defaultWebhookTaskQueue(options.taskQueue),
    });
    onStart(stack as TimeSkippingStack);
  });
  afterAll(async () => {
    await stack.worker?.stop();
    await stack.webhookWorker?.stop();
    await stack.bank?.close();
    await stack.db?.drop();
    await stack.env?.teardown();
    stack = {};
  });
}

/**
 * The run's result, or, when it has not come within `ms` of real time, a failure that says where the
 * run stood: the time-skipping server's clock, the run's pending activities (attempt, state, last
 * failure, when the next attempt is due) and its last events with their times. Changes nothing of
 * what is awaited; a run that stalls under time skipping (seen once in CI, bvn-verification-24h,
 * not reproduced since) then leaves evidence instead of a bare test timeout.
 */
export async function resultOrWhereItStands(
  env: TestWorkflowEnvironment,
  handle: WorkflowHandle,
  ms = 45_000,
): Promise<unknown> {
  const result = handle.result();
  result.catch(() => undefined);
  let timer: NodeJS.Timeout | undefined;
  const stalled = new Promise<typeof STALLED>((resolve) => {
    timer = setTimeout(() => resolve(STALLED), ms);
  });
  try {
    const first = await Promise.race([result, stalled]);
    if (first !== STALLED) return first;
  } finally {
    clearTimeout(timer);
  }
  const [serverTimeMs, description, history] = await Promise.all([
    env.currentTimeMs(),
    handle.describe(),
    handle.fetchHistory(),
  ]);
  const events = history.events ?? [];
  const at = (time: Parameters<typeof optionalTsToDate>[0]) => optionalTsToDate(time)?.toISOString() ?? null;
  const report = {
    serverTime: new Date(serverTimeMs).toISOString(),
    status: description.status.name,
    historyLength: events.length,
    pendingActivities: (description.raw.pendingActivities ?? []).map((activity) => ({
      type: activity.activityType?.name,
      state: activity.state,
      attempt: activity.attempt,
      lastFailure: activity.lastFailure?.message,
      scheduledTime: at(activity.scheduledTime),
      lastStartedTime: at(activity.lastStartedTime),
      expirationTime: at(activity.expirationTime),
    })),
    lastEvents: events
      .slice(-6)
      .map((event) => ({ id: String(event.eventId), type: event.eventType, at: at(event.eventTime) })),
  };
  throw new Error(`no result from ${handle.workflowId} after ${ms} ms of real time: ${JSON.stringify(report)}`);
}

const STALLED = Symbol('stalled');
