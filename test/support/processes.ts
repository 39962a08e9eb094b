// The gateway as a deployment runs it: the API, the worker and the webhook worker as three
// processes (`npm run api`, `npm run worker`, `npm run webhook-worker`), with production's settings
// except where a test sets a variable, on a test's database, Temporal server and sandbox bank.
import { type ChildProcess, spawn } from 'node:child_process';
import { join } from 'node:path';
import { PROJECT_ROOT } from '../../src/stack/tools.ts';
import { TEST_CALLBACK_SECRET, TEST_SANDBOX_BANK_API_KEY, TEST_SANDBOX_CONTROL_TOKEN } from './app.ts';
import { eventually } from './eventually.ts';

export interface GatewayProcesses {
  url: string;
  /** Everything a process wrote, by process. */
  output(name: 'api' | 'worker' | 'webhook-worker'): string;
  /** SIGTERM to each, as an orchestrator stops them; their exit codes. */
  stop(): Promise<(number | null)[]>;
  /** SIGKILL to one, as a crash or an OOM kill ends it: nothing of it runs any more when this returns. */
  kill(name: ProcessName): Promise<void>;
  /** Starts them again (after kill), on the same settings; returns once every process is ready. */
  restart(...names: ProcessName[]): Promise<void>;
}

type ProcessName = 'api' | 'worker' | 'webhook-worker';

const SCRIPTS = { api: 'src/server.ts', worker: 'worker/main.ts', 'webhook-worker': 'worker/webhooks.ts' } as const;
const READY = {
  worker: '"msg":"worker running"',
  'webhook-worker': '"msg":"webhook worker running"',
} as const;

export async function startGatewayProcesses(options: {
  databaseUrl: string;
  temporalAddress: string;
  taskQueue: string;
  bankUrl: string;
  port: number;
  env?: Record<string, string>;
}): Promise<GatewayProcesses> {
  // Whatever OTEL_* or worker settings this run inherited, only what the test gives counts.
  const inherited = Object.fromEntries(
    Object.entries(process.env).filter(([name]) => !name.startsWith('OTEL_') && !name.startsWith('WEBHOOK_')),
  );
  const env = {
    ...inherited,
    NODE_ENV: 'test',
    LOG_LEVEL: 'warn',
    HOST: '127.0.0.1',
    PORT: String(options.port),
    DATABASE_URL: options.databaseUrl,
    TEMPORAL_ADDRESS: options.temporalAddress,
    TEMPORAL_TASK_QUEUE: options.taskQueue,
    SANDBOX_BANK_URL: options.bankUrl,
    PROVIDER_CALLBACK_SECRET: TEST_CALLBACK_SECRET,
    // The test sandbox bank's control routes take a token (startSandboxBank): the API sends it.
    SANDBOX_BANK_CONTROL_TOKEN: TEST_SANDBOX_CONTROL_TOKEN,
    SANDBOX_BANK_API_KEY: TEST_SANDBOX_BANK_API_KEY,
    METRICS_PORT: '0',
    WORKER_METRICS_PORT: '0',
    WEBHOOK_WORKER_METRICS_PORT: '0',
    ...options.env,
  };
  const children = new Map<
    keyof typeof SCRIPTS,
    { child: ChildProcess; output: string; exited: Promise<number | null> }
  >();
  const launch = (name: ProcessName, output = '') => {
    const child = spawn(process.execPath, [join(PROJECT_ROOT, SCRIPTS[name])], {
      cwd: PROJECT_ROOT,
      env,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    const entry = {
      child,
      output,
      exited: new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code))),
    };
    for (const stream of [child.stdout, child.stderr]) {
      stream.on('data', (chunk: Buffer) => (entry.output += chunk.toString()));
    }
    children.set(name, entry);
  };
  for (const name of Object.keys(SCRIPTS) as ProcessName[]) launch(name);
  const url = `http://127.0.0.1:${options.port}`;
  const stop = async () => {
    for (const { child } of children.values()) if (child.exitCode === null) child.kill('SIGTERM');
    return Promise.all([...children.values()].map(({ exited }) => exited));
  };
  /** Every process running and ready; `since`: where each one's output of this start begins. */
  const ready = (since: Partial<Record<ProcessName, number>> = {}) =>
    eventually(
      async () => {
        for (const [name, { child, output }] of children) {
          if (child.exitCode !== null || child.signalCode !== null) {
            throw new Error(`${name} exited:\n${output.slice(-3000)}`);
          }
        }
        const api = await fetch(`${url}/health/ready`).catch(() => undefined);
        const started = (name: 'worker' | 'webhook-worker') =>
          children
            .get(name)!
            .output.slice(since[name] ?? 0)
            .includes(READY[name]);
        return api?.status === 200 && started('worker') && started('webhook-worker');
      },
      90_000,
      250,
    );
  try {
    await ready();
  } catch (error) {
    await stop();
    throw error;
  }
  const kill = async (name: ProcessName) => {
    const { child, exited } = children.get(name)!;
    child.kill('SIGKILL');
    await exited;
  };
  const restart = async (...names: ProcessName[]) => {
    const since: Partial<Record<ProcessName, number>> = {};
    for (const name of names) {
      const before = children.get(name)!.output;
      since[name] = before.length;
      launch(name, `${before}\n--- restarted ---\n`);
    }
    await ready(since);
  };
  return { url, output: (name) => children.get(name)!.output, stop, kill, restart };
}
