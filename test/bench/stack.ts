// The gateway the benchmark (and the chaos run, test/chaos/) drives: `npm start`'s own launcher on
// free ports with its state in a fresh directory (or on DATABASE_URL / TEMPORAL_ADDRESS when set),
// the sandbox bank completing at once and the rate limit out of the way. Also finds the API and
// worker processes to sample, and every process under the launcher.
import { type ChildProcess, execFileSync, spawn, spawnSync } from 'node:child_process';
import { mkdirSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { processes } from '../../src/stack/leftovers.ts';
import { PROJECT_ROOT } from '../../src/stack/tools.ts';
import { freePort } from '../support/ports.ts';
import { processUsage } from './load.ts';

export interface BenchStack {
  apiUrl: string;
  bankUrl: string;
  metricsUrl: string;
  /** This run's state directory (removed by `stop`): what runs beside the stack may keep its own state under it. */
  dataDir: string;
  /** `npm start`'s launcher: the API, worker, sandbox bank, Temporal and PostgreSQL run under it. */
  launcherPid: number;
  databaseUrl: string;
  /** The sandbox bank's own database on the same server. */
  bankDatabaseUrl: string;
  temporalAddress: string;
  /** The API and worker, and Temporal's dev server when this run started it. */
  pids: Record<string, number>;
  /**
   * CPU time (ms) each process under the launcher has used so far: those of `pids` by their names,
   * the sandbox bank's and each of PostgreSQL's processes (postmaster and backends, the gateway's and
   * the bank's) as `sandbox-bank#<pid>` and `postgres#<pid>`, so that a reader of two readings sums
   * each process's own difference (a backend can end between them).
   */
  cpuMs(): Record<string, number>;
  /** Runs the operator CLI against this stack; its JSON answer. */
  admin(...args: string[]): unknown;
  /** Runs the operator CLI (at most `timeoutMs`); its exit code and JSON answer, whatever the code. */
  adminRun(timeoutMs: number, ...args: string[]): { code: number | null; json: unknown; stderr: string };
  stop(): Promise<void>;
}

function childrenOf(parent: number): { pid: number; cmdline: string }[] {
  return processes()
    .filter((info) => info.ppid === parent)
    .map((info) => ({ pid: info.pid, cmdline: info.argv.join(' ') }));
}

/** Every process below `root` (children, their children, …), with its command line. */
export function descendantsOf(root: number): { pid: number; ppid: number; cmdline: string }[] {
  const all = processes();
  const found: { pid: number; ppid: number; cmdline: string }[] = [];
  const parents = new Set([root]);
  for (let grew = true; grew;) {
    grew = false;
    for (const info of all) {
      if (parents.has(info.ppid) && !parents.has(info.pid)) {
        parents.add(info.pid);
        found.push({ pid: info.pid, ppid: info.ppid, cmdline: info.argv.join(' ') });
        grew = true;
      }
    }
  }
  return found;
}

export interface StackOptions {
  /** Names the state directory (`.data/<name>-<time>`); `bench` by default. */
  name?: string;
  /** Settings on top of the benchmark's (e.g. the chaos run's short webhook schedule). */
  env?: Record<string, string>;
  /** Everything the launcher prints once the gateway is up (its children's logs); dropped by default. */
  output?: (chunk: string) => void;
}

export async function startBenchStack(log: (line: string) => void, options: StackOptions = {}): Promise<BenchStack> {
  const ports = {
    api: await freePort(),
    postgres: await freePort(),
    temporal: await freePort(),
    temporalUi: await freePort(),
    temporalHttp: await freePort(),
    bank: await freePort(),
    metrics: await freePort(),
    workerMetrics: await freePort(),
    webhookWorkerMetrics: await freePort(),
  };
  // A fresh state each run; mode 755, so that PostgreSQL (user postgres when run as root) enters it.
  const dataDir = join(PROJECT_ROOT, '.data', `${options.name ?? 'bench'}-${Date.now()}`);
  mkdirSync(dataDir, { recursive: true, mode: 0o755 });
  const env: NodeJS.ProcessEnv = {
    ...process.env,
    NODE_ENV: 'development',
    LOG_LEVEL: 'warn',
    DATA_DIR: dataDir,
    PORT: String(ports.api),
    EMBEDDED_PG_PORT: String(ports.postgres),
    TEMPORAL_DEV_PORT: String(ports.temporal),
    TEMPORAL_UI_PORT: String(ports.temporalUi),
    TEMPORAL_DEV_HTTP_PORT: String(ports.temporalHttp),
    SANDBOX_BANK_PORT: String(ports.bank),
    METRICS_PORT: String(ports.metrics),
    WORKER_METRICS_PORT: String(ports.workerMetrics),
    WEBHOOK_WORKER_METRICS_PORT: String(ports.webhookWorkerMetrics),
    SANDBOX_BANK_COMPLETION_DELAY_MS: '0',
    RATE_LIMIT_PER_MINUTE: '100000000',
    RATE_LIMIT_UNAUTHENTICATED_PER_MINUTE: '100000000',
    ...options.env,
  };
  const databaseUrl = process.env.DATABASE_URL ?? `postgres://postgres:postgres@127.0.0.1:${ports.postgres}/gateway`;
  // The sandbox bank in a database of its own on the same server, so that what PostgreSQL counts
  // for the gateway's database (pg_stat_statements, by database) is the gateway's alone: the bank's
  // transactions had been counted as the gateway's begin and commit.
  const bankDatabase = new URL(databaseUrl);
  bankDatabase.pathname = `${bankDatabase.pathname}_sandbox_bank`;
  env.SANDBOX_BANK_DATABASE_URL ??= bankDatabase.toString();
  const temporalAddress = process.env.TEMPORAL_ADDRESS ?? `127.0.0.1:${ports.temporal}`;
  const launcher: ChildProcess = spawn(process.execPath, [join(PROJECT_ROOT, 'src/stack/start.ts')], {
    cwd: PROJECT_ROOT,
    env,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const output: string[] = [];
  await new Promise<void>((resolve, reject) => {
    const timer = setTimeout(
      () => reject(new Error(`the gateway did not start in 180 s:\n${output.join('')}`)),
      180_000,
    );
    const onData = (chunk: Buffer) => {
      output.push(chunk.toString('utf8'));
      if (output.join('').includes('gateway is up')) {
        clearTimeout(timer);
        resolve();
      }
    };
    launcher.stdout!.on('data', onData);
    launcher.stderr!.on('data', (chunk: Buffer) => output.push(chunk.toString('utf8')));
    launcher.once('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`the gateway's launcher exited (${code}):\n${output.join('')}`));
    });
  });
  launcher.stdout!.removeAllListeners('data');
  launcher.stderr!.removeAllListeners('data');
  if (options.output) {
    const forward = options.output;
    launcher.stdout!.on('data', (chunk: Buffer) => forward(chunk.toString('utf8')));
    launcher.stderr!.on('data', (chunk: Buffer) => forward(chunk.toString('utf8')));
  } else {
    launcher.stdout!.resume();
    launcher.stderr!.resume();
  }
  const children = childrenOf(launcher.pid!);
  const pidOf = (script: string) => {
    const child = children.find((candidate) => candidate.cmdline.includes(script));
    if (!child) throw new Error(`no ${script} process under the launcher`);
    return child.pid;
  };
  const pids: Record<string, number> = {
    api: pidOf('src/server.ts'),
    worker: pidOf('worker/main.ts'),
    'webhook-worker': pidOf('worker/webhooks.ts'),
    // Temporal's dev server is one process; PostgreSQL's work is in per-connection backends,
    // which the postmaster's figures would not show, so the phases' sampler leaves it out
    // (cpuMs below adds the backends up).
    ...Object.fromEntries(
      children.filter((child) => child.cmdline.includes('server start-dev')).map((child) => ['temporal', child.pid]),
    ),
  };
  log(
    `gateway up: API ${ports.api}, PostgreSQL ${databaseUrl.replace(/\/\/[^@]*@/, '//')}, Temporal ${temporalAddress}`,
  );
  return {
    apiUrl: `http://127.0.0.1:${ports.api}`,
    bankUrl: `http://127.0.0.1:${ports.bank}`,
    metricsUrl: `http://127.0.0.1:${ports.metrics}/metrics`,
    dataDir,
    launcherPid: launcher.pid!,
    databaseUrl,
    bankDatabaseUrl: env.SANDBOX_BANK_DATABASE_URL,
    temporalAddress,
    pids,
    cpuMs() {
      const used: Record<string, number> = {};
      const add = (name: string, pid: number) => {
        const usage = processUsage(pid);
        if (usage) used[name] = usage.cpuMs;
      };
      for (const [name, pid] of Object.entries(pids)) add(name, pid);
      const named = new Set(Object.values(pids));
      for (const child of descendantsOf(launcher.pid!)) {
        if (named.has(child.pid)) continue;
        if (child.cmdline.includes('sandbox-bank')) add(`sandbox-bank#${child.pid}`, child.pid);
        else if (/^postgres[: ]|\/postgres /.test(child.cmdline)) add(`postgres#${child.pid}`, child.pid);
      }
      return used;
    },
    admin(...args) {
      const out = execFileSync(process.execPath, [join(PROJECT_ROOT, 'src/admin-cli/main.ts'), ...args], {
        cwd: PROJECT_ROOT,
        env: { ...env, DATABASE_URL: databaseUrl, TEMPORAL_ADDRESS: temporalAddress },
        encoding: 'utf8',
      });
      return JSON.parse(out) as unknown;
    },
    adminRun(timeoutMs, ...args) {
      const run = spawnSync(process.execPath, [join(PROJECT_ROOT, 'src/admin-cli/main.ts'), ...args], {
        cwd: PROJECT_ROOT,
        env: { ...env, DATABASE_URL: databaseUrl, TEMPORAL_ADDRESS: temporalAddress },
        encoding: 'utf8',
        timeout: timeoutMs,
        maxBuffer: 256 * 1024 * 1024,
      });
      let json: unknown;
      try {
        json = JSON.parse(run.stdout);
      } catch {
        json = undefined;
      }
      return { code: run.status, json, stderr: run.stderr };
    },
    /**
     * Stops the gateway, then removes this run's state. Bounded: a launcher that has not stopped
     * its processes within two minutes is killed with everything under it.
     */
    async stop() {
      if (launcher.exitCode === null && launcher.signalCode === null) {
        await new Promise<void>((resolve) => {
          const timer = setTimeout(() => {
            for (const { pid } of descendantsOf(launcher.pid!)) {
              try {
                process.kill(pid, 'SIGKILL');
              } catch {
                // gone meanwhile
              }
            }
            launcher.kill('SIGKILL');
          }, 120_000);
          launcher.once('exit', () => {
            clearTimeout(timer);
            resolve();
          });
          launcher.kill('SIGTERM');
        });
      }
      rmSync(dataDir, { recursive: true, force: true });
    },
  };
}
