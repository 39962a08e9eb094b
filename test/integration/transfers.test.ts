// Transfers end to end on a real Temporal server, PostgreSQL and the sandbox bank over HTTP:
// the create path (validation, fees, refusals, replays), the bank's outcomes, operators, and the
// ledger, which sums to zero after every test.
import { randomUUID } from 'node:crypto';
import type { Client } from '@temporalio/client';
// @temporalio/proto is CommonJS whose named exports Node cannot detect statically.
import proto from '@temporalio/proto';

import { createTransferActivities } from '../../activities/transfers/transfers.ts';
import { findTransfer } from '../../src/transfers/store.ts';
import type { FastifyInstance } from 'fastify';
import { describe, expect, inject, it } from 'vitest';
import { postEntry, postingsTotal, systemAccountId, tenantAccountId, walletBalance } from '../../src/ledger/ledger.ts';
import { statusQuery, transferWorkflowId } from '../../workflows/transfers/definitions.ts';
import { auth, expectFieldRefused, fieldPaths } from '../support/api.ts';
import { createFundedTenant } from '../support/app.ts';
import { runAdmin } from '../support/cli.ts';
import type { TestDatabase } from '../support/database.ts';
import { eventually } from '../support/eventually.ts';
import { recordHistory } from '../support/histories.ts';
import type { TestSandboxBank } from '../support/sandbox-bank.ts';
import { transferEntries, transferEvents } from '../support/ledger-reads.ts';
import { type GatewayStack, useGatewayStack } from '../support/stack.ts';

const TASK_QUEUE = `transfers-${process.pid}`;
const PROVIDER_TIMEOUT_MS = 1_000;

let stack: GatewayStack;
let db: TestDatabase;
let app: FastifyInstance;
let bank: TestSandboxBank;
let client: Client;

useGatewayStack(
  {
    taskQueue: TASK_QUEUE,
    providerTimeoutMs: PROVIDER_TIMEOUT_MS,
    bank: { completionDelayMs: 300, hangMs: 3_000 },
  },
  (started) => {
    stack = started;
    ({ db, app, bank, client } = stack);
  },
);

let counter = 0;
function body(overrides: Record<string, unknown> = {}) {
  counter += 1;
  return {
    amount_minor: 250_000,
    recipient_account: '0123456789',
    recipient_bank_code: '058',
    narration: 'Invoice 42',
    reference: `ref-${process.pid}-${counter}`,
    ...overrides,
  };
}

async function create(apiKey: string, payload: unknown, headers: Record<string, string> = {}) {
  return app.inject({
    method: 'POST',
    url: '/api/v1/transfers',
    headers: auth(apiKey, headers),
    payload: payload as object,
  });
}

async function get(apiKey: string, id: string) {
  return app.inject({ method: 'GET', url: `/api/v1/transfers/${id}`, headers: auth(apiKey) });
}

async function waitForStatus(apiKey: string, id: string, status: string, timeoutMs = 30_000) {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const response = await get(apiKey, id);
    if (response.json().data?.status === status) return response.json().data;
    if (Date.now() > deadline) throw new Error(`transfer ${id} never became ${status}: ${response.body}`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

async function wallet(tenantId: string) {
  const balance = await walletBalance(db.orm.em.fork(), tenantId);
  return { available: balance.availableMinor, pending: balance.pendingMinor };
}

const entries = (transferId: string) => transferEntries(db.orm, transferId);
const events = (transferId: string) => transferEvents(db.orm, transferId);

describe('POST /api/v1/transfers', () => {
  it('creates a transfer, answers 201 pending with every field, and settles it at the bank', async () => {
    const tenant = await createFundedTenant(db.orm, 10_000_000);
    const payload = body({ amount_minor: 1_234_567, metadata: { invoice: 'INV-42' } });
    const response = await create(tenant.apiKey, payload);
    expect(response.statusCode).toBe(201);
    const data = response.json().data;
    expect(response.json().success).toBe(true);
    expect(data).toMatchObject({
      amount_minor: 1_234_567,
      fee_minor: 2_500,
      total_minor: 1_237_067,
      recipient_account: '0123456789',
      recipient_bank: 'Guaranty Trust Bank',
      recipient_bank_code: '058',
      status: 'pending',
      reference: payload.reference,
      narration: 'Invoice 42',
      currency: 'NGN',
      metadata: { invoice: 'INV-42' },
    });
    expect(data.recipient_name).toMatch(/^[A-Z]+ [A-Z]+$/);
    expect(data.session_id).toMatch(/^\d{30}$/);
    expect(Number.isNaN(Date.parse(data.created_at))).toBe(false);
    // Reserved at once: the request returned after the reservation.
    expect(await wallet(tenant.tenantId)).toEqual({ available: 10_000_000 - 1_237_067, pending: 1_237_067 });

    const settled = await waitForStatus(tenant.apiKey, data.id, 'successful');
    expect(settled).toMatchObject({
      id: data.id,
      reference: payload.reference,
      amount_minor: 1_234_567,
      bankCode: '058',
    });
    expect(Date.parse(settled.completedAt)).toBeGreaterThanOrEqual(Date.parse(settled.createdAt));
    expect(await wallet(tenant.tenantId)).toEqual({ available: 8_762_933, pending: 0 });
    expect(await entries(data.id)).toEqual(['transfer_reserve', 'transfer_settle']);
    const emitted = await events(data.id);
    expect(emitted.map((event) => event.type)).toEqual(['transfer.created', 'transfer.settled']);
    expect(emitted[1]!.payload).toMatchObject({ id: data.id, status: 'successful', amount_minor: 1_234_567 });
    recordHistory('transfer-success', transferWorkflowId(tenant.tenantId, payload.reference));
  });

  it.each([
    [500_000, 1_000],
    [500_001, 2_500],
    [5_000_000, 2_500],
    [5_000_001, 5_000],
  ])('charges the fee of %i kobo as %i kobo', async (amount, fee) => {
    const tenant = await createFundedTenant(db.orm, 10_000_000);
    const response = await create(tenant.apiKey, body({ amount_minor: amount }));
    expect(response.statusCode).toBe(201);
    expect(response.json().data).toMatchObject({ amount_minor: amount, fee_minor: fee, total_minor: amount + fee });
    await waitForStatus(tenant.apiKey, response.json().data.id, 'successful');
    expect(await wallet(tenant.tenantId)).toEqual({ available: 10_000_000 - amount - fee, pending: 0 });
  });

  it('generates a reference when none is given', async () => {
    const tenant = await createFundedTenant(db.orm, 1_000_000);
    const { reference: _omitted, ...payload } = body();
    const response = await create(tenant.apiKey, payload);
    expect(response.statusCode).toBe(201);
    expect(response.json().data.reference).toMatch(/^ref_[0-9a-f]{32}$/);
    await waitForStatus(tenant.apiKey, response.json().data.id, 'successful');
  });

  it('refuses a transfer beyond the wallet with insufficient_balance {required, available}', async () => {
    const tenant = await createFundedTenant(db.orm, 500_999);
    const refused = body({ amount_minor: 500_000 });
    const response = await create(tenant.apiKey, refused);
    expect(response.statusCode).toBe(422);
    expect(response.json()).toEqual({
      success: false,
      error: {
        code: 'insufficient_balance',
        message: expect.any(String),
        status: 422,
        details: { required: 501_000, available: 500_999 },
      },
    });
    expect(await wallet(tenant.tenantId)).toEqual({ available: 500_999, pending: 0 });

    // Nothing was created, so the same reference goes through once the wallet can pay.
    await db.orm.em.fork().transactional(async (tx) => {
      await postEntry(tx, {
        idempotencyKey: `top-up:${tenant.tenantId}`,
        kind: 'wallet_funding',
        tenantId: tenant.tenantId,
        postings: [
          { accountId: await systemAccountId(tx, 'external_funding'), amountMinor: -1 },
          { accountId: await tenantAccountId(tx, tenant.tenantId, 'wallet'), amountMinor: 1 },
        ],
      });
    });
    const retried = await create(tenant.apiKey, refused);
    expect(retried.statusCode).toBe(201);
    await waitForStatus(tenant.apiKey, retried.json().data.id, 'successful');
    expect(await wallet(tenant.tenantId)).toEqual({ available: 0, pending: 0 });
  });

  it('refuses 0000000000 with invalid_account and reserves nothing', async () => {
    const tenant = await createFundedTenant(db.orm, 1_000_000);
    const payload = body({ recipient_account: '0000000000' });
    const response = await create(tenant.apiKey, payload);
    expect(response.statusCode).toBe(422);
    expect(response.json()).toEqual({
      success: false,
      error: { code: 'invalid_account', message: expect.stringContaining('0000000000'), status: 422 },
    });
    expect(await wallet(tenant.tenantId)).toEqual({ available: 1_000_000, pending: 0 });
    // The refused run ends failed, so that the reference may be used again.
    const workflowId = transferWorkflowId(tenant.tenantId, payload.reference);
    await expect(client.workflow.getHandle(workflowId).result()).rejects.toMatchObject({
      cause: { type: 'transfer_refused' },
    });
    recordHistory('transfer-refused-invalid-account', workflowId);
  });

  it('refuses past the daily limit with limit_exceeded {limit, used}, counting only transfers that did not fail', async () => {
    const tenant = await createFundedTenant(db.orm, 10_000_000);
    await db.orm.em
      .fork()
      .execute('update tenants set daily_transfer_limit_minor = 1000000 where id = ?', [tenant.tenantId]);
    const failed = await create(tenant.apiKey, body({ amount_minor: 900_000, recipient_account: '1111111111' }));
    await waitForStatus(tenant.apiKey, failed.json().data.id, 'failed');
    const first = await create(tenant.apiKey, body({ amount_minor: 600_000 }));
    expect(first.statusCode).toBe(201);
    const second = await create(tenant.apiKey, body({ amount_minor: 400_001 }));
    expect(second.statusCode).toBe(422);
    expect(second.json().error).toEqual({
      code: 'limit_exceeded',
      message: expect.any(String),
      status: 422,
      details: { limit: 1_000_000, used: 600_000 },
    });
    const exact = await create(tenant.apiKey, body({ amount_minor: 400_000 }));
    expect(exact.statusCode).toBe(201);
    await waitForStatus(tenant.apiKey, first.json().data.id, 'successful');
    await waitForStatus(tenant.apiKey, exact.json().data.id, 'successful');
    expect(await wallet(tenant.tenantId)).toEqual({ available: 10_000_000 - 602_500 - 401_000, pending: 0 });
  });

  it('answers 400 validation_error naming each bad field, and reserves nothing', async () => {
    const tenant = await createFundedTenant(db.orm, 1_000_000);
    const cases: [Record<string, unknown>, string][] = [
      [{ amount_minor: 99 }, 'amount_minor'],
      [{ amount_minor: 1_000_000_001 }, 'amount_minor'],
      [{ amount_minor: 1000.5 }, 'amount_minor'],
      [{ amount_minor: '1000' }, 'amount_minor'],
      [{ recipient_account: '012345678' }, 'recipient_account'],
      [{ recipient_account: '01234567890' }, 'recipient_account'],
      [{ recipient_account: '01234S6789' }, 'recipient_account'],
      [{ recipient_bank_code: '999' }, 'recipient_bank_code'],
      [{ narration: 'x'.repeat(101) }, 'narration'],
      [{ narration: undefined }, 'narration'],
      [{ currency: 'USD' }, 'currency'],
      [{ reference: 'has space' }, 'reference'],
      [{ reference: 'r'.repeat(65) }, 'reference'],
      [{ metadata: 'not an object' }, 'metadata'],
    ];
    for (const [override, field] of cases) {
      const response = await create(tenant.apiKey, body(override));
      expectFieldRefused(response, field, 'validation_error');
      expect(response.json().success).toBe(false);
    }
    expect(await wallet(tenant.tenantId)).toEqual({ available: 1_000_000, pending: 0 });
    const [count] = await db.orm.em
      .fork()
      .execute<{ n: string }[]>('select count(*) as n from transfers where tenant_id = ?', [tenant.tenantId]);
    expect(Number(count!.n)).toBe(0);
  });
});

describe('replay safety', () => {
  it('returns the original transfer for a repeat of the same reference and body, and 409 for another body', async () => {
    const tenant = await createFundedTenant(db.orm, 1_000_000);
    const payload = body();
    const first = await create(tenant.apiKey, payload);
    expect(first.statusCode).toBe(201);
    const again = await create(tenant.apiKey, payload);
    expect(again.statusCode).toBe(200);
    expect(again.json().data.id).toBe(first.json().data.id);
    const other = await create(tenant.apiKey, { ...payload, amount_minor: 250_001 });
    expect(other.statusCode).toBe(409);
    expect(other.json().error).toEqual({
      code: 'duplicate_reference',
      message: expect.any(String),
      status: 409,
      details: { transfer_id: first.json().data.id },
    });
    await waitForStatus(tenant.apiKey, first.json().data.id, 'successful');
    expect(await wallet(tenant.tenantId)).toEqual({ available: 1_000_000 - 251_000, pending: 0 });
    expect(await entries(first.json().data.id)).toEqual(['transfer_reserve', 'transfer_settle']);
  });

  it('replays the first response for a repeated Idempotency-Key, and refuses it with another body', async () => {
    const tenant = await createFundedTenant(db.orm, 1_000_000);
    const { reference: _none, ...payload } = body();
    const key = `idem-${counter}`;
    const first = await create(tenant.apiKey, payload, { 'idempotency-key': key });
    expect(first.statusCode).toBe(201);
    const again = await create(tenant.apiKey, payload, { 'idempotency-key': key });
    // The replay of a create is a 200 (decisions §2), with the first answer's body.
    expect(again.statusCode).toBe(200);
    expect(again.headers['idempotent-replayed']).toBe('true');
    expect(again.json()).toEqual(first.json());
    const reused = await create(tenant.apiKey, { ...payload, narration: 'something else' }, { 'idempotency-key': key });
    expect(reused.statusCode).toBe(422);
    expect(reused.json().error.code).toBe('idempotency_key_reused');
    // Had the first answer been lost to a 5xx (not stored), the retry still meets the same transfer:
    // without a reference, the reference is derived from the key.
    expect(first.json().data.reference).toMatch(/^idem_[0-9a-f]{40}$/);
    await db.orm.em
      .fork()
      .execute('delete from idempotency_keys where tenant_id = ? and key = ?', [tenant.tenantId, key]);
    const retried = await create(tenant.apiKey, payload, { 'idempotency-key': key });
    expect(retried.statusCode).toBe(200);
    expect(retried.json().data.id).toBe(first.json().data.id);
    await waitForStatus(tenant.apiKey, first.json().data.id, 'successful');
    expect(await wallet(tenant.tenantId)).toEqual({ available: 1_000_000 - 251_000, pending: 0 });
  });

  it('turns 20 concurrent identical POSTs into one transfer and one reservation', async () => {
    const tenant = await createFundedTenant(db.orm, 1_000_000);
    const payload = body();
    const responses = await Promise.all(Array.from({ length: 20 }, () => create(tenant.apiKey, payload)));
    const statuses = responses.map((response) => response.statusCode);
    expect(statuses.filter((status) => status === 201)).toHaveLength(1);
    expect(responses.filter((r) => ![200, 201, 409].includes(r.statusCode)).map((r) => r.body)).toEqual([]);
    const ids = new Set(responses.filter((r) => r.statusCode < 300).map((r) => r.json().data.id));
    expect(ids.size).toBe(1);
    const [id] = [...ids] as [string];
    await waitForStatus(tenant.apiKey, id, 'successful');
    expect(await entries(id)).toEqual(['transfer_reserve', 'transfer_settle']);
    expect(await wallet(tenant.tenantId)).toEqual({ available: 1_000_000 - 251_000, pending: 0 });
  });
});

describe("the bank's word completes the waiting submission", () => {
  /** The run's history as event types, with the activity each scheduled event names. */
  async function historyOf(tenantId: string, reference: string): Promise<string[]> {
    const history = await client.workflow.getHandle(transferWorkflowId(tenantId, reference)).fetchHistory();
    return (history.events ?? []).map((event) => {
      const type = proto.temporal.api.enums.v1.EventType[event.eventType ?? 0]!.replace('EVENT_TYPE_', '');
      const activity = event.activityTaskScheduledEventAttributes?.activityType?.name;
      return activity ? `${type} ${activity}` : type;
    });
  }
  /** The run's history once it has ended. */
  async function endedHistoryOf(tenantId: string, reference: string): Promise<string[]> {
    await client.workflow.getHandle(transferWorkflowId(tenantId, reference)).result();
    return historyOf(tenantId, reference);
  }
  /** Creates the transfer (201), waits for it to succeed and its run to end: its id and history. */
  async function createdAndSettled(tenant: { apiKey: string; tenantId: string }, payload: { reference: string }) {
    const response = await create(tenant.apiKey, payload);
    expect(response.statusCode).toBe(201);
    const { id } = response.json().data as { id: string };
    await waitForStatus(tenant.apiKey, id, 'successful');
    return { id, history: await endedHistoryOf(tenant.tenantId, payload.reference) };
  }
  const count = (events: string[], type: string) => events.filter((event) => event === type).length;
  const token = async (id: string) =>
    (
      await db.orm.em
        .fork()
        .execute<{ token: string | null }[]>('select awaiting_word_token as token from transfers where id = ?', [id])
    )[0]!.token;

  it('settles on a word that comes while the submission waits: two workflow tasks, one activity, no signal', async () => {
    const tenant = await createFundedTenant(db.orm, 5_000_000);
    const payload = body({ amount_minor: 2_000_000 });
    const { id, history } = await createdAndSettled(tenant, payload);
    expect(count(history, 'WORKFLOW_TASK_COMPLETED')).toBe(2);
    expect(history.filter((event) => event.startsWith('ACTIVITY_TASK_SCHEDULED'))).toEqual([
      'ACTIVITY_TASK_SCHEDULED submitToBank',
    ]);
    expect(count(history, 'WORKFLOW_EXECUTION_SIGNALED')).toBe(0);
    expect(count(history, 'TIMER_STARTED')).toBe(0);
    // Exact to the kobo: 2,000,000 and its fee of 2,500 paid out, nothing left reserved.
    expect(await wallet(tenant.tenantId)).toEqual({ available: 2_997_500, pending: 0 });
    expect(await entries(id)).toEqual(['transfer_reserve', 'transfer_settle']);
    expect((await events(id)).map((event) => event.type)).toEqual(['transfer.created', 'transfer.settled']);
    expect(await token(id)).toBeNull();
    recordHistory('transfer-bank-word-completes-submission', transferWorkflowId(tenant.tenantId, payload.reference));
  });

  it('takes the word that comes before the submission has its answer: settled once, no signal', async () => {
    const tenant = await createFundedTenant(db.orm, 3_000_000);
    const payload = body({ amount_minor: 1_000_000 });
    // The bank takes it, completes it 300 ms later and calls back; its answer leaves after 1.5 s.
    bank.slowTransferAnswers(1_500);
    try {
      const { id, history } = await createdAndSettled(tenant, payload);
      expect(count(history, 'WORKFLOW_TASK_COMPLETED')).toBe(2);
      expect(count(history, 'WORKFLOW_EXECUTION_SIGNALED')).toBe(0);
      // The submission's own answer ("pending", 1.5 s after the bank took it, so after the word)
      // changes nothing on the finished transfer: read once it has come and been written.
      await new Promise((resolve) => setTimeout(resolve, 1_800));
      expect((await findTransfer(db.orm.em.fork(), id))?.status).toBe('completed');
      // 1,000,000 and its fee of 2,500, once.
      expect(await wallet(tenant.tenantId)).toEqual({ available: 1_997_500, pending: 0 });
      expect(await entries(id)).toEqual(['transfer_reserve', 'transfer_settle']);
      expect((await events(id)).map((event) => event.type)).toEqual(['transfer.created', 'transfer.settled']);
      expect(await token(id)).toBeNull();
    } finally {
      bank.slowTransferAnswers(0);
    }
  });

  it('answers "pending" when no word comes in time, and the word that comes later is signalled', async () => {
    const tenant = await createFundedTenant(db.orm, 1_000_000);
    const { payload, id } = await heldTransfer(tenant.apiKey, tenant.tenantId, 400_000);
    // The wait is over (the run is processing): the bank's word now goes by signal.
    const confirmed = await bank.control(`/control/transfers/${id}/confirm`);
    expect(confirmed.status).toBe(200);
    await waitForStatus(tenant.apiKey, id, 'successful');
    const history = await endedHistoryOf(tenant.tenantId, payload.reference);
    expect(count(history, 'WORKFLOW_EXECUTION_SIGNALED')).toBe(1);
    expect(history.filter((event) => event.startsWith('ACTIVITY_TASK_SCHEDULED'))).toEqual([
      'ACTIVITY_TASK_SCHEDULED submitToBank',
    ]);
    expect(await wallet(tenant.tenantId)).toEqual({ available: 599_000, pending: 0 });
    expect(await token(id)).toBeNull();
  });
});

describe('bank outcomes', () => {
  it('refunds amount + fee in full when the bank fails the transfer', async () => {
    const tenant = await createFundedTenant(db.orm, 2_000_000);
    const payload = body({ recipient_account: '1111111111', amount_minor: 1_500_000 });
    const response = await create(tenant.apiKey, payload);
    expect(response.statusCode).toBe(201);
    expect(await wallet(tenant.tenantId)).toEqual({ available: 497_500, pending: 1_502_500 });
    const failed = await waitForStatus(tenant.apiKey, response.json().data.id, 'failed');
    expect(failed.completedAt).toBeDefined();
    expect(await wallet(tenant.tenantId)).toEqual({ available: 2_000_000, pending: 0 });
    expect(await entries(response.json().data.id)).toEqual(['transfer_reserve', 'transfer_reverse']);
    expect((await events(response.json().data.id)).map((event) => event.type)).toEqual([
      'transfer.created',
      'transfer.failed',
    ]);
    recordHistory('transfer-bank-failure', transferWorkflowId(tenant.tenantId, payload.reference));
  });

  it("holds a transfer whose answer was lost (3333333333: taken, then 500) as possibly taken, sends it once, and completes it on the bank's word", async () => {
    const tenant = await createFundedTenant(db.orm, 1_000_000);
    const payload = body({ recipient_account: '3333333333' });
    const response = await create(tenant.apiKey, payload);
    expect(response.statusCode).toBe(201);
    const id = response.json().data.id as string;
    await waitForStatus(tenant.apiKey, id, 'successful', 45_000);
    expect(await wallet(tenant.tenantId)).toEqual({ available: 749_000, pending: 0 });
    expect(await entries(id)).toEqual(['transfer_reserve', 'transfer_settle']);
    // Sent once: the 500 left it possibly taken, and nothing was sent again (decisions §17).
    const workflowId = transferWorkflowId(tenant.tenantId, payload.reference);
    const history = await client.workflow.getHandle(workflowId).fetchHistory();
    const scheduled = (history.events ?? []).filter(
      (event) => event.activityTaskScheduledEventAttributes?.activityType?.name === 'submitToBank',
    );
    expect(scheduled).toHaveLength(1);
    // Final: no longer possibly taken; that there was doubt is kept.
    const row = await findTransfer(db.orm.em.fork(), id);
    expect(row!.possibly_taken_at).toBeNull();
    expect(row!.ambiguous_since).toBeInstanceOf(Date);
    recordHistory('transfer-answer-lost', workflowId);
  }, 60_000);
});

const admin = (...args: string[]) =>
  runAdmin(
    { DATABASE_URL: db.url, TEMPORAL_ADDRESS: inject('temporalAddress'), GATEWAY_OPERATOR: 'ops-test' },
    ...args,
  );

/** A transfer to 2222222222, which the sandbox bank holds without an answer: its body, id and workflow. */
async function heldTransfer(apiKey: string, tenantId: string, amountMinor: number) {
  const payload = body({ recipient_account: '2222222222', amount_minor: amountMinor });
  const created = await create(apiKey, payload);
  const id = created.json().data.id as string;
  const handle = client.workflow.getHandle(transferWorkflowId(tenantId, payload.reference));
  // Back once its workflow is processing: submitted, waiting for the bank that holds it.
  const deadline = Date.now() + 15_000;
  while ((await handle.query(statusQuery)).status !== 'processing') {
    if (Date.now() > deadline) throw new Error('never processing');
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  return { payload, id, handle };
}

/** `admin transfers resolve` of the transfer, with the operator's note (and any other flags). */
const resolve = (id: string, outcome: string, note: string, ...flags: string[]) =>
  admin('transfers', 'resolve', '--id', id, '--outcome', outcome, '--note', note, ...flags);

describe('stuck transfers and operators', () => {
  it('keeps 2222222222 processing, lists it as stuck, and resolves it by operator command with an audit record', async () => {
    const tenant = await createFundedTenant(db.orm, 1_000_000);
    const { payload, id } = await heldTransfer(tenant.apiKey, tenant.tenantId, 300_000);
    expect((await get(tenant.apiKey, id)).json().data.status).toBe('pending');

    const listsIt = (result: { json: any }) =>
      result.json?.transfers.some((t: { transfer_id: string }) => t.transfer_id === id) === true;
    // Visibility is eventually consistent: give it a moment.
    let listed = await admin('transfers', 'stuck', '--older-than', '0s');
    for (let i = 0; i < 50 && !listsIt(listed); i += 1) {
      await new Promise((resolve) => setTimeout(resolve, 200));
      listed = await admin('transfers', 'stuck', '--older-than', '0s');
    }
    expect(listed.code).toBe(0);
    expect(listed.json.transfers).toContainEqual(
      expect.objectContaining({
        transfer_id: id,
        tenant_id: tenant.tenantId,
        reference: payload.reference,
        amount_minor: 300_000,
      }),
    );
    const notYet = await admin('transfers', 'stuck', '--older-than', '1h');
    expect(notYet.json.transfers.map((t: { transfer_id: string }) => t.transfer_id)).not.toContain(id);

    const resolved = await resolve(id, 'failed', 'bank confirmed reversal by phone');
    expect(resolved.code).toBe(0);
    expect(resolved.json).toMatchObject({ transfer_id: id, outcome: 'failed', status: 'failed', operator: 'ops-test' });
    expect(await wallet(tenant.tenantId)).toEqual({ available: 1_000_000, pending: 0 });
    const [audit] = await db.orm.em
      .fork()
      .execute<{ outcome: string; note: string; operator: string }[]>(
        'select outcome, note, operator from transfer_resolutions where transfer_id = ?',
        [id],
      );
    expect(audit).toEqual({ outcome: 'failed', note: 'bank confirmed reversal by phone', operator: 'ops-test' });
    const again = await resolve(id, 'successful', 'oops');
    expect(again.code).toBe(1);
    expect(again.stderr).toContain('already failed');
    recordHistory('transfer-stuck-resolved', transferWorkflowId(tenant.tenantId, payload.reference));
  }, 60_000);

  it('completes a transfer once when the worker dies and restarts while it waits for the bank', async () => {
    const tenant = await createFundedTenant(db.orm, 1_000_000);
    const { id, handle } = await heldTransfer(tenant.apiKey, tenant.tenantId, 200_000);

    await stack.stopWorker();
    // The bank confirms while no worker runs: the callback lands as a signal in the history.
    expect((await bank.control(`/control/transfers/${id}/confirm`)).status).toBe(200);
    const signalled = async () =>
      (await handle.fetchHistory()).events?.some((event) => event.workflowExecutionSignaledEventAttributes) === true;
    await eventually(signalled);
    expect((await get(tenant.apiKey, id)).json().data.status).toBe('pending');

    await stack.startWorker();
    await waitForStatus(tenant.apiKey, id, 'successful');
    expect(await entries(id)).toEqual(['transfer_reserve', 'transfer_settle']);
    expect(await wallet(tenant.tenantId)).toEqual({ available: 799_000, pending: 0 });
  }, 60_000);

  it('tells the operator when no worker answers a resolution within --wait, and resolves once one runs', async () => {
    const tenant = await createFundedTenant(db.orm, 1_000_000);
    const { id } = await heldTransfer(tenant.apiKey, tenant.tenantId, 300_000);

    await stack.stopWorker();
    const unanswered = await resolve(id, 'failed', 'n', '--wait', '2s');
    expect(unanswered.code).toBe(1);
    expect(unanswered.stderr).toContain('transfers resolve refused (no_answer)');
    expect(unanswered.stderr).toContain('did not answer within 2s: is a worker running?');
    // Nothing moved while no worker ran: the amount and fee (300,000 + 1,000) are still reserved.
    expect(await wallet(tenant.tenantId)).toEqual({ available: 699_000, pending: 301_000 });

    // The unanswered resolution stays with the workflow (the server admitted it) and may apply once a
    // worker runs; asked again, the transfer is resolved either way, and once.
    await stack.startWorker();
    const again = await resolve(id, 'failed', 'bank said no');
    if (again.code === 0)
      expect(again.json).toMatchObject({ transfer_id: id, status: 'failed', decided_by: 'operator' });
    else expect(again.stderr).toContain(`transfer ${id} is already failed`);
    await waitForStatus(tenant.apiKey, id, 'failed');
    expect(await wallet(tenant.tenantId)).toEqual({ available: 1_000_000, pending: 0 });
    expect(await entries(id)).toEqual(['transfer_reserve', 'transfer_reverse']);
    const resolutions = await db.orm.em
      .fork()
      .execute<{ outcome: string }[]>('select outcome from transfer_resolutions where transfer_id = ?', [id]);
    expect(resolutions).toEqual([{ outcome: 'failed' }]);
  }, 60_000);
});

describe('GET /api/v1/transfers', () => {
  it('lists the tenant’s transfers newest first with filters and pagination, and hides other tenants’', async () => {
    const tenant = await createFundedTenant(db.orm, 10_000_000);
    const other = await createFundedTenant(db.orm, 1_000_000);
    const ids: string[] = [];
    for (const account of ['0123456789', '0123456788', '1111111111', '0123456787', '0123456786']) {
      const response = await create(tenant.apiKey, body({ recipient_account: account }));
      ids.push(response.json().data.id);
    }
    await waitForStatus(tenant.apiKey, ids[2]!, 'failed');
    for (const id of [ids[0]!, ids[1]!, ids[3]!, ids[4]!]) await waitForStatus(tenant.apiKey, id, 'successful');
    const otherTransfer = await create(other.apiKey, body());

    const list = async (query: string) =>
      (await app.inject({ method: 'GET', url: `/api/v1/transfers${query}`, headers: auth(tenant.apiKey) })).json();

    const page1 = await list('?limit=2');
    expect(page1.status).toBe('success');
    expect(page1.pagination).toEqual({ page: 1, limit: 2, total: 5, totalPages: 3 });
    expect(page1.data.map((t: { id: string }) => t.id)).toEqual([ids[4], ids[3]]);
    expect(Object.keys(page1.data[0]).sort()).toEqual(
      [
        'accountName',
        'accountNumber',
        'amount_minor',
        'approval',
        'bankCode',
        'createdAt',
        'currency',
        'id',
        'reference',
        'return_of',
        'status',
      ].sort(),
    );
    expect(page1.data[0].return_of).toBeNull();
    const page3 = await list('?limit=2&page=3');
    expect(page3.data.map((t: { id: string }) => t.id)).toEqual([ids[0]]);
    expect((await list('?status=failed')).data.map((t: { id: string }) => t.id)).toEqual([ids[2]]);
    expect((await list('?status=successful')).pagination.total).toBe(4);
    expect((await list('?status=pending')).pagination.total).toBe(0);
    const firstRef = (await get(tenant.apiKey, ids[0]!)).json().data.reference;
    expect((await list(`?reference=${firstRef}`)).data.map((t: { id: string }) => t.id)).toEqual([ids[0]]);
    expect((await list('?from=2999-01-01T00:00:00Z')).pagination.total).toBe(0);
    expect(
      (await list(`?to=${encodeURIComponent(new Date(Date.now() + 60_000).toISOString())}`)).pagination.total,
    ).toBe(5);
    // A date alone as `to` covers that whole day; the day before covers none of today's.
    const [days] = await db.orm.em.fork().execute<{ first: string; last: string; before: string }[]>(
      `select to_char(min(created_at) at time zone 'UTC', 'YYYY-MM-DD') as first,
              to_char(max(created_at) at time zone 'UTC', 'YYYY-MM-DD') as last,
              to_char(min(created_at) at time zone 'UTC' - interval '1 day', 'YYYY-MM-DD') as before
         from transfers where tenant_id = ?`,
      [tenant.tenantId],
    );
    expect((await list(`?from=${days!.first}&to=${days!.last}`)).pagination.total).toBe(5);
    expect((await list(`?to=${days!.before}`)).pagination.total).toBe(0);

    const bad = await app.inject({
      method: 'GET',
      url: '/api/v1/transfers?limit=101&status=done',
      headers: auth(tenant.apiKey),
    });
    expect(bad.statusCode).toBe(400);
    expect(fieldPaths(bad).sort()).toEqual(['limit', 'status']);

    const foreign = await get(tenant.apiKey, otherTransfer.json().data.id);
    expect(foreign.statusCode).toBe(404);
    expect(foreign.json()).toEqual({
      success: false,
      error: { code: 'not_found', message: expect.any(String), status: 404 },
    });
    expect((await get(tenant.apiKey, 'not-a-uuid')).statusCode).toBe(404);
    await waitForStatus(other.apiKey, otherTransfer.json().data.id, 'successful');
  }, 60_000);
});

describe('a reservation whose outcome the create path could not wait for', () => {
  const request = (tenantId: string, reference: string) => ({
    tenantId,
    reference,
    requestHash: 'h',
    amountMinor: 300_000,
    feeMinor: 1_000,
    currency: 'NGN' as const,
    recipientAccount: '0123456789',
    recipientBankCode: '058',
    recipientBankName: 'Guaranty Trust Bank',
    narration: 'late',
    metadata: {},
    mode: 'test' as const,
  });

  /**
   * The create path's steps for the tenant's transfers, called as its workflow calls them: each
   * names the transfer id of its run and the reference it holds.
   */
  function reservationSteps(tenantId: string) {
    const activities = createTransferActivities({ orm: db.orm, providers: stack.providers() });
    return {
      reserve: (transferId: string, reference: string) =>
        activities.reserveFunds({
          transferId,
          request: request(tenantId, reference),
          recipientName: 'X',
          nameEnquirySessionId: 's',
          connector: 'sandbox',
        }),
      settle: (transferId: string, reference: string) =>
        activities.settleReservation({ transferId, request: request(tenantId, reference) }),
    };
  }

  const refusalOf = async (work: Promise<unknown>) =>
    work.then(
      () => expect.unreachable('the reservation was not refused'),
      (error: { type?: string; nonRetryable?: boolean; message: string }) => error,
    );

  it('is used by the transfer if it committed; otherwise it can no longer commit, and the reference stays free', async () => {
    const tenant = await createFundedTenant(db.orm, 1_000_000);
    const { reserve, settle } = reservationSteps(tenant.tenantId);

    // Committed before the create path settled it: the transfer goes on with that reservation.
    const committed = randomUUID();
    await reserve(committed, 'settle-1');
    const used = await settle(committed, 'settle-1');
    expect(used).toEqual({ id: committed, status: 'pending', recipientName: 'X', connector: 'sandbox' });
    expect(await findTransfer(db.orm.em.fork(), committed)).toMatchObject({
      reference: 'settle-1',
      status: 'pending',
      amount_minor: 300_000,
    });
    expect(await wallet(tenant.tenantId)).toEqual({ available: 699_000, pending: 301_000 });
    expect(await entries(committed)).toEqual(['transfer_reserve']);

    // Not committed: the late attempt is refused for good, and reserves nothing.
    const abandoned = randomUUID();
    expect(await settle(abandoned, 'settle-2')).toBeNull();
    const late = await refusalOf(reserve(abandoned, 'settle-2'));
    expect(late).toMatchObject({ type: 'reservation_abandoned', nonRetryable: true });
    expect(await entries(abandoned)).toEqual([]);
    expect(await wallet(tenant.tenantId)).toEqual({ available: 699_000, pending: 301_000 });

    // The retry of the request (a new run, a new transfer id) takes the same reference.
    const retried = randomUUID();
    const view = await reserve(retried, 'settle-2');
    expect(view).toEqual({ id: retried, status: 'pending', recipientName: 'X', connector: 'sandbox' });
    expect(await findTransfer(db.orm.em.fork(), retried)).toMatchObject({
      reference: 'settle-2',
      amount_minor: 300_000,
    });
    expect(await wallet(tenant.tenantId)).toEqual({ available: 398_000, pending: 602_000 });

    // A third id for a reference that is held: a conflict, refused without retries, nothing moved.
    const conflict = await refusalOf(reserve(randomUUID(), 'settle-2'));
    expect(conflict).toMatchObject({ type: 'duplicate_reference', nonRetryable: true });
    expect(await wallet(tenant.tenantId)).toEqual({ available: 398_000, pending: 602_000 });
    expect(await postingsTotal(db.orm.em.fork())).toBe(0);
  });
});
