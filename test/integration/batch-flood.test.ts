// Issue #38's batch flood (decisions §18), on the gateway as production runs it (the API, the worker
// and the webhook worker as processes, on a Temporal server of this file's own): a sandbox tenant
// with an empty wallet posts batches of 1,000 items at 10 a second, 5 of them open at a time (the 6th
// refused 429 {limit: 5, open: 5}) and 5,000 items in any 10 seconds (BULK_ITEMS_PER_MINUTE; past it
// 429 {limit: 5000, window_seconds: 10}), while another tenant makes live single transfers against the
// generic test bank. Every live create must answer 201, every flooded item be refused
// `insufficient_balance`, and the sandbox bank receive no name enquiry at all for the flood (counted
// where they arrive). The creates' latencies, quiet and flooded, are printed for the record
// (docs/performance.md, "A batch flood"; no timing is asserted). Before the bounds, each such batch
// asked the sandbox bank 1,000 names, and ran on the worker slots live transfers run on.
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as delay } from 'node:timers/promises';
import { Client, Connection } from '@temporalio/client';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { postingsTotal, walletBalance } from '../../src/ledger/ledger.ts';
import { type TemporalDevServerHandle, startTemporalDevServer } from '../../src/stack/temporal-dev.ts';
import { issueKey } from '../../src/tenants/tenants.ts';
import { transferBatchWorkflowId, transferWorkflowId } from '../../workflows/transfers/definitions.ts';
import { timedCall, transferBody } from '../support/api.ts';
import { createFundedTenant } from '../support/app.ts';
import { type TestDatabase, createTestDatabase } from '../support/database.ts';
import { eventually } from '../support/eventually.ts';
import { freePorts } from '../support/ports.ts';
import { type GatewayProcesses, startGatewayProcesses } from '../support/processes.ts';
import { type TestSandboxBank, startSandboxBank } from '../support/sandbox-bank.ts';
import { type GenericTestBank, startGenericTestBank } from '../simulators/generic-bank.ts';

/** Live creates per phase, one after another; phases quiet and flooded in turns, ROUNDS of each. */
const CREATES = 50;
const ROUNDS = 4;
const BATCH_ITEMS = 1_000;
/** How often the flooder posts a batch: the issue's 10 a second. */
const FLOOD_EVERY_MS = 100;
/** The flood's recipient: an account of its own, so its enquiries could be told from any other at the bank. */
const FLOOD_ACCOUNT = '5550001000';
const BANK_KEY = `bank-key-${randomBytes(8).toString('hex')}`;
const BANK_SECRET = `whsec_${randomBytes(32).toString('base64')}`;

let db: TestDatabase;
let temporal: TemporalDevServerHandle;
let temporalDir: string;
let bankDir: string;
let sandboxBank: TestSandboxBank;
let liveBank: GenericTestBank;
let gateway: GatewayProcesses;
let connection: Connection;
let client: Client;

beforeAll(async () => {
  const [temporalPort, apiPort, bankPort] = (await freePorts(3)) as [number, number, number];
  temporalDir = mkdtempSync(join(tmpdir(), 'gateway-batch-flood-'));
  bankDir = mkdtempSync(join(tmpdir(), 'gateway-batch-flood-bank-'));
  db = await createTestDatabase();
  temporal = await startTemporalDevServer({ port: temporalPort, dbFile: join(temporalDir, 'temporal.db') });
  const gatewayUrl = `http://127.0.0.1:${apiPort}`;
  sandboxBank = await startSandboxBank({ databaseUrl: db.url, gatewayUrl });
  liveBank = await startGenericTestBank({
    apiKey: BANK_KEY,
    webhookSecret: BANK_SECRET,
    dataDir: bankDir,
    port: bankPort,
    callbackUrl: `${gatewayUrl}/provider-callbacks/generic`,
    completionDelayMs: 200,
  });
  gateway = await startGatewayProcesses({
    databaseUrl: db.url,
    temporalAddress: temporal.address,
    taskQueue: 'gateway',
    bankUrl: sandboxBank.url,
    port: apiPort,
    env: {
      // The per-key request budget is not what this measures: the flood's 429s are the open batches'.
      RATE_LIMIT_PER_MINUTE: '100000',
      LIVE_CONNECTORS: 'generic',
      GENERIC_BANK_URL: liveBank.url,
      GENERIC_BANK_API_KEY: BANK_KEY,
      GENERIC_BANK_WEBHOOK_SECRET: BANK_SECRET,
    },
  });
  connection = await Connection.connect({ address: temporal.address });
  client = new Client({ connection });
}, 180_000);
afterAll(async () => {
  await connection?.close();
  if (gateway) expect(await gateway.stop()).toEqual([0, 0, 0]);
  await liveBank?.stop();
  await sandboxBank?.close();
  await temporal?.stop();
  await db?.drop();
  for (const dir of [temporalDir, bankDir]) if (dir) rmSync(dir, { recursive: true, force: true });
}, 120_000);

const call = (key: string, method: string, path: string, body?: unknown) =>
  timedCall(gateway.url, key, method, path, body);

async function sql<T>(query: string, params: unknown[] = []): Promise<T[]> {
  return db.orm.em.fork().execute<T[]>(query, params);
}

let batchSequence = 0;
/** A batch of 1,000 items, each more than an empty wallet can pay. */
function floodBatch() {
  return {
    batch_reference: `flood-${batchSequence++}`,
    transfers: Array.from({ length: BATCH_ITEMS }, () => ({
      amount_minor: 100_000,
      recipient_account: FLOOD_ACCOUNT,
      recipient_bank_code: '058',
      narration: 'Flood',
    })),
  };
}

/** The nearest-rank percentile of some latencies, in whole ms. */
function percentile(values: number[], q: number): number {
  const sorted = [...values].sort((a, b) => a - b);
  return Math.round(sorted[Math.max(0, Math.ceil(q * sorted.length) - 1)]!);
}

function summary(creates: { status: number; ms: number }[]) {
  const ms = creates.map((create) => create.ms);
  return {
    statuses: creates.reduce<Record<number, number>>((counts, { status }) => {
      counts[status] = (counts[status] ?? 0) + 1;
      return counts;
    }, {}),
    p50_ms: percentile(ms, 0.5),
    p99_ms: percentile(ms, 0.99),
    max_ms: Math.round(Math.max(...ms)),
  };
}

/** Past BULK_ITEMS_PER_MINUTE (30,000 by default), held as 5,000 in any 10 s: a batch of 1,000 every 2 s. */
const ITEMS_LIMITED = {
  success: false,
  error: {
    code: 'rate_limited',
    message: expect.stringContaining('items of this tenant'),
    status: 429,
    details: { limit: 5_000, window_seconds: 10, admitted: expect.any(Number) },
  },
};

const RATE_LIMITED = {
  success: false,
  error: {
    code: 'rate_limited',
    message: expect.stringContaining('still processing'),
    status: 429,
    details: { limit: 5, open: 5 },
  },
};

it('answers another tenant’s live creates 201 while a sandbox tenant floods batches of 1,000 on an empty wallet, with no name enquiry for them', async () => {
  const live = await createFundedTenant(db.orm, 100_000_000, 'live payer', 'live');
  const flooder = await createFundedTenant(db.orm, 0, 'flooder');
  let reference = 0;
  const creates = async () => {
    const results: { status: number; ms: number }[] = [];
    for (let i = 0; i < CREATES; i++) {
      const { status, ms } = await call(
        live.apiKey,
        'POST',
        '/api/v1/transfers',
        transferBody('live', { reference: `live-${reference++}` }),
      );
      results.push({ status, ms });
    }
    return results;
  };

  const flooderLive = await issueKey(db.orm.em.fork(), flooder.ownerTenantId, 'live');
  const openBatches = async () =>
    (
      await sql<{ open: number }>(
        `select count(*)::int as open from transfer_batches where tenant_id in (?, ?) and status = 'processing'`,
        [flooder.tenantId, flooderLive.mode_tenant_id],
      )
    )[0]!.open;

  // Five batches open at once (the worker away, so none completes meanwhile), and the 6th refused.
  await gateway.kill('worker');
  for (let i = 0; i < 5; i++)
    expect((await call(flooder.apiKey, 'POST', '/api/v1/transfers/bulk', floodBatch())).status).toBe(202);
  const sixth = await call(flooder.apiKey, 'POST', '/api/v1/transfers/bulk', floodBatch());
  expect(sixth.status).toBe(429);
  expect(sixth.headers.get('retry-after')).toBe('30');
  expect(sixth.json).toEqual(RATE_LIMITED);
  // Its live mode counts apart: its first live batch is taken.
  expect((await call(flooderLive.api_key, 'POST', '/api/v1/transfers/bulk', floodBatch())).status).toBe(202);
  await gateway.restart('worker');
  await eventually(async () => (await openBatches()) === 0, 120_000, 250);

  // Quiet and flooded phases taken in turns, so that the machine's other load weighs on both alike.
  // A flood: a batch posted every 100 ms, whatever came of the last, while the live creates run.
  const quiet: Awaited<ReturnType<typeof creates>> = [];
  const flooded: Awaited<ReturnType<typeof creates>> = [];
  const answers: Awaited<ReturnType<typeof call>>[] = [];
  for (let round = 0; round < ROUNDS; round++) {
    quiet.push(...(await creates()));
    let flooding = true;
    const posted: Promise<Awaited<ReturnType<typeof call>>>[] = [];
    const flood = (async () => {
      while (flooding) {
        posted.push(call(flooder.apiKey, 'POST', '/api/v1/transfers/bulk', floodBatch()));
        await delay(FLOOD_EVERY_MS);
      }
    })();
    flooded.push(...(await creates()));
    flooding = false;
    await flood;
    answers.push(...(await Promise.all(posted)));
    // The next quiet phase begins once the flood's batches have completed.
    await eventually(async () => (await openBatches()) === 0, 180_000, 250);
  }
  // Refused for its open batches, or for the items it had accepted over the last 10 s (BULK_ITEMS_PER_MINUTE).
  const refusedOpen = answers.filter(
    (answer) => answer.status === 429 && answer.json.error?.details?.open !== undefined,
  );
  const refusedItems = answers.filter(
    (answer) => answer.status === 429 && answer.json.error?.details?.open === undefined,
  );
  for (const answer of answers) {
    if (answer.status !== 429) expect(answer.status).toBe(202);
  }
  for (const answer of refusedOpen) expect(answer.json).toEqual(RATE_LIMITED);
  for (const answer of refusedItems) expect(answer.json).toEqual(ITEMS_LIMITED);

  // Every batch of the flooder completes, each item refused for the balance without a name asked.
  const [items] = await sql<{ batches: number; items: number; refused_for_balance: number }>(
    `select count(distinct b.id)::int as batches, count(*)::int as items,
            (count(*) filter (where i.status = 'refused' and i.error_code = 'insufficient_balance'))::int as refused_for_balance
       from transfer_batch_items i join transfer_batches b on b.id = i.batch_id where b.tenant_id = ?`,
    [flooder.tenantId],
  );
  const accepted = answers.filter((answer) => answer.status === 202).length;
  expect(items).toEqual({
    batches: 5 + accepted,
    items: (5 + accepted) * BATCH_ITEMS,
    refused_for_balance: (5 + accepted) * BATCH_ITEMS,
  });
  expect(sandboxBank.nameEnquiries.accounts.filter((account) => account === FLOOD_ACCOUNT)).toHaveLength(0);
  expect(sandboxBank.nameEnquiries.accounts).toHaveLength(0);

  expect(quiet.map((create) => create.status)).toEqual(Array.from({ length: ROUNDS * CREATES }, () => 201));
  expect(flooded.map((create) => create.status)).toEqual(Array.from({ length: ROUNDS * CREATES }, () => 201));
  // Where each ran: the live transfers on the gateway queue (a quiet one, and the first made during
  // a flood), the flood on the batches lane.
  expect((await client.workflow.getHandle(transferWorkflowId(live.tenantId, 'live-0')).describe()).taskQueue).toBe(
    'gateway',
  );
  expect(
    (await client.workflow.getHandle(transferWorkflowId(live.tenantId, `live-${CREATES}`)).describe()).taskQueue,
  ).toBe('gateway');
  expect(
    (await client.workflow.getHandle(transferBatchWorkflowId(flooder.tenantId, 'flood-0')).describe()).taskQueue,
  ).toBe('gateway-batches');

  // The live transfers settle, and the books balance.
  await eventually(async () => (await walletBalance(db.orm.em.fork(), live.tenantId)).pendingMinor === 0, 120_000, 500);
  expect(await walletBalance(db.orm.em.fork(), live.tenantId)).toMatchObject({
    availableMinor: 100_000_000 - 2 * ROUNDS * CREATES * 101_000,
    pendingMinor: 0,
  });
  expect(await postingsTotal(db.orm.em.fork())).toBe(0);

  console.log(
    JSON.stringify({
      batch_flood: {
        rounds: ROUNDS,
        creates_per_phase: CREATES,
        batches_posted: 6 + answers.length,
        batches_accepted: 5 + accepted,
        batches_refused_429: 1 + answers.length - accepted,
        refused_open_batches: 1 + refusedOpen.length,
        refused_items_per_minute: refusedItems.length,
        items_refused_insufficient_balance: items!.refused_for_balance,
        sandbox_bank_name_enquiries: sandboxBank.nameEnquiries.accounts.length,
      },
      quiet: summary(quiet),
      flooded: summary(flooded),
    }),
  );
}, 900_000);
