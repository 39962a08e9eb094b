// The worker process: bundles workflows/ once, runs them and the activities on the gateway's task
// queue. Shuts down gracefully on SIGINT/SIGTERM (the SDK drains in-flight activities).
import { createRequire } from 'node:module';
import {
  DefaultLogger,
  NativeConnection,
  Runtime,
  Worker,
  bundleWorkflowCode,
  makeTelemetryFilterString,
} from '@temporalio/worker';
import { Client, Connection } from '@temporalio/client';
import { createActivities } from '../activities/index.ts';
import { EventFanout } from '../src/webhooks/fanout.ts';
import { CardOperationSweep } from '../src/cards/operation-sweep.ts';
import { loadConfigOrExit } from '../src/config.ts';
import { maskingLogger } from '../src/http/log-masking.ts';
import { openOrm } from '../src/db/orm.ts';
import { createProviders } from '../src/providers/registry.ts';
import { bvnKeysFrom } from '../src/identity/bvn.ts';
import { egressPolicyFor } from '../src/webhooks/destinations.ts';
import { assertNodeVersion } from '../src/stack/node-version.ts';
import { ensureReconciliationSchedule } from '../src/reconciliation/schedule.ts';
import { WORKFLOW_TRACING_MODULES, workerTracing, workflowClientTracing } from '../src/telemetry/temporal.ts';
import { startTracing } from '../src/telemetry/tracing.ts';

assertNodeVersion();
const config = loadConfigOrExit();
const require = createRequire(import.meta.url);
// Off (and not even loaded) unless OTEL_EXPORTER_OTLP_ENDPOINT is set; then the workflow bundle,
// the worker and its client get Temporal's tracing interceptors (src/telemetry/temporal.ts).
const tracing = await startTracing(config, 'naira-gateway-worker', (message) =>
  console.error(JSON.stringify({ level: 40, time: Date.now(), service: 'worker', msg: `tracing: ${message}` })),
);

Runtime.install({
  // The SDK's own lines (an activity's failure with its error) with account numbers masked.
  logger: maskingLogger(new DefaultLogger('INFO')),
  telemetryOptions: {
    logging: { filter: makeTelemetryFilterString({ core: 'WARN' }), forward: {} },
    // The SDK's own metrics (workflow and activity task latencies, slots, sticky cache, polls).
    ...(config.WORKER_METRICS_PORT > 0
      ? { metrics: { prometheus: { bindAddress: `${config.METRICS_HOST}:${config.WORKER_METRICS_PORT}` } } }
      : {}),
  },
});

const orm = await openOrm({ databaseUrl: config.databaseUrl, poolMax: config.DATABASE_POOL_MAX });
const connection = await NativeConnection.connect({ address: config.temporalAddress });
const bundle = await bundleWorkflowCode({
  workflowsPath: require.resolve('../workflows/index.ts'),
  logger: new DefaultLogger('WARN'),
  ...(tracing ? { workflowInterceptorModules: WORKFLOW_TRACING_MODULES } : {}),
});
// A client for the activities that start workflows, and for the event fan-out below.
const clientConnection = await Connection.connect({ address: config.temporalAddress });
const client = new Client({
  connection: clientConnection,
  namespace: config.TEMPORAL_NAMESPACE,
  ...(tracing ? { interceptors: workflowClientTracing() } : {}),
});
// The daily reconciliation Schedule (src/reconciliation/schedule.ts): payments go on without it.
try {
  const change = await ensureReconciliationSchedule(client, {
    taskQueue: config.TEMPORAL_TASK_QUEUE,
    time: config.RECONCILIATION_TIME,
  });
  console.error(
    JSON.stringify({
      level: 30,
      service: 'worker',
      msg: `reconciliation schedule ${change}`,
      reconciliationTime: config.RECONCILIATION_TIME,
      time: Date.now(),
    }),
  );
} catch (error) {
  console.error(
    JSON.stringify({
      level: 50,
      service: 'worker',
      msg: 'could not set up the reconciliation schedule',
      err: (error as Error).message,
      time: Date.now(),
    }),
  );
}
const worker = await Worker.create({
  connection,
  namespace: config.TEMPORAL_NAMESPACE,
  taskQueue: config.TEMPORAL_TASK_QUEUE,
  workflowBundle: bundle,
  activities: createActivities({
    orm,
    client,
    providers: createProviders(config),
    webhooks: {
      encryptionKey: config.webhookEncryptionKey,
      timeoutMs: config.WEBHOOK_TIMEOUT_MS,
      egress: egressPolicyFor(config),
    },
    bvnKeys: bvnKeysFrom(config.bvnSecretKey),
  }),
  ...(tracing ? workerTracing(tracing) : {}),
});
console.error(
  JSON.stringify({
    level: 30,
    service: 'worker',
    msg: 'worker running',
    taskQueue: config.TEMPORAL_TASK_QUEUE,
    tracing: tracing ? config.OTEL_EXPORTER_OTLP_ENDPOINT : 'off',
    time: Date.now(),
  }),
);
// The worker process also fans events out to webhook deliveries (see src/webhooks/fanout.ts).
const fanout = new EventFanout({
  orm,
  client,
  taskQueue: config.TEMPORAL_TASK_QUEUE,
  scheduleMs: config.webhookRetryScheduleMs,
  listen: { connectionString: config.databaseUrl },
  log: (message, fields) => console.error(JSON.stringify({ level: 40, service: 'worker', msg: message, ...fields })),
});
fanout.start();
const cardOperations = new CardOperationSweep({
  orm,
  client,
  taskQueue: config.TEMPORAL_TASK_QUEUE,
  log: (message, fields) => console.error(JSON.stringify({ level: 40, service: 'worker', msg: message, ...fields })),
});
cardOperations.start();
try {
  await worker.run();
} finally {
  await Promise.all([fanout.stop(), cardOperations.stop()]);
  await clientConnection.close();
  await connection.close();
  await orm.close();
  // Spans still buffered (the last activities, workflows that just ended) leave before the process does.
  await tracing?.shutdown();
}
