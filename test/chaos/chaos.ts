// `npm run chaos`: a whole-stack fault run on the embedded topology (issue #14 item 5). It starts
// `npm start`'s launcher on free ports (test/bench/stack.ts, with STACK_CHILD_EXIT=restart), drives
// N mixed operations over the public REST API (transfers to every magic account of the sandbox bank,
// card lock/unlock/fund/jit-fund, virtual-account credits with duplicates and conflicts, reads)
// while a webhook receiver on 127.0.0.1 fails, hangs, throttles and (on one endpoint) answers 410,
// and meanwhile SIGKILLs the API, the worker and the sandbox bank and pauses PostgreSQL and Temporal
// (SIGSTOP/SIGCONT). Then it waits (bounded) for the gateway to settle and checks the invariants
// against its own record of acknowledged operations; exit 1 on any breach. Every wait has a
// deadline, and the stack it started is stopped on every way out (Ctrl-C included).
import { appendFileSync, mkdirSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { parseArgs } from 'node:util';
import { Client as TemporalClient, Connection } from '@temporalio/client';
import { Webhook } from 'standardwebhooks';
import { PROJECT_ROOT } from '../../src/stack/tools.ts';
import { type BenchStack, startBenchStack } from '../bench/stack.ts';
import { type ReceivedWebhook, type Receiver, startReceiver } from '../support/receiver.ts';
import { Faults, type Killable, type Pausable } from './faults.ts';
import { type Answer, Client, type RequestSpec, documentedStatuses, errorCode, recorder } from './http.ts';
import { type Prng, prng } from './prng.ts';

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
// A few faults even in a short run (each kind at least once), then one per 100 operations.
const FAULTS = flags.faults === undefined ? Math.max(7, Math.round(OPS / 100)) : positiveInt('faults', flags.faults);
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

const MAGIC = {
  ordinary: '',
  invalid: '0000000000',
  failsAtBank: '1111111111',
  neverConfirmed: '2222222222',
  flaky: '3333333333',
  throttled: '4444444444',
} as const;
type Recipient = keyof typeof MAGIC;
const BANK_CODES = ['044', '058', '221', '023', '030', '068', '050', '301', '232', '070', '082', '011', '057', '033'];

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
  | { kind: 'read'; tenant: number; what: 'wallet' | 'transfers' | 'transfer' | 'card-balance' | 'events' };

const TENANTS = [
  { name: 'chaos-a', cards: 4, vas: 3, share: 0.8 },
  { name: 'chaos-b', cards: 2, vas: 1, share: 0.2 },
];

function plan(random: Prng): Op[] {
  const ops: Op[] = [];
  const credits: { tenant: number; va: number; reference: string; amount: number }[] = [];
  for (let i = 0; i < OPS; i += 1) {
    const tenant = random.chance(TENANTS[0]!.share) ? 0 : 1;
    const spec = TENANTS[tenant]!;
    const kind = random.weighted({
      transfer: 40,
      lock: 5,
      unlock: 5,
      fund: 7,
      'jit-fund': 7,
      credit: 15,
      'credit-duplicate': 5,
      'credit-conflict': 1,
      read: 15,
    });
    const key = `chaos-${SEED}-${i}`;
    if (kind === 'transfer') {
      const recipient = random.weighted<Recipient>({
        ordinary: 64,
        invalid: 6,
        failsAtBank: 8,
        neverConfirmed: 6,
        flaky: 10,
        throttled: 6,
      });
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
        bank: random.pick(BANK_CODES),
        withKey: random.chance(0.5),
      });
    } else if (kind === 'lock' || kind === 'unlock') {
      ops.push({ kind, tenant, card: random.int(0, spec.cards - 1), key });
    } else if (kind === 'fund' || kind === 'jit-fund') {
      ops.push({ kind, tenant, card: random.int(0, spec.cards - 1), key, amount: random.int(100, 50_000) });
    } else if (kind === 'credit' || credits.length === 0) {
      const credit = { tenant, va: random.int(0, spec.vas - 1), reference: key, amount: random.int(1, 1_000_000) };
      credits.push(credit);
      ops.push({ kind: 'credit', ...credit });
    } else if (kind === 'credit-duplicate') {
      ops.push({ kind, ...random.pick(credits) });
    } else if (kind === 'credit-conflict') {
      const earlier = random.pick(credits);
      ops.push({ kind, ...earlier, amount: earlier.amount + random.int(1, 1_000) });
    } else {
      ops.push({
        kind: 'read',
        tenant,
        what: random.pick(['wallet', 'transfers', 'transfer', 'card-balance', 'events'] as const),
      });
    }
  }
  return ops;
}

type FaultKind = `kill ${Killable}` | `pause ${Pausable}`;
const FAULT_KINDS: FaultKind[] = ['kill api', 'kill worker', 'kill sandbox-bank', 'pause postgres', 'pause temporal'];

function faultPlan(random: Prng): { at: number; kind: FaultKind; pauseMs: number }[] {
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
  return kinds.slice(0, FAULTS).map((kind, i) => ({ at: at[i]!, kind, pauseMs: random.int(1_500, 5_000) }));
}

// ---------------------------------------------------------------------------------------------
// What the run saw.

interface Tenant {
  name: string;
  id: string;
  key: string;
  funding: number;
  cards: { id: string; locked: boolean }[];
  vas: string[];
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

const seen = {
  opsDone: 0,
  opsStarted: 0,
  byKind: new Map<string, Map<string, number>>(),
  transfers: [] as AckedTransfer[],
  refused: [] as { op: Op; status: number; code: string | undefined }[],
  unexpected: [] as { op: Op; status: number; body: string }[],
  unresolved: [] as Op[],
  fundings: [] as AckedFunding[],
  /** `${tenant}|${va}|${reference}` → the amounts answered 202. */
  credits: new Map<string, { tenant: number; va: number; amounts: number[]; conflicts: number }>(),
  kills: new Map<string, number>(),
  pauses: new Map<string, { count: number; ms: number }>(),
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
let stopping = false;
let cleaned: Promise<void> | undefined;

async function cleanup(): Promise<void> {
  cleaned ??= (async () => {
    stopping = true;
    faults?.resumeAll();
    await receiver?.close().catch(() => {});
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
  stack = await startBenchStack(say, {
    name: 'chaos',
    env: {
      LOG_LEVEL: 'warn',
      STACK_CHILD_EXIT: 'restart',
      SANDBOX_BANK_COMPLETION_DELAY_MS: '200',
      SANDBOX_BANK_HANG_MS: '8000',
      WEBHOOK_RETRY_SCHEDULE: '0s,1s,2s,3s,4s,5s,5s,5s,5s,5s',
      WEBHOOK_TIMEOUT_MS: '3000',
    },
    output: (chunk) => appendFileSync(logFile, chunk),
  });
  faults = new Faults(stack.launcherPid);
  const client = new Client(stack.apiUrl, recorder(), await documentedStatuses(stack.apiUrl));
  const tenants = await setUp(stack, client);

  const progress = setInterval(() => {
    const kills = [...seen.kills.values()].reduce((a, b) => a + b, 0);
    const pauses = [...seen.pauses.values()].reduce((a, b) => a + b.count, 0);
    const answers503 = [...client.record.answers.values()].reduce((sum, byStatus) => sum + (byStatus.get(503) ?? 0), 0);
    say(
      `${elapsed()}: ${seen.opsDone}/${OPS} ops, ${kills} kills, ${pauses} pauses, ` +
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
  say(`${elapsed()}: ${settled.length ? `not settled: ${settled.join('; ')}` : 'settled'}; checking`);
  const results = await check(tenants, client);
  summary(client, results, faultsPlanned.length);
  return results.every((result) => result.ok);
}

async function setUp(running: BenchStack, client: Client): Promise<Tenant[]> {
  const tenants: Tenant[] = [];
  const secretRandom = prng(SEED ^ 0xc0ffee);
  for (const [index, spec] of TENANTS.entries()) {
    const funding = 100_000_000_000;
    const run = running.adminRun(
      120_000,
      'tenant',
      'create',
      '--name',
      `${spec.name}-${SEED}`,
      '--wallet-minor',
      String(funding),
      '--daily-limit-minor',
      String(funding),
    );
    if (run.code !== 0) throw new Error(`set-up: admin tenant create exited ${run.code}: ${run.stderr.slice(0, 500)}`);
    const created = run.json as { tenant_id: string; api_key: string };
    const tenant: Tenant = {
      name: spec.name,
      id: created.tenant_id,
      key: created.api_key,
      funding,
      cards: [],
      vas: [],
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
    const endpoints =
      index === 0
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
      tenant.vas.push((answer.json as { data: { id: string } }).data.id);
    }
    tenants.push(tenant);
  }
  say(
    `tenants ${tenants.map((tenant) => `${tenant.name} (${tenant.cards.length} cards, ${tenant.vas.length} virtual accounts, endpoints ${tenant.endpoints.map((e) => e.path).join(', ')})`).join(', ')}`,
  );
  return tenants;
}

async function runFaults(planned: { at: number; kind: FaultKind; pauseMs: number }[]): Promise<void> {
  for (const fault of planned) {
    while (seen.opsStarted < fault.at && seen.opsDone < OPS && !stopping) {
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
    if (stopping) return;
    const [verb, what] = fault.kind.split(' ') as ['kill' | 'pause', string];
    if (verb === 'kill') {
      const target = what as Killable;
      const pid = faults!.kill(target);
      if (pid === undefined) {
        seen.faultFailures.push(`${target} was not running when it was to be killed`);
        continue;
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
    } else {
      const target = what as Pausable;
      const stopped = faults!.pause(target);
      await new Promise((resolve) => setTimeout(resolve, fault.pauseMs));
      faults!.resumeAll();
      if (stopped === 0) seen.faultFailures.push(`no ${target} process found to pause`);
      const pauses = seen.pauses.get(target) ?? { count: 0, ms: 0 };
      seen.pauses.set(target, { count: pauses.count + 1, ms: pauses.ms + fault.pauseMs });
    }
  }
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
  const request = requestOf(op, tenant);
  const { answer, lost } = await client.until(tenant.key, request, OP_DEADLINE_MS, () => stopping);
  if (!answer) {
    seen.unresolved.push(op);
    tally(op.kind, 'unresolved');
    return;
  }
  tally(op.kind, String(answer.status));
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
      const group = seen.credits.get(key) ?? { tenant: op.tenant, va: op.va, amounts: [], conflicts: 0 };
      seen.credits.set(key, group);
      if (answer.status === 202) group.amounts.push(op.amount);
      else if (answer.status === 409 && op.kind !== 'credit-duplicate') group.conflicts += 1;
      else unexpected();
      return;
    }
    case 'read':
      if (answer.status !== 200) unexpected();
  }
}

function requestOf(op: Op, tenant: Tenant): RequestSpec {
  switch (op.kind) {
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
    case 'lock':
    case 'unlock':
      return {
        method: 'POST',
        template: `/api/v1/cards/{card_id}/${op.kind}`,
        params: { card_id: tenant.cards[op.card]!.id },
        body: {},
        idempotencyKey: op.key,
      };
    case 'fund':
    case 'jit-fund':
      return {
        method: 'POST',
        template: `/api/v1/cards/{card_id}/${op.kind}`,
        params: { card_id: tenant.cards[op.card]!.id },
        body: { amount_minor: op.amount, currency: 'NGN', idempotency_key: op.key },
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

const stuckRecipients = new Set<Recipient>(['neverConfirmed', 'throttled']);

/** What still moves; empty once the gateway has settled. */
async function unsettled(tenants: Tenant[], client: Client): Promise<string[]> {
  const left: string[] = [];
  for (const [index, tenant] of tenants.entries()) {
    const stuck = seen.transfers.filter((t) => t.tenant === index && stuckRecipients.has(t.recipient)).length;
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
  return left;
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

async function check(tenants: Tenant[], client: Client): Promise<Result[]> {
  const results: Result[] = [];
  const add = (name: string, breaches: string[], detail: string) =>
    results.push({
      name,
      ok: breaches.length === 0,
      detail: breaches.length ? `${breaches.length} breaches: ${breaches.slice(0, 5).join(' | ')}` : detail,
    });

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
        const want =
          transfer.recipient === 'failsAtBank'
            ? 'failed'
            : stuckRecipients.has(transfer.recipient)
              ? 'pending'
              : 'successful';
        if (data.status !== want)
          transferBreaches.push(
            `transfer ${transfer.reference} to ${transfer.recipient} is ${data.status}, not ${want}`,
          );
      }
    }),
  );
  // The stuck ones as the operator sees them: running workflows, the never-confirmed ones in
  // `admin transfers stuck`, the throttled ones retrying their submission.
  const listed = stuckListed();
  const connection = await Connection.connect({ address: stack!.temporalAddress, connectTimeout: 30_000 });
  let describedStuck = 0;
  try {
    const temporal = new TemporalClient({ connection });
    for (const transfer of seen.transfers.filter((t) => stuckRecipients.has(t.recipient))) {
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
        // (README, "Failure semantics"), and in `admin transfers stuck`.
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
      const cardBalance = (
        (
          await read(client, tenant, {
            method: 'GET',
            template: '/api/v1/cards/{card_id}/balance',
            params: { card_id: card.id },
          })
        ).data as { available_minor: number }
      ).available_minor;
      if (cardBalance !== balance)
        cardBreaches.push(`card ${card.id} balance ${cardBalance}, its succeeded fundings ${balance}`);
      const state = (
        (
          await read(client, tenant, {
            method: 'GET',
            template: '/api/v1/cards/{card_id}',
            params: { card_id: card.id },
          })
        ).data as { status: string }
      ).status;
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

  // 5. Virtual-account credits: each (account, reference) counted once, at the amount answered 202.
  const creditBreaches: string[] = [];
  const creditedBy = new Map<number, number>();
  let duplicates = 0;
  let conflicts = 0;
  for (const [index, tenant] of tenants.entries()) {
    for (const [vaIndex, va] of tenant.vas.entries()) {
      const groups = [...seen.credits.values()].filter(
        (group) => group.tenant === index && group.va === vaIndex && group.amounts.length,
      );
      for (const group of groups) {
        duplicates += group.amounts.length - 1;
        conflicts += group.conflicts;
        if (new Set(group.amounts).size !== 1)
          creditBreaches.push(`one reference answered 202 for amounts ${group.amounts.join(', ')}`);
      }
      const expectedTotal = groups.reduce((sum, group) => sum + group.amounts[0]!, 0);
      const account = (
        await read(client, tenant, { method: 'GET', template: '/api/v1/virtual-accounts/{id}', params: { id: va } })
      ).data as {
        total_received_minor: number;
        transaction_count: number;
      };
      if (account.total_received_minor !== expectedTotal || account.transaction_count !== groups.length) {
        creditBreaches.push(
          `account ${va}: ${account.total_received_minor} in ${account.transaction_count} credits, expected ${expectedTotal} in ${groups.length}`,
        );
      }
      creditedBy.set(index, (creditedBy.get(index) ?? 0) + expectedTotal);
    }
  }
  add(
    'virtual-account credits counted once (duplicates by reference; conflicts refused)',
    creditBreaches,
    `${[...seen.credits.values()].filter((g) => g.amounts.length).length} credits, ${duplicates} duplicates counted once, ${conflicts} conflicting amounts refused 409`,
  );

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
    const wallet = (await read(client, tenant, { method: 'GET', template: '/api/v1/wallet' })).data as {
      available_minor: number;
      pending_minor: number;
    };
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
  add(
    'faults injected as planned',
    seen.faultFailures,
    `${[...seen.kills.values()].reduce((a, b) => a + b, 0)} kills, ${[...seen.pauses.values()].reduce((a, b) => a + b.count, 0)} pauses`,
  );
  return results;
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
      ...(['api', 'worker', 'sandbox-bank'] as const).map((what) => [
        `SIGKILL ${what}`,
        String(seen.kills.get(what) ?? 0),
        '',
      ]),
      ...(['postgres', 'temporal'] as const).map((what) => {
        const pauses = seen.pauses.get(what) ?? { count: 0, ms: 0 };
        return [`SIGSTOP ${what}`, String(pauses.count), `${(pauses.ms / 1000).toFixed(1)} s paused in all`];
      }),
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
