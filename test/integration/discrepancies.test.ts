// Late bank answers that contradict the books (decisions §12), end to end on the real stack: a
// transfer to 2222222222 that the bank holds, an operator's resolution, then the bank's contrary
// answer through the sandbox bank's control route. The answer is kept as a discrepancy, logged at
// error level and moves nothing; the operator's audited settlement moves the books once.
import { randomUUID } from 'node:crypto';
import { type Client, type WorkflowUpdateHandle, WorkflowUpdateStage } from '@temporalio/client';
import { Runtime } from '@temporalio/worker';
import type { FastifyInstance } from 'fastify';
import pg from 'pg';
import { describe, expect, it, vi } from 'vitest';
import { postEntry, postingsTotal, systemAccountId, tenantAccountId, walletBalance } from '../../src/ledger/ledger.ts';
import {
  type ResolveResult,
  resolveUpdate,
  statusQuery,
  transferWorkflowId,
} from '../../workflows/transfers/definitions.ts';
import { auth } from '../support/api.ts';
import { createFundedTenant } from '../support/app.ts';
import type { TestDatabase } from '../support/database.ts';
import { eventually } from '../support/eventually.ts';
import type { TestSandboxBank } from '../support/sandbox-bank.ts';
import { transferEntries, transferEvents } from '../support/ledger-reads.ts';
import { type GatewayStack, useGatewayStack } from '../support/stack.ts';

const TASK_QUEUE = `discrepancies-${process.pid}`;

let stack: GatewayStack;
let db: TestDatabase;
let app: FastifyInstance;
let bank: TestSandboxBank;
let client: Client;

useGatewayStack({ taskQueue: TASK_QUEUE, bank: { completionDelayMs: 300 } }, (started) => {
  stack = started;
  ({ db, app, bank, client } = stack);
});

const admin = (...args: string[]) => stack.admin(...args);

/** An operator's decision on a held transfer, as when the bank has gone silent on it. */
const resolveTransfer = (transferId: string, outcome: 'failed' | 'successful', note: string) =>
  admin('transfers', 'resolve', '--id', transferId, '--outcome', outcome, '--note', note);

/** An operator's settlement of the transfer's open discrepancy; `flags` such as --operator add to it. */
const settleDiscrepancy = (transferId: string, note: string, ...flags: string[]) =>
  admin('transfers', 'settle-discrepancy', '--id', transferId, '--note', note, ...flags);

let counter = 0;
/** A held transfer of 300 000 kobo (fee 1 000) to 2222222222, once the workflow waits for the bank. */
async function heldTransfer(apiKey: string, tenantId: string) {
  counter += 1;
  const reference = `late-${process.pid}-${counter}`;
  const response = await app.inject({
    method: 'POST',
    url: '/api/v1/transfers',
    headers: auth(apiKey),
    payload: {
      amount_minor: 300_000,
      recipient_account: '2222222222',
      recipient_bank_code: '058',
      narration: 'held by the bank',
      reference,
    },
  });
  expect(response.statusCode).toBe(201);
  expect(response.json().data).toMatchObject({ amount_minor: 300_000, fee_minor: 1_000, total_minor: 301_000 });
  const handle = client.workflow.getHandle(transferWorkflowId(tenantId, reference));
  await eventually(async () => (await handle.query(statusQuery)).status === 'processing', 15_000);
  return { id: response.json().data.id as string, reference, handle };
}

async function publicStatus(apiKey: string, id: string): Promise<string> {
  const response = await app.inject({
    method: 'GET',
    url: `/api/v1/transfers/${id}`,
    headers: auth(apiKey),
  });
  return response.json().data.status as string;
}

async function wallet(tenantId: string) {
  const balance = await walletBalance(db.orm.em.fork(), tenantId);
  return { available: balance.availableMinor, pending: balance.pendingMinor };
}

async function systemBalances() {
  const rows = await db.orm.em
    .fork()
    .execute<{ code: string; balance_minor: string }[]>(
      `select code, balance_minor from ledger_accounts where tenant_id is null and code in ('bank_settlement', 'fee_revenue')`,
    );
  const of = (code: string) => Number(rows.find((row) => row.code === code)!.balance_minor);
  return { bankSettlement: of('bank_settlement'), feeRevenue: of('fee_revenue') };
}

const entries = (transferId: string) => transferEntries(db.orm, transferId);
const events = (transferId: string) => transferEvents(db.orm, transferId);

async function resolutions(transferId: string) {
  return db.orm.em
    .fork()
    .execute<{ outcome: string; note: string; operator: string }[]>(
      'select outcome, note, operator from transfer_resolutions where transfer_id = ? order by created_at',
      [transferId],
    );
}

async function discrepancyRows(transferId: string) {
  return db.orm.em
    .fork()
    .execute<{ ours: string; bank: string; settled_at: Date | null }[]>(
      'select ours, bank, settled_at from transfer_discrepancies where transfer_id = ?',
      [transferId],
    );
}

/** What the gateway did with the bank's callback about the transfer, once it has dispatched it. */
async function callbackResult(transferId: string, type: 'transfer.successful' | 'transfer.failed') {
  return eventually(async () => {
    const [row] = await db.orm.em.fork().execute<{ dispatch_result: string | null }[]>(
      `select dispatch_result from provider_callbacks
          where type = ? and payload->'data'->>'reference' = ? and dispatched_at is not null`,
      [type, transferId],
    );
    return row?.dispatch_result ?? undefined;
  });
}

async function listed(transferId: string, ...flags: string[]) {
  const result = await admin('transfers', 'discrepancies', ...flags);
  expect(result.code).toBe(0);
  return (result.json.items as { transfer_id: string }[]).find((item) => item.transfer_id === transferId);
}

const errorLogs = (transferId: string) =>
  stack.gateway.logs.filter((line) => line.level === 50 && line.transferId === transferId);

describe('a late bank answer that contradicts the books', () => {
  it('keeps the bank’s "successful" after an operator failed the transfer, moves nothing, and settles it once', async () => {
    const tenant = await createFundedTenant(db.orm, 1_000_000);
    const { id, reference } = await heldTransfer(tenant.apiKey, tenant.tenantId);
    const resolved = await resolveTransfer(id, 'failed', 'bank silent');
    expect(resolved.code).toBe(0);
    expect(resolved.json).toMatchObject({ transfer_id: id, status: 'failed' });
    expect(await wallet(tenant.tenantId)).toEqual({ available: 1_000_000, pending: 0 });
    const system = await systemBalances();

    const before = Date.now();
    expect((await bank.control(`/control/transfers/${id}/confirm`)).status).toBe(200);
    expect(await callbackResult(id, 'transfer.successful')).toBe(
      `discrepancy: ${transferWorkflowId(tenant.tenantId, reference)} is failed, the bank says successful`,
    );

    // Listed with the decision's fields first, then the details operators need.
    const item = (await listed(id)) as Record<string, unknown>;
    expect(Object.keys(item).slice(0, 5)).toEqual(['transfer_id', 'reference', 'ours', 'bank', 'received_at']);
    const [row] = await db.orm.em
      .fork()
      .execute<{ session_id: string }[]>('select session_id from transfers where id = ?', [id]);
    expect(item).toEqual({
      transfer_id: id,
      reference,
      ours: 'failed',
      bank: 'successful',
      received_at: expect.stringMatching(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/),
      id: expect.stringMatching(/^[0-9a-f-]{36}$/),
      tenant_id: tenant.tenantId,
      amount_minor: 300_000,
      fee_minor: 1_000,
      bank_detail: {
        source: 'callback',
        detected_by: 'callback',
        session_id: row!.session_id,
        provider_code: '00',
        message: 'Approved or completed successfully',
        event_id: expect.any(String),
      },
      settled_at: null,
      settled_by: null,
      settlement_note: null,
      journal_entry_id: null,
    });
    expect(Date.parse(item.received_at as string)).toBeGreaterThanOrEqual(before - 1_000);
    expect(errorLogs(id)).toEqual([
      expect.objectContaining({
        msg: 'late bank answer contradicts the books: recorded as a discrepancy',
        reference,
        ours: 'failed',
        bank: 'successful',
      }),
    ]);

    // The answer itself moved nothing, and the transfer still reads as the books say.
    expect(await wallet(tenant.tenantId)).toEqual({ available: 1_000_000, pending: 0 });
    expect(await systemBalances()).toEqual(system);
    expect(await entries(id)).toEqual(['transfer_reserve', 'transfer_reverse']);
    expect(await publicStatus(tenant.apiKey, id)).toBe('failed');

    // The day's reconciliation counts it, and finds the bank's word against ours on the same transfer.
    const reconciled = await admin('reconcile', 'run', '--date', new Date().toISOString().slice(0, 10));
    expect(reconciled.code, reconciled.stderr).toBe(0);
    // The sandbox bank's run (the only connector here) counts it: the transfer is the sandbox's.
    expect(reconciled.json.runs.map((run: { connector: string }) => run.connector)).toEqual(['sandbox']);
    const [run] = reconciled.json.runs;
    expect(run.discrepancies).toEqual({ open: 1, received_on_day: 1 });
    expect(run.mismatches).toEqual([
      expect.objectContaining({
        connector: 'sandbox',
        outcome: 'status_differs',
        reference: id,
        transfer_id: id,
        bank_status: 'successful',
        our_status: 'failed',
        bank_amount_minor: 300_000,
        our_amount_minor: 300_000,
      }),
    ]);
    expect(await wallet(tenant.tenantId)).toEqual({ available: 1_000_000, pending: 0 });

    const settled = await settleDiscrepancy(id, 'bank statement shows it paid', '--operator', 'ops-lead');
    expect(settled.code).toBe(0);
    expect(settled.json).toMatchObject({
      status: 'completed',
      idempotency_key: `transfer:${id}:discrepancy:${item.id as string}`,
      postings: [
        { account: 'wallet', amount_minor: -301_000 },
        { account: 'bank_settlement', amount_minor: 300_000 },
        { account: 'fee_revenue', amount_minor: 1_000 },
      ],
      discrepancy: {
        transfer_id: id,
        settled_by: 'ops-lead',
        settlement_note: 'bank statement shows it paid',
        journal_entry_id: settled.json.entry_id,
      },
      event: { type: 'transfer.settled' },
    });
    expect(await wallet(tenant.tenantId)).toEqual({ available: 699_000, pending: 0 });
    expect(await systemBalances()).toEqual({
      bankSettlement: system.bankSettlement + 300_000,
      feeRevenue: system.feeRevenue + 1_000,
    });
    expect(await postingsTotal(db.orm.em.fork())).toBe(0);
    expect(await entries(id)).toEqual(['transfer_reserve', 'transfer_reverse', 'transfer_discrepancy']);
    expect(await publicStatus(tenant.apiKey, id)).toBe('successful');
    const emitted = await events(id);
    expect(emitted.map((event) => event.type)).toEqual(['transfer.created', 'transfer.failed', 'transfer.settled']);
    expect(emitted[2]!.payload).toMatchObject({ id, status: 'successful', amount_minor: 300_000 });
    expect(await resolutions(id)).toEqual([
      { outcome: 'failed', note: 'bank silent', operator: 'ops-test' },
      { outcome: 'successful', note: 'discrepancy settled: bank statement shows it paid', operator: 'ops-lead' },
    ]);
    expect(await listed(id)).toBeUndefined();
    expect(await listed(id, '--all')).toMatchObject({
      transfer_id: id,
      settled_by: 'ops-lead',
      settled_at: expect.any(String),
    });

    // Settling again is refused and moves nothing.
    const again = await settleDiscrepancy(id, 'twice');
    expect(again.code).toBe(1);
    expect(again.stderr).toContain('already settled');
    expect(again.stderr).toContain('by ops-lead; nothing was moved');
    expect(await wallet(tenant.tenantId)).toEqual({ available: 699_000, pending: 0 });
    expect(await entries(id)).toEqual(['transfer_reserve', 'transfer_reverse', 'transfer_discrepancy']);
    expect((await events(id)).map((event) => event.type)).toEqual([
      'transfer.created',
      'transfer.failed',
      'transfer.settled',
    ]);
    expect(await resolutions(id)).toHaveLength(2);
  }, 90_000);

  it('keeps the bank’s "failed" after an operator completed the transfer, and settling it refunds the wallet', async () => {
    const tenant = await createFundedTenant(db.orm, 1_000_000);
    const { id, reference } = await heldTransfer(tenant.apiKey, tenant.tenantId);
    const resolved = await resolveTransfer(id, 'successful', 'paid');
    expect(resolved.json).toMatchObject({ transfer_id: id, status: 'completed' });
    expect(await wallet(tenant.tenantId)).toEqual({ available: 699_000, pending: 0 });
    const system = await systemBalances();

    expect((await bank.control(`/control/transfers/${id}/fail`)).status).toBe(200);
    expect(await callbackResult(id, 'transfer.failed')).toMatch(/^discrepancy: .* is completed, the bank says failed$/);
    expect(await listed(id)).toMatchObject({ transfer_id: id, reference, ours: 'completed', bank: 'failed' });
    expect(errorLogs(id)).toHaveLength(1);
    expect(await wallet(tenant.tenantId)).toEqual({ available: 699_000, pending: 0 });
    expect(await publicStatus(tenant.apiKey, id)).toBe('successful');

    const settled = await settleDiscrepancy(id, 'bank returned the funds');
    expect(settled.code).toBe(0);
    expect(settled.json).toMatchObject({
      status: 'failed',
      postings: [
        { account: 'wallet', amount_minor: 301_000 },
        { account: 'bank_settlement', amount_minor: -300_000 },
        { account: 'fee_revenue', amount_minor: -1_000 },
      ],
      discrepancy: { settled_by: 'ops-test', settlement_note: 'bank returned the funds' },
      event: { type: 'transfer.failed' },
    });
    expect(await wallet(tenant.tenantId)).toEqual({ available: 1_000_000, pending: 0 });
    expect(await systemBalances()).toEqual({
      bankSettlement: system.bankSettlement - 300_000,
      feeRevenue: system.feeRevenue - 1_000,
    });
    expect(await publicStatus(tenant.apiKey, id)).toBe('failed');
    expect((await events(id)).map((event) => event.type)).toEqual([
      'transfer.created',
      'transfer.settled',
      'transfer.failed',
    ]);
    expect(await entries(id)).toEqual(['transfer_reserve', 'transfer_settle', 'transfer_discrepancy']);
  }, 90_000);

  it('refuses a settlement the wallet cannot cover and changes nothing', async () => {
    const tenant = await createFundedTenant(db.orm, 1_000_000);
    const { id } = await heldTransfer(tenant.apiKey, tenant.tenantId);
    await resolveTransfer(id, 'failed', 'bank silent');
    // The tenant spends the refund elsewhere: 300 999 kobo left, 301 000 needed.
    const em = db.orm.em.fork();
    await postEntry(em, {
      idempotencyKey: `test-spend:${tenant.tenantId}`,
      kind: 'test_spend',
      tenantId: tenant.tenantId,
      postings: [
        { accountId: await tenantAccountId(em, tenant.tenantId, 'wallet'), amountMinor: -699_001 },
        { accountId: await systemAccountId(em, 'external_funding'), amountMinor: 699_001 },
      ],
    });
    expect((await bank.control(`/control/transfers/${id}/confirm`)).status).toBe(200);
    await callbackResult(id, 'transfer.successful');
    const system = await systemBalances();

    const refused = await settleDiscrepancy(id, 'bank paid it');
    expect(refused.code).toBe(1);
    expect(refused.stderr).toContain(
      `the wallet of tenant ${tenant.tenantId} holds 300999 kobo, 301000 kobo are needed to align transfer ${id} with the bank; nothing was changed`,
    );
    expect(await wallet(tenant.tenantId)).toEqual({ available: 300_999, pending: 0 });
    expect(await systemBalances()).toEqual(system);
    expect(await entries(id)).toEqual(['transfer_reserve', 'transfer_reverse']);
    expect(await publicStatus(tenant.apiKey, id)).toBe('failed');
    expect(await discrepancyRows(id)).toEqual([{ ours: 'failed', bank: 'successful', settled_at: null }]);
    expect(await resolutions(id)).toHaveLength(1);
    expect((await events(id)).map((event) => event.type)).toEqual(['transfer.created', 'transfer.failed']);
  }, 90_000);

  it('keeps an answer that reaches the workflow while it reverses on the operator’s word', async () => {
    const tenant = await createFundedTenant(db.orm, 1_000_000);
    const { id, handle } = await heldTransfer(tenant.apiKey, tenant.tenantId);
    const logged = vi.spyOn(Runtime.instance().logger, 'error');
    // Hold the transfer's row so the reversal waits; the bank's answer arrives in the meantime.
    const lock = new pg.Client({ connectionString: db.url });
    await lock.connect();
    let resolving: WorkflowUpdateHandle<ResolveResult>;
    try {
      await lock.query('begin');
      await lock.query('select id from transfers where id = $1 for update', [id]);
      // Accepted, not awaited: its answer comes once the reversal (held by the lock) is done.
      resolving = await handle.startUpdate(resolveUpdate, {
        args: [{ outcome: 'failed', note: 'bank silent', operator: 'ops-test' }],
        waitForStage: WorkflowUpdateStage.ACCEPTED,
      });
      // Polled from another connection: inside a transaction, pg_stat_activity is a frozen snapshot.
      await eventually(async () => {
        const waiting = await db.orm.em.fork().execute(
          `select 1 from pg_stat_activity where datname = current_database() and wait_event_type = 'Lock'
                and query ~* 'from "?transfers"?\\s.*for update'`,
        );
        return waiting.length > 0;
      });
      expect((await bank.control(`/control/transfers/${id}/confirm`)).status).toBe(200);
      expect(await callbackResult(id, 'transfer.successful')).toMatch(/^signalled /);
    } finally {
      await lock.query('commit');
      await lock.end();
    }

    expect(await resolving.result()).toEqual({
      transferId: id,
      status: 'failed',
      decidedBy: 'operator',
      resolution: { outcome: 'failed', note: 'bank silent', operator: 'ops-test' },
    });
    const final = await handle.result();
    expect(final).toMatchObject({ status: 'failed', bankOutcome: { status: 'successful', source: 'callback' } });
    // The reversal (a local activity of the lean shape, recorded as a marker), then the discrepancy.
    const history = await handle.fetchHistory();
    const steps = (history.events ?? []).flatMap((event) => {
      const scheduled = event.activityTaskScheduledEventAttributes?.activityType?.name;
      if (scheduled) return [scheduled];
      const marker = event.markerRecordedEventAttributes;
      if (marker?.markerName !== 'core_local_activity') return [];
      const details = Object.values(marker.details ?? {})
        .flatMap((detail) => detail.payloads ?? [])
        .map((payload) => Buffer.from(payload.data ?? new Uint8Array()).toString('utf8'))
        .join(' ');
      return /"(reverseTransfer|settleTransfer)"/.exec(details)?.slice(1) ?? [];
    });
    expect(steps.slice(-2)).toEqual(['reverseTransfer', 'recordDiscrepancy']);
    expect(await listed(id)).toMatchObject({
      transfer_id: id,
      ours: 'failed',
      bank: 'successful',
      bank_detail: { source: 'callback', detected_by: 'workflow' },
    });
    expect(logged).toHaveBeenCalledWith(
      'late bank answer contradicts the books: recorded as a discrepancy',
      expect.objectContaining({ transferId: id, ours: 'failed', bank: 'successful' }),
    );
    logged.mockRestore();
    expect(await wallet(tenant.tenantId)).toEqual({ available: 1_000_000, pending: 0 });
    expect(await entries(id)).toEqual(['transfer_reserve', 'transfer_reverse']);
  }, 90_000);
});

describe('a late bank answer that agrees with the books', () => {
  it('is not a discrepancy and changes nothing', async () => {
    const tenant = await createFundedTenant(db.orm, 1_000_000);
    const { id } = await heldTransfer(tenant.apiKey, tenant.tenantId);
    await resolveTransfer(id, 'failed', 'bank silent');
    expect(await wallet(tenant.tenantId)).toEqual({ available: 1_000_000, pending: 0 });

    expect((await bank.control(`/control/transfers/${id}/fail`)).status).toBe(200);
    expect(await callbackResult(id, 'transfer.failed')).toMatch(/^ignored: .* has finished as failed$/);
    expect(await discrepancyRows(id)).toEqual([]);
    expect(await listed(id, '--all')).toBeUndefined();
    expect(errorLogs(id)).toEqual([]);
    expect(await wallet(tenant.tenantId)).toEqual({ available: 1_000_000, pending: 0 });
    expect(await entries(id)).toEqual(['transfer_reserve', 'transfer_reverse']);

    const refused = await settleDiscrepancy(id, 'nothing to settle');
    expect(refused.code).toBe(1);
    expect(refused.stderr).toContain(`transfer ${id} has no open discrepancy`);
    const unknown = await settleDiscrepancy(randomUUID(), 'x');
    expect(unknown.code).toBe(1);
    expect(unknown.stderr).toContain('no transfer');
  }, 90_000);
});
