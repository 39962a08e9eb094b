// The API process: config, database, a lazy Temporal connection, the Fastify app. Stops
// cleanly on SIGINT/SIGTERM (in-flight requests finish, then connections close).
import type { Server } from 'node:http';
import { buildApp } from './app.ts';
import { loadConfigOrExit } from './config.ts';
import { openOrm } from './orm.ts';
import { boundedTemporalConnection } from './http/deadlines.ts';
import { DRAIN_LIMIT_MS } from './http/shutdown.ts';
import { CallbackDispatcher } from './provider-callbacks/dispatcher.ts';
import { createProviders } from './connectors/registry.ts';
import { egressPolicyFor } from './webhooks/destinations.ts';
import { serveMetrics } from './metrics/server.ts';
import { assertNodeVersion } from './runtime/node-version.ts';
import { startTracing } from './telemetry/tracing.ts';

assertNodeVersion();
const config = loadConfigOrExit();
// Before anything else is built: off (and not even loaded) unless OTEL_EXPORTER_OTLP_ENDPOINT is set.
const tracing = await startTracing(config, 'naira-gateway-api', (message) =>
  console.error(JSON.stringify({ level: 40, time: Date.now(), service: 'api', msg: `tracing: ${message}` })),
);
const orm = await openOrm({
  databaseUrl: config.databaseUrl,
  poolMax: config.DATABASE_POOL_MAX,
  timeoutMs: config.DEPENDENCY_TIMEOUT_MS,
});
// Lazy: the API starts (and /health reports 503) even while Temporal is still coming up.
const temporal = boundedTemporalConnection(config.temporalAddress, config.DEPENDENCY_TIMEOUT_MS);
const dispatcher = new CallbackDispatcher();
const app = await buildApp({
  config,
  orm,
  temporal,
  providers: createProviders(config),
  dispatcher,
  egress: egressPolicyFor(config),
  ...(tracing ? { tracer: tracing.tracer } : {}),
});
if (tracing) app.log.info({ endpoint: config.OTEL_EXPORTER_OTLP_ENDPOINT }, 'tracing on: spans exported over OTLP');
// Once per start, by the API alone (the workers read the same configuration).
for (const warning of config.warnings) app.log.warn(warning);

/** Set once GET /metrics is served: closed first on shutdown. */
const served: { metrics?: Server } = {};
let stopping = false;
async function shutdown(signal: string) {
  if (stopping) return;
  stopping = true;
  app.log.info({ signal }, 'api stopping: answering the requests in flight first');
  // In-flight requests are bounded by DEPENDENCY_TIMEOUT_MS; this caps the whole drain regardless.
  setTimeout(() => {
    app.log.error({ limitMs: DRAIN_LIMIT_MS }, 'requests still in flight at the drain limit; exiting');
    process.exit(1);
  }, DRAIN_LIMIT_MS).unref();
  try {
    served.metrics?.close();
    await app.close();
    await temporal.close();
    await orm.close();
    // The last requests' spans leave before the process does.
    await tracing?.shutdown();
  } finally {
    process.exit(0);
  }
}
process.once('SIGINT', () => void shutdown('SIGINT'));
process.once('SIGTERM', () => void shutdown('SIGTERM'));

await app.listen({ host: config.HOST, port: config.PORT });
// Metrics are secondary to payments: a metrics port that cannot be bound is logged, and the API serves on.
if (config.METRICS_PORT > 0) {
  try {
    served.metrics = await serveMetrics(app.metrics, { host: config.METRICS_HOST, port: config.METRICS_PORT });
    app.log.info({ metrics: `http://${config.METRICS_HOST}:${config.METRICS_PORT}/metrics` }, 'metrics served');
  } catch (error) {
    app.log.error(
      { error: error instanceof Error ? error.message : String(error) },
      `metrics not served: ${config.METRICS_HOST}:${config.METRICS_PORT} cannot be bound; set METRICS_PORT (0 turns metrics off)`,
    );
  }
}
