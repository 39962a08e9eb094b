// A small bank that speaks the generic HTTP bank contract v1 (decisions §13), faithfully enough to
// test the gateway's `generic` connector against: the contract's routes and errors, the magic
// recipient accounts of §9 (plus 4444444444, refused and not taken), signed Standard Webhooks
// callbacks retried with the same id, a settlement statement per UTC day, and state kept in an
// fsync'd journal in its data directory, so that a bank killed with SIGKILL and started again on
// the same directory still knows every transfer it took. Docs: docs/connectors/test-bank.md.
//
// Three ways to run it:
// - by hand: `node test/simulators/generic-bank.ts --port 4020 --api-key … --webhook-secret whsec_…
//   --callback-url http://127.0.0.1:3000/provider-callbacks/generic --data-dir .data/test-bank`
//   (or `npm run test-bank -- …`); it prints one line when it listens;
// - in a test's own process: `startGenericTestBank(options)`;
// - as a child process a test can SIGKILL: `spawnGenericTestBank(options)`.
import { type ChildProcess, spawn } from 'node:child_process';
import { resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { freePort } from '../support/ports.ts';
import { Bank } from './generic-bank/bank.ts';
import { CallbackSender } from './generic-bank/callbacks.ts';
import { Faults } from './generic-bank/faults.ts';
import { createBankServer } from './generic-bank/server.ts';

export { MAGIC_ACCOUNTS } from './generic-bank/bank.ts';

export interface GenericTestBankOptions {
  /** The bearer key every call must carry (the gateway's GENERIC_BANK_API_KEY). */
  apiKey: string;
  /** `whsec_<base64>`, the gateway's GENERIC_BANK_WEBHOOK_SECRET. */
  webhookSecret: string;
  /** Where the journal lives; a bank started again on it knows what the last one knew. */
  dataDir: string;
  /** Where callbacks go (`<gateway>/provider-callbacks/generic`); without it they wait, queued. */
  callbackUrl?: string | undefined;
  /** Default: a free port from test/support/ports.ts. */
  port?: number | undefined;
  host?: string | undefined;
  /** How long an ordinary transfer takes to settle; default 1000 ms. */
  completionDelayMs?: number | undefined;
  /** The connector name the gateway knows this bank under, given as credits' `provider` in statements; default `generic`. */
  connectorName?: string | undefined;
  /** Wait after a callback's first failed try, doubling after each; default 1000 ms. */
  callbackRetryBaseMs?: number | undefined;
  /** Tries per callback before the bank gives up on it; default 10. */
  callbackMaxAttempts?: number | undefined;
  /** How long one try waits for the gateway's answer; default 5000 ms. */
  callbackTimeoutMs?: number | undefined;
  /**
   * The bank's business clock (value times, statement days); default the real one. Signatures
   * always use the real time, which is what the gateway checks them against.
   */
  now?: (() => Date) | undefined;
  /** Where the bank reports what went wrong (failed callback tries, its own errors); default nowhere. */
  log?: ((line: string) => void) | undefined;
}

export interface GenericTestBank {
  url: string;
  port: number;
  journalPath: string;
  /** Stops as on SIGTERM: no new calls, calls in flight answered (hung ones cut after a grace), sending stopped. */
  stop(): Promise<void>;
  /** Stops as a crash does: every connection cut at once, nothing more written. */
  kill(): Promise<void>;
}

const DEFAULTS = {
  host: '127.0.0.1',
  completionDelayMs: 1000,
  connectorName: 'generic',
  callbackRetryBaseMs: 1000,
  callbackMaxAttempts: 10,
  callbackTimeoutMs: 5000,
} as const;

/** How long `stop()` lets calls in flight finish before cutting them. */
const STOP_GRACE_MS = 2000;

export async function startGenericTestBank(options: GenericTestBankOptions): Promise<GenericTestBank> {
  if (!options.apiKey) throw new Error('the test bank needs an API key');
  if (!options.webhookSecret.startsWith('whsec_')) throw new Error('the webhook secret must be whsec_<base64>');
  const log = options.log ?? (() => {});
  const port = options.port ?? (await freePort());
  const host = options.host ?? DEFAULTS.host;
  const bank = new Bank({
    dataDir: options.dataDir,
    completionDelayMs: options.completionDelayMs ?? DEFAULTS.completionDelayMs,
    connectorName: options.connectorName ?? DEFAULTS.connectorName,
    now: options.now ?? (() => new Date()),
  });
  let sender: CallbackSender;
  try {
    sender = new CallbackSender({
      bank,
      callbackUrl: options.callbackUrl,
      webhookSecret: options.webhookSecret,
      retryBaseMs: options.callbackRetryBaseMs ?? DEFAULTS.callbackRetryBaseMs,
      maxAttempts: options.callbackMaxAttempts ?? DEFAULTS.callbackMaxAttempts,
      timeoutMs: options.callbackTimeoutMs ?? DEFAULTS.callbackTimeoutMs,
      log,
    });
  } catch (error) {
    bank.stop();
    throw new Error('the webhook secret must be whsec_<base64>', { cause: error });
  }
  const { server, sockets } = createBankServer({ bank, faults: new Faults(), apiKey: options.apiKey, log });
  try {
    await new Promise<void>((resolveListen, reject) => {
      server.once('error', reject);
      server.listen(port, host, () => resolveListen());
    });
  } catch (error) {
    bank.stop();
    throw error;
  }
  bank.start();
  sender.start();

  let ended: Promise<void> | undefined;
  const closed = () => new Promise<void>((resolveClose) => server.close(() => resolveClose()));
  return {
    url: `http://${host.includes(':') ? `[${host}]` : host}:${port}`,
    port,
    journalPath: bank.journalPath,
    stop() {
      ended ??= (async () => {
        const done = closed();
        server.closeIdleConnections();
        const grace = setTimeout(() => {
          for (const socket of sockets) socket.destroy();
        }, STOP_GRACE_MS);
        await done;
        clearTimeout(grace);
        await sender.stop();
        bank.stop();
      })();
      return ended;
    },
    kill() {
      ended ??= (async () => {
        const done = closed();
        for (const socket of sockets) socket.destroy();
        await sender.stop();
        bank.stop();
        await done;
      })();
      return ended;
    },
  };
}

export interface SpawnedTestBank {
  url: string;
  port: number;
  pid: number;
  /** Everything the process wrote to stdout and stderr. */
  output(): string;
  /** SIGTERM; resolves with the exit code. */
  stop(): Promise<number | null>;
  /** SIGKILL; resolves when the process is gone. */
  kill(): Promise<void>;
}

const ENTRY = fileURLToPath(import.meta.url);
const READY_LINE = 'generic test bank listening on ';

/** Starts the bank as its own process (as the chaos run and a person run it); resolves once it listens. */
export async function spawnGenericTestBank(
  options: Omit<GenericTestBankOptions, 'now' | 'log'>,
  startTimeoutMs = 20_000,
): Promise<SpawnedTestBank> {
  const port = options.port ?? (await freePort());
  const flags: [string, string | number | undefined][] = [
    ['--port', port],
    ['--host', options.host],
    ['--data-dir', options.dataDir],
    ['--callback-url', options.callbackUrl],
    ['--completion-delay-ms', options.completionDelayMs],
    ['--connector-name', options.connectorName],
    ['--callback-retry-ms', options.callbackRetryBaseMs],
    ['--callback-max-attempts', options.callbackMaxAttempts],
    ['--callback-timeout-ms', options.callbackTimeoutMs],
  ];
  const args = flags.flatMap(([flag, value]) => (value === undefined ? [] : [flag, String(value)]));
  // Secrets through the environment, as a deployment passes them: argv is readable by anyone in `ps`.
  const child: ChildProcess = spawn(process.execPath, [ENTRY, ...args], {
    env: { ...process.env, GENERIC_BANK_API_KEY: options.apiKey, GENERIC_BANK_WEBHOOK_SECRET: options.webhookSecret },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  const exited = new Promise<number | null>((resolveExit) => child.once('exit', (code) => resolveExit(code)));
  const url = await new Promise<string>((resolveReady, reject) => {
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error(`the test bank did not listen within ${startTimeoutMs} ms:\n${output}`));
    }, startTimeoutMs);
    const read = (chunk: Buffer) => {
      output += chunk.toString();
      const line = output.split('\n').find((candidate) => candidate.startsWith(READY_LINE));
      if (!line) return;
      clearTimeout(timer);
      resolveReady(line.slice(READY_LINE.length).split(' ')[0]!);
    };
    child.stdout!.on('data', read);
    child.stderr!.on('data', read);
    void exited.then((code) => {
      clearTimeout(timer);
      reject(new Error(`the test bank exited (${code}) before listening:\n${output}`));
    });
  });
  return {
    url,
    port,
    pid: child.pid!,
    output: () => output,
    stop() {
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGTERM');
      return exited;
    },
    async kill() {
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
      await exited;
    },
  };
}

const USAGE = `usage: node test/simulators/generic-bank.ts [options]
  --port <n>                   default 4020
  --host <address>             default 127.0.0.1
  --api-key <key>              or GENERIC_BANK_API_KEY
  --webhook-secret <whsec_…>   or GENERIC_BANK_WEBHOOK_SECRET
  --callback-url <url>         default http://127.0.0.1:3000/provider-callbacks/generic
  --data-dir <dir>             default .data/test-bank
  --completion-delay-ms <n>    default 1000
  --connector-name <name>      default generic (credits' provider in statements)
  --callback-retry-ms <n>      first wait before a callback is tried again, default 1000
  --callback-max-attempts <n>  default 10
  --callback-timeout-ms <n>    default 5000`;

async function main(): Promise<void> {
  let values;
  try {
    ({ values } = parseArgs({
      options: {
        port: { type: 'string', default: '4020' },
        host: { type: 'string', default: DEFAULTS.host },
        'api-key': { type: 'string' },
        'webhook-secret': { type: 'string' },
        'callback-url': { type: 'string', default: 'http://127.0.0.1:3000/provider-callbacks/generic' },
        'data-dir': { type: 'string', default: '.data/test-bank' },
        'completion-delay-ms': { type: 'string', default: String(DEFAULTS.completionDelayMs) },
        'connector-name': { type: 'string', default: DEFAULTS.connectorName },
        'callback-retry-ms': { type: 'string', default: String(DEFAULTS.callbackRetryBaseMs) },
        'callback-max-attempts': { type: 'string', default: String(DEFAULTS.callbackMaxAttempts) },
        'callback-timeout-ms': { type: 'string', default: String(DEFAULTS.callbackTimeoutMs) },
        help: { type: 'boolean', default: false },
      },
    }));
  } catch (error) {
    console.error(`${error instanceof Error ? error.message : String(error)}\n${USAGE}`);
    process.exit(2);
  }
  if (values.help) {
    console.log(USAGE);
    return;
  }
  const fail = (line: string): never => {
    console.error(`generic test bank: ${line}`);
    process.exit(2);
  };
  const count = (name: keyof typeof values, min: number): number => {
    const value = Number(values[name]);
    if (!Number.isInteger(value) || value < min) fail(`--${name} must be a whole number of at least ${min}`);
    return value;
  };
  const apiKey =
    values['api-key'] ?? process.env.GENERIC_BANK_API_KEY ?? fail('--api-key (or GENERIC_BANK_API_KEY) is required');
  const webhookSecret =
    values['webhook-secret'] ??
    process.env.GENERIC_BANK_WEBHOOK_SECRET ??
    fail('--webhook-secret (or GENERIC_BANK_WEBHOOK_SECRET) is required');
  const dataDir = resolve(values['data-dir']);
  const port = count('port', 1);
  const settings = {
    completionDelayMs: count('completion-delay-ms', 0),
    callbackRetryBaseMs: count('callback-retry-ms', 1),
    callbackMaxAttempts: count('callback-max-attempts', 1),
    callbackTimeoutMs: count('callback-timeout-ms', 1),
  };
  let bank: GenericTestBank;
  try {
    bank = await startGenericTestBank({
      apiKey,
      webhookSecret,
      dataDir,
      callbackUrl: values['callback-url'],
      port,
      host: values.host,
      connectorName: values['connector-name'],
      ...settings,
      log: (line) => console.error(`generic test bank: ${line}`),
    });
  } catch (error) {
    fail(error instanceof Error ? error.message : String(error));
    return;
  }
  let stopping = false;
  const shutdown = () => {
    if (stopping) return;
    stopping = true;
    void bank.stop().finally(() => process.exit(0));
  };
  process.once('SIGINT', shutdown);
  process.once('SIGTERM', shutdown);
  console.log(`${READY_LINE}${bank.url} (journal ${bank.journalPath}; callbacks to ${values['callback-url']})`);
}

if (import.meta.main) await main();
