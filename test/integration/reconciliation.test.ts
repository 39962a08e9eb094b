// Daily reconciliation end to end on the real stack, per connector (decisions §13): the sandbox
// bank for test keys, and Paystack (its simulator) as the live connector. Transfers and a credit
// through the sandbox bank, whose statement is made to forget one transaction and invent another;
// live transfers and dedicated-account credits through Paystack, one credit of which the gateway
// never hears of. Then `admin reconcile run` and `report` as an operator runs them: each connector's
// day is matched against its own books only, exactly those differences are found, each tenant
// hears of its own, items and events name the connector, and not a kobo moves. One connector's
// statement being unavailable holds up no other's. The Schedule too.
import type { Client } from '@temporalio/client';
import type { FastifyInstance } from 'fastify';
import { describe, expect, it } from 'vitest';
import { paystackReference } from '../../src/connectors/paystack/reference.ts';
import { walletBalance } from '../../src/ledger/ledger.ts';
import { ensureReconciliationSchedule } from '../../src/reconciliation/schedule.ts';
import { dayBefore, reconciliationScheduleId } from '../../workflows/reconciliation/definitions.ts';
import type { PaystackSimulator } from '../simulators/paystack.ts';
import { auth, transferBody } from '../support/api.ts';
import { recordHistory } from '../support/histories.ts';
import { createFundedTenant } from '../support/app.ts';
import type { TestDatabase } from '../support/database.ts';
import { eventually } from '../support/eventually.ts';
import type { TestSandboxBank } from '../support/sandbox-bank.ts';
import { type GatewayStack, useGatewayStack } from '../support/stack.ts';

const TASK_QUEUE = `reconciliation-${process.pid}`;

let stack: GatewayStack;
let db: TestDatabase;
let app: FastifyInstance;
let bank: TestSandboxBank;
let client: Client;
let paystack: PaystackSimulator;

useGatewayStack({ taskQueue: TASK_QUEUE, bank: { completionDelayMs: 100 }, paystack: true }, (started) => {
  stack = started;
  ({ db, app, bank, client } = stack);
  paystack = stack.paystack!;
});

const admin = (...args: string[]) => stack.admin(...args);

const today = () => new Date().toISOString().slice(0, 10);

type Json = Record<string, any>;

async function finalStatus(apiKey: string, id: string) {
  return eventually(async () => {
    const read = await app.inject({ method: 'GET', url: `/api/v1/transfers/${id}`, headers: auth(apiKey) });
    const current = read.json().data.status as string;
    return current === 'successful' || current === 'failed' ? current : undefined;
  });
}

/** A transfer through the API, once it is final: its id, the tenant's reference, its status. */
async function settledTransfer(apiKey: string, reference: string, fields: Record<string, unknown>) {
  const response = await app.inject({
    method: 'POST',
    url: '/api/v1/transfers',
    headers: auth(apiKey),
    payload: transferBody('reconciliation test', { reference, ...fields }),
  });
  expect(response.statusCode).toBe(201);
  const id = response.json().data.id as string;
  return { id, reference, status: await finalStatus(apiKey, id) };
}

/** A live transfer, which goes to Paystack, ended there as `outcome` (its webhook answered by the gateway). */
async function paystackTransfer(
  apiKey: string,
  reference: string,
  amountMinor: number,
  outcome: 'success' | 'reversed',
) {
  const response = await app.inject({
    method: 'POST',
    url: '/api/v1/transfers',
    headers: auth(apiKey),
    payload: transferBody('reconciliation test', { reference, amount_minor: amountMinor }),
  });
  expect(response.statusCode).toBe(201);
  const id = response.json().data.id as string;
  await eventually(() => paystack.transfers.get(paystackReference(id)));
  expect((await paystack.finishTransfer(paystackReference(id), outcome)).answered).toBe(200);
  return { id, reference, status: await finalStatus(apiKey, id) };
}

async function virtualAccount(apiKey: string, customerId: string) {
  const created = await app.inject({
    method: 'POST',
    url: '/api/v1/virtual-accounts',
    headers: auth(apiKey),
    payload: { customer_id: customerId, account_name: 'REC CUSTOMER' },
  });
  expect(created.statusCode).toBe(201);
  return created.json().data as { id: string; provider: string; account_number: string };
}

async function receivedMinor(apiKey: string, accountId: string, total: number) {
  await eventually(async () => {
    const read = await app.inject({
      method: 'GET',
      url: `/api/v1/virtual-accounts/${accountId}`,
      headers: auth(apiKey),
    });
    return read.json().data.total_received_minor === total;
  });
}

async function events(tenantId: string, type: string) {
  return db.orm.em
    .fork()
    .execute<{ payload: Json }[]>(
      'select payload from events where tenant_id = ? and type = ? order by created_at, id',
      [tenantId, type],
    );
}

async function ledgerState(tenantIds: string[]) {
  const em = db.orm.em.fork();
  const [row] = await em.execute<{ entries: string }[]>('select count(*) as entries from journal_entries');
  const wallets = await Promise.all(tenantIds.map(async (id) => (await walletBalance(em, id)).availableMinor));
  return { entries: Number(row!.entries), wallets };
}

const OUTCOME_NAMES = ['matched', 'missing_ours', 'missing_at_bank', 'amount_differs', 'status_differs'];

/** A day's counts by outcome, every outcome named: those given, and 0 for the others. */
const outcomeCounts = (found: Record<string, number>) =>
  Object.fromEntries(OUTCOME_NAMES.map((name) => [name, found[name] ?? 0]));

/**
 * Runs the day(s) the test's transactions fell on (two only when it crossed midnight UTC), and
 * sums each connector's runs: `flags` pass on (`--connector NAME`).
 */
async function reconcile(days: string[], ...flags: string[]) {
  const outputs: Json[] = [];
  for (const day of days) {
    const run = await admin('reconcile', 'run', '--date', day, ...flags);
    expect(run.code, run.stderr).toBe(0);
    expect(run.json).toMatchObject({ status: 'completed', date: day, unavailable: [] });
    outputs.push(run.json);
  }
  const runs: Json[] = outputs.flatMap((output) => output.runs);
  const of = (connector: string) => {
    const own = runs.filter((run) => run.connector === connector);
    const sum = (read: (run: Json) => number) => own.reduce((total, run) => total + read(run), 0);
    return {
      runs: own,
      bank_items: sum((run) => run.bank_items),
      our_items: sum((run) => run.our_items),
      counts: Object.fromEntries(OUTCOME_NAMES.map((name) => [name, sum((run) => run.counts[name])])),
      mismatches: own.flatMap((run) => run.mismatches as Json[]),
    };
  };
  return { outputs, runs, sandbox: of('sandbox'), paystack: of('paystack') };
}

const byOutcome = (items: Json[]) => [...items].sort((x, y) => String(x.outcome).localeCompare(String(y.outcome)));

let days: string[] = [];
let a: Awaited<ReturnType<typeof createFundedTenant>>;
let b: Awaited<ReturnType<typeof createFundedTenant>>;
let c: Awaited<ReturnType<typeof createFundedTenant>>;
let forgotten: Awaited<ReturnType<typeof settledTransfer>>;
let amended: Awaited<ReturnType<typeof settledTransfer>>;
/** The first test's runs of its first day, by connector. */
let firstRunIds: Record<string, string> = {};

describe('daily reconciliation, per connector', () => {
  it('matches each connector against its own transfers and credits, finds exactly what each got wrong, and moves nothing', async () => {
    const firstDay = today();
    a = await createFundedTenant(db.orm, 10_000_000, 'reconciled A');
    b = await createFundedTenant(db.orm, 1_000_000, 'reconciled B');
    c = await createFundedTenant(db.orm, 5_000_000, 'reconciled C (live)', 'live');

    // The sandbox bank's day: four transfers of A (one failed at the bank), one of B, a credit to A.
    amended = await settledTransfer(a.apiKey, 'rec-a-1', { amount_minor: 100_000 });
    forgotten = await settledTransfer(a.apiKey, 'rec-a-2', { amount_minor: 250_000 });
    const third = await settledTransfer(a.apiKey, 'rec-a-3', { amount_minor: 75_050 });
    const failed = await settledTransfer(a.apiKey, 'rec-a-4', {
      amount_minor: 40_000,
      recipient_account: '1111111111',
    });
    const other = await settledTransfer(b.apiKey, 'rec-b-1', { amount_minor: 100_000 });
    expect([amended, forgotten, third, failed, other].map((transfer) => transfer.status)).toEqual([
      'successful',
      'successful',
      'successful',
      'failed',
      'successful',
    ]);
    const account = await virtualAccount(a.apiKey, 'c-rec');
    const credit = await app.inject({
      method: 'POST',
      url: `/api/v1/sandbox/virtual-accounts/${account.id}/credits`,
      headers: auth(a.apiKey),
      payload: { amount_minor: 500_000, reference: 'rec-credit-1' },
    });
    expect(credit.statusCode).toBe(202);
    await receivedMinor(a.apiKey, account.id, 500_000);

    // Paystack's day: C's transfer paid, another reversed, a credit to C's dedicated account the
    // gateway hears of, and one whose webhook never reaches it.
    const paid = await paystackTransfer(c.apiKey, 'rec-c-1', 120_000, 'success');
    const reversed = await paystackTransfer(c.apiKey, 'rec-c-2', 60_000, 'reversed');
    expect([paid.status, reversed.status]).toEqual(['successful', 'failed']);
    const dedicated = await virtualAccount(c.apiKey, 'c-rec-live');
    expect(dedicated.provider).toBe('paystack');
    const heard = await paystack.creditDedicatedAccount(dedicated.account_number, 300_000);
    expect(heard.webhook.answered).toBe(200);
    await receivedMinor(c.apiKey, dedicated.id, 300_000);
    const webhookUrl = paystack.webhookUrl;
    paystack.webhookUrl = undefined;
    const unheard = await paystack.creditDedicatedAccount(dedicated.account_number, 45_000);
    paystack.webhookUrl = webhookUrl;

    // The sandbox bank's statement forgets A's second transfer and invents a credit to A's account.
    expect((await bank.control('/control/statements/forget', { reference: forgotten.id })).status).toBe(200);
    const invented = await bank.control('/control/statements/invent', {
      kind: 'inbound_credit',
      date: firstDay,
      amount_minor: 123_456,
      provider: account.provider,
      account_number: account.account_number,
    });
    expect(invented.status).toBe(201);

    const tenants = [a.tenantId, b.tenantId, c.tenantId];
    const before = await ledgerState(tenants);
    days = [...new Set([firstDay, today()])];
    const { outputs, runs, sandbox, paystack: live } = await reconcile(days);

    // One run per connector and day, the sandbox first, all of the one workflow per day.
    expect(outputs.map((output) => output.runs.map((run: Json) => run.connector))).toEqual(
      days.map(() => ['sandbox', 'paystack']),
    );
    for (const output of outputs) {
      expect(output.runs.map((run: Json) => run.workflow_id)).toEqual([output.workflow_id, output.workflow_id]);
    }

    // The sandbox bank's day: its own transfers and credits only, none of C's at Paystack.
    expect(sandbox.counts).toEqual(outcomeCounts({ matched: 5, missing_ours: 1, missing_at_bank: 1 }));
    expect(sandbox.bank_items).toBe(6);
    expect(sandbox.our_items).toBe(6);
    expect(byOutcome(sandbox.mismatches)).toEqual([
      {
        connector: 'sandbox',
        outcome: 'missing_at_bank',
        kind: 'transfer',
        reference: forgotten.id,
        session_id: expect.stringMatching(/^\d{30}$/),
        tenant_id: a.tenantId,
        transfer_id: forgotten.id,
        tenant_reference: 'rec-a-2',
        provider: null,
        account_number: null,
        bank_amount_minor: null,
        our_amount_minor: 250_000,
        bank_status: null,
        our_status: 'completed',
      },
      {
        connector: 'sandbox',
        outcome: 'missing_ours',
        kind: 'inbound_credit',
        reference: invented.body.reference,
        session_id: invented.body.session_id,
        tenant_id: a.tenantId,
        transfer_id: null,
        tenant_reference: null,
        provider: account.provider,
        account_number: account.account_number,
        bank_amount_minor: 123_456,
        our_amount_minor: null,
        bank_status: 'successful',
        our_status: null,
      },
    ]);

    // Paystack's day: C's two transfers and the credit it heard of match; the credit it never
    // heard of is Paystack's alone. No sandbox transfer is missing at Paystack.
    expect(live.counts).toEqual(outcomeCounts({ matched: 3, missing_ours: 1 }));
    expect(live.bank_items).toBe(4);
    // Ours that day: C's two transfers and the credit the gateway heard of.
    expect(live.our_items).toBe(3);
    expect(live.mismatches).toEqual([
      {
        connector: 'paystack',
        outcome: 'missing_ours',
        kind: 'inbound_credit',
        reference: unheard.charge.reference,
        session_id: null,
        tenant_id: c.tenantId,
        transfer_id: null,
        tenant_reference: null,
        provider: 'paystack',
        account_number: dedicated.account_number,
        // What Paystack settles of it: 45,000 less its fee of 1%.
        bank_amount_minor: 44_550,
        our_amount_minor: null,
        bank_status: 'successful',
        our_status: null,
      },
    ]);
    const liveRun = live.runs.find((run) => run.counts.matched > 0)!;
    const liveItems = await admin('reconcile', 'report', '--date', liveRun.date, '--connector', 'paystack', '--all');
    expect(liveItems.code, liveItems.stderr).toBe(0);
    expect(
      liveItems.json.runs[0].items
        .filter((item: Json) => item.outcome === 'matched')
        .map((item: Json) => [
          item.connector,
          item.kind,
          item.reference,
          item.tenant_id,
          item.bank_amount_minor,
          item.our_amount_minor,
          item.bank_status,
          item.our_status,
        ])
        .sort(),
    ).toEqual(
      [
        // Net of Paystack's fee (3,000) on both sides: what Paystack settles, what the wallet kept.
        ['paystack', 'inbound_credit', heard.charge.reference, c.tenantId, 297_000, 297_000, 'successful', 'applied'],
        ['paystack', 'transfer', paid.id, c.tenantId, 120_000, 120_000, 'successful', 'completed'],
        ['paystack', 'transfer', reversed.id, c.tenantId, 60_000, 60_000, 'failed', 'failed'],
      ].sort(),
    );

    expect(runs.map((run) => run.discrepancies)).toEqual(runs.map(() => ({ open: 0, received_on_day: 0 })));
    recordHistory('reconciliation-operator', outputs[0]!.workflow_id);
    // It recorded; it moved nothing.
    expect(await ledgerState(tenants)).toEqual(before);

    // Each tenant hears of its own, from the connector it concerns: A of its two differences at
    // the sandbox bank, B of none, C of the credit only Paystack has.
    const aMismatches = (await events(a.tenantId, 'reconciliation.mismatch')).map((event) => event.payload);
    expect(
      aMismatches.map((payload) => [payload.connector, payload.outcome, payload.reference, payload.kind]).sort(),
    ).toEqual([
      ['sandbox', 'missing_at_bank', 'rec-a-2', 'transfer'],
      ['sandbox', 'missing_ours', invented.body.reference, 'inbound_credit'],
    ]);
    expect(aMismatches.find((payload) => payload.outcome === 'missing_ours')).toMatchObject({
      bank_amount_minor: 123_456,
      our_amount_minor: null,
      account_number: account.account_number,
      transfer_id: null,
    });
    expect(await events(b.tenantId, 'reconciliation.mismatch')).toEqual([]);
    expect((await events(c.tenantId, 'reconciliation.mismatch')).map((event) => event.payload)).toEqual([
      {
        run_id: liveRun.run_id,
        connector: 'paystack',
        date: liveRun.date,
        outcome: 'missing_ours',
        kind: 'inbound_credit',
        transfer_id: null,
        reference: unheard.charge.reference,
        session_id: null,
        account_number: dedicated.account_number,
        bank_amount_minor: 44_550,
        our_amount_minor: null,
        bank_status: 'successful',
        our_status: null,
      },
    ]);
    const completed = async (tenantId: string) => {
      const rows = (await events(tenantId, 'reconciliation.completed')).map((event) => event.payload);
      const of = (connector: string) => {
        const own = rows.filter((payload) => payload.connector === connector);
        return own.length === 0
          ? undefined
          : {
              items: own.reduce((total, payload) => total + payload.items, 0),
              matched: own.reduce((total, payload) => total + payload.matched, 0),
              mismatched: own.reduce((total, payload) => total + payload.mismatched, 0),
            };
      };
      return { sandbox: of('sandbox'), paystack: of('paystack') };
    };
    expect(await completed(a.tenantId)).toEqual({
      sandbox: { items: 6, matched: 4, mismatched: 2 },
      paystack: undefined,
    });
    expect(await completed(b.tenantId)).toEqual({
      sandbox: { items: 1, matched: 1, mismatched: 0 },
      paystack: undefined,
    });
    expect(await completed(c.tenantId)).toEqual({
      sandbox: undefined,
      paystack: { items: 4, matched: 3, mismatched: 1 },
    });

    // The report reads the day back, each connector's latest run; --connector keeps one; --all
    // lists the matched items too.
    const report = await admin('reconcile', 'report', '--date', firstDay);
    expect(report.code, report.stderr).toBe(0);
    const firstRuns = outputs[0]!.runs as Json[];
    firstRunIds = Object.fromEntries(firstRuns.map((run) => [run.connector, run.run_id]));
    const mismatchesOf = (connector: string) => firstRuns.find((run) => run.connector === connector)!.mismatches;
    // By connector name.
    expect(report.json.runs.map((run: Json) => [run.connector, run.run_id, run.trigger, run.items])).toEqual(
      ['paystack', 'sandbox'].map((connector) => [
        connector,
        firstRuns.find((run) => run.connector === connector)!.run_id,
        'operator',
        mismatchesOf(connector),
      ]),
    );
    const onlySandbox = await admin('reconcile', 'report', '--date', firstDay, '--connector', 'sandbox', '--all');
    expect(onlySandbox.json.runs).toHaveLength(1);
    const sandboxRun = onlySandbox.json.runs[0];
    expect(sandboxRun).toMatchObject({ connector: 'sandbox', date: firstDay });
    expect(sandboxRun.items).toHaveLength(sandboxRun.bank_items + sandboxRun.counts.missing_at_bank);
    expect(sandboxRun.items.filter((item: Json) => item.outcome === 'matched')).toHaveLength(sandboxRun.matched);
    expect(new Set(sandboxRun.items.map((item: Json) => item.connector))).toEqual(new Set(['sandbox']));
    const byRun = await admin('reconcile', 'report', '--date', firstDay, '--run', sandboxRun.run_id);
    expect(byRun.json.runs.map((run: Json) => run.run_id)).toEqual([sandboxRun.run_id]);
    const wrongConnector = await admin(
      'reconcile',
      'report',
      '--date',
      firstDay,
      '--run',
      sandboxRun.run_id,
      '--connector',
      'paystack',
    );
    expect(wrongConnector.code).toBe(1);
    expect(wrongConnector.stderr).toContain(
      `no reconciliation run ${sandboxRun.run_id} of connector paystack for ${firstDay}`,
    );

    // The run is audited as the operator's.
    const audit = await admin('audit', 'list', '--limit', '5');
    expect(
      audit.json.items
        .filter((row: { command: string }) => row.command === 'reconcile run')
        .map((row: any) => row.arguments.date),
    ).toEqual([...days].reverse());
  });

  it('reconciles one connector when asked, and finds an amount it misstates by one kobo, telling only the tenant it concerns', async () => {
    expect(
      (await bank.control('/control/statements/amend', { reference: amended.id, amount_minor: 100_001 })).status,
    ).toBe(200);
    const before = await ledgerState([a.tenantId, b.tenantId, c.tenantId]);
    const aBefore = (await events(a.tenantId, 'reconciliation.mismatch')).length;
    const cBefore = (await events(c.tenantId, 'reconciliation.completed')).length;
    const { runs, sandbox } = await reconcile(days, '--connector', 'sandbox');
    expect(runs.map((run) => run.connector)).toEqual(days.map(() => 'sandbox'));
    expect(sandbox.counts).toEqual(
      outcomeCounts({ matched: 4, missing_ours: 1, missing_at_bank: 1, amount_differs: 1 }),
    );
    expect(sandbox.mismatches.filter((item) => item.outcome === 'amount_differs')).toEqual([
      expect.objectContaining({
        connector: 'sandbox',
        reference: amended.id,
        tenant_reference: 'rec-a-1',
        bank_amount_minor: 100_001,
        our_amount_minor: 100_000,
        bank_status: 'successful',
        our_status: 'completed',
      }),
    ]);
    expect(await ledgerState([a.tenantId, b.tenantId, c.tenantId])).toEqual(before);
    expect((await events(a.tenantId, 'reconciliation.mismatch')).length).toBe(aBefore + 3);
    expect(await events(b.tenantId, 'reconciliation.mismatch')).toEqual([]);
    // Paystack's day was not run again: C hears nothing new.
    expect((await events(c.tenantId, 'reconciliation.completed')).length).toBe(cBefore);
    // Paystack's latest run of the day is still the first test's.
    const report = await admin('reconcile', 'report', '--date', days[0]!);
    expect(report.json.runs.map((run: Json) => [run.connector, run.run_id])).toEqual([
      ['paystack', firstRunIds.paystack],
      ['sandbox', runs[0]!.run_id],
    ]);
  });

  it('reconciles Paystack while the sandbox bank cannot serve its statement, then the sandbox once it can', async () => {
    await bank.control('/control/providers/nip/down');
    const day = today();
    const pending = await admin('reconcile', 'run', '--date', day, '--wait', '2s');
    expect(pending.code, pending.stderr).toBe(0);
    expect(pending.json).toMatchObject({ status: 'running', date: day });
    const workflowId = pending.json.workflow_id as string;
    // Whatever was recorded within the wait is Paystack's: the sandbox's cannot have been.
    expect(pending.json.runs.filter((run: Json) => run.connector !== 'paystack')).toEqual([]);
    // Paystack's run is recorded while the sandbox bank's statement is still unavailable.
    const recorded = async () =>
      (
        await db.orm.em
          .fork()
          .execute<{ connector: string }[]>(
            'select connector from reconciliation_runs where workflow_id = ? order by connector',
            [workflowId],
          )
      ).map((row) => row.connector);
    expect(await eventually(async () => ((await recorded()).length > 0 ? recorded() : undefined))).toEqual([
      'paystack',
    ]);
    expect(await client.workflow.getHandle(workflowId).describe()).toMatchObject({ status: { name: 'RUNNING' } });
    const report = await admin('reconcile', 'report', '--date', day, '--connector', 'paystack');
    expect(report.json.runs.map((run: Json) => run.workflow_id)).toEqual([workflowId]);

    await bank.control('/control/providers/nip/up');
    const result = await client.workflow.getHandle(workflowId).result();
    expect(result).toMatchObject({ date: day, unavailable: [] });
    expect(result.runs.map((run: Json) => [run.connector, run.trigger, run.workflow_id])).toEqual([
      ['sandbox', 'operator', workflowId],
      ['paystack', 'operator', workflowId],
    ]);
    expect(await recorded()).toEqual(['paystack', 'sandbox']);
    recordHistory('reconciliation-statement-unavailable', workflowId);
  });

  it('retries a Paystack listing that failed on its own, the sandbox run unaffected', async () => {
    const day = today();
    const from = encodeURIComponent(`${day}T00:00:00.000Z`);
    const listings = () =>
      paystack.requests.filter((request) => request.startsWith(`GET /transfer?from=${from}`)).length;
    const listed = listings();
    paystack.failNext('html_502', 'GET /transfer');
    const run = await admin('reconcile', 'run', '--date', day);
    expect(run.code, run.stderr).toBe(0);
    expect(run.json).toMatchObject({ status: 'completed', unavailable: [] });
    expect(run.json.runs.map((summary: Json) => summary.connector)).toEqual(['sandbox', 'paystack']);
    // The day's listing answered 502 once, and was asked again.
    expect(listings() - listed).toBeGreaterThanOrEqual(2);
  });

  it('runs every day on a Schedule that follows RECONCILIATION_TIME, reconciling the day before for every connector', async () => {
    const options = { taskQueue: TASK_QUEUE, time: '03:15' };
    expect(await ensureReconciliationSchedule(client, options)).toBe('created');
    expect(await ensureReconciliationSchedule(client, options)).toBe('unchanged');
    expect(await ensureReconciliationSchedule(client, { ...options, time: '04:30' })).toBe('updated');
    const handle = client.schedule.getHandle(reconciliationScheduleId(TASK_QUEUE));
    const described = await handle.describe();
    expect(described.spec.calendars).toMatchObject([
      { hour: [{ start: 4, end: 4 }], minute: [{ start: 30, end: 30 }] },
    ]);
    expect(described.spec.timezone).toBe('UTC');

    await handle.trigger();
    const scheduled = await eventually(async () => {
      const rows = await db.orm.em
        .fork()
        .execute<{ id: string; connector: string; value_date: string; started_at: Date; workflow_id: string }[]>(
          "select id, connector, to_char(value_date, 'YYYY-MM-DD') as value_date, started_at, workflow_id from reconciliation_runs where trigger = 'schedule' order by connector",
        );
      return rows.length === 2 ? rows : undefined;
    });
    expect(scheduled.map((run) => run.connector)).toEqual(['paystack', 'sandbox']);
    const [first] = scheduled;
    expect(new Set(scheduled.map((run) => run.workflow_id)).size).toBe(1);
    expect(first!.value_date).toBe(dayBefore(new Date(first!.started_at)));
    await client.workflow.getHandle(first!.workflow_id).result();
    recordHistory('reconciliation-scheduled', first!.workflow_id);
    const report = await admin('reconcile', 'report', '--date', first!.value_date);
    expect(report.json.runs.map((run: Json) => [run.connector, run.run_id, run.trigger])).toEqual(
      scheduled.map((run) => [run.connector, run.id, 'schedule']),
    );

    expect(await ensureReconciliationSchedule(client, { ...options, time: 'off' })).toBe('removed');
    expect(await ensureReconciliationSchedule(client, { ...options, time: 'off' })).toBe('off');
  });

  it('refuses bad dates, bad connector names and unknown runs with a line naming the flag', async () => {
    const impossible = await admin('reconcile', 'run', '--date', '2026-02-30');
    expect(impossible.code).toBe(2);
    expect(impossible.stderr).toContain("--date must be a day such as 2026-11-23, got '2026-02-30'");
    const future = await admin('reconcile', 'run', '--date', '2999-01-01');
    expect(future.code).toBe(2);
    expect(future.stderr).toContain('--date 2999-01-01 is in the future');
    const hostile = await admin('reconcile', 'report', '--date', "2026-01-01'; drop table transfers; --");
    expect(hostile.code).toBe(2);
    const never = await admin('reconcile', 'report', '--date', '2001-01-01');
    expect(never.code).toBe(1);
    expect(never.stderr).toContain('no reconciliation has run for 2001-01-01');
    const neverThere = await admin('reconcile', 'report', '--date', today(), '--connector', 'generic');
    expect(neverThere.code).toBe(1);
    expect(neverThere.stderr).toContain(`no reconciliation of connector generic has run for ${today()}`);
    const badRun = await admin('reconcile', 'report', '--date', '2001-01-01', '--run', 'x');
    expect(badRun.code).toBe(2);
    expect(badRun.stderr).toContain("--run must be a run id (a UUID), got 'x'");
    for (const command of ['run', 'report']) {
      const badName = await admin('reconcile', command, '--date', today(), '--connector', "x' or 1=1");
      expect(badName.code).toBe(2);
      expect(badName.stderr).toContain("--connector must be a connector name (e.g. generic), got 'x' or 1=1'");
    }
    // A connector the worker does not have: nothing to reconcile, and the operator is told so.
    const unknown = await admin('reconcile', 'run', '--date', today(), '--connector', 'generic');
    expect(unknown.code).toBe(1);
    expect(unknown.json).toMatchObject({
      status: 'completed',
      runs: [],
      unavailable: [{ connector: 'generic', message: 'no such connector with a settlement record' }],
    });
  });

  it('keeps the sandbox controls to transactions the bank has, and to valid lines', async () => {
    const unknown = await bank.control('/control/statements/forget', { reference: 'no-such-transaction' });
    expect(unknown).toMatchObject({
      status: 404,
      body: { message: 'the bank has no transaction no-such-transaction' },
    });
    expect((await bank.control('/control/statements/invent', { kind: 'cheque', amount_minor: 1 })).status).toBe(400);
    expect((await bank.control('/control/statements/invent', { kind: 'transfer', amount_minor: 0 })).status).toBe(400);
    expect(
      (await bank.control('/control/statements/invent', { kind: 'transfer', amount_minor: 1, date: '2026-13-01' }))
        .status,
    ).toBe(400);
    const statement = await bank.call('GET', '/statements/settlement/not-a-date');
    expect(statement).toMatchObject({ status: 400, body: { code: 'validation_error' } });
  });
});
