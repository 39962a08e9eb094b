// The chaos run's generic test bank (test/simulators/generic-bank.ts, docs/connectors/test-bank.md):
// the first live connector of the run's live tenant (Paystack's simulator is the second), as its
// own process beside `npm start`'s launcher (not under it: the launcher knows nothing of live
// connectors, and a deployment's bank is somebody else's process). The run SIGKILLs it and starts
// it again on the same port and data directory, as the launcher restarts the API; its fsync'd
// journal is what lets the restarted bank know every transfer it took. It also makes the bank lose
// its callbacks for a while, plans faults on its calls (lost answers, and the refusals a retry
// would meet: `POST /control/faults`, and `GET /control/faults/met` for what they met), credits the
// bank's virtual accounts through its control routes, and, for the checks, reads the bank's own
// record: `GET /control/callbacks`, `GET /transfers/{reference}`, the settlement statements and the
// journal itself (the only place that lists every transfer the bank took or was offered).
import { randomBytes } from 'node:crypto';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { type SpawnedTestBank, spawnGenericTestBank } from '../simulators/generic-bank.ts';
import { freePort } from '../support/ports.ts';

export interface BankAnswer {
  status: number;
  json: unknown;
}

/** One journal line, as far as the checks read it (test/simulators/generic-bank/bank.ts has them all). */
export type JournalEntry =
  | { kind: 'transfer.attempted'; reference: string }
  | { kind: 'transfer.accepted'; transfer: { request: { reference: string; amount_minor: number } } }
  | { kind: 'account.opened'; account: { accountNumber: string } }
  | { kind: string };

/** A fault planned at the bank (`POST /control/faults`; test/simulators/generic-bank/faults.ts). */
export interface BankFaultPlan {
  fault: '503' | 'html' | 'hang' | 'reset' | 'limit_422' | 'lose_answer';
  count: number;
  route: string;
  only?: 'repeats' | 'taken';
}

/** A fault a call met at the bank (`GET /control/faults/met`). */
export interface BankFaultMet {
  fault: BankFaultPlan['fault'];
  call: string;
  reference: string | null;
}

export interface BankCallback {
  id: string;
  type: 'transfer.completed' | 'virtual_account.credited';
  state: 'queued' | 'delivered' | 'dropped' | 'gave_up';
  attempts: number;
  data: Record<string, unknown>;
}

export class ChaosTestBank {
  readonly port: number;
  readonly url: string;
  /** The run's data directory's `test-bank/`, known once the gateway runs. */
  private dataDir: string | undefined;
  private readonly apiKey: string;
  private readonly webhookSecret: string;
  /** The gateway's `/provider-callbacks/generic`, known once the gateway runs. */
  private callbackUrl: string | undefined;
  private readonly output: (chunk: string) => void;
  private process: SpawnedTestBank | undefined;

  private constructor(port: number, output: (chunk: string) => void) {
    this.port = port;
    this.url = `http://127.0.0.1:${port}`;
    this.output = output;
    // Fresh for each run, never from the seed: they are the deployment's secrets for this bank.
    this.apiKey = randomBytes(24).toString('hex');
    this.webhookSecret = `whsec_${randomBytes(32).toString('base64')}`;
  }

  /**
   * The bank's settings and port, reserved before the gateway starts (the gateway is configured
   * with its URL); it is started once the gateway's API, where it sends callbacks, is known.
   */
  static async plan(output: (chunk: string) => void): Promise<ChaosTestBank> {
    return new ChaosTestBank(await freePort(), output);
  }

  /**
   * What `npm start`'s launcher needs to configure this bank as the live `generic` connector
   * (decisions §13); LIVE_CONNECTORS, which orders the connectors, is the run's to set.
   */
  gatewayEnv(): Record<string, string> {
    return {
      GENERIC_BANK_URL: this.url,
      GENERIC_BANK_API_KEY: this.apiKey,
      GENERIC_BANK_WEBHOOK_SECRET: this.webhookSecret,
      GENERIC_BANK_CAPABILITIES: 'transfers,virtual_accounts',
    };
  }

  /**
   * Starts the bank on its port, calling back to the gateway's API, its journal in `dataDir` (given
   * the first time; after a kill it starts again on the same ones); resolves once it listens.
   */
  async start(first?: { apiUrl: string; dataDir: string }): Promise<void> {
    if (first) {
      this.callbackUrl = `${first.apiUrl}/provider-callbacks/generic`;
      this.dataDir = first.dataDir;
    }
    if (this.callbackUrl === undefined || this.dataDir === undefined) {
      throw new Error('the test bank is started first with the API URL and its data directory');
    }
    this.process = await spawnGenericTestBank({
      apiKey: this.apiKey,
      webhookSecret: this.webhookSecret,
      dataDir: this.dataDir,
      callbackUrl: this.callbackUrl,
      port: this.port,
      // As the chaos run's sandbox bank: transfers settle within a status check's first wait.
      completionDelayMs: 200,
    });
  }

  get pid(): number | undefined {
    return this.process?.pid;
  }

  /** SIGKILL, as a crash: the pid killed (undefined when it was not running). Its output goes to the run's log. */
  async kill(): Promise<number | undefined> {
    const running = this.process;
    if (!running) return undefined;
    this.process = undefined;
    await running.kill();
    this.output(`\n--- generic test bank ${running.pid} (SIGKILL) ---\n${running.output()}\n`);
    return running.pid;
  }

  /** SIGTERM, on the way out of the run. */
  async stop(): Promise<void> {
    const running = this.process;
    if (!running) return;
    this.process = undefined;
    await running.stop();
    this.output(`\n--- generic test bank ${running.pid} (stopped) ---\n${running.output()}\n`);
  }

  /** One call to the bank with its key; throws when no answer came (the bank down, the call cut). */
  async call(method: 'GET' | 'POST' | 'DELETE', path: string, body?: unknown, timeoutMs = 10_000): Promise<BankAnswer> {
    const response = await fetch(`${this.url}${path}`, {
      method,
      headers: {
        authorization: `Bearer ${this.apiKey}`,
        ...(body !== undefined ? { 'content-type': 'application/json' } : {}),
      },
      ...(body !== undefined ? { body: JSON.stringify(body) } : {}),
      signal: AbortSignal.timeout(timeoutMs),
    });
    const text = await response.text();
    let json: unknown;
    try {
      json = text ? JSON.parse(text) : undefined;
    } catch {
      json = text;
    }
    return { status: response.status, json };
  }

  /**
   * The same call until the bank answers it (it may be down between a kill and its restart, or cut
   * the call by dying): the answer and how many tries went unanswered; no answer past the deadline.
   * Control calls are safe to repeat: a credit repeated with its reference is the same credit.
   */
  async until(
    method: 'GET' | 'POST' | 'DELETE',
    path: string,
    body: unknown,
    deadlineMs: number,
    stopped: () => boolean = () => false,
  ): Promise<{ answer: BankAnswer | undefined; lost: number }> {
    const deadline = Date.now() + deadlineMs;
    let lost = 0;
    let wait = 200;
    while (Date.now() < deadline && !stopped()) {
      try {
        return { answer: await this.call(method, path, body), lost };
      } catch {
        lost += 1;
      }
      await new Promise((resolve) => setTimeout(resolve, wait));
      wait = Math.min(2_000, wait * 2);
    }
    return { answer: undefined, lost };
  }

  /** Whether the bank answers its contract's calls (the check after a restart). */
  async ready(): Promise<boolean> {
    try {
      return (await this.call('GET', '/banks', undefined, 2_000)).status === 200;
    } catch {
      return false;
    }
  }

  /** Plans a fault for the bank's next calls; whether the bank answered that it did. */
  async planFault(plan: BankFaultPlan, deadlineMs: number, stopped: () => boolean): Promise<boolean> {
    const { answer } = await this.until('POST', '/control/faults', plan, deadlineMs, stopped);
    return answer?.status === 200;
  }

  /** Forgets every fault still planned; whether the bank answered that it did. */
  async clearFaults(deadlineMs: number, stopped: () => boolean): Promise<boolean> {
    const { answer } = await this.until('DELETE', '/control/faults', undefined, deadlineMs, stopped);
    return answer?.status === 200;
  }

  /** The faults calls met since this bank process started (a restarted bank starts a new record). */
  async faultsMet(deadlineMs: number, stopped: () => boolean): Promise<BankFaultMet[] | undefined> {
    const { answer } = await this.until('GET', '/control/faults/met', undefined, deadlineMs, stopped);
    return answer?.status === 200 ? (answer.json as { met: BankFaultMet[] }).met : undefined;
  }

  /** Every callback the bank queued, with its state (`GET /control/callbacks`). */
  async callbacks(): Promise<{ mode: string; callbacks: BankCallback[] }> {
    const { answer } = await this.until('GET', '/control/callbacks', undefined, 60_000);
    if (answer?.status !== 200) throw new Error(`GET /control/callbacks answered ${answer?.status ?? 'nothing'}`);
    return answer.json as { mode: string; callbacks: BankCallback[] };
  }

  /**
   * The journal's entries, in order. Read from the file, as the restarted bank reads it: the
   * bank has no call that lists every transfer it took, or every reference it was offered and
   * refused after counting the attempt (`3333333333`). A last line cut short is left out.
   */
  journal(): JournalEntry[] {
    if (this.dataDir === undefined) return [];
    const path = join(this.dataDir, 'journal.jsonl');
    if (!existsSync(path)) return [];
    const text = readFileSync(path, 'utf8');
    return text
      .slice(0, text.lastIndexOf('\n') + 1)
      .split('\n')
      .filter((line) => line.trim() !== '')
      .map((line) => JSON.parse(line) as JournalEntry);
  }
}
