// The worker process (`npm run worker`): bundles workflows/ once, runs them and the activities on
// the gateway's task queue (transfers, virtual accounts, cards, identity, reconciliation), and
// runs the features' sweeps (src/features.ts), which hand over again what a lost hand-over left
// waiting. Bulk transfers and sandbox single transfers run on lanes of their own beside it
// (`<queue>-batches`, `<queue>-sandbox`, decisions §18): a Worker each, with its own slots and its
// own PostgreSQL pool, so that a flood of either never takes a slot or a connection that live
// single transfers need; the gateway queue's Worker still runs any transfer or batch started there
// before the lanes existed. Webhook deliveries run in their own process on their own queue
// (worker/webhooks.ts); delivery workflows started on this queue before that split still finish
// here, so their workflow and activities stay registered. Shuts down gracefully on SIGINT/SIGTERM
// (the SDK drains in-flight activities).
import { Worker } from '@temporalio/worker';
import { createActivities } from '../activities/index.ts';
import { laneTaskQueues } from '../src/config.ts';
import { FEATURES } from '../src/features.ts';
import { type MikroORM, openOrm } from '../src/orm.ts';
import { createProviders } from '../src/connectors/registry.ts';
import { bvnKeysFrom } from '../src/identity/bvn.ts';
import { egressPolicyFor } from '../src/webhooks/destinations.ts';
import { ensureReconciliationSchedule } from '../src/reconciliation/schedule.ts';
import { workerTracing } from '../src/telemetry/temporal.ts';
import { startWorkerProcess } from './bootstrap.ts';
import { laneWorkerSlots } from './options.ts';

const { config, tracing, orm, connection, client, bundle, log, run } = await startWorkerProcess({
  service: 'worker',
  metricsPort: (loaded) => loaded.WORKER_METRICS_PORT,
});
// The daily reconciliation Schedule (src/reconciliation/schedule.ts): payments go on without it.
try {
  const change = await ensureReconciliationSchedule(client, {
    taskQueue: config.TEMPORAL_TASK_QUEUE,
    time: config.RECONCILIATION_TIME,
  });
  log(30, `reconciliation schedule ${change}`, { reconciliationTime: config.RECONCILIATION_TIME });
} catch (error) {
  log(50, 'could not set up the reconciliation schedule', { err: (error as Error).message });
}
const providers = createProviders(config);
const activitiesOn = (database: MikroORM) =>
  createActivities({
    orm: database,
    client,
    providers,
    webhooks: {
      encryptionKey: config.webhookEncryptionKey,
      timeoutMs: config.WEBHOOK_TIMEOUT_MS,
      egress: egressPolicyFor(config),
      tenantConcurrency: config.WEBHOOK_TENANT_CONCURRENCY,
      disableAfterMs: config.WEBHOOK_DISABLE_AFTER_HOURS * 3_600_000,
    },
    bvnKeys: bvnKeysFrom(config.bvnSecretKey),
  });
const common = {
  connection,
  namespace: config.TEMPORAL_NAMESPACE,
  workflowBundle: bundle,
  ...(tracing ? workerTracing(tracing) : {}),
};
const worker = await Worker.create({
  ...common,
  taskQueue: config.TEMPORAL_TASK_QUEUE,
  activities: activitiesOn(orm),
});
// The lanes' own connections: their activities never wait for one a live transfer holds.
const lanesOrm = await openOrm({ databaseUrl: config.databaseUrl, poolMax: config.DATABASE_POOL_MAX });
const lanes = laneTaskQueues(config.TEMPORAL_TASK_QUEUE);
const laneActivities = activitiesOn(lanesOrm);
const batchWorker = await Worker.create({
  ...common,
  taskQueue: lanes.batches,
  activities: laneActivities,
  ...laneWorkerSlots(config.BATCH_WORKER_SLOTS),
});
const sandboxWorker = await Worker.create({
  ...common,
  taskQueue: lanes.sandbox,
  activities: laneActivities,
  ...laneWorkerSlots(config.SANDBOX_WORKER_SLOTS),
});
// The features' sweeps (the card operations' and the batches' hand-overs, the wake-ups of webhook
// deliveries whose endpoint was enabled again), started and stopped with it.
const loops = FEATURES.flatMap(
  (feature) =>
    feature.sweeps?.({
      orm,
      client,
      taskQueue: config.TEMPORAL_TASK_QUEUE,
      log: (message, fields) => log(40, message, fields),
    }) ?? [],
);
const sweeps = {
  start: () => loops.forEach((loop) => loop.start()),
  stop: async () => {
    await Promise.all(loops.map((loop) => loop.stop()));
  },
};
try {
  await run([worker, batchWorker, sandboxWorker], sweeps, {
    taskQueue: config.TEMPORAL_TASK_QUEUE,
    lanes: { ...lanes, batchSlots: config.BATCH_WORKER_SLOTS, sandboxSlots: config.SANDBOX_WORKER_SLOTS },
  });
} finally {
  await lanesOrm.close();
}
