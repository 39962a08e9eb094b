// Daily reconciliation end to end on the real stack: transfers and a credit through the sandbox
// bank, the bank's statement made to forget one transaction and invent another, then `admin
// reconcile run` and `report` as an operator runs them. Exactly those two differences are found,
// each tenant hears of its own, and not a kobo moves. The Schedule and an unavailable statement too.
import type { Client } from '@temporalio/client';
import type { FastifyInstance } from 'fastify';
import { describe, expect, it } from 'vitest';
import { walletBalance } from '../../src/ledger/ledger.ts';
import { ensureReconciliationSchedule } from '../../src/reconciliation/schedule.ts';
import { dayBefore, reconciliationScheduleId } from '../../workflows/reconciliation-definitions.ts';
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

useGatewayStack({ taskQueue: TASK_QUEUE, bank: { completionDelayMs: 100 } }, (started) => {
  stack = started;
  ({ db, app, bank, client } = stack);
});

const admin = (...args: string[]) => stack.admin(...args);

const today = () => new Date().toISOString().slice(0, 10);

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
  const status = await eventually(async () => {
    const read = await app.inject({ method: 'GET', url: `/api/v1/transfers/${id}`, headers: auth(apiKey) });
    const current = read.json().data.status as string;
    return current === 'successful' || current === 'failed' ? current : undefined;
  });
  return { id, reference, status };
}

async function events(tenantId: string, type: string) {
  return db.orm.em
    .fork()
    .execute<{ payload: Record<string, any> }[]>(
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

/** Runs the day(s) the test's transactions fell on (two only when it crossed midnight UTC). */
async function reconcile(days: string[]) {
  const runs: Record<string, any>[] = [];
  for (const day of days) {
    const run = await admin('reconcile', 'run', '--date', day);
    expect(run.code, run.stderr).toBe(0);
    expect(run.json.status).toBe('completed');
    runs.push(run.json);
  }
  const sum = (field: string) => runs.reduce((total, run) => total + (run.counts[field] as number), 0);
  return {
    runs,
    mismatches: runs.flatMap((run) => run.mismatches as Record<string, unknown>[]),
    counts: Object.fromEntries(
      ['matched', 'missing_ours', 'missing_at_bank', 'amount_differs', 'status_differs'].map((field) => [
        field,
        sum(field),
      ]),
    ),
  };
}

let days: string[] = [];
let a: Awaited<ReturnType<typeof createFundedTenant>>;
let b: Awaited<ReturnType<typeof createFundedTenant>>;
let forgotten: Awaited<ReturnType<typeof settledTransfer>>;
let amended: Awaited<ReturnType<typeof settledTransfer>>;

describe('daily reconciliation', () => {
  it('finds exactly the transaction the bank forgot and the one it invented, and moves nothing', async () => {
    const firstDay = today();
    a = await createFundedTenant(db.orm, 10_000_000, 'reconciled A');
    b = await createFundedTenant(db.orm, 1_000_000, 'reconciled B');
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

    const created = await app.inject({
      method: 'POST',
      url: '/api/v1/virtual-accounts',
      headers: auth(a.apiKey),
      payload: { customer_id: 'c-rec', account_name: 'REC CUSTOMER' },
    });
    expect(created.statusCode).toBe(201);
    const account = created.json().data;
    const credit = await app.inject({
      method: 'POST',
      url: `/api/v1/sandbox/virtual-accounts/${account.id}/credits`,
      headers: auth(a.apiKey),
      payload: { amount_minor: 500_000, reference: 'rec-credit-1' },
    });
    expect(credit.statusCode).toBe(202);
    await eventually(async () => {
      const read = await app.inject({
        method: 'GET',
        url: `/api/v1/virtual-accounts/${account.id}`,
        headers: auth(a.apiKey),
      });
      return read.json().data.total_received_minor === 500_000;
    });

    // The bank's statement forgets A's second transfer and invents a credit to A's account.
    expect((await bank.control('/control/statements/forget', { reference: forgotten.id })).status).toBe(200);
    const invented = await bank.control('/control/statements/invent', {
      kind: 'inbound_credit',
      date: firstDay,
      amount_minor: 123_456,
      provider: account.provider,
      account_number: account.account_number,
    });
    expect(invented.status).toBe(201);

    const before = await ledgerState([a.tenantId, b.tenantId]);
    days = [...new Set([firstDay, today()])];
    const { runs, mismatches, counts } = await reconcile(days);

    expect(counts).toEqual({ matched: 5, missing_ours: 1, missing_at_bank: 1, amount_differs: 0, status_differs: 0 });
    expect(runs.reduce((total, run) => total + run.bank_items, 0)).toBe(6);
    expect(runs.reduce((total, run) => total + run.our_items, 0)).toBe(6);
    expect(mismatches.sort((x, y) => String(x.outcome).localeCompare(String(y.outcome)))).toEqual([
      {
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

    expect(runs.map((run) => run.discrepancies)).toEqual(days.map(() => ({ open: 0, received_on_day: 0 })));
    recordHistory('reconciliation-operator', runs[0]!.workflow_id);
    // It recorded; it moved nothing.
    expect(await ledgerState([a.tenantId, b.tenantId])).toEqual(before);

    // Each tenant hears of its own: A of its two differences, B of none.
    const aMismatches = (await events(a.tenantId, 'reconciliation.mismatch')).map((event) => event.payload);
    expect(aMismatches.map((payload) => [payload.outcome, payload.reference, payload.kind]).sort()).toEqual([
      ['missing_at_bank', 'rec-a-2', 'transfer'],
      ['missing_ours', invented.body.reference, 'inbound_credit'],
    ]);
    expect(aMismatches.find((payload) => payload.outcome === 'missing_ours')).toMatchObject({
      bank_amount_minor: 123_456,
      our_amount_minor: null,
      account_number: account.account_number,
      transfer_id: null,
    });
    expect(await events(b.tenantId, 'reconciliation.mismatch')).toEqual([]);
    const completed = async (tenantId: string) => {
      const rows = (await events(tenantId, 'reconciliation.completed')).map((event) => event.payload);
      return {
        items: rows.reduce((total, payload) => total + payload.items, 0),
        matched: rows.reduce((total, payload) => total + payload.matched, 0),
        mismatched: rows.reduce((total, payload) => total + payload.mismatched, 0),
      };
    };
    expect(await completed(a.tenantId)).toEqual({ items: 6, matched: 4, mismatched: 2 });
    expect(await completed(b.tenantId)).toEqual({ items: 1, matched: 1, mismatched: 0 });

    // The report reads the day back; --all lists the matched items too.
    const report = await admin('reconcile', 'report', '--date', firstDay);
    expect(report.code, report.stderr).toBe(0);
    const firstRun = runs[0]!;
    expect(report.json).toMatchObject({ run_id: firstRun.run_id, date: firstDay, trigger: 'operator' });
    expect(report.json.items).toEqual(firstRun.mismatches);
    const all = await admin('reconcile', 'report', '--date', firstDay, '--all');
    expect(all.json.items).toHaveLength(firstRun.bank_items + firstRun.counts.missing_at_bank);
    expect(all.json.items.filter((item: { outcome: string }) => item.outcome === 'matched')).toHaveLength(
      firstRun.matched,
    );

    // The run is audited as the operator's.
    const audit = await admin('audit', 'list', '--limit', '5');
    expect(
      audit.json.items
        .filter((row: { command: string }) => row.command === 'reconcile run')
        .map((row: any) => row.arguments.date),
    ).toEqual([...days].reverse());
  });

  it('finds an amount the bank misstates by one kobo, and tells only the tenant it concerns', async () => {
    expect(
      (await bank.control('/control/statements/amend', { reference: amended.id, amount_minor: 100_001 })).status,
    ).toBe(200);
    const before = await ledgerState([a.tenantId, b.tenantId]);
    const aBefore = (await events(a.tenantId, 'reconciliation.mismatch')).length;
    const { counts, mismatches } = await reconcile(days);
    expect(counts).toEqual({ matched: 4, missing_ours: 1, missing_at_bank: 1, amount_differs: 1, status_differs: 0 });
    expect(mismatches.filter((item) => item.outcome === 'amount_differs')).toEqual([
      expect.objectContaining({
        reference: amended.id,
        tenant_reference: 'rec-a-1',
        bank_amount_minor: 100_001,
        our_amount_minor: 100_000,
        bank_status: 'successful',
        our_status: 'completed',
      }),
    ]);
    expect(await ledgerState([a.tenantId, b.tenantId])).toEqual(before);
    expect((await events(a.tenantId, 'reconciliation.mismatch')).length).toBe(aBefore + 3);
    expect(await events(b.tenantId, 'reconciliation.mismatch')).toEqual([]);
  });

  it('waits out a statement the bank cannot serve, and reconciles once it can', async () => {
    await bank.control('/control/providers/nip/down');
    const day = today();
    const pending = await admin('reconcile', 'run', '--date', day, '--wait', '2s');
    expect(pending.code, pending.stderr).toBe(0);
    expect(pending.json).toMatchObject({ status: 'running', date: day });
    expect(await client.workflow.getHandle(pending.json.workflow_id).describe()).toMatchObject({
      status: { name: 'RUNNING' },
    });
    await bank.control('/control/providers/nip/up');
    const summary = await client.workflow.getHandle(pending.json.workflow_id).result();
    expect(summary).toMatchObject({ date: day, trigger: 'operator', workflow_id: pending.json.workflow_id });
    const report = await admin('reconcile', 'report', '--date', day);
    expect(report.json.run_id).toBe(summary.run_id);
    recordHistory('reconciliation-statement-unavailable', pending.json.workflow_id);
  });

  it('runs every day on a Schedule that follows RECONCILIATION_TIME, reconciling the day before', async () => {
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
    const run = await eventually(async () => {
      const rows = await db.orm.em
        .fork()
        .execute<{ id: string; value_date: string; started_at: Date; workflow_id: string }[]>(
          "select id, to_char(value_date, 'YYYY-MM-DD') as value_date, started_at, workflow_id from reconciliation_runs where trigger = 'schedule'",
        );
      return rows[0];
    });
    expect(run.value_date).toBe(dayBefore(new Date(run.started_at)));
    recordHistory('reconciliation-scheduled', run.workflow_id);
    expect((await admin('reconcile', 'report', '--date', run.value_date)).json).toMatchObject({
      run_id: run.id,
      trigger: 'schedule',
    });

    expect(await ensureReconciliationSchedule(client, { ...options, time: 'off' })).toBe('removed');
    expect(await ensureReconciliationSchedule(client, { ...options, time: 'off' })).toBe('off');
  });

  it('refuses bad dates and unknown runs with a line naming the flag', async () => {
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
    const badRun = await admin('reconcile', 'report', '--date', '2001-01-01', '--run', 'x');
    expect(badRun.code).toBe(2);
    expect(badRun.stderr).toContain("--run must be a run id (a UUID), got 'x'");
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
