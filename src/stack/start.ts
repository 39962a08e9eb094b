// `npm start`: the whole gateway on one machine. Starts (or connects to) PostgreSQL and Temporal,
// applies migrations, then runs the sandbox bank, the two workers and the API as child processes
// with prefixed logs. Each child reads its own configuration; the launcher reads the API's and the
// sandbox bank's first, so that a bad variable of either stops the start before anything runs.
// Ctrl-C / SIGTERM stops every child, then Temporal, then PostgreSQL; their data stays in .data/
// so the next start finds it again.
import { type ChildProcess, spawn } from 'node:child_process';
import { join } from 'node:path';
import { type Config, loadConfig } from '../config.ts';
import { migrate, openOrm } from '../orm.ts';
import { loadOrExit } from '../runtime/environment.ts';
import { assertNodeVersion } from '../runtime/node-version.ts';
import { type SandboxBankConfig, loadSandboxBankConfig } from '../sandbox-bank/config.ts';
import { type EmbeddedPostgresHandle, ensureDatabase, startEmbeddedPostgres } from './postgres.ts';
import { type Placement, PlacementError, placeEmbeddedPostgres } from './postgres-placement.ts';
import { stackProcesses, stopLeftovers, takenPort } from './leftovers.ts';
import { type TemporalDevServerHandle, startTemporalDevServer } from './temporal-dev.ts';
import { ensureSearchAttributes } from './search-attributes.ts';
import { PROJECT_ROOT } from './tools.ts';

assertNodeVersion();

const COLOURS: Record<string, string> = {
  postgres: '34',
  temporal: '35',
  'sandbox-bank': '31',
  worker: '33',
  'webhook-worker': '93',
  api: '32',
  stack: '36',
};

function say(source: string, line: string): void {
  const colour = process.stdout.isTTY ? COLOURS[source] : undefined;
  const label = colour ? `\u001b[${colour}m[${source}]\u001b[0m` : `[${source}]`;
  process.stdout.write(`${label} ${line}\n`);
}

const [config, bankConfig]: [Config, SandboxBankConfig] = loadOrExit(
  () => loadConfig(),
  () => loadSandboxBankConfig(),
);

const children: { name: string; child: ChildProcess }[] = [];
let postgres: EmbeddedPostgresHandle | undefined;
let temporal: TemporalDevServerHandle | undefined;
let stopping = false;

async function stopAll(exitCode: number): Promise<never> {
  if (stopping) return new Promise<never>(() => {});
  stopping = true;
  say('stack', 'stopping…');
  const stop = ({ name, child }: (typeof children)[number], graceMs: number) =>
    new Promise<void>((resolve) => {
      if (child.exitCode !== null || child.signalCode !== null) return resolve();
      const timer = setTimeout(() => child.kill('SIGKILL'), graceMs);
      child.once('exit', () => {
        clearTimeout(timer);
        say(name, 'stopped');
        resolve();
      });
      child.kill('SIGTERM');
    });
  // The API first: it answers the requests in flight (up to 25 s), which may still need the worker,
  // the sandbox bank, Temporal and PostgreSQL; then the rest.
  await Promise.all(children.filter(({ name }) => name === 'api').map((entry) => stop(entry, 30_000)));
  await Promise.all(children.filter(({ name }) => name !== 'api').map((entry) => stop(entry, 15_000)));
  if (temporal) {
    await temporal.stop();
    say('temporal', 'stopped');
  }
  if (postgres) {
    await postgres.stop();
    say('postgres', 'stopped');
  }
  process.exit(exitCode);
}

process.on('SIGINT', () => void stopAll(0));
process.on('SIGTERM', () => void stopAll(0));

function run(name: string, script: string, env: NodeJS.ProcessEnv): ChildProcess {
  // detached: a terminal's Ctrl-C reaches only this process, which then stops the children in order.
  const child = spawn(process.execPath, [join(PROJECT_ROOT, script)], {
    cwd: PROJECT_ROOT,
    env,
    stdio: ['ignore', 'pipe', 'pipe'],
    detached: true,
  });
  for (const stream of [child.stdout, child.stderr]) {
    stream.setEncoding('utf8');
    let buffered = '';
    stream.on('data', (chunk: string) => {
      buffered += chunk;
      const lines = buffered.split('\n');
      buffered = lines.pop() ?? '';
      for (const line of lines) if (line.trim()) say(name, line);
    });
  }
  const entry = { name, child };
  children.push(entry);
  child.once('exit', (code, signal) => {
    if (stopping) return;
    if (config.STACK_CHILD_EXIT === 'restart') {
      // Started again in its place, after a second, so that a process dying at once does not spin.
      say(name, `exited unexpectedly (${signal ?? `code ${code}`}); starting it again (STACK_CHILD_EXIT=restart)`);
      children.splice(children.indexOf(entry), 1);
      setTimeout(() => {
        if (!stopping) run(name, script, env);
      }, 1_000);
      return;
    }
    say(name, `exited unexpectedly (${signal ?? `code ${code}`}); stopping the stack`);
    void stopAll(1);
  });
  return child;
}

async function waitForHealth(url: string, timeoutMs: number): Promise<boolean> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline && !stopping) {
    try {
      const response = await fetch(url, { signal: AbortSignal.timeout(3_000) });
      if (response.status === 200) return true;
    } catch {
      // not listening yet
    }
    await new Promise((resolve) => setTimeout(resolve, 500));
  }
  return false;
}

/**
 * Before anything starts: where embedded PostgreSQL goes, what an earlier start killed with SIGKILL
 * left running (stopped now), and whether the ports are free. Each problem is one line, then exit 1.
 */
async function prepare(): Promise<Placement | undefined> {
  let placement: Placement | undefined;
  if (config.embeddedDatabase) {
    try {
      placement = placeEmbeddedPostgres({
        dataDir: join(config.dataDir, 'postgres'),
        runtimeDir: config.EMBEDDED_PG_RUNTIME_DIR,
      });
    } catch (error) {
      say(
        'postgres',
        error instanceof PlacementError ? error.message : `cannot place embedded PostgreSQL: ${String(error)}`,
      );
      process.exit(1);
    }
    if (placement.moved) say('postgres', placement.moved);
  }
  const found = stackProcesses({
    projectRoot: PROJECT_ROOT,
    dataDir: config.dataDir,
    ...(placement ? { postgresDataDir: placement.dataDir } : {}),
    ...(config.embeddedTemporal ? { temporalDbFile: join(config.dataDir, 'temporal.db') } : {}),
  });
  if (found.runningLauncher !== undefined) {
    say(
      'stack',
      `this checkout's gateway is already running on ${config.dataDir} (npm start, pid ${found.runningLauncher}); stop it first (Ctrl-C there, or kill ${found.runningLauncher}), or set DATA_DIR`,
    );
    process.exit(1);
  }
  for (const leftover of found.leftovers) {
    say(
      'stack',
      `stopping the ${leftover.what} (pid ${leftover.pid}) left running by an earlier start that was killed`,
    );
  }
  await stopLeftovers(found.leftovers);
  const taken = await takenPort([
    { variable: 'PORT', port: config.PORT, host: config.HOST },
    { variable: 'SANDBOX_BANK_PORT', port: bankConfig.SANDBOX_BANK_PORT, host: bankConfig.SANDBOX_BANK_HOST },
    ...(config.METRICS_PORT > 0
      ? [{ variable: 'METRICS_PORT', port: config.METRICS_PORT, host: config.METRICS_HOST }]
      : []),
    ...(config.WORKER_METRICS_PORT > 0
      ? [{ variable: 'WORKER_METRICS_PORT', port: config.WORKER_METRICS_PORT, host: config.METRICS_HOST }]
      : []),
    ...(config.WEBHOOK_WORKER_METRICS_PORT > 0
      ? [
          {
            variable: 'WEBHOOK_WORKER_METRICS_PORT',
            port: config.WEBHOOK_WORKER_METRICS_PORT,
            host: config.METRICS_HOST,
          },
        ]
      : []),
    ...(config.embeddedDatabase ? [{ variable: 'EMBEDDED_PG_PORT', port: config.EMBEDDED_PG_PORT }] : []),
    ...(config.embeddedTemporal
      ? [
          { variable: 'TEMPORAL_DEV_PORT', port: config.TEMPORAL_DEV_PORT },
          { variable: 'TEMPORAL_UI_PORT', port: config.TEMPORAL_UI_PORT },
          { variable: 'TEMPORAL_DEV_HTTP_PORT', port: config.TEMPORAL_DEV_HTTP_PORT },
        ]
      : []),
  ]);
  if (taken) {
    say('stack', `port ${taken.port} is taken by another program; set ${taken.variable} to a free port`);
    process.exit(1);
  }
  return placement;
}

try {
  const placement = await prepare();
  if (config.embeddedDatabase) {
    say(
      'postgres',
      `starting embedded PostgreSQL on 127.0.0.1:${config.EMBEDDED_PG_PORT} (data in ${placement?.dataDir ?? join(config.dataDir, 'postgres')})`,
    );
    postgres = await startEmbeddedPostgres({
      dataDir: join(config.dataDir, 'postgres'),
      ...(placement ? { placement } : {}),
      port: config.EMBEDDED_PG_PORT,
      log: (line) => {
        if (/ERROR|FATAL|PANIC|ready to accept/.test(line)) say('postgres', line);
      },
    });
  } else {
    say('postgres', 'using DATABASE_URL');
  }
  await ensureDatabase(config.databaseUrl);
  // The sandbox bank's own database (SANDBOX_BANK_DATABASE_URL), when it has one, made the same way.
  if (bankConfig.databaseUrl !== config.databaseUrl) {
    await ensureDatabase(bankConfig.databaseUrl).catch((error: unknown) =>
      say('postgres', `could not create the sandbox bank's database: ${(error as Error).message}`),
    );
  }

  if (config.embeddedTemporal) {
    say(
      'temporal',
      `starting temporal server start-dev on ${config.temporalAddress} (state in ${join(config.dataDir, 'temporal.db')})`,
    );
    temporal = await startTemporalDevServer({
      port: config.TEMPORAL_DEV_PORT,
      uiPort: config.TEMPORAL_UI_PORT,
      httpPort: config.TEMPORAL_DEV_HTTP_PORT,
      dbFile: join(config.dataDir, 'temporal.db'),
      namespace: config.TEMPORAL_NAMESPACE,
      onOutput: (line) => say('temporal', line),
      detached: true,
    });
    temporal.process.once('exit', (code) => {
      if (!stopping) {
        say('temporal', `exited unexpectedly (code ${code}); stopping the stack`);
        void stopAll(1);
      }
    });
  } else {
    say('temporal', `using TEMPORAL_ADDRESS=${config.temporalAddress}`);
    const added = await ensureSearchAttributes(config.temporalAddress, config.TEMPORAL_NAMESPACE);
    if (added.length) say('temporal', `search attributes registered: ${added.join(', ')}`);
  }

  const orm = await openOrm({ databaseUrl: config.databaseUrl, poolMax: 2 });
  try {
    const applied = await migrate(orm);
    say('stack', applied.length ? `migrations applied: ${applied.join(', ')}` : 'database schema is up to date');
  } finally {
    await orm.close();
  }

  const env = { ...process.env, DATABASE_URL: config.databaseUrl, TEMPORAL_ADDRESS: config.temporalAddress };
  run('sandbox-bank', 'src/sandbox-bank/server.ts', env);
  // The gateway's queue and its batches and sandbox lanes, each on worker slots of its own (worker/main.ts).
  run('worker', 'worker/main.ts', env);
  // Webhook deliveries in their own process, on their own task queue (worker/webhooks.ts).
  run('webhook-worker', 'worker/webhooks.ts', env);
  run('api', 'src/server.ts', env);

  const apiUrl = `http://${config.HOST === '0.0.0.0' ? '127.0.0.1' : config.HOST}:${config.PORT}`;
  if (!(await waitForHealth(`${apiUrl}/health`, 90_000))) {
    if (!stopping) {
      say('stack', `the API did not become healthy at ${apiUrl}/health within 90 s`);
      await stopAll(1);
    }
  } else {
    say('stack', 'gateway is up');
    say('stack', `  API            ${apiUrl}`);
    say('stack', `  API docs       ${apiUrl}/docs   (OpenAPI: ${apiUrl}/openapi.json)`);
    say('stack', `  Console        ${apiUrl}/dashboard   (invite yourself: admin tenant invite)`);
    say('stack', `  Temporal UI    ${config.temporalUiUrl ?? '(external cluster: see your Temporal UI)'}`);
    say('stack', `  Sandbox bank   ${config.sandboxBankUrl}   (control routes: docs/sandbox.md)`);
    if (config.METRICS_PORT > 0) {
      const worker =
        config.WORKER_METRICS_PORT > 0
          ? `   (worker, Temporal SDK: http://${config.METRICS_HOST}:${config.WORKER_METRICS_PORT}/metrics)`
          : '';
      const webhookWorker =
        config.WEBHOOK_WORKER_METRICS_PORT > 0
          ? `   (webhook worker: http://${config.METRICS_HOST}:${config.WEBHOOK_WORKER_METRICS_PORT}/metrics)`
          : '';
      say(
        'stack',
        `  Metrics        http://${config.METRICS_HOST}:${config.METRICS_PORT}/metrics${worker}${webhookWorker}`,
      );
    }
    if (config.OTEL_EXPORTER_OTLP_ENDPOINT) {
      say('stack', `  Traces         OTLP to ${config.OTEL_EXPORTER_OTLP_ENDPOINT.replace(/\/+$/, '')}/v1/traces`);
    }
    say('stack', '  operator CLI   npm run --silent admin -- tenant create --name acme --wallet-minor 10000000');
    say('stack', 'press Ctrl-C to stop');
  }
} catch (error) {
  say('stack', `failed to start: ${error instanceof Error ? error.message : String(error)}`);
  if (error instanceof Error && error.cause)
    say('stack', `  cause: ${String((error.cause as Error).message ?? error.cause)}`);
  await stopAll(1);
}
