// `npm run chaos`: a whole-stack fault run on the embedded topology (issue #14 item 5). It starts
// `npm start`'s launcher on free ports (test/bench/stack.ts, with STACK_CHILD_EXIT=restart) with two
// live connectors (LIVE_CONNECTORS=generic,paystack, decisions §13): the generic test bank
// (test/simulators/generic-bank.ts) first, as its own process beside the launcher, and the Paystack
// simulator (test/simulators/paystack.ts) second, in this process, its transfers ending on their
// own by the same magic-account fates as the test bank's. It drives N mixed operations over the
// public REST API for two sandbox tenants (transfers to every magic account of the sandbox bank,
// card lock/unlock/fund/jit-fund, virtual-account credits with duplicates and conflicts, reads)
// and one live tenant (sk_live_ key, live wallet funded by the operator CLI: transfers to every
// magic account, which go to the test bank, or to Paystack when the test bank is down for their
// name enquiry; credits paid into its virtual accounts at the test bank, again with duplicates and
// conflicts; reads), while a webhook receiver on 127.0.0.1 fails, hangs, throttles and (on one
// endpoint) answers 410. Meanwhile it SIGKILLs the API, the worker, the sandbox bank and the test
// bank (the launcher restarts its own; the run restarts the test bank on the same port and
// journal), pauses PostgreSQL and Temporal (SIGSTOP/SIGCONT), makes the test bank lose its
// callbacks for a while, so that live transfers must be resolved by status queries, and opens
// "lost answers" windows: each live bank takes a submission and drops the connection before
// answering, with a "refused, not taken" planned behind it for a retry (the test bank's 422
// limit_exceeded, Paystack's duplicate reference in words the connector does not know), which a
// gateway taking it as proof would pass to the other connector: paid twice (decisions §17). Then
// it waits (bounded) for the gateway to settle and checks the invariants against its own record of
// acknowledged operations and against each bank's own record: the sandbox bank's tables, the test
// bank's journal, `GET /transfers/{reference}`, statements and callbacks, and the Paystack
// simulator's transfers and the references it was sent. Among them: no transfer was ever
// submitted to two connectors, and every transfer whose answer was lost ended as the bank that
// holds it says. Exit 1 on any breach. Every wait has a deadline, and what it started is stopped
// on every way out (Ctrl-C included).
import { randomBytes } from 'node:crypto';
import { appendFileSync, mkdirSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { parseArgs } from 'node:util';
import { Client as TemporalClient, Connection } from '@temporalio/client';
import pg from 'pg';
import { Webhook } from 'standardwebhooks';
import { PROJECT_ROOT } from '../../src/stack/tools.ts';
import { transferFee } from '../../src/transfers/domain.ts';
import { type BenchStack, startBenchStack } from '../bench/stack.ts';
import { INBOUND_CREDIT_WORKFLOW_TYPE } from '../../workflows/workflow-names.ts';
import { INSTITUTIONS } from '../simulators/generic-bank/banks.ts';
import { type PaystackSimulator, startPaystackSimulator } from '../simulators/paystack.ts';
import { type ReceivedWebhook, type Receiver, startReceiver } from '../support/receiver.ts';
import { Faults, type Killable, type Pausable } from './faults.ts';
import { type Answer, Client, type RequestSpec, documentedStatuses, errorCode, recorder } from './http.ts';
import { type Prng, prng } from './prng.ts';
import { type BankCallback, ChaosTestBank } from './test-bank.ts';

const USAGE = `usage: npm run chaos -- [--ops 10000] [--seed N] [--concurrency 6] [--faults N] [--settle-timeout SECONDS]`;

const { values: flags } = parseArgs({
  options: {
    ops: { type: 'string', default: '10000' },
    seed: { type: 'string' },
    concurrency: { type: 'string', default: '6' },
    faults: { type: 'string' },
    'settle-timeout': { type: 'string' },
    help: { type: 'boolean', default: false },
  },
  strict: true,
});
if (flags.help) {
  console.log(USAGE);
  process.exit(0);
}
const positiveInt = (name: string, value: string | undefined): number => {
  const parsed = Number(value);
  if (!Number.isInteger(parsed) || parsed < 1) {
    console.error(`--${name} must be a whole number of at least 1\n${USAGE}`);
    process.exit(2);
  }
  return parsed;
};
const OPS = positiveInt('ops', flags.ops);
const SEED = flags.seed === undefined ? Math.floor(Math.random() * 2 ** 31) : positiveInt('seed', flags.seed);
const CONCURRENCY = positiveInt('concurrency', flags.concurrency);
// A few faults even in a short run (each of the 8 kinds once), then one per 100 operations.
const FAULTS = flags.faults === undefined ? Math.max(8, Math.round(OPS / 100)) : positiveInt('faults', flags.faults);
const SETTLE_MS =
  1_000 *
  (flags['settle-timeout'] ? positiveInt('settle-timeout', flags['settle-timeout']) : 180 + Math.round(OPS * 0.06));
/** How long one operation may take to get an answer that settles it, retries included. */
const OP_DEADLINE_MS = 180_000;

const started = Date.now();
const elapsed = () => `${Math.round((Date.now() - started) / 1000)} s`;
const say = (line: string) => process.stdout.write(`[chaos] ${line}\n`);
const logFile = join(PROJECT_ROOT, '.data', `chaos-${SEED}.log`);

// ---------------------------------------------------------------------------------------------
// The plan: every operation and every fault comes from the seed.

// The same accounts mean the same at every bank (decisions §9; the Paystack simulator's
// `magicFates`), but for `4444444444`: the sandbox bank throttles it (429 on every submission, so it
// stays pending); the test bank refuses it and says it did not take it (422), and Paystack cannot
// resolve its name (503, so it is never sent there, whether as the first connector or the next),
// so a live transfer to it fails with nothing taken anywhere.
const MAGIC = {
  ordinary: '',
  invalid: '0000000000',
  failsAtBank: '1111111111',
  neverConfirmed: '2222222222',
  flaky: '3333333333',
  throttled: '4444444444',
} as const;
type Recipient = keyof typeof MAGIC;
type Mode = 'test' | 'live';
const BANK_CODES = ['044', '058', '221', '023', '030', '068', '050', '301', '232', '070', '082', '011', '057', '033'];
// A live key's bank codes are the test bank's (its `GET /banks`, through the gateway).
const LIVE_BANK_CODES = BANK_CODES.filter((code) => INSTITUTIONS.some((bank) => bank.code === code));

/** How a transfer to `recipient` ends in the books: `pending` ones are stuck by design. */
function fateOf(mode: Mode, recipient: Recipient): 'successful' | 'failed' | 'pending' {
  if (recipient === 'failsAtBank') return 'failed';
  if (recipient === 'neverConfirmed') return 'pending';
  if (recipient === 'throttled') return mode === 'live' ? 'failed' : 'pending';
  return 'successful';
}

type Op =
  | {
      kind: 'transfer';
      tenant: number;
      reference: string;
      amount: number;
      recipient: Recipient;
      account: string;
      bank: string;
      withKey: boolean;
    }
  | { kind: 'lock' | 'unlock'; tenant: number; card: number; key: string }
  | { kind: 'fund' | 'jit-fund'; tenant: number; card: number; key: string; amount: number }
  | {
      kind: 'credit' | 'credit-duplicate' | 'credit-conflict';
      tenant: number;
      va: number;
      reference: string;
      amount: number;
    }
  | { kind: 'read'; tenant: number; what: 'wallet' | 'transfers' | 'transfer' | 'card-balance' | 'events' }
  | {
      kind: 'bulk';
      tenant: number;
      reference: string;
      atomic: boolean;
      items: { amount: number; recipient: BulkRecipient; account: string; bank: string }[];
    };

/** A bulk item's recipients: those whose transfers end (a batch completes only when all of them have). */
type BulkRecipient = 'ordinary' | 'invalid' | 'failsAtBank' | 'flaky';

// The live tenant has no cards (no live connector serves them) and no webhook endpoints: a live
// key's endpoints must be https at a public address (decisions §12), which a run on 127.0.0.1
// cannot offer. Its events are checked through the API instead.
const TENANTS: { name: string; mode: Mode; cards: number; vas: number; share: number }[] = [
  { name: 'chaos-a', mode: 'test', cards: 4, vas: 3, share: 64 },
  { name: 'chaos-b', mode: 'test', cards: 2, vas: 1, share: 16 },
  { name: 'chaos-live', mode: 'live', cards: 0, vas: 2, share: 20 },
];

function plan(random: Prng): Op[] {
  const ops: Op[] = [];
  // Per tenant: a duplicate or a conflict repeats one of its own tenant's credits.
  const credits: { tenant: number; va: number; reference: string; amount: number }[][] = TENANTS.map(() => []);
  const shares = Object.fromEntries(TENANTS.map((spec, index) => [String(index), spec.share]));
  for (let i = 0; i < OPS; i += 1) {
    const tenant = Number(random.weighted(shares));
    const spec = TENANTS[tenant]!;
    const live = spec.mode === 'live';
    const kind = live
      ? random.weighted({
          transfer: 50,
          credit: 20,
          'credit-duplicate': 8,
          'credit-conflict': 2,
          read: 20,
        })
      : random.weighted({
          transfer: 40,
          lock: 5,
          unlock: 5,
          fund: 7,
          'jit-fund': 7,
          credit: 15,
          'credit-duplicate': 5,
          'credit-conflict': 1,
          read: 15,
          bulk: 3,
        });
    const key = `chaos-${SEED}-${i}`;
    if (kind === 'transfer') {
      const recipient = random.weighted<Recipient>(
        live
          ? { ordinary: 58, invalid: 5, failsAtBank: 10, neverConfirmed: 6, flaky: 10, throttled: 11 }
          : { ordinary: 64, invalid: 6, failsAtBank: 8, neverConfirmed: 6, flaky: 10, throttled: 6 },
      );
      const tier = random.weighted({ low: 70, mid: 25, high: 5 });
      const amount =
        tier === 'low'
          ? random.int(100, 500_000)
          : tier === 'mid'
            ? random.int(500_001, 5_000_000)
            : random.int(5_000_001, 20_000_000);
      const account = recipient === 'ordinary' ? String(random.int(1_000_000_000, 1_099_999_999)) : MAGIC[recipient];
      ops.push({
        kind,
        tenant,
        reference: key,
        amount,
        recipient,
        account,
        bank: random.pick(live ? LIVE_BANK_CODES : BANK_CODES),
        withKey: random.chance(0.5),
      });
    } else if (kind === 'bulk') {
      ops.push({
        kind,
        tenant,
        reference: key,
        atomic: random.chance(0.3),
        items: Array.from({ length: random.int(2, 6) }, () => {
          const recipient = random.weighted<BulkRecipient>({ ordinary: 75, invalid: 8, failsAtBank: 10, flaky: 7 });
          return {
            amount: random.int(100, 500_000),
            recipient,
            account: recipient === 'ordinary' ? String(random.int(1_000_000_000, 1_099_999_999)) : MAGIC[recipient],
            bank: random.pick(BANK_CODES),
          };
        }),
      });
    } else if (kind === 'lock' || kind === 'unlock') {
      ops.push({ kind, tenant, card: random.int(0, spec.cards - 1), key });
    } else if (kind === 'fund' || kind === 'jit-fund') {
      ops.push({ kind, tenant, card: random.int(0, spec.cards - 1), key, amount: random.int(100, 50_000) });
    } else if (kind === 'credit' || credits[tenant]!.length === 0) {
      const credit = { tenant, va: random.int(0, spec.vas - 1), reference: key, amount: random.int(1, 1_000_000) };
      credits[tenant]!.push(credit);
      ops.push({ kind: 'credit', ...credit });
    } else if (kind === 'credit-duplicate') {
      ops.push({ kind, ...random.pick(credits[tenant]!) });
    } else if (kind === 'credit-conflict') {
      const earlier = random.pick(credits[tenant]!);
      ops.push({ kind, ...earlier, amount: earlier.amount + random.int(1, 1_000) });
    } else {
      ops.push({
        kind: 'read',
        tenant,
        what: random.pick(
          spec.cards
            ? (['wallet', 'transfers', 'transfer', 'card-balance', 'events'] as const)
            : (['wallet', 'transfers', 'transfer', 'events'] as const),
        ),
      });
    }
  }
  return ops;
}

// The test bank is no process of the launcher's: the run kills it and starts it again itself, and
// makes it lose its callbacks (`POST /control/callbacks {mode: "drop"}`, then `deliver`). Lost
// answers are planned at both live banks (`POST /control/faults` at the test bank, `failNext` at
// the Paystack simulator).
type FaultKind =
  `kill ${Killable}` | `pause ${Pausable}` | 'kill test-bank' | 'lose test-bank-callbacks' | 'lose answers';
const FAULT_KINDS: FaultKind[] = [
  'kill api',
  'kill worker',
  'kill sandbox-bank',
  'kill test-bank',
  'pause postgres',
  'pause temporal',
  'lose test-bank-callbacks',
  'lose answers',
];

interface PlannedFault {
  at: number;
  kind: FaultKind;
  /**
   * How long the fault lasts: a pause, the callback-loss window, the test bank's time down; for
   * lost answers, the most the window waits for its submissions.
   */
  ms: number;
  /** Lost answers: how many submissions the test bank takes and loses the answer to; 0 for the rest. */
  count: number;
}

/**
 * How long a lost-answers window stays open after its last lost answer, with the refusals planned
 * for a retry: a gateway that sent a lost submission again would do so within seconds (an activity
 * retried after 1 s, 2 s, 4 s).
 */
const RETRY_TAIL_MS = 10_000;

/** How long a fault lasts, by kind (0 for a kill the launcher undoes by itself). */
function durationOf(random: Prng, kind: FaultKind): number {
  if (kind.startsWith('pause ')) return random.int(1_500, 5_000);
  // Long enough for a status query's first wait (15 s) to fall inside the window or just after it.
  if (kind === 'lose test-bank-callbacks') return random.int(6_000, 15_000);
  if (kind === 'kill test-bank') return random.int(500, 3_000);
  // Long enough for a few live submissions even on a loaded machine (about one every 10 s); it
  // closes as soon as its answers are lost.
  if (kind === 'lose answers') return random.int(30_000, 60_000);
  return 0;
}

function faultPlan(random: Prng): PlannedFault[] {
  const kinds: FaultKind[] = [...FAULT_KINDS];
  // Every kind once, in a random order, then random kinds.
  for (let i = kinds.length - 1; i > 0; i -= 1) {
    const j = random.int(0, i);
    [kinds[i], kinds[j]] = [kinds[j]!, kinds[i]!];
  }
  while (kinds.length < FAULTS) kinds.push(random.pick(FAULT_KINDS));
  const at = kinds
    .map(() => random.int(Math.floor(OPS * 0.05), Math.max(Math.floor(OPS * 0.05), Math.floor(OPS * 0.85))))
    .sort((a, b) => a - b);
  return kinds.slice(0, FAULTS).map((kind, i) => ({
    at: at[i]!,
    kind,
    ms: durationOf(random, kind),
    count: kind === 'lose answers' ? random.int(1, 3) : 0,
  }));
}

// ---------------------------------------------------------------------------------------------
// What the run saw.

interface Tenant {
  name: string;
  mode: Mode;
  /** The id of the mode's own world (decisions §16): what its transfers' workflow ids carry. */
  id: string;
  key: string;
  funding: number;
  cards: { id: string; locked: boolean }[];
  vas: string[];
  /** The virtual accounts' numbers, where the live tenant's are paid into at the test bank. */
  vaNumbers: string[];
  endpoints: { path: string; id: string; secret: string; events: string[]; mayGo: boolean }[];
}

interface AckedTransfer {
  tenant: number;
  reference: string;
  id: string;
  amount: number;
  fee: number;
  recipient: Recipient;
  lostAnswers: number;
}

interface AckedFunding {
  tenant: number;
  card: number;
  key: string;
  fundingId: string;
  amount: number;
  expected: 'succeeded' | 'failed';
}

/** An acknowledged batch (202 or 200): its items are resolved into transfers once the gateway has settled. */
interface AckedBatch {
  tenant: number;
  id: string;
  op: Extract<Op, { kind: 'bulk' }>;
}

const seen = {
  batches: [] as AckedBatch[],
  opsDone: 0,
  opsStarted: 0,
  byKind: new Map<string, Map<string, number>>(),
  transfers: [] as AckedTransfer[],
  refused: [] as { op: Op; status: number; code: string | undefined }[],
  unexpected: [] as { op: Op; status: number; body: string }[],
  unresolved: [] as Op[],
  fundings: [] as AckedFunding[],
  /**
   * `${tenant}|${va}|${reference}` → the amounts answered 202 (by the gateway's sandbox credit
   * route, or for the live tenant by the test bank's control route, which also names the bank's
   * `transaction_reference` for the credit).
   */
  credits: new Map<
    string,
    {
      tenant: number;
      va: number;
      /** Amounts answered 202 (the first and every repeat of the amount the bank took). */
      amounts: number[];
      /**
       * Amounts answered 409: another amount than the one the bank took under this reference. Which
       * of the original and its conflict the bank took is the order they reached it (they may be in
       * flight together), so a repeat of the original's amount may be refused too; judged at the end.
       */
      refused: number[];
      transactionReference?: string;
    }
  >(),
  kills: new Map<string, number>(),
  pauses: new Map<string, { count: number; ms: number }>(),
  /** The test bank's callback-loss windows. */
  callbackLoss: { count: 0, ms: 0 },
  /** The lost-answers windows. */
  lossWindows: { count: 0, ms: 0 },
  /** Submissions a bank took and then dropped the connection of, by a planned fault (references as sent). */
  answersLost: [] as { bank: 'generic' | 'paystack'; reference: string }[],
  /** Submissions that met a refusal planned for a retry of a lost one: none, unless the gateway sent one again. */
  retriesRefused: [] as { bank: 'generic' | 'paystack'; fault: string; reference: string }[],
  /** Live name enquiries the test bank answered 503 in those windows (sending their transfers to Paystack). */
  enquiriesRefused: 0,
  faultFailures: [] as string[],
  receiverAnswers: new Map<string, number>(),
  goneAnswered: new Set<string>(),
};

function tally(kind: string, outcome: string): void {
  const outcomes = seen.byKind.get(kind) ?? new Map<string, number>();
  outcomes.set(outcome, (outcomes.get(outcome) ?? 0) + 1);
  seen.byKind.set(kind, outcomes);
}

// Signatures are verified as requests arrive (a Standard Webhooks timestamp is good for 5 minutes);
// a request that comes before its endpoint's secret is known waits for it.
const secrets = new Map<string, string>();
const verdicts = new Map<ReceivedWebhook, { event: { id: string; type: string } } | { error: string }>();
const unverified: ReceivedWebhook[] = [];

function verifyOnArrival(request: ReceivedWebhook): void {
  const secret = secrets.get(request.path);
  if (!secret) {
    unverified.push(request);
    return;
  }
  try {
    const event = new Webhook(secret).verify(request.body, request.headers as Record<string, string>) as {
      id: string;
      type: string;
    };
    verdicts.set(request, { event });
  } catch (error) {
    verdicts.set(request, { error: error instanceof Error ? error.message : String(error) });
  }
}

function secretKnown(path: string, secret: string): void {
  secrets.set(path, secret);
  for (const request of unverified.splice(0)) verifyOnArrival(request);
}

// ---------------------------------------------------------------------------------------------
// The run.

let stack: BenchStack | undefined;
let receiver: Receiver | undefined;
let faults: Faults | undefined;
let testBank: ChaosTestBank | undefined;
let paystack: PaystackSimulator | undefined;
let stopping = false;
let cleaned: Promise<void> | undefined;

async function cleanup(): Promise<void> {
  cleaned ??= (async () => {
    stopping = true;
    faults?.resumeAll();
    await receiver?.close().catch(() => {});
    // Before the stack, whose stop removes the data directory the bank's journal is in.
    await testBank?.stop().catch((error: unknown) => say(`stopping the test bank failed: ${String(error)}`));
    await paystack?.close().catch((error: unknown) => say(`stopping the Paystack simulator failed: ${String(error)}`));
    if (stack) {
      say('stopping the stack…');
      await stack.stop().catch((error: unknown) => say(`stopping the stack failed: ${String(error)}`));
    }
  })();
  return cleaned;
}

for (const signal of ['SIGINT', 'SIGTERM'] as const) {
  process.on(signal, () => {
    say(`${signal}: stopping`);
    void cleanup().then(() => process.exit(130));
  });
}

async function main(): Promise<boolean> {
  say(
    `seed ${SEED}, ${OPS} operations, ${CONCURRENCY} at a time, ${FAULTS} faults (replay: --seed ${SEED} --ops ${OPS})`,
  );
  const random = prng(SEED);
  const ops = plan(random);
  const faultsPlanned = faultPlan(random);
  const receiverRandom = prng(SEED ^ 0x5eed);

  receiver = await startReceiver({
    answer(request) {
      verifyOnArrival(request);
      const mayGo = request.path === '/a2';
      const choice = receiverRandom.weighted({
        ok: 55,
        fail: 13,
        unavailable: 5,
        throttle: 12,
        hang: 10,
        gone: mayGo ? 0.6 : 0,
      });
      seen.receiverAnswers.set(choice, (seen.receiverAnswers.get(choice) ?? 0) + 1);
      if (choice === 'hang') return 'hang';
      if (choice === 'gone') seen.goneAnswered.add(request.path);
      const status = { ok: 200, fail: 500, unavailable: 503, throttle: 429, gone: 410 }[choice];
      return {
        status,
        body: String(status),
        ...(status === 429 || status === 503 ? { headers: { 'retry-after': '1' } } : {}),
      };
    },
  });
  mkdirSync(dirname(logFile), { recursive: true });
  writeFileSync(logFile, '');
  // The bank's port and secrets first, for the gateway's settings; the bank itself once the
  // gateway's API (its callback URL) and the run's data directory (its journal's home) exist.
  const bank = await ChaosTestBank.plan((chunk) => appendFileSync(logFile, chunk));
  // Paystack's simulator listens at once (its webhooks go nowhere until the gateway's API is known).
  // Its bank list holds the test bank's banks too: either connector's list may answer the bank
  // code's check, and either's name enquiry may take a transfer. Its transfers end as the test
  // bank's do, as soon (fateOf holds at both).
  paystack = await startPaystackSimulator({
    secretKey: `sk_test_${randomBytes(24).toString('hex')}`,
    extraBanks: INSTITUTIONS,
    magicFates: { finishAfterMs: 200 },
  });
  stack = await startBenchStack(say, {
    name: 'chaos',
    env: {
      LOG_LEVEL: 'warn',
      STACK_CHILD_EXIT: 'restart',
      SANDBOX_BANK_COMPLETION_DELAY_MS: '200',
      SANDBOX_BANK_HANG_MS: '8000',
      WEBHOOK_RETRY_SCHEDULE: '0s,1s,2s,3s,4s,5s,5s,5s,5s,5s',
      WEBHOOK_TIMEOUT_MS: '3000',
      LIVE_CONNECTORS: 'generic,paystack',
      ...bank.gatewayEnv(),
      PAYSTACK_SECRET_KEY: paystack.secretKey,
      PAYSTACK_BASE_URL: paystack.url,
    },
    output: (chunk) => appendFileSync(logFile, chunk),
  });
  testBank = bank;
  await bank.start({ apiUrl: stack.apiUrl, dataDir: join(stack.dataDir, 'test-bank') });
  paystack.webhookUrl = `${stack.apiUrl}/provider-callbacks/paystack`;
  say(
    `live connectors: generic test bank on ${bank.url} (journal in the run's data directory), then the Paystack simulator on ${paystack.url}`,
  );
  faults = new Faults(stack.launcherPid);
  const client = new Client(stack.apiUrl, recorder(), await documentedStatuses(stack.apiUrl));
  const tenants = await setUp(stack, client);

  const progress = setInterval(() => {
    const kills = [...seen.kills.values()].reduce((a, b) => a + b, 0);
    const pauses = [...seen.pauses.values()].reduce((a, b) => a + b.count, 0);
    const answers503 = [...client.record.answers.values()].reduce((sum, byStatus) => sum + (byStatus.get(503) ?? 0), 0);
    say(
      `${elapsed()}: ${seen.opsDone}/${OPS} ops, ${kills} kills, ${pauses} pauses, ${seen.callbackLoss.count} callback losses, ${seen.answersLost.length} answers lost, ` +
        `${client.record.connectionErrors} connection errors, ${client.record.timeouts} timeouts, ${answers503} × 503, ` +
        `${seen.unexpected.length + seen.unresolved.length} errors, ${receiver!.received.length} webhooks received`,
    );
  }, 5_000);

  try {
    const monkey = runFaults(faultsPlanned);
    await runOps(ops, tenants, client);
    await monkey;
  } finally {
    faults.resumeAll();
  }
  if (stopping) {
    // Ctrl-C: the stack is being stopped; nothing to settle or check.
    clearInterval(progress);
    return false;
  }
  say(
    `${elapsed()}: all ${OPS} operations answered or given up; waiting for the gateway to settle (at most ${SETTLE_MS / 1000} s)`,
  );
  const settled = await settle(tenants, client);
  clearInterval(progress);
  await resolveBatches(tenants, client);
  say(`${elapsed()}: ${settled.length ? `not settled: ${settled.join('; ')}` : 'settled'}; checking`);
  const results = await check(tenants, client);
  summary(client, results, faultsPlanned.length);
  return results.every((result) => result.ok);
}

async function setUp(running: BenchStack, client: Client): Promise<Tenant[]> {
  const tenants: Tenant[] = [];
  const secretRandom = prng(SEED ^ 0xc0ffee);
  const admin = (...args: string[]): Record<string, unknown> => {
    const run = running.adminRun(120_000, ...args);
    if (run.code !== 0)
      throw new Error(`set-up: admin ${args.slice(0, 2).join(' ')} exited ${run.code}: ${run.stderr.slice(0, 500)}`);
    return run.json as Record<string, unknown>;
  };
  for (const [index, spec] of TENANTS.entries()) {
    const funding = 100_000_000_000;
    const live = spec.mode === 'live';
    // A sandbox tenant's wallet is funded as it is made; a live wallet only by the audited
    // operator command, once the tenant's first live key has opened its live mode (decisions §16).
    const created = admin(
      'tenant',
      'create',
      '--name',
      `${spec.name}-${SEED}`,
      ...(live ? [] : ['--wallet-minor', String(funding)]),
      '--daily-limit-minor',
      String(funding),
    ) as { tenant_id: string; api_key: string };
    let key = created.api_key;
    let id = created.tenant_id;
    if (live) {
      const issued = admin('key', 'create', '--tenant', created.tenant_id, '--live') as {
        api_key: string;
        mode_tenant_id: string;
      };
      key = issued.api_key;
      id = issued.mode_tenant_id;
      admin(
        'wallet',
        'fund',
        '--tenant',
        created.tenant_id,
        '--amount-minor',
        String(funding),
        '--reference',
        `chaos-${SEED}-live-funding`,
        '--live',
      );
    }
    const tenant: Tenant = {
      name: spec.name,
      mode: spec.mode,
      id,
      key,
      funding,
      cards: [],
      vas: [],
      vaNumbers: [],
      endpoints: [],
    };
    const must = async (label: string, request: RequestSpec, status: number[]): Promise<Answer> => {
      const { answer } = await client.until(tenant.key, request, OP_DEADLINE_MS, () => stopping);
      if (!answer || !status.includes(answer.status)) {
        throw new Error(
          `set-up: ${label} answered ${answer ? `${answer.status} ${JSON.stringify(answer.json)}` : 'nothing'}`,
        );
      }
      return answer;
    };
    const endpoints = live
      ? []
      : index === 0
        ? [
            {
              path: '/a1',
              events: [
                'transfer.settled',
                'transfer.failed',
                'virtual_account.credited',
                'card.funded',
                'card.funding_failed',
              ],
              mayGo: false,
            },
            { path: '/a2', events: ['transfer.created', 'card.locked', 'card.unlocked'], mayGo: true },
          ]
        : [{ path: '/b1', events: ['*'], mayGo: false }];
    for (const endpoint of endpoints) {
      const secret = `whsec_${Buffer.from(Array.from({ length: 24 }, () => secretRandom.int(0, 255))).toString('base64')}`;
      const answer = await must(
        'webhook endpoint',
        {
          method: 'POST',
          template: '/api/v1/webhook-endpoints',
          body: { url: `${receiver!.url}${endpoint.path}`, events: endpoint.events, signing_secret: secret },
          idempotencyKey: `setup-${SEED}-${tenant.name}-${endpoint.path}`,
        },
        [200, 201],
      );
      tenant.endpoints.push({ ...endpoint, secret, id: (answer.json as { data: { id: string } }).data.id });
      secretKnown(endpoint.path, secret);
    }
    for (let i = 0; i < spec.cards; i += 1) {
      const answer = await must(
        'card',
        {
          method: 'POST',
          template: '/api/v1/cards',
          body: { customer_id: `chaos-customer-${i}` },
          idempotencyKey: `setup-${SEED}-${tenant.name}-card-${i}`,
        },
        [200, 201],
      );
      tenant.cards.push({ id: (answer.json as { data: { id: string } }).data.id, locked: false });
    }
    for (let i = 0; i < spec.vas; i += 1) {
      const answer = await must(
        'virtual account',
        {
          method: 'POST',
          template: '/api/v1/virtual-accounts',
          body: {
            customer_id: `chaos-customer-${i}`,
            account_name: `Chaos Customer ${i}`,
            request_id: `setup-${SEED}-${tenant.name}-va-${i}`,
          },
        },
        [200, 201],
      );
      const data = (answer.json as { data: { id: string; account_number: string } }).data;
      tenant.vas.push(data.id);
      tenant.vaNumbers.push(data.account_number);
    }
    tenants.push(tenant);
  }
  say(
    `tenants ${tenants.map((tenant) => `${tenant.name} (${tenant.mode}: ${tenant.cards.length} cards, ${tenant.vas.length} virtual accounts, endpoints ${tenant.endpoints.map((e) => e.path).join(', ') || 'none'})`).join(', ')}`,
  );
  return tenants;
}

async function runFaults(planned: PlannedFault[]): Promise<void> {
  for (const fault of planned) {
    while (seen.opsStarted < fault.at && seen.opsDone < OPS && !stopping) {
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
    if (stopping) return;
    if (fault.kind === 'kill test-bank') await killTestBank(fault.ms);
    else if (fault.kind === 'lose test-bank-callbacks') await loseCallbacks(fault.ms);
    else if (fault.kind === 'lose answers') await loseAnswers(fault.count, fault.ms);
    else {
      const [verb, what] = fault.kind.split(' ') as ['kill' | 'pause', string];
      if (verb === 'kill') await killAndAwaitRestart(what as Killable);
      else await pause(what as Pausable, fault.ms);
    }
  }
}

async function killAndAwaitRestart(target: Killable): Promise<void> {
  const pid = faults!.kill(target);
  if (pid === undefined) {
    seen.faultFailures.push(`${target} was not running when it was to be killed`);
    return;
  }
  seen.kills.set(target, (seen.kills.get(target) ?? 0) + 1);
  const ready = async () => {
    if (target === 'worker') return true;
    const url = target === 'api' ? `${stack!.apiUrl}/health/live` : `${stack!.bankUrl}/`;
    try {
      await fetch(url, { signal: AbortSignal.timeout(2_000) });
      return true;
    } catch {
      return false;
    }
  };
  if (!(await faults!.waitRestarted(target, pid, ready, 120_000))) {
    seen.faultFailures.push(`${target} was not running again within 120 s of its kill`);
  }
}

async function pause(target: Pausable, ms: number): Promise<void> {
  const stopped = faults!.pause(target);
  await new Promise((resolve) => setTimeout(resolve, ms));
  faults!.resumeAll();
  if (stopped === 0) seen.faultFailures.push(`no ${target} process found to pause`);
  const pauses = seen.pauses.get(target) ?? { count: 0, ms: 0 };
  seen.pauses.set(target, { count: pauses.count + 1, ms: pauses.ms + ms });
}

/**
 * SIGKILL of the test bank, down for `downMs` (calls to it are refused meanwhile), then started
 * again on the same port and journal, as a bank's operator would; a few tries if the start fails.
 */
async function killTestBank(downMs: number): Promise<void> {
  const killed = await testBank!.kill();
  if (killed === undefined) {
    seen.faultFailures.push('the test bank was not running when it was to be killed');
    return;
  }
  seen.kills.set('test-bank', (seen.kills.get('test-bank') ?? 0) + 1);
  await new Promise((resolve) => setTimeout(resolve, downMs));
  for (let attempt = 1; !stopping; attempt += 1) {
    try {
      await testBank!.start();
      break;
    } catch (error) {
      if (attempt === 3) {
        seen.faultFailures.push(`the test bank did not start again after its kill: ${String(error).slice(0, 300)}`);
        return;
      }
    }
  }
  // Ctrl-C while it started: cleanup may have passed the bank by.
  if (stopping) await testBank!.stop();
  else if (!(await testBank!.ready())) seen.faultFailures.push('the test bank did not answer after its restart');
}

/** The test bank loses every callback it owes for `ms` (recorded `dropped`, never sent), then delivers again. */
async function loseCallbacks(ms: number): Promise<void> {
  const mode = async (value: 'drop' | 'deliver') => {
    const { answer } = await testBank!.until(
      'POST',
      '/control/callbacks',
      { mode: value },
      OP_DEADLINE_MS,
      () => stopping,
    );
    if (answer?.status !== 200 && !stopping) {
      seen.faultFailures.push(`POST /control/callbacks {mode: ${value}} answered ${answer?.status ?? 'nothing'}`);
      return false;
    }
    return true;
  };
  if (!(await mode('drop'))) return;
  const from = Date.now();
  await new Promise((resolve) => setTimeout(resolve, ms));
  // Even on the way out: a bank left dropping would leave the rest of the run without callbacks.
  await mode('deliver');
  seen.callbackLoss.count += 1;
  seen.callbackLoss.ms += Date.now() - from;
}

/**
 * A lost-answers window (decisions §17). At the test bank: the next `count` submissions it takes
 * lose their answers (taken and journaled, then the connection destroyed), a repeat of a reference
 * it was offered meets 422 `limit_exceeded` (the contract's "refused, not taken") `count` times,
 * and its name enquiry answers 503 three times, which sends the next live transfers to Paystack. At
 * Paystack: its next submission loses its answer, and a repeat meets its duplicate-reference
 * refusal in words the connector does not know. The refusals are kept to repeats so that only a
 * gateway that sends a lost submission again meets them, and passes it on as never taken if it
 * reads them as proof; a new transfer meeting one would be passed on rightly and blur the check.
 * The window closes once every planned answer was lost, after `ms`, or when the operations are
 * done, then stays open RETRY_TAIL_MS for a retry to come; what is left is cleared at both banks,
 * and what the plans met is recorded.
 */
async function loseAnswers(count: number, ms: number): Promise<void> {
  const bank = testBank!;
  const sim = paystack!;
  const stopped = () => stopping;
  const from = Date.now();
  const bankBefore = (await bank.faultsMet(OP_DEADLINE_MS, stopped))?.length;
  const simBefore = sim.faultsMet.length;
  const planned =
    bankBefore !== undefined &&
    (await bank.planFault(
      { fault: 'lose_answer', count, route: 'POST /transfers', only: 'taken' },
      OP_DEADLINE_MS,
      stopped,
    )) &&
    (await bank.planFault(
      { fault: 'limit_422', count, route: 'POST /transfers', only: 'repeats' },
      OP_DEADLINE_MS,
      stopped,
    )) &&
    (await bank.planFault({ fault: '503', count: 3, route: 'POST /name-enquiry' }, OP_DEADLINE_MS, stopped));
  if (!planned) {
    if (!stopping) seen.faultFailures.push('the test bank did not take the lost-answers plan');
    await bank.clearFaults(OP_DEADLINE_MS, stopped);
    return;
  }
  sim.failNext('lose_answer', 'POST /transfer');
  sim.failNext('duplicate_unrecognised', 'POST /transfer', { repeatsOnly: true });
  const lostAtSim = () => sim.faultsMet.slice(simBefore).filter((met) => met.fault === 'lose_answer').length;
  for (;;) {
    const met = (await bank.faultsMet(10_000, stopped))?.slice(bankBefore) ?? [];
    const lostAtBank = met.filter((entry) => entry.fault === 'lose_answer').length;
    if ((lostAtBank >= count && lostAtSim() >= 1) || Date.now() - from >= ms || seen.opsDone >= OPS || stopping) break;
    await new Promise((resolve) => setTimeout(resolve, 500));
  }
  if (!stopping) await new Promise((resolve) => setTimeout(resolve, RETRY_TAIL_MS));
  // Even on the way out: a plan left behind would meet the rest of the run's calls.
  sim.clearFaults();
  const cleared = await bank.clearFaults(OP_DEADLINE_MS, stopped);
  const met = await bank.faultsMet(OP_DEADLINE_MS, stopped);
  if ((!cleared || met === undefined) && !stopping) {
    seen.faultFailures.push('the test bank did not answer at the end of a lost-answers window');
  }
  for (const entry of met?.slice(bankBefore) ?? []) {
    if (entry.fault === 'lose_answer') seen.answersLost.push({ bank: 'generic', reference: entry.reference ?? '' });
    else if (entry.fault === 'limit_422')
      seen.retriesRefused.push({ bank: 'generic', fault: entry.fault, reference: entry.reference ?? '' });
    else if (entry.fault === '503') seen.enquiriesRefused += 1;
  }
  for (const entry of sim.faultsMet.slice(simBefore)) {
    if (entry.fault === 'lose_answer') seen.answersLost.push({ bank: 'paystack', reference: entry.reference ?? '' });
    else seen.retriesRefused.push({ bank: 'paystack', fault: entry.fault, reference: entry.reference ?? '' });
  }
  seen.lossWindows.count += 1;
  seen.lossWindows.ms += Date.now() - from;
}

async function runOps(ops: Op[], tenants: Tenant[], client: Client): Promise<void> {
  const cardQueues = new Map<string, Promise<void>>();
  let next = 0;
  const worker = async () => {
    while (next < ops.length && !stopping) {
      const op = ops[next++]!;
      seen.opsStarted += 1;
      if (op.kind === 'lock' || op.kind === 'unlock' || op.kind === 'fund' || op.kind === 'jit-fund') {
        // One operation at a time per card: the order they are acknowledged in is the order the
        // card's workflow applies them in, so each funding's outcome can be foretold.
        const queueKey = `${op.tenant}:${op.card}`;
        const previous = cardQueues.get(queueKey) ?? Promise.resolve();
        const mine = previous.then(() => runOp(op, tenants, client));
        cardQueues.set(queueKey, mine);
        await mine;
      } else {
        await runOp(op, tenants, client);
      }
      seen.opsDone += 1;
    }
  };
  await Promise.all(Array.from({ length: CONCURRENCY }, worker));
}

async function runOp(op: Op, tenants: Tenant[], client: Client): Promise<void> {
  const tenant = tenants[op.tenant]!;
  if (
    tenant.mode === 'live' &&
    (op.kind === 'credit' || op.kind === 'credit-duplicate' || op.kind === 'credit-conflict')
  ) {
    return liveCredit(op, tenant);
  }
  const label = tenant.mode === 'live' ? `live ${op.kind}` : op.kind;
  const request = requestOf(op, tenant);
  const { answer, lost } = await client.until(tenant.key, request, OP_DEADLINE_MS, () => stopping);
  if (!answer) {
    seen.unresolved.push(op);
    tally(label, 'unresolved');
    return;
  }
  tally(label, String(answer.status));
  const body = answer.json as { data?: Record<string, unknown> } | undefined;
  const unexpected = () =>
    seen.unexpected.push({ op, status: answer.status, body: JSON.stringify(answer.json).slice(0, 300) });
  switch (op.kind) {
    case 'transfer': {
      if (answer.status === 201 || answer.status === 200) {
        const data = body!.data as { id: string; fee_minor: number; amount_minor: number };
        seen.transfers.push({
          tenant: op.tenant,
          reference: op.reference,
          id: data.id,
          amount: data.amount_minor,
          fee: data.fee_minor,
          recipient: op.recipient,
          lostAnswers: lost,
        });
      } else if (answer.status === 422 && op.recipient === 'invalid') {
        seen.refused.push({ op, status: answer.status, code: errorCode(answer.json) });
      } else unexpected();
      return;
    }
    case 'lock':
    case 'unlock':
      if (answer.status === 202) tenant.cards[op.card]!.locked = op.kind === 'lock';
      else unexpected();
      return;
    case 'fund':
    case 'jit-fund':
      if (answer.status === 202) {
        seen.fundings.push({
          tenant: op.tenant,
          card: op.card,
          key: op.key,
          fundingId: String(body!.data!.funding_id),
          amount: op.amount,
          expected: tenant.cards[op.card]!.locked ? 'failed' : 'succeeded',
        });
      } else unexpected();
      return;
    case 'credit':
    case 'credit-duplicate':
    case 'credit-conflict': {
      const key = `${op.tenant}|${op.va}|${op.reference}`;
      const group = seen.credits.get(key) ?? { tenant: op.tenant, va: op.va, amounts: [], refused: [] };
      seen.credits.set(key, group);
      if (answer.status === 202) {
        group.amounts.push(op.amount);
        group.transactionReference ??= (answer.json as { data?: { transaction_reference?: string } } | undefined)?.data
          ?.transaction_reference;
      } else if (answer.status === 409) group.refused.push(op.amount);
      else unexpected();
      return;
    }
    case 'read':
      if (answer.status !== 200) unexpected();
      return;
    case 'bulk':
      if (answer.status === 202 || answer.status === 200) {
        seen.batches.push({ tenant: op.tenant, id: String(body!.data!.id), op });
      } else if (op.atomic && answer.status === 422) {
        seen.refused.push({ op, status: answer.status, code: errorCode(answer.json) });
      } else unexpected();
  }
}

/**
 * One reference's answers: 202 for one amount only (the one the bank took, however often repeated),
 * and 409 only for another amount.
 */
function creditAnswerBreaches(group: { amounts: number[]; refused: number[] }): string[] {
  const taken = new Set(group.amounts);
  if (taken.size > 1) return [`one reference answered 202 for amounts ${group.amounts.join(', ')}`];
  // None answered 202 (the one taken lost its answer): a refusal says nothing then.
  if (group.refused.some((amount) => taken.has(amount)))
    return [`a reference took ${group.amounts[0]} and refused the same amount 409`];
  return [];
}

/**
 * Money paid into one of the live tenant's virtual accounts at the test bank (no gateway route
 * makes live money): the bank's control route, sent again unchanged until the bank answers (it
 * may be down, or die with the answer on its way: the same reference is the same credit).
 */
async function liveCredit(
  op: Extract<Op, { kind: 'credit' | 'credit-duplicate' | 'credit-conflict' }>,
  tenant: Tenant,
): Promise<void> {
  const label = `live ${op.kind}`;
  const { answer } = await testBank!.until(
    'POST',
    `/control/virtual-accounts/${tenant.vaNumbers[op.va]!}/credits`,
    { amount_minor: op.amount, sender_name: 'CHAOS SENDER', reference: op.reference },
    OP_DEADLINE_MS,
    () => stopping,
  );
  if (!answer) {
    seen.unresolved.push(op);
    tally(label, 'unresolved');
    return;
  }
  tally(label, String(answer.status));
  const key = `${op.tenant}|${op.va}|${op.reference}`;
  const group = seen.credits.get(key) ?? { tenant: op.tenant, va: op.va, amounts: [], refused: [] };
  seen.credits.set(key, group);
  if (answer.status === 202) {
    group.amounts.push(op.amount);
    group.transactionReference = (answer.json as { transaction_reference: string }).transaction_reference;
  } else if (answer.status === 409) group.refused.push(op.amount);
  else seen.unexpected.push({ op, status: answer.status, body: JSON.stringify(answer.json).slice(0, 300) });
}

function requestOf(op: Op, tenant: Tenant): RequestSpec {
  switch (op.kind) {
    case 'bulk':
      return {
        method: 'POST',
        template: '/api/v1/transfers/bulk',
        body: {
          batch_reference: op.reference,
          atomic: op.atomic,
          transfers: op.items.map((item) => ({
            amount_minor: item.amount,
            recipient_account: item.account,
            recipient_bank_code: item.bank,
            narration: `chaos bulk ${op.reference}`,
          })),
        },
      };
    case 'transfer':
      return {
        method: 'POST',
        template: '/api/v1/transfers',
        body: {
          amount_minor: op.amount,
          recipient_account: op.account,
          recipient_bank_code: op.bank,
          narration: `chaos ${op.reference}`,
          reference: op.reference,
        },
        ...(op.withKey ? { idempotencyKey: `key-${op.reference}` } : {}),
      };
    // A card operation: lock and unlock carry no body, a funding its amount.
    case 'lock':
    case 'unlock':
    case 'fund':
    case 'jit-fund':
      return {
        method: 'POST',
        template: `/api/v1/cards/{card_id}/${op.kind}`,
        params: { card_id: tenant.cards[op.card]!.id },
        body: 'amount' in op ? { amount_minor: op.amount, currency: 'NGN', idempotency_key: op.key } : {},
        idempotencyKey: op.key,
      };
    case 'credit':
    case 'credit-duplicate':
    case 'credit-conflict':
      return {
        method: 'POST',
        template: '/api/v1/sandbox/virtual-accounts/{id}/credits',
        params: { id: tenant.vas[op.va]! },
        body: { amount_minor: op.amount, sender_name: 'CHAOS SENDER', reference: op.reference },
      };
    case 'read': {
      const known = seen.transfers.find((transfer) => transfer.tenant === op.tenant);
      if (op.what === 'transfer' && known)
        return { method: 'GET', template: '/api/v1/transfers/{id}', params: { id: known.id } };
      if (op.what === 'transfers') return { method: 'GET', template: '/api/v1/transfers', query: { limit: 5 } };
      if (op.what === 'card-balance')
        return { method: 'GET', template: '/api/v1/cards/{card_id}/balance', params: { card_id: tenant.cards[0]!.id } };
      if (op.what === 'events') return { method: 'GET', template: '/api/v1/events', query: { limit: 5 } };
      return { method: 'GET', template: '/api/v1/wallet' };
    }
  }
}

// ---------------------------------------------------------------------------------------------
// Settling and checking.

async function read(client: Client, tenant: Tenant, request: RequestSpec): Promise<Record<string, unknown>> {
  const { answer } = await client.until(tenant.key, request, 60_000, () => false);
  if (!answer || answer.status !== 200) {
    throw new Error(
      `${request.method} ${request.template} answered ${answer ? answer.status : 'nothing'} while checking`,
    );
  }
  return answer.json as Record<string, unknown>;
}

/** The `data` of a GET the check makes, in the shape the caller reads. */
async function dataOf<T>(client: Client, tenant: Tenant, request: RequestSpec): Promise<T> {
  return (await read(client, tenant, request)).data as T;
}

/** A virtual account as the API shows it, the fields the checks compare. */
const virtualAccountOf = (client: Client, tenant: Tenant, id: string) =>
  dataOf<{ provider: string; total_received_minor: number; transaction_count: number }>(client, tenant, {
    method: 'GET',
    template: '/api/v1/virtual-accounts/{id}',
    params: { id },
  });

async function pagesOf<T>(client: Client, tenant: Tenant, request: RequestSpec): Promise<T[]> {
  const items: T[] = [];
  for (let page = 1; page < 100_000; page += 1) {
    const json = await read(client, tenant, { ...request, query: { ...request.query, limit: 100, page } });
    const data = json.data as { items: T[]; pagination: { has_more: boolean } };
    items.push(...data.items);
    if (!data.pagination.has_more) break;
  }
  return items;
}

const total = async (client: Client, tenant: Tenant, request: RequestSpec): Promise<number> => {
  const json = await read(client, tenant, { ...request, query: { ...request.query, limit: 1 } });
  return (
    (json.data as { pagination?: { total: number } }).pagination ??
    (json as { pagination: { total: number } }).pagination
  ).total;
};

/** Whether a transfer stays pending by design (its recipient's fate at its tenant's bank). */
const stuckByDesign = (transfer: AckedTransfer) =>
  fateOf(TENANTS[transfer.tenant]!.mode, transfer.recipient) === 'pending';

/** What still moves; empty once the gateway has settled. */
async function unsettled(tenants: Tenant[], client: Client): Promise<string[]> {
  const left: string[] = [];
  for (const [index, tenant] of tenants.entries()) {
    const stuck = seen.transfers.filter((t) => t.tenant === index && stuckByDesign(t)).length;
    const pending = await total(client, tenant, {
      method: 'GET',
      template: '/api/v1/transfers',
      query: { status: 'pending' },
    });
    if (pending > stuck)
      left.push(`${tenant.name}: ${pending - stuck} transfers pending beyond the ${stuck} stuck by design`);
    for (const status of ['queued', 'retrying']) {
      const deliveries = await total(client, tenant, {
        method: 'GET',
        template: '/api/v1/webhook-deliveries',
        query: { status },
      });
      if (deliveries) left.push(`${tenant.name}: ${deliveries} deliveries ${status}`);
    }
    for (const card of tenant.cards) {
      // Paginated (decisions §16): every page of it.
      const history = await pagesOf<{ status: string }>(client, tenant, {
        method: 'GET',
        template: '/api/v1/cards/{card_id}/funding/history',
        params: { card_id: card.id },
      });
      const pendingFundings = history.filter((f) => f.status === 'pending').length;
      if (pendingFundings) left.push(`${tenant.name}: card ${card.id} has ${pendingFundings} fundings pending`);
    }
  }
  for (const batch of seen.batches) {
    const answer = await client.until(
      tenants[batch.tenant]!.key,
      { method: 'GET', template: '/api/v1/transfers/bulk/{id}', params: { id: batch.id } },
      60_000,
      () => stopping,
    );
    const status = (answer.answer?.json as { data?: { status?: string } } | undefined)?.data?.status;
    if (status !== 'completed') left.push(`batch ${batch.op.reference}: ${status ?? 'unreadable'}`);
  }
  try {
    const metrics = await (await fetch(stack!.metricsUrl, { signal: AbortSignal.timeout(10_000) })).text();
    const lag = /^gateway_fanout_lag_seconds (\S+)$/m.exec(metrics)?.[1];
    if (lag !== '0') left.push(`fan-out lag ${lag ?? 'unknown'} s`);
  } catch {
    left.push('metrics unreadable');
  }
  if (!left.length) {
    // The never-confirmed transfers have reached the bank and wait for it (`processing`), where the
    // operator's stuck list shows them.
    const listed = stuckListed();
    const waiting = seen.transfers.filter((t) => t.recipient === 'neverConfirmed' && !listed.has(t.id)).length;
    if (waiting) left.push(`${waiting} never-confirmed transfers not yet in admin transfers stuck`);
  }
  if (!left.length) left.push(...(await webhookCoverage(tenants, client)).missing.slice(0, 3));
  if (!left.length) left.push(...(await creditsInFlight()));
  if (!left.length) {
    // The test bank has sent (or lost, or given up on) every callback, and the gateway has applied
    // every live credit whose notification it was given.
    try {
      const { callbacks } = await testBank!.callbacks();
      const queued = callbacks.filter((callback) => callback.state === 'queued').length;
      if (queued) left.push(`the test bank still owes ${queued} callbacks`);
      else left.push(...(await liveCreditTotals(tenants, client, liveCredits(callbacks))).slice(0, 3));
    } catch (error) {
      left.push(`the test bank's callbacks unreadable: ${String(error)}`);
    }
  }
  return left;
}

/**
 * Credits on their way in: callbacks the sandbox bank has yet to deliver (one that failed while the
 * API was down or PostgreSQL paused waits out its backoff, up to a minute), and inbound-credit
 * workflows still applying theirs (an activity whose worker was killed waits out its 30 s timeout).
 */
async function creditsInFlight(): Promise<string[]> {
  const left: string[] = [];
  const db = new pg.Client({ connectionString: stack!.bankDatabaseUrl, statement_timeout: 30_000 });
  try {
    await db.connect();
    const {
      rows: [owed],
    } = await db.query<{ count: number; next: string | null }>(
      `select count(*)::int as count, to_char(min(next_attempt_at) at time zone 'UTC', 'HH24:MI:SS') as next
         from sandbox_bank.callbacks where delivered_at is null`,
    );
    if (owed!.count) left.push(`the sandbox bank still owes ${owed!.count} callbacks (next due ${owed!.next} UTC)`);
  } catch (error) {
    left.push(`the sandbox bank's callbacks unreadable: ${String(error)}`);
  } finally {
    await db.end().catch(() => undefined);
  }
  try {
    const running = await withTemporal((temporal) =>
      temporal.workflow.count(`WorkflowType = '${INBOUND_CREDIT_WORKFLOW_TYPE}' AND ExecutionStatus = 'Running'`),
    );
    if (running.count) left.push(`${running.count} inbound-credit workflows still running`);
  } catch (error) {
    left.push(`the running inbound-credit workflows uncountable: ${String(error)}`);
  }
  return left;
}

/**
 * Where each of an account's credits got to, for a breach: the sandbox bank's callback, the
 * gateway's record of it, its inbound-credit workflow and the account's journal.
 */
async function creditTrails(
  accountId: string,
  groups: { amounts: number[]; transactionReference?: string }[],
): Promise<string[]> {
  // The bank's callbacks are in its own database, the gateway's records in the gateway's.
  const bank = new pg.Client({ connectionString: stack!.bankDatabaseUrl, statement_timeout: 30_000 });
  const db = new pg.Client({ connectionString: stack!.databaseUrl, statement_timeout: 30_000 });
  try {
    await bank.connect();
    await db.connect();
    const refs = groups.map((group) => group.transactionReference ?? '');
    const { rows: callbacks } = await bank.query<Record<string, unknown>>(
      `select r.ref, c.event_id, c.attempts, c.delivered_at, c.next_attempt_at, c.last_error
         from unnest($1::text[]) as r(ref)
         left join sandbox_bank.callbacks c on c.payload->'data'->>'transaction_reference' = r.ref`,
      [refs],
    );
    const { rows: ours } = await db.query<Record<string, unknown>>(
      `select r.ref, p.event_id, p.dispatched_at, p.dispatch_result, p.dispatch_claimed_until,
              (select string_agg(i.status, ',') from inbound_credits i
                where i.virtual_account_id = $2::uuid and i.transaction_reference = r.ref) as credit
         from unnest($1::text[]) as r(ref)
         left join provider_callbacks p on p.event_id = any($3::text[])`,
      [refs, accountId, callbacks.map((row) => (typeof row.event_id === 'string' ? row.event_id : ''))],
    );
    return callbacks
      .map((callback): Record<string, unknown> => ({
        ...callback,
        ...ours.find((row) => row.ref === callback.ref && (row.event_id ?? null) === (callback.event_id ?? null)),
        credit: ours.find((row) => row.ref === callback.ref)?.credit ?? null,
      }))
      .filter((row) => row.credit !== 'applied')
      .map((row) => `  credit ${String(row.ref)}: ${JSON.stringify(row)}`);
  } catch (error) {
    return [`  credit trails unreadable: ${String(error)}`];
  } finally {
    await bank.end().catch(() => undefined);
    await db.end().catch(() => undefined);
  }
}

async function withTemporal<T>(use: (temporal: TemporalClient) => Promise<T>): Promise<T> {
  const connection = await Connection.connect({ address: stack!.temporalAddress, connectTimeout: 30_000 });
  try {
    return await use(new TemporalClient({ connection }));
  } finally {
    await connection.close();
  }
}

interface LiveCredit {
  tenant: number;
  va: number;
  reference: string;
  transactionReference: string;
  amount: number;
  /** Its notifications by state at the test bank (the first and every duplicate one). */
  delivered: number;
  dropped: number;
  gaveUp: number;
}

/** The live tenant's credits answered 202 by the test bank, with what became of their notifications there. */
function liveCredits(callbacks: BankCallback[]): LiveCredit[] {
  const byReference = new Map<string, BankCallback[]>();
  for (const callback of callbacks) {
    if (callback.type !== 'virtual_account.credited') continue;
    const reference = String(callback.data.transaction_reference);
    byReference.set(reference, [...(byReference.get(reference) ?? []), callback]);
  }
  const credits: LiveCredit[] = [];
  for (const [key, group] of seen.credits) {
    if (TENANTS[group.tenant]!.mode !== 'live' || !group.amounts.length || !group.transactionReference) continue;
    const notified = byReference.get(group.transactionReference) ?? [];
    const count = (state: BankCallback['state']) => notified.filter((callback) => callback.state === state).length;
    credits.push({
      tenant: group.tenant,
      va: group.va,
      reference: key.split('|')[2]!,
      transactionReference: group.transactionReference,
      amount: group.amounts[0]!,
      delivered: count('delivered'),
      dropped: count('dropped'),
      gaveUp: count('gave_up'),
    });
  }
  return credits;
}

/**
 * A live credit counts once if any of its notifications reached the gateway (answered 2xx), and
 * not at all if every one was lost: nothing else tells the gateway of it (a real deployment's
 * reconciliation lists it against the bank's statement). The accounts whose totals differ.
 */
async function liveCreditTotals(tenants: Tenant[], client: Client, credits: LiveCredit[]): Promise<string[]> {
  const off: string[] = [];
  for (const [index, tenant] of tenants.entries()) {
    if (tenant.mode !== 'live') continue;
    for (const [vaIndex, va] of tenant.vas.entries()) {
      const applied = credits.filter((c) => c.tenant === index && c.va === vaIndex && c.delivered > 0);
      const expected = applied.reduce((sum, credit) => sum + credit.amount, 0);
      const account = await virtualAccountOf(client, tenant, va);
      if (account.total_received_minor !== expected || account.transaction_count !== applied.length) {
        off.push(
          `live account ${va}: ${account.total_received_minor} in ${account.transaction_count} credits, the test bank delivered ${expected} in ${applied.length}`,
        );
      }
    }
  }
  return off;
}

/**
 * Every acknowledged batch's items, once the gateway has settled: each item that became a transfer
 * joins the acknowledged transfers (so the checks below weigh it as one: it exists once, ends as its
 * recipient says, and the wallet pays for it exactly), and each refusal must be the one its
 * recipient earns (an unknown account); anything else is a breach, kept with the unexpected answers.
 */
async function resolveBatches(tenants: Tenant[], client: Client): Promise<void> {
  for (const batch of seen.batches) {
    // At most 6 items: one page of the transfer-style list.
    const json = await read(client, tenants[batch.tenant]!, {
      method: 'GET',
      template: '/api/v1/transfers/bulk/{id}/items',
      params: { id: batch.id },
      query: { limit: 100, page: 1 },
    });
    const items = json.data as {
      index: number;
      reference: string;
      transfer_id: string | null;
      status: string;
      error: { code: string } | null;
    }[];
    if (items.length !== batch.op.items.length) {
      seen.unexpected.push({ op: batch.op, status: 200, body: `batch lists ${items.length} items` });
    }
    for (const item of items) {
      const sent = batch.op.items[item.index]!;
      if (item.status === 'refused') {
        if (!(sent.recipient === 'invalid' && item.error?.code === 'invalid_account')) {
          seen.unexpected.push({ op: batch.op, status: 200, body: `item ${item.index} refused: ${item.error?.code}` });
        }
        continue;
      }
      seen.transfers.push({
        tenant: batch.tenant,
        reference: item.reference,
        id: item.transfer_id!,
        amount: sent.amount,
        fee: transferFee(sent.amount),
        recipient: sent.recipient,
        lostAnswers: 0,
      });
    }
  }
}

async function settle(tenants: Tenant[], client: Client): Promise<string[]> {
  const deadline = Date.now() + SETTLE_MS;
  let left: string[] = [];
  let lastSaid = 0;
  while (Date.now() < deadline) {
    left = await unsettled(tenants, client);
    if (!left.length) return left;
    if (Date.now() - lastSaid > 10_000) {
      say(`${elapsed()}: settling: ${left.slice(0, 3).join('; ')}`);
      lastSaid = Date.now();
    }
    await new Promise((resolve) => setTimeout(resolve, 3_000));
  }
  return left;
}

/** The transfer ids `admin transfers stuck --older-than 0s` lists. */
function stuckListed(): Set<string | null> {
  const run = stack!.adminRun(120_000, 'transfers', 'stuck', '--older-than', '0s');
  const transfers = (run.json as { transfers?: { transfer_id: string | null }[] } | undefined)?.transfers ?? [];
  return new Set(transfers.map((t) => t.transfer_id));
}

interface EventItem {
  id: string;
  type: string;
  created_at: string;
}

/** Every subscribed event of each endpoint against what its receiver path saw. */
async function webhookCoverage(tenants: Tenant[], client: Client) {
  const missing: string[] = [];
  const forbidden: string[] = [];
  const badIds: string[] = [];
  let expected = 0;
  let received = 0;
  const byPath = new Map<string, ReceivedWebhook[]>();
  for (const request of receiver!.received) {
    const list = byPath.get(request.path) ?? [];
    list.push(request);
    byPath.set(request.path, list);
  }
  for (const tenant of tenants) {
    // The tenant's events of every type its endpoints take (all of them under `*`; the many
    // event.delivery.* ones of a tenant without `*` are left out).
    const types = tenant.endpoints.flatMap((endpoint) => endpoint.events);
    const all = types.includes('*')
      ? await pagesOf<EventItem>(client, tenant, { method: 'GET', template: '/api/v1/events' })
      : (
          await Promise.all(
            [...new Set(types)].map((type) =>
              pagesOf<EventItem>(client, tenant, { method: 'GET', template: '/api/v1/events', query: { type } }),
            ),
          )
        ).flat();
    const ownIds = new Set(all.map((event) => event.id));
    for (const endpoint of tenant.endpoints) {
      const subscribed = (type: string) =>
        endpoint.events.includes(type) || (endpoint.events.includes('*') && !type.startsWith('event.delivery.'));
      const requests = byPath.get(endpoint.path) ?? [];
      const seenIds = new Set<string>();
      for (const request of requests) {
        received += 1;
        const verdict = verdicts.get(request);
        if (!verdict || 'error' in verdict) {
          forbidden.push(
            `${endpoint.path}: a request whose signature does not verify (${verdict?.error ?? 'no secret'})`,
          );
          continue;
        }
        const { event } = verdict;
        if (request.headers['webhook-id'] !== event.id)
          badIds.push(`${endpoint.path}: webhook-id ${String(request.headers['webhook-id'])} on event ${event.id}`);
        if (!ownIds.has(event.id))
          forbidden.push(`${endpoint.path}: event ${event.id} (${event.type}) is not ${tenant.name}'s`);
        else if (!subscribed(event.type))
          forbidden.push(`${endpoint.path}: event ${event.id} of unsubscribed type ${event.type}`);
        seenIds.add(event.id);
      }
      // An endpoint that answered 410 is disabled by design: events its deliveries could no longer
      // reach (failed with the endpoint disabled, or never fanned out to it) are not owed.
      let excused = new Set<string>();
      if (endpoint.mayGo && seen.goneAnswered.has(endpoint.path)) {
        const failed = await pagesOf<{ event_id: string }>(client, tenant, {
          method: 'GET',
          template: '/api/v1/webhook-deliveries',
          query: { endpoint_id: endpoint.id, status: 'failed' },
        });
        const delivered = await pagesOf<{ event_id: string }>(client, tenant, {
          method: 'GET',
          template: '/api/v1/webhook-deliveries',
          query: { endpoint_id: endpoint.id },
        });
        const withDelivery = new Set(delivered.map((d) => d.event_id));
        excused = new Set([
          ...failed.map((d) => d.event_id),
          ...all.filter((event) => !withDelivery.has(event.id)).map((event) => event.id),
        ]);
      }
      for (const event of all) {
        // webhook.endpoint.created may be fanned out before or after the tenant's endpoints exist.
        if (!subscribed(event.type) || event.type === 'webhook.endpoint.created') continue;
        expected += 1;
        if (!seenIds.has(event.id) && !excused.has(event.id)) {
          missing.push(
            `${endpoint.path}: ${tenant.name}'s event ${event.id} (${event.type}, ${event.created_at}) never reached the receiver`,
          );
        }
      }
    }
  }
  return { missing, forbidden, badIds, expected, received };
}

interface Result {
  name: string;
  ok: boolean;
  detail: string;
}

function resultOf(name: string, breaches: string[], detail: string): Result {
  return {
    name,
    ok: breaches.length === 0,
    detail: breaches.length ? `${breaches.length} breaches: ${breaches.slice(0, 5).join(' | ')}` : detail,
  };
}

async function check(tenants: Tenant[], client: Client): Promise<Result[]> {
  const results: Result[] = [];
  const add = (name: string, breaches: string[], detail: string) => results.push(resultOf(name, breaches, detail));

  // 1. The books, by the real operator CLI.
  const verify = stack!.adminRun(300_000, 'ledger', 'verify');
  const verdict = verify.json as
    { ok?: boolean; checks?: { name: string; ok: boolean; breaches: number; examples: unknown[] }[] } | undefined;
  add(
    'admin ledger verify',
    verify.code === 0 && verdict?.ok
      ? []
      : [
          `exit ${verify.code}: ${JSON.stringify(verdict?.checks?.filter((c) => !c.ok) ?? verify.stderr.slice(0, 500))}`,
        ],
    `ok, ${verdict?.checks?.length ?? 0} checks`,
  );

  // 2. Every acknowledged transfer exists, as its recipient says it ends: terminal, or visibly stuck.
  const finals = new Map<string, { status: string; reference: string; amount_minor: number }>();
  const transferBreaches: string[] = [];
  const queue = [...seen.transfers];
  await Promise.all(
    Array.from({ length: 8 }, async () => {
      for (let transfer = queue.shift(); transfer; transfer = queue.shift()) {
        const tenant = tenants[transfer.tenant]!;
        const { answer } = await client.until(
          tenant.key,
          { method: 'GET', template: '/api/v1/transfers/{id}', params: { id: transfer.id } },
          60_000,
          () => false,
        );
        if (answer?.status !== 200) {
          transferBreaches.push(
            `acknowledged transfer ${transfer.id} (${transfer.reference}) reads ${answer?.status ?? 'nothing'}`,
          );
          continue;
        }
        const data = (answer.json as { data: { status: string; reference: string; amount_minor: number } }).data;
        finals.set(transfer.id, data);
        if (data.reference !== transfer.reference || data.amount_minor !== transfer.amount) {
          transferBreaches.push(
            `transfer ${transfer.id} reads reference ${data.reference} / ${data.amount_minor}, acknowledged ${transfer.reference} / ${transfer.amount}`,
          );
        }
        const want = fateOf(tenant.mode, transfer.recipient);
        if (data.status !== want)
          transferBreaches.push(
            `${tenant.mode} transfer ${transfer.reference} to ${transfer.recipient} is ${data.status}, not ${want}`,
          );
      }
    }),
  );
  // The stuck ones as the operator sees them: running workflows, the never-confirmed ones in
  // `admin transfers stuck`, the sandbox's throttled ones retrying their submission.
  const listed = stuckListed();
  const connection = await Connection.connect({ address: stack!.temporalAddress, connectTimeout: 30_000 });
  let describedStuck = 0;
  try {
    const temporal = new TemporalClient({ connection });
    for (const transfer of seen.transfers.filter(stuckByDesign)) {
      const tenant = tenants[transfer.tenant]!;
      if (transfer.recipient === 'neverConfirmed' && !listed.has(transfer.id)) {
        transferBreaches.push(`never-confirmed transfer ${transfer.id} is not in admin transfers stuck`);
      }
      const description = await temporal.workflow.getHandle(`transfer:${tenant.id}:${transfer.reference}`).describe();
      describedStuck += 1;
      if (description.status.name !== 'RUNNING')
        transferBreaches.push(`stuck transfer ${transfer.reference}: workflow ${description.status.name}`);
      if (transfer.recipient === 'throttled') {
        // Its submission, answered 429 every time, is the activity the operator sees pending; once
        // its hour of retries has run out the transfer is `processing`, waiting for the bank's word
        // (docs/transfers.md, "Statuses"), and in `admin transfers stuck`.
        const pending = description.raw.pendingActivities ?? [];
        if (!pending.some((activity) => activity.activityType?.name === 'submitToBank') && !listed.has(transfer.id)) {
          transferBreaches.push(
            `throttled transfer ${transfer.reference}: neither its submission pending (${JSON.stringify(pending.map((a) => a.activityType?.name))}) nor in admin transfers stuck`,
          );
        }
      }
    }
  } finally {
    await connection.close();
  }
  const byStatus = new Map<string, number>();
  for (const final of finals.values()) byStatus.set(final.status, (byStatus.get(final.status) ?? 0) + 1);
  add(
    'every acknowledged transfer exists; terminal or visibly stuck, as its recipient says',
    transferBreaches,
    `${seen.transfers.length} transfers: ${[...byStatus].map(([status, n]) => `${n} ${status}`).join(', ')}; ${describedStuck} stuck ones seen running by Temporal, ${listed.size} in admin transfers stuck`,
  );

  // 3. None lost, none doubled: a create whose answer was lost resolved to exactly one transfer,
  // and each tenant has exactly the transfers it was told about.
  const onceBreaches: string[] = [];
  const retried = seen.transfers.filter((transfer) => transfer.lostAnswers > 0);
  for (const transfer of retried) {
    const tenant = tenants[transfer.tenant]!;
    const json = await read(client, tenant, {
      method: 'GET',
      template: '/api/v1/transfers',
      query: { reference: transfer.reference },
    });
    const ids = (json.data as { id: string }[]).map((item) => item.id);
    if (ids.length !== 1 || ids[0] !== transfer.id)
      onceBreaches.push(`reference ${transfer.reference} holds ${JSON.stringify(ids)}, acknowledged ${transfer.id}`);
  }
  for (const [index, tenant] of tenants.entries()) {
    const count = await total(client, tenant, { method: 'GET', template: '/api/v1/transfers' });
    const acknowledged = new Set(seen.transfers.filter((t) => t.tenant === index).map((t) => t.id)).size;
    if (count !== acknowledged)
      onceBreaches.push(`${tenant.name} has ${count} transfers, ${acknowledged} acknowledged`);
  }
  const refusals = seen.refused.filter((refusal) => refusal.code !== 'invalid_account');
  onceBreaches.push(...refusals.map((refusal) => `refusal ${refusal.code} for ${JSON.stringify(refusal.op)}`));
  add(
    'no transfer lost or doubled (lost answers retried by reference/Idempotency-Key)',
    onceBreaches,
    `${retried.length} creates retried after a lost answer, each one transfer; ${seen.refused.length} invalid_account refusals, nothing created`,
  );

  // 4. Card fundings: each acknowledged one applied once, as the card's state at its turn says.
  const cardBreaches: string[] = [];
  const fundedBy = new Map<number, number>();
  let succeeded = 0;
  for (const [index, tenant] of tenants.entries()) {
    for (const [cardIndex, card] of tenant.cards.entries()) {
      const history = await pagesOf<{
        id: string;
        amount_minor: number;
        status: string;
        idempotency_key: string | null;
        failure_reason: string | null;
      }>(client, tenant, {
        method: 'GET',
        template: '/api/v1/cards/{card_id}/funding/history',
        params: { card_id: card.id },
      });
      const mine = seen.fundings.filter((f) => f.tenant === index && f.card === cardIndex);
      if (history.length !== mine.length)
        cardBreaches.push(`card ${card.id} has ${history.length} fundings, ${mine.length} acknowledged`);
      let balance = 0;
      for (const funding of mine) {
        const rows = history.filter((row) => row.idempotency_key === funding.key);
        if (rows.length !== 1 || rows[0]!.id !== funding.fundingId) {
          cardBreaches.push(
            `funding ${funding.key} appears ${rows.length} times (acknowledged as ${funding.fundingId})`,
          );
          continue;
        }
        const row = rows[0]!;
        if (row.status !== funding.expected)
          cardBreaches.push(
            `funding ${funding.key} ${row.status} (${row.failure_reason}), expected ${funding.expected}`,
          );
        if (row.status === 'failed' && row.failure_reason !== 'card_locked')
          cardBreaches.push(`funding ${funding.key} failed: ${row.failure_reason}`);
        if (row.amount_minor !== funding.amount)
          cardBreaches.push(`funding ${funding.key} of ${row.amount_minor}, acknowledged ${funding.amount}`);
        if (row.status === 'succeeded') {
          balance += row.amount_minor;
          succeeded += 1;
        }
      }
      fundedBy.set(index, (fundedBy.get(index) ?? 0) + balance);
      const ofCard = <T>(template: string) =>
        dataOf<T>(client, tenant, { method: 'GET', template, params: { card_id: card.id } });
      const { available_minor: cardBalance } = await ofCard<{ available_minor: number }>(
        '/api/v1/cards/{card_id}/balance',
      );
      if (cardBalance !== balance)
        cardBreaches.push(`card ${card.id} balance ${cardBalance}, its succeeded fundings ${balance}`);
      const { status: state } = await ofCard<{ status: string }>('/api/v1/cards/{card_id}');
      if (state !== (card.locked ? 'locked' : 'active'))
        cardBreaches.push(
          `card ${card.id} is ${state}; its last acknowledged operation made it ${card.locked ? 'locked' : 'active'}`,
        );
    }
  }
  add(
    'card operations applied once, in order (fundings of a locked card fail, card_locked)',
    cardBreaches,
    `${seen.fundings.length} fundings: ${succeeded} succeeded, ${seen.fundings.length - succeeded} failed card_locked; card balances and lock states as acknowledged`,
  );

  // 5. Sandbox virtual-account credits: each (account, reference) counted once, at the amount answered 202.
  const creditBreaches: string[] = [];
  const creditedBy = new Map<number, number>();
  let duplicates = 0;
  let conflicts = 0;
  let sandboxCredits = 0;
  for (const [index, tenant] of tenants.entries()) {
    if (tenant.mode !== 'test') continue;
    for (const [vaIndex, va] of tenant.vas.entries()) {
      const groups = [...seen.credits.values()].filter(
        (group) => group.tenant === index && group.va === vaIndex && group.amounts.length,
      );
      sandboxCredits += groups.length;
      for (const group of groups) {
        duplicates += group.amounts.length - 1;
        conflicts += group.refused.length;
        creditBreaches.push(...creditAnswerBreaches(group));
      }
      const expectedTotal = groups.reduce((sum, group) => sum + group.amounts[0]!, 0);
      const account = await virtualAccountOf(client, tenant, va);
      if (account.total_received_minor !== expectedTotal || account.transaction_count !== groups.length) {
        creditBreaches.push(
          `account ${va}: ${account.total_received_minor} in ${account.transaction_count} credits, expected ${expectedTotal} in ${groups.length}`,
          ...(await creditTrails(va, groups)),
        );
      }
      creditedBy.set(index, (creditedBy.get(index) ?? 0) + expectedTotal);
    }
  }
  add(
    'virtual-account credits counted once (duplicates by reference; conflicts refused)',
    creditBreaches,
    `${sandboxCredits} credits, ${duplicates} duplicates counted once, ${conflicts} conflicting amounts refused 409`,
  );

  // 5b. Live credits, as the test bank notified them.
  const bankCallbacks = (await testBank!.callbacks()).callbacks;
  const live = await checkLiveCredits(tenants, client, liveCredits(bankCallbacks));
  results.push(live.result);
  for (const [index, amount] of live.creditedBy) creditedBy.set(index, amount);

  // 6. Wallets: funding − Σ(settled amount + fee) − Σ(reserved for stuck) − Σ card fundings + Σ credits.
  const walletBreaches: string[] = [];
  const walletDetail: string[] = [];
  for (const [index, tenant] of tenants.entries()) {
    let out = 0;
    let reserved = 0;
    for (const transfer of seen.transfers.filter((t) => t.tenant === index)) {
      const status = finals.get(transfer.id)?.status;
      if (status === 'successful') out += transfer.amount + transfer.fee;
      else if (status === 'pending') reserved += transfer.amount + transfer.fee;
    }
    const wallet = await dataOf<{ available_minor: number; pending_minor: number }>(client, tenant, {
      method: 'GET',
      template: '/api/v1/wallet',
    });
    const expected = tenant.funding - out - reserved - (fundedBy.get(index) ?? 0) + (creditedBy.get(index) ?? 0);
    if (wallet.available_minor !== expected)
      walletBreaches.push(
        `${tenant.name} available ${wallet.available_minor}, expected ${expected} (off by ${wallet.available_minor - expected})`,
      );
    if (wallet.pending_minor !== reserved)
      walletBreaches.push(`${tenant.name} pending ${wallet.pending_minor}, expected ${reserved}`);
    walletDetail.push(`${tenant.name} ${wallet.available_minor} available + ${wallet.pending_minor} pending`);
  }
  add(
    'every wallet = funding − Σ(settled amount + fee) − reserved − card fundings + credits, to the kobo',
    walletBreaches,
    walletDetail.join(', '),
  );

  // 6b. Every transfer against the banks' own records.
  results.push(...(await checkAtBanks(tenants, client, finals, bankCallbacks)));

  // 7. Webhooks.
  const coverage = await webhookCoverage(tenants, client);
  add(
    'every subscribed event reached its receiver, one webhook-id per event',
    [...coverage.missing, ...coverage.badIds],
    `${coverage.expected} subscribed events, ${coverage.received} requests received (${[...seen.receiverAnswers].map(([k, v]) => `${v} ${k}`).join(', ')})`,
  );
  add(
    "webhooks signed (standardwebhooks), no other tenant's or unsubscribed event",
    coverage.forbidden,
    `${coverage.received} requests verified`,
  );
  const endpointBreaches: string[] = [];
  for (const tenant of tenants) {
    const endpoints = await pagesOf<{ id: string; status: string }>(client, tenant, {
      method: 'GET',
      template: '/api/v1/webhook-endpoints',
    });
    for (const endpoint of tenant.endpoints) {
      const state = endpoints.find((e) => e.id === endpoint.id)?.status;
      const want = seen.goneAnswered.has(endpoint.path) ? 'disabled' : 'listening';
      if (state !== want) endpointBreaches.push(`${endpoint.path} is ${state}, expected ${want}`);
    }
  }
  add(
    'webhook endpoints disabled exactly when their receiver answered 410',
    endpointBreaches,
    seen.goneAnswered.size
      ? `disabled after 410: ${[...seen.goneAnswered].join(', ')}`
      : 'no 410 answered; all listening',
  );

  // 8. HTTP: only documented statuses; every operation answered within its deadline; no unexpected answer.
  add(
    'every HTTP answer is a status /openapi.json documents for its operation',
    client.record.undocumented.map((u) => `${u.operation} → ${u.status} ${u.body}`),
    `${[...client.record.answers.values()].reduce((sum, byStatus) => sum + [...byStatus.values()].reduce((a, b) => a + b, 0), 0)} answers; ${client.record.connectionErrors} connection errors and ${client.record.timeouts} timeouts counted apart`,
  );
  add(
    'every operation settled by an expected answer within its deadline',
    [
      ...seen.unresolved.map((op) => `no settling answer within ${OP_DEADLINE_MS / 1000} s: ${JSON.stringify(op)}`),
      ...seen.unexpected.map((u) => `${u.op.kind} answered ${u.status}: ${u.body}`),
    ],
    `${OPS} operations`,
  );
  // A lost-answers window in which no live submission came proves nothing: every run loses at least one.
  const noLostAnswer =
    seen.lossWindows.count > 0 && seen.answersLost.length === 0
      ? [`no answer was lost in ${seen.lossWindows.count} lost-answers windows: no live submission came`]
      : [];
  add(
    'faults injected as planned',
    [...seen.faultFailures, ...noLostAnswer],
    `${[...seen.kills.values()].reduce((a, b) => a + b, 0)} kills, ${[...seen.pauses.values()].reduce((a, b) => a + b.count, 0)} pauses, ${seen.callbackLoss.count} callback-loss windows, ${seen.lossWindows.count} lost-answers windows (${seen.answersLost.length} answers lost)`,
  );
  return results;
}

/**
 * The live tenant's credits: each applied once however often the test bank notified it (a
 * duplicate notification of the same reference, a callback sent again after a kill or a lost
 * answer), and not at all when every notification was lost in a callback-loss window; one
 * `virtual_account.credited` event each. What the live wallet gained, by tenant.
 */
async function checkLiveCredits(
  tenants: Tenant[],
  client: Client,
  credits: LiveCredit[],
): Promise<{ result: Result; creditedBy: Map<number, number> }> {
  const breaches: string[] = [];
  const creditedBy = new Map<number, number>();
  for (const group of seen.credits.values()) {
    if (TENANTS[group.tenant]!.mode === 'live' && new Set(group.amounts).size > 1)
      breaches.push(`the test bank answered 202 for one reference with amounts ${group.amounts.join(', ')}`);
  }
  for (const credit of credits) {
    if (credit.gaveUp && !credit.delivered)
      breaches.push(
        `the test bank gave up notifying credit ${credit.transactionReference}: the gateway never answered 2xx`,
      );
  }
  breaches.push(...(await liveCreditTotals(tenants, client, credits)));
  for (const [index, tenant] of tenants.entries()) {
    if (tenant.mode !== 'live') continue;
    const events = await pagesOf<{ data: { credit?: { transaction_reference?: string } } }>(client, tenant, {
      method: 'GET',
      template: '/api/v1/events',
      query: { type: 'virtual_account.credited' },
    });
    const eventsOf = new Map<string, number>();
    for (const event of events) {
      const reference = String(event.data.credit?.transaction_reference);
      eventsOf.set(reference, (eventsOf.get(reference) ?? 0) + 1);
    }
    const mine = credits.filter((credit) => credit.tenant === index);
    for (const credit of mine) {
      const want = credit.delivered ? 1 : 0;
      if ((eventsOf.get(credit.transactionReference) ?? 0) !== want)
        breaches.push(
          `credit ${credit.transactionReference} (${credit.delivered} notifications delivered) has ${eventsOf.get(credit.transactionReference) ?? 0} events, not ${want}`,
        );
    }
    const known = new Set(mine.map((credit) => credit.transactionReference));
    for (const reference of eventsOf.keys()) {
      if (!known.has(reference)) breaches.push(`an event for credit ${reference}, which the run never paid in`);
    }
    creditedBy.set(
      index,
      mine.filter((credit) => credit.delivered).reduce((sum, credit) => sum + credit.amount, 0),
    );
  }
  const notifications = credits.reduce((sum, credit) => sum + credit.delivered, 0);
  const applied = credits.filter((credit) => credit.delivered).length;
  const lostEvery = credits.filter((credit) => !credit.delivered && credit.dropped).length;
  const liveGroups = [...seen.credits.values()].filter((group) => TENANTS[group.tenant]!.mode === 'live');
  const conflicts = liveGroups.reduce((sum, group) => sum + group.refused.length, 0);
  breaches.push(...liveGroups.flatMap(creditAnswerBreaches));
  return {
    result: resultOf(
      'live credits applied once however often notified (not at all when every notification was lost)',
      breaches,
      `${credits.length} credits: ${applied} applied once from ${notifications} delivered notifications, ${lostEvery} not applied (every notification lost); ${conflicts} conflicting amounts refused 409 by the bank`,
    ),
    creditedBy,
  };
}

/** A bank's word about a transfer, in our words: its status there, or never taken (it holds none). */
type BankWord = 'successful' | 'failed' | 'pending' | 'never taken';

/** What each bank was sent and holds, read once, after settling, for the checks that weigh transfers against them. */
interface BankRecords {
  /**
   * The sandbox bank: each transfer it holds with its status, and each it only counted an attempt
   * of (`sandbox_bank.submission_attempts`, `6666666666`'s first try) as never taken. It keeps no
   * other offer it refused (`0000000000`, a throttled `4444444444`).
   */
  sandbox: Map<string, BankWord>;
  /** The test bank: how many times each reference was offered (its journal, `transfer.attempted`). */
  generic: Map<string, number>;
  /** …and the amounts it took each reference for (`transfer.accepted`). */
  genericTaken: Map<string, number[]>;
  /** The accounts the test bank opened (`account.opened`). */
  genericAccounts: string[];
  /** Paystack: how many times each reference was sent in a `POST /transfer` body, taken or not. */
  paystack: Map<string, number>;
  /** `transfers.connector` of every acknowledged transfer, by id (the API does not show it). */
  connectors: Map<string, string | null>;
  /** `transfer_connector_conflicts`: a bank's word about a transfer another holds. */
  conflicts: { transfer_id: string; holder: string; connector: string; said: string }[];
}

async function bankRecords(): Promise<BankRecords> {
  const ids = seen.transfers.map((transfer) => transfer.id);
  // The sandbox bank's records are in its own database, the gateway's in the gateway's.
  const bank = new pg.Client({ connectionString: stack!.bankDatabaseUrl, statement_timeout: 60_000 });
  const db = new pg.Client({ connectionString: stack!.databaseUrl, statement_timeout: 60_000 });
  await bank.connect();
  await db.connect();
  const sandbox = new Map<string, BankWord>();
  let connectors: Map<string, string | null>;
  let conflicts: BankRecords['conflicts'];
  try {
    for (const row of (
      await bank.query<{ reference: string }>(
        'select reference from sandbox_bank.submission_attempts where reference = any($1::text[])',
        [ids],
      )
    ).rows)
      sandbox.set(row.reference, 'never taken');
    for (const row of (
      await bank.query<{ reference: string; status: BankWord }>(
        'select reference, status from sandbox_bank.transfers where reference = any($1::text[])',
        [ids],
      )
    ).rows)
      sandbox.set(row.reference, row.status);
    connectors = new Map(
      (
        await db.query<{ id: string; connector: string | null }>(
          'select id::text as id, connector from transfers where id = any($1::uuid[])',
          [ids],
        )
      ).rows.map((row) => [row.id, row.connector]),
    );
    conflicts = (
      await db.query<BankRecords['conflicts'][number]>(
        'select transfer_id::text as transfer_id, holder, connector, said from transfer_connector_conflicts',
      )
    ).rows;
  } finally {
    await bank.end().catch(() => undefined);
    await db.end();
  }
  const generic = new Map<string, number>();
  const genericTaken = new Map<string, number[]>();
  const genericAccounts: string[] = [];
  for (const entry of testBank!.journal()) {
    if (entry.kind === 'transfer.attempted') {
      const { reference } = entry as { reference: string };
      generic.set(reference, (generic.get(reference) ?? 0) + 1);
    }
    if (entry.kind === 'transfer.accepted') {
      const { reference, amount_minor } = (
        entry as { transfer: { request: { reference: string; amount_minor: number } } }
      ).transfer.request;
      // Every offer is journaled as attempted first; a taken one counts as offered whatever the journal's age.
      if (!generic.has(reference)) generic.set(reference, 1);
      genericTaken.set(reference, [...(genericTaken.get(reference) ?? []), amount_minor]);
    }
    if (entry.kind === 'account.opened')
      genericAccounts.push((entry as { account: { accountNumber: string } }).account.accountNumber);
  }
  const paystackSent = new Map<string, number>();
  for (const reference of paystack!.transferReferences)
    paystackSent.set(reference, (paystackSent.get(reference) ?? 0) + 1);
  return { sandbox, generic, genericTaken, genericAccounts, paystack: paystackSent, connectors, conflicts };
}

/** The Paystack simulator's word about a transfer (its reference is our id, lowercased: src/connectors/paystack/reference.ts). */
function paystackWord(id: string): BankWord {
  const status = paystack!.transfers.get(id.toLowerCase())?.status;
  if (status === undefined) return 'never taken';
  if (status === 'success') return 'successful';
  if (status === 'failed' || status === 'reversed') return 'failed';
  return 'pending';
}

/** Which banks a transfer was ever sent to, by their own records, under its connector's name. */
function banksSent(records: BankRecords, id: string): string[] {
  return [
    ...(records.sandbox.has(id) ? ['sandbox'] : []),
    ...(records.generic.has(id) ? ['generic'] : []),
    ...(records.paystack.has(id.toLowerCase()) ? ['paystack'] : []),
  ];
}

/**
 * The transfers against the banks' own records (`bankRecords`): the two modes kept apart, no
 * transfer submitted to two connectors, each live transfer as the bank that holds it has it (the
 * test bank's `GET /transfers/{reference}` and settlement statements, the Paystack simulator's
 * transfers), every lost answer ended as its bank says, and one live event per fact.
 */
async function checkAtBanks(
  tenants: Tenant[],
  client: Client,
  finals: Map<string, { status: string }>,
  callbacks: BankCallback[],
): Promise<Result[]> {
  const records = await bankRecords();
  const isLive = (transfer: AckedTransfer) => TENANTS[transfer.tenant]!.mode === 'live';
  const liveTransfers = seen.transfers.filter(isLive);
  const liveIds = new Set(liveTransfers.map((transfer) => transfer.id));
  const sandboxIds = new Set(seen.transfers.filter((transfer) => !isLive(transfer)).map((transfer) => transfer.id));
  const liveAccounts = tenants.filter((tenant) => tenant.mode === 'live').flatMap((tenant) => tenant.vaNumbers);
  const holderOf = (transfer: AckedTransfer) => records.connectors.get(transfer.id) ?? null;
  const results: Result[] = [];

  // Apart: each bank knows only its own mode's transfers; the connector says so too.
  const apart: string[] = [];
  const whose = (reference: string) =>
    sandboxIds.has(reference) ? 'a sandbox transfer' : 'no transfer the run was acknowledged';
  for (const reference of records.generic.keys()) {
    if (!liveIds.has(reference)) apart.push(`the test bank was offered ${reference}, ${whose(reference)}`);
  }
  const liveByPaystackReference = new Map(liveTransfers.map((transfer) => [transfer.id.toLowerCase(), transfer]));
  for (const reference of records.paystack.keys()) {
    if (!liveByPaystackReference.has(reference)) apart.push(`Paystack was sent ${reference}, ${whose(reference)}`);
  }
  const opened = records.genericAccounts;
  if (opened.length !== liveAccounts.length || !opened.every((number) => liveAccounts.includes(number)))
    apart.push(`the test bank opened accounts ${opened.join(', ')}; the live tenant has ${liveAccounts.join(', ')}`);
  for (const id of liveIds) if (records.sandbox.has(id)) apart.push(`live transfer ${id} reached the sandbox bank`);
  const liveHeld = new Map<string, number>();
  for (const transfer of seen.transfers) {
    const connector = holderOf(transfer);
    const allowed = isLive(transfer) ? ['generic', 'paystack'] : ['sandbox'];
    if (connector === null || !allowed.includes(connector))
      apart.push(`transfer ${transfer.id} has connector ${connector ?? 'none'}, not ${allowed.join(' or ')}`);
    else if (isLive(transfer)) liveHeld.set(connector, (liveHeld.get(connector) ?? 0) + 1);
  }
  for (const tenant of tenants.filter((candidate) => candidate.mode === 'live')) {
    for (const va of tenant.vas) {
      const { provider } = await virtualAccountOf(client, tenant, va);
      if (provider !== 'generic') apart.push(`live virtual account ${va} is at ${provider}, not generic`);
    }
  }
  results.push(
    resultOf(
      'test and live never cross banks (connector recorded, sandbox bank tables, test bank journal, Paystack requests)',
      apart,
      `${liveIds.size} live transfers (${liveHeld.get('generic') ?? 0} held by the test bank, ${liveHeld.get('paystack') ?? 0} by Paystack; none by the sandbox bank), ${sandboxIds.size} sandbox ones (none offered to a live bank); ${opened.length} accounts opened at the test bank, all live`,
    ),
  );

  // Once: the banks a transfer was ever sent to, by their own records, are at most one, and that one
  // is the connector recorded on it. A transfer refused "not taken" by one bank may rightly go to the
  // next (decisions §13), but no refusal the run can meet does that: the test bank's 4444444444 has
  // no other connector (Paystack cannot resolve it), and the refusals planned behind a lost answer
  // meet only a repeat. So a second bank means a submission that may have been taken was sent
  // elsewhere (decisions §17), the double payment this run exists to catch.
  const once: string[] = [];
  const sentTo = new Map<string, number>();
  for (const transfer of seen.transfers) {
    const banks = banksSent(records, transfer.id);
    const connector = holderOf(transfer);
    const key = banks.length === 0 ? 'none' : banks.join('+');
    sentTo.set(key, (sentTo.get(key) ?? 0) + 1);
    if (banks.length > 1)
      once.push(
        `${TENANTS[transfer.tenant]!.mode} transfer ${transfer.id} to ${transfer.recipient} was sent to ${banks.join(' and ')} (held by ${connector ?? 'none'}, ${finals.get(transfer.id)?.status ?? 'unread'} in our books)`,
      );
    else if (banks.length === 1 && banks[0] !== connector)
      once.push(`transfer ${transfer.id} was sent to ${banks[0]} and is held by ${connector ?? 'none'}`);
    // Only the sandbox bank keeps no record of an offer it throttles; any other transfer without one
    // would mean a bank's record is missing, and the check above would prove nothing for it.
    else if (banks.length === 0 && !(TENANTS[transfer.tenant]!.mode === 'test' && transfer.recipient === 'throttled'))
      once.push(
        `transfer ${transfer.id} to ${transfer.recipient} is in no bank's record (held by ${connector ?? 'none'})`,
      );
  }
  once.push(
    ...records.conflicts.map(
      (conflict) =>
        `connector conflict: ${conflict.connector} said ${conflict.said} about transfer ${conflict.transfer_id}, held by ${conflict.holder}`,
    ),
  );
  results.push(
    resultOf(
      'no transfer submitted to two connectors; the one it was sent to is the one recorded on it',
      once,
      `${seen.transfers.length} transfers sent to: ${[...sentTo]
        .sort()
        .map(([banks, n]) => `${banks} ${n}`)
        .join(
          ', ',
        )} (none: sandbox ones throttled, of which the sandbox bank keeps no record); ${records.conflicts.length} connector conflicts`,
    ),
  );

  // Agree: how each live transfer ended in our books is how it ended at the bank that holds it,
  // and nothing was paid twice. The test bank is asked (`GET /transfers/{reference}`) for the ones
  // it holds; Paystack's simulator is read.
  const agree: string[] = [];
  const words = new Map<string, BankWord>();
  const queue = liveTransfers.filter((transfer) => holderOf(transfer) === 'generic');
  await Promise.all(
    Array.from({ length: 4 }, async () => {
      for (let transfer = queue.shift(); transfer; transfer = queue.shift()) {
        const { answer } = await testBank!.until(
          'GET',
          `/transfers/${encodeURIComponent(transfer.id)}`,
          undefined,
          60_000,
        );
        if (!answer || (answer.status !== 200 && answer.status !== 404)) {
          agree.push(`the test bank answered ${answer?.status ?? 'nothing'} for transfer ${transfer.id}`);
          continue;
        }
        words.set(transfer.id, answer.status === 200 ? (answer.json as { status: BankWord }).status : 'never taken');
      }
    }),
  );
  for (const transfer of liveTransfers)
    if (holderOf(transfer) === 'paystack') words.set(transfer.id, paystackWord(transfer.id));
  const byOutcome = new Map<string, number>();
  for (const transfer of liveTransfers) {
    const ours = finals.get(transfer.id)?.status;
    const bank = words.get(transfer.id);
    if (!ours || !bank) continue;
    const holder = holderOf(transfer)!;
    const outcome = `${ours}/${bank} at ${holder}`;
    byOutcome.set(outcome, (byOutcome.get(outcome) ?? 0) + 1);
    const fits =
      ours === 'successful'
        ? bank === 'successful'
        : ours === 'failed'
          ? transfer.recipient === 'throttled'
            ? bank === 'never taken'
            : bank === 'failed' || bank === 'never taken'
          : bank === 'pending';
    if (!fits)
      agree.push(`live transfer ${transfer.id} to ${transfer.recipient} is ${ours} in our books, ${bank} at ${holder}`);
    const amounts = records.genericTaken.get(transfer.id) ?? [];
    if (amounts.length > 1) agree.push(`the test bank took ${transfer.id} ${amounts.length} times`);
    if (amounts.some((amount) => amount !== transfer.amount))
      agree.push(`the test bank took ${transfer.id} for ${amounts.join(', ')}, ours is ${transfer.amount}`);
    const atPaystack = paystack!.transfers.get(transfer.id.toLowerCase());
    if (atPaystack && atPaystack.amount !== transfer.amount)
      agree.push(`Paystack took ${transfer.id} for ${atPaystack.amount}, ours is ${transfer.amount}`);
  }
  // Every UTC day of the run, as the test bank's statements list what it paid.
  const paid = new Map<string, { status: string; amount: number }[]>();
  const today = new Date().toISOString().slice(0, 10);
  for (let at = started; new Date(at).toISOString().slice(0, 10) <= today; at += 86_400_000) {
    const date = new Date(at).toISOString().slice(0, 10);
    const { answer } = await testBank!.until('GET', `/statements/settlement/${date}`, undefined, 60_000);
    if (answer?.status !== 200) {
      agree.push(`the test bank's statement of ${date} answered ${answer?.status ?? 'nothing'}`);
      continue;
    }
    for (const item of (
      answer.json as { items: { kind: string; reference: string; status: string; amount_minor: number }[] }
    ).items) {
      if (item.kind !== 'transfer') continue;
      paid.set(item.reference, [
        ...(paid.get(item.reference) ?? []),
        { status: item.status, amount: item.amount_minor },
      ]);
    }
  }
  for (const [reference, lines] of paid) {
    if (!liveIds.has(reference))
      agree.push(`the test bank's statement lists ${reference}, no live transfer of the run`);
    if (lines.length > 1) agree.push(`the test bank's statements list ${reference} ${lines.length} times`);
  }
  const paidOut = { generic: 0, paystack: 0 };
  for (const transfer of liveTransfers) {
    const ours = finals.get(transfer.id)?.status;
    const holder = holderOf(transfer);
    // Only the holder pays: the test bank's statements count what it holds, Paystack's record its own.
    const byBank = (paid.get(transfer.id) ?? []).filter((line) => line.status === 'successful');
    const byPaystack = paystackWord(transfer.id) === 'successful';
    if (holder !== 'generic' && byBank.length)
      agree.push(`transfer ${transfer.id}, held by ${holder}, is paid in the test bank's statements`);
    if (holder !== 'paystack' && byPaystack)
      agree.push(`transfer ${transfer.id}, held by ${holder}, is paid by Paystack`);
    if (holder === 'generic') {
      if (ours === 'successful') {
        paidOut.generic += transfer.amount;
        if (byBank.length !== 1 || byBank[0]!.amount !== transfer.amount)
          agree.push(
            `successful transfer ${transfer.id} is paid ${JSON.stringify(byBank)} in the test bank's statements`,
          );
      } else if (byBank.length)
        agree.push(`transfer ${transfer.id}, ${ours} in our books, is paid in the test bank's statements`);
    }
    if (holder === 'paystack') {
      if (ours === 'successful') paidOut.paystack += transfer.amount;
      // Whether Paystack paid it is its word, weighed above against ours.
    }
  }
  // The transfers the test bank's callback never told us of: resolved by status queries alone.
  const told = new Set(
    callbacks
      .filter((callback) => callback.type === 'transfer.completed' && callback.state === 'delivered')
      .map((callback) => String(callback.data.reference)),
  );
  const lost = new Set(
    callbacks
      .filter((callback) => callback.type === 'transfer.completed' && callback.state === 'dropped')
      .map((callback) => String(callback.data.reference)),
  );
  const byQuery = liveTransfers.filter(
    (transfer) => lost.has(transfer.id) && !told.has(transfer.id) && finals.get(transfer.id)?.status !== 'pending',
  ).length;
  results.push(
    resultOf(
      'live transfers as the bank that holds each has them (test bank or Paystack); none taken or paid twice',
      agree,
      `${[...byOutcome]
        .sort()
        .map(([outcome, n]) => `${n} ${outcome}`)
        .join(
          ', ',
        )} (ours/holder's); paid out once each: ${paidOut.generic} kobo by the test bank, ${paidOut.paystack} by Paystack; ${byQuery} resolved by status query with their callback lost`,
    ),
  );

  results.push(checkLostAnswers(records, finals, words));

  // One event per fact: a transfer.created for each live transfer, a transfer.settled or
  // transfer.failed for each that ended (the live tenant has no endpoint to receive them).
  const eventBreaches: string[] = [];
  let events = 0;
  for (const [index, tenant] of tenants.entries()) {
    if (tenant.mode !== 'live') continue;
    const counts = new Map<string, number>();
    for (const type of ['transfer.created', 'transfer.settled', 'transfer.failed']) {
      for (const event of await pagesOf<{ data: { id: string } }>(client, tenant, {
        method: 'GET',
        template: '/api/v1/events',
        query: { type },
      })) {
        events += 1;
        const key = `${type}:${event.data.id}`;
        counts.set(key, (counts.get(key) ?? 0) + 1);
      }
    }
    const mine = liveTransfers.filter((transfer) => transfer.tenant === index);
    for (const transfer of mine) {
      const status = finals.get(transfer.id)?.status;
      const want = {
        'transfer.created': 1,
        'transfer.settled': status === 'successful' ? 1 : 0,
        'transfer.failed': status === 'failed' ? 1 : 0,
      };
      for (const [type, n] of Object.entries(want)) {
        const got = counts.get(`${type}:${transfer.id}`) ?? 0;
        if (got !== n) eventBreaches.push(`${status} live transfer ${transfer.id} has ${got} ${type} events, not ${n}`);
        counts.delete(`${type}:${transfer.id}`);
      }
    }
    eventBreaches.push(...[...counts.keys()].map((key) => `an event ${key} of no acknowledged live transfer`));
  }
  results.push(
    resultOf(
      'live events: one per transfer created, settled or failed',
      eventBreaches,
      `${events} transfer events for ${liveTransfers.length} live transfers`,
    ),
  );
  return results;
}

/**
 * Every transfer whose answer was lost: by a planned fault (the lost-answers windows, at the test
 * bank or Paystack) or by its recipient's fate (`3333333333`, taken and answered 500 or not at all,
 * at every bank). Each is an acknowledged transfer (so the wallet invariant above weighed it), held
 * by the bank that lost its answer, ended as that bank says and as its recipient's fate says, and,
 * where the bank counts its offers (the test bank, Paystack), was sent exactly once: after an
 * ambiguous answer only the holder's status query decides (decisions §17). `words` holds the live
 * transfers' holders' words; a sandbox one's is the sandbox bank's table.
 */
function checkLostAnswers(
  records: BankRecords,
  finals: Map<string, { status: string }>,
  words: Map<string, BankWord>,
): Result {
  const breaches: string[] = [];
  const byId = new Map(seen.transfers.map((transfer) => [transfer.id.toLowerCase(), transfer]));
  const lost = new Map<string, { transfer: AckedTransfer; bank: string; by: 'fault' | 'fate' }>();
  for (const { bank, reference } of seen.answersLost) {
    const transfer = byId.get(reference.toLowerCase());
    if (!transfer) {
      breaches.push(`${bank} lost its answer to ${reference}, which is no transfer the run was acknowledged`);
      continue;
    }
    lost.set(transfer.id, { transfer, bank, by: 'fault' });
  }
  for (const transfer of seen.transfers) {
    if (transfer.recipient === 'flaky' && !lost.has(transfer.id))
      lost.set(transfer.id, { transfer, bank: records.connectors.get(transfer.id) ?? 'none', by: 'fate' });
  }
  const outcomes = new Map<string, number>();
  for (const { transfer, bank, by } of lost.values()) {
    const mode = TENANTS[transfer.tenant]!.mode;
    const holder = records.connectors.get(transfer.id);
    const ours = finals.get(transfer.id)?.status;
    const theirs = mode === 'test' ? records.sandbox.get(transfer.id) : words.get(transfer.id);
    const fate = fateOf(mode, transfer.recipient);
    const name = `${mode} transfer ${transfer.id} to ${transfer.recipient} (answer lost at ${bank} by ${by})`;
    if (holder !== bank) breaches.push(`${name} is held by ${holder ?? 'none'}`);
    if (ours !== fate || theirs !== fate)
      breaches.push(
        `${name} is ${ours ?? 'unread'} in our books, ${theirs ?? 'unread'} at ${bank}; its fate is ${fate}`,
      );
    const offers =
      bank === 'generic'
        ? records.generic.get(transfer.id)
        : bank === 'paystack'
          ? records.paystack.get(transfer.id.toLowerCase())
          : undefined;
    if (bank !== 'sandbox' && offers !== 1) breaches.push(`${name} was sent to ${bank} ${offers ?? 0} times`);
    const key = `${by} ${bank} ${ours ?? 'unread'}`;
    outcomes.set(key, (outcomes.get(key) ?? 0) + 1);
  }
  breaches.push(
    ...seen.retriesRefused.map(
      ({ bank, fault, reference }) =>
        `${bank} was sent ${reference} again after losing its answer: the retry met ${fault}, planned for a gateway that retries`,
    ),
  );
  const byFault = seen.answersLost.length;
  return resultOf(
    'every transfer whose answer was lost ended as the bank that holds it says, sent once',
    breaches,
    `${lost.size} transfers: ${byFault} answers lost by the lost-answers fault (${seen.answersLost.filter((a) => a.bank === 'generic').length} at the test bank, ${seen.answersLost.filter((a) => a.bank === 'paystack').length} at Paystack), ${lost.size - byFault} by their recipient's fate (3333333333); ${[
      ...outcomes,
    ]
      .sort()
      .map(([key, n]) => `${n} ${key}`)
      .join(', ')}; all acknowledged, so in the wallet sums; no retry met the refusals planned behind them`,
  );
}

function table(rows: string[][]): string {
  const widths = rows[0]!.map((_, column) => Math.max(...rows.map((row) => (row[column] ?? '').length)));
  return rows
    .map((row) => `  ${row.map((cell, column) => cell.padEnd(widths[column]!)).join('  ')}`.trimEnd())
    .join('\n');
}

function summary(client: Client, results: Result[], planned: number): void {
  const lines: string[] = [];
  lines.push('', `chaos summary: seed ${SEED}, ${OPS} operations, ${CONCURRENCY} at a time, ${elapsed()}`, '');
  lines.push(
    table([
      ['operation', 'count', 'answers'],
      ...[...seen.byKind].map(([kind, outcomes]) => [
        kind,
        String([...outcomes.values()].reduce((a, b) => a + b, 0)),
        [...outcomes]
          .sort()
          .map(([status, n]) => `${status}×${n}`)
          .join(' '),
      ]),
    ]),
  );
  lines.push('');
  lines.push(
    table([
      ['HTTP operation', 'statuses'],
      ...[...client.record.answers].sort().map(([operation, byStatus]) => [
        operation,
        [...byStatus]
          .sort((a, b) => a[0] - b[0])
          .map(([status, n]) => `${status}×${n}`)
          .join(' '),
      ]),
      ['(no answer)', `connection errors ${client.record.connectionErrors}, timeouts ${client.record.timeouts}`],
    ]),
  );
  lines.push('');
  lines.push(
    table([
      ['fault', 'count', ''],
      ...(['api', 'worker', 'sandbox-bank', 'test-bank'] as const).map((what) => [
        `SIGKILL ${what}`,
        String(seen.kills.get(what) ?? 0),
        '',
      ]),
      ...(['postgres', 'temporal'] as const).map((what) => {
        const pauses = seen.pauses.get(what) ?? { count: 0, ms: 0 };
        return [`SIGSTOP ${what}`, String(pauses.count), `${(pauses.ms / 1000).toFixed(1)} s paused in all`];
      }),
      [
        'callbacks lost test-bank',
        String(seen.callbackLoss.count),
        `${(seen.callbackLoss.ms / 1000).toFixed(1)} s dropping in all`,
      ],
      [
        'answers lost',
        String(seen.answersLost.length),
        `${seen.answersLost.filter((lost) => lost.bank === 'generic').length} at the test bank, ` +
          `${seen.answersLost.filter((lost) => lost.bank === 'paystack').length} at Paystack, in ${seen.lossWindows.count} windows ` +
          `(${(seen.lossWindows.ms / 1000).toFixed(1)} s in all); ${seen.enquiriesRefused} live name enquiries answered 503 there; ` +
          `${seen.retriesRefused.length} retries met the refusal planned behind them`,
      ],
      ['planned', String(planned), ''],
    ]),
  );
  lines.push('');
  lines.push(
    table([['invariant', 'result', 'detail'], ...results.map((r) => [r.name, r.ok ? 'pass' : 'FAIL', r.detail])]),
  );
  const failed = results.filter((r) => !r.ok).length;
  lines.push(
    '',
    failed
      ? `chaos: ${failed} of ${results.length} invariants FAILED (stack log: ${logFile})`
      : `chaos: all ${results.length} invariants passed`,
  );
  process.stdout.write(`${lines.join('\n')}\n`);
}

let ok = false;
try {
  ok = await main();
} catch (error) {
  say(`failed: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}`);
  say(`stack log: ${logFile}`);
} finally {
  await cleanup();
}
say(`done in ${elapsed()}`);
process.exit(ok ? 0 : 1);
