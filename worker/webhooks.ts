// The webhook worker process (`npm run webhook-worker`): webhook deliveries apart from transfers
// and cards (issue #27). It fans events out to deliveries (worker/webhook-fanout.ts) and runs their
// workflows and attempts on the webhook task queue (TEMPORAL_WEBHOOK_TASK_QUEUE), with its own slots
// (WEBHOOK_WORKER_SLOTS) of which one tenant holds at most WEBHOOK_TENANT_CONCURRENCY. Its own
// process, not a second Worker beside the gateway's: one that dies, leaks or stalls takes no
// transfer with it, and it scales and reports its metrics on its own
// (docs/workflows.md, "Webhook deliveries").
// Shuts down gracefully on SIGINT/SIGTERM.
import { Worker } from '@temporalio/worker';
import { createWebhookActivities } from '../activities/webhooks/webhooks.ts';
import { webhookActivityDeps } from '../activities/index.ts';
import { EventFanout } from './webhook-fanout.ts';
import { egressPolicyFor } from '../src/webhooks/destinations.ts';
import { workerTracing } from '../src/telemetry/temporal.ts';
import { startWorkerProcess } from './bootstrap.ts';
import { webhookWorkerSlots } from './options.ts';

const { config, tracing, orm, connection, client, bundle, log, run } = await startWorkerProcess({
  service: 'webhook-worker',
  metricsPort: (loaded) => loaded.WEBHOOK_WORKER_METRICS_PORT,
});
const worker = await Worker.create({
  connection,
  namespace: config.TEMPORAL_NAMESPACE,
  taskQueue: config.webhookTaskQueue,
  workflowBundle: bundle,
  activities: createWebhookActivities(
    webhookActivityDeps({
      orm,
      client,
      webhooks: {
        encryptionKey: config.webhookEncryptionKey,
        timeoutMs: config.WEBHOOK_TIMEOUT_MS,
        egress: egressPolicyFor(config),
        tenantConcurrency: config.WEBHOOK_TENANT_CONCURRENCY,
        disableAfterMs: config.WEBHOOK_DISABLE_AFTER_HOURS * 3_600_000,
      },
    }),
  ),
  ...webhookWorkerSlots(config.WEBHOOK_WORKER_SLOTS),
  ...(tracing ? workerTracing(tracing) : {}),
});
// Events to deliveries (see worker/webhook-fanout.ts): their workflows start on the webhook queue.
const fanout = new EventFanout({
  orm,
  client,
  taskQueue: config.webhookTaskQueue,
  scheduleMs: config.webhookRetryScheduleMs,
  listen: { connectionString: config.databaseUrl },
  // The client shares this process's NativeConnection with `worker` (worker/bootstrap.ts).
  eagerStart: true,
  log: (message, fields) => log(40, message, fields),
});
await run([worker], fanout, {
  taskQueue: config.webhookTaskQueue,
  slots: config.WEBHOOK_WORKER_SLOTS,
  tenantConcurrency: config.WEBHOOK_TENANT_CONCURRENCY,
});
