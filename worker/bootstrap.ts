// What both worker processes (worker/main.ts, worker/webhooks.ts) start with: the configuration,
// tracing (off unless OTEL_EXPORTER_OTLP_ENDPOINT is set), the SDK runtime with its Prometheus
// metrics on the process's own port, PostgreSQL, the workflow bundle, and a Temporal client for
// the activities and loops that start or signal workflows; then runs the worker with its loop and
// closes them in order afterwards.
import { createRequire } from 'node:module';
import {
  DefaultLogger,
  NativeConnection,
  Runtime,
  type Worker,
  type WorkflowBundleWithSourceMap,
  bundleWorkflowCode,
  makeTelemetryFilterString,
} from '@temporalio/worker';
import { Client } from '@temporalio/client';
import { type Config, loadConfigOrExit } from '../src/config.ts';
import { maskAccountNumbers, maskDeep, maskingLogger } from '../src/runtime/log-masking.ts';
import { type MikroORM, openOrm } from '../src/orm.ts';
import { assertNodeVersion } from '../src/runtime/node-version.ts';
import { WORKFLOW_TRACING_MODULES, workflowClientTracing } from '../src/telemetry/temporal.ts';
import { type Tracing, startTracing } from '../src/telemetry/tracing.ts';

export interface WorkerProcess {
  config: Config;
  tracing: Tracing | undefined;
  orm: MikroORM;
  connection: NativeConnection;
  client: Client;
  bundle: WorkflowBundleWithSourceMap;
  /** One JSON log line on stderr, as the SDK's own lines go. */
  log: (level: 30 | 40 | 50, msg: string, fields?: Record<string, unknown>) => void;
  /**
   * Says the process is running (`<service> running`, with `details` and whether it traces), then
   * runs its workers (one per task queue it serves) until they shut down (SIGINT/SIGTERM: the SDK
   * drains in-flight activities; one that fails takes the others down with it) with the process's
   * own polling loop beside them; then stops the loop and closes the rest.
   */
  run: (
    workers: readonly Worker[],
    loop: { start(): void; stop(): Promise<void> },
    details: Record<string, unknown>,
  ) => Promise<void>;
}

export async function startWorkerProcess(options: {
  /** `worker` or `webhook-worker`: the log lines' service, and the traces' naira-gateway-<service>. */
  service: string;
  metricsPort: (config: Config) => number;
}): Promise<WorkerProcess> {
  assertNodeVersion();
  const config = loadConfigOrExit();
  const require = createRequire(import.meta.url);
  // Masked like every other line (src/runtime/log-masking.ts): a loop's error may quote an account number.
  const log: WorkerProcess['log'] = (level, msg, fields = {}) =>
    console.error(
      JSON.stringify({
        level,
        time: Date.now(),
        service: options.service,
        msg: maskAccountNumbers(msg),
        ...(maskDeep(fields) as Record<string, unknown>),
      }),
    );
  // Off (and not even loaded) unless OTEL_EXPORTER_OTLP_ENDPOINT is set; then the workflow bundle,
  // the worker and its client get Temporal's tracing interceptors (src/telemetry/temporal.ts).
  const tracing = await startTracing(config, `naira-gateway-${options.service}`, (message) =>
    log(40, `tracing: ${message}`),
  );
  const metricsPort = options.metricsPort(config);
  Runtime.install({
    // The SDK's own lines (an activity's failure with its error) with account numbers masked.
    logger: maskingLogger(new DefaultLogger('INFO')),
    telemetryOptions: {
      logging: { filter: makeTelemetryFilterString({ core: 'WARN' }), forward: {} },
      // The SDK's own metrics (workflow and activity task latencies, slots, sticky cache, polls).
      ...(metricsPort > 0 ? { metrics: { prometheus: { bindAddress: `${config.METRICS_HOST}:${metricsPort}` } } } : {}),
    },
  });
  const orm = await openOrm({ databaseUrl: config.databaseUrl, poolMax: config.DATABASE_POOL_MAX });
  const connection = await NativeConnection.connect({ address: config.temporalAddress });
  const bundle = await bundleWorkflowCode({
    workflowsPath: require.resolve('../workflows/index.ts'),
    logger: new DefaultLogger('WARN'),
    ...(tracing ? { workflowInterceptorModules: WORKFLOW_TRACING_MODULES } : {}),
  });
  // The client shares the worker's native connection, so that a workflow this process starts on a
  // queue it serves can be started eagerly (`requestEagerStart`): the server hands the first task
  // back with the start, and this process runs it without a poll's round trip (the fan-out's
  // deliveries, worker/webhook-fanout.ts).
  const client = new Client({
    connection,
    namespace: config.TEMPORAL_NAMESPACE,
    ...(tracing ? { interceptors: workflowClientTracing() } : {}),
  });
  const close = async () => {
    await connection.close();
    await orm.close();
    // Spans still buffered (the last activities, workflows that just ended) leave before the process does.
    await tracing?.shutdown();
  };
  const run: WorkerProcess['run'] = async (workers, loop, details) => {
    log(30, `${options.service.replaceAll('-', ' ')} running`, {
      ...details,
      tracing: tracing ? config.OTEL_EXPORTER_OTLP_ENDPOINT : 'off',
    });
    loop.start();
    try {
      const runs = workers.map((worker) => worker.run());
      try {
        await Promise.all(runs);
      } catch (error) {
        for (const worker of workers) if (worker.getState() === 'RUNNING') worker.shutdown();
        await Promise.allSettled(runs);
        throw error;
      }
    } finally {
      await loop.stop();
      await close();
    }
  };
  return { config, tracing, orm, connection, client, bundle, log, run };
}
