// Bulk transfers (decisions §14, issue #30) end to end on a real Temporal server, PostgreSQL and the
// sandbox bank over HTTP: whole-batch validation, replays, per-item refusals with their codes,
// atomic batches reserved in one entry before the answer or refused with nothing created, an atomic
// batch racing single creates on one wallet, a batch of 1,000, and `transfer_batch.completed` once.
// Their bounds (decisions §18): at most 5 open batches per tenant (the 6th 429, racing creates
// included); no name enquiry for an item the wallet cannot cover, counted at the bank; at most 16
// name enquiries in flight at the bank while two tenants' batches ask, and a third tenant's answered
// meanwhile; batches and their items on the worker's batches lane, sandbox single transfers on its
// sandbox lane, a batch started on the old queue finished there. The ledger's every invariant is checked after each test (useGatewayStack). On a
// Temporal server of the file's own (see below).
import { randomInt, randomUUID } from 'node:crypto';
import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type TemporalDevServerHandle, startTemporalDevServer } from '../../src/stack/temporal-dev.ts';
import { freePorts } from '../support/ports.ts';
import { journalOf, walletBalance } from '../../src/ledger/ledger.ts';
import {
  batchStatusQuery,
  TRANSFER_BATCH_WORKFLOW_TYPE,
  type TransferBatchInput,
  transferBatchWorkflowId,
  transferBatchChunkWorkflowId,
  transferWorkflowId,
} from '../../workflows/transfers/definitions.ts';
import { auth, expectFieldRefused, fieldPaths } from '../support/api.ts';
import { createFundedTenant } from '../support/app.ts';
import type { TestDatabase } from '../support/database.ts';
import { runAdmin } from '../support/cli.ts';
import { recordHistoryOf } from '../support/histories.ts';
import { eventually } from '../support/eventually.ts';
import { type GatewayStack, type GatewayStackOptions, useGatewayStack } from '../support/stack.ts';
import { insertBatch } from '../../src/transfers/batch-store.ts';
import { TransferBatchService } from '../../src/transfers/batches.ts';
import { banksOf } from '../../src/connectors/registry.ts';
import { ApiError } from '../../src/http/errors.ts';
import { TransferBatchSweep } from '../../src/transfers/batch-sweep.ts';

const TASK_QUEUE = `transfer-batches-${process.pid}`;

let stack: GatewayStack;
let db: TestDatabase;
let app: FastifyInstance;

// A Temporal server of this file's own: a batch of 1,000 is a thousand transfer runs, which must
// not slow the workflows of the test files running beside it on the run's shared server.
const options: GatewayStackOptions = {
  taskQueue: TASK_QUEUE,
  providerTimeoutMs: 2_000,
  bank: { completionDelayMs: 200 },
};
let temporal: TemporalDevServerHandle | undefined;
beforeAll(async () => {
  const [port] = (await freePorts(1)) as [number];
  temporal = await startTemporalDevServer({ port });
  options.temporalAddress = temporal.address;
}, 120_000);
afterAll(async () => {
  await temporal?.stop();
});

useGatewayStack(options, (started) => {
  stack = started;
  ({ db, app } = stack);
});

function item(overrides: Record<string, unknown> = {}) {
  return {
    amount_minor: 100_000,
    recipient_account: '0123456789',
    recipient_bank_code: '058',
    narration: 'Payroll',
    ...overrides,
  };
}

const batchReference = () => `batch-${randomUUID().slice(0, 8)}`;

/** An account number of this test's own (none of the sandbox bank's magic ones), to count its enquiries at the bank. */
const ownAccount = () => `5${String(randomInt(0, 1_000_000_000)).padStart(9, '0')}`;

/** How many name enquiries the sandbox bank has received for these accounts. */
const enquiriesAtBank = (...accounts: string[]) =>
  stack.bank.nameEnquiries.accounts.filter((account) => accounts.includes(account)).length;

function post(apiKey: string, payload: unknown, headers: Record<string, string> = {}) {
  return app.inject({
    method: 'POST',
    url: '/api/v1/transfers/bulk',
    headers: auth(apiKey, headers),
    payload: payload as object,
  });
}

async function getBatch(apiKey: string, id: string) {
  const response = await app.inject({ method: 'GET', url: `/api/v1/transfers/bulk/${id}`, headers: auth(apiKey) });
  return response;
}

async function allItems(apiKey: string, id: string) {
  const items: Record<string, unknown>[] = [];
  for (let page = 1; ; page += 1) {
    const response = await app.inject({
      method: 'GET',
      url: `/api/v1/transfers/bulk/${id}/items?page=${page}&limit=100`,
      headers: auth(apiKey),
    });
    expect(response.statusCode).toBe(200);
    const body = response.json();
    items.push(...body.data);
    if (page >= body.pagination.totalPages) return items;
  }
}

async function completed(apiKey: string, id: string, timeoutMs = 60_000) {
  return eventually(
    async () => {
      const data = (await getBatch(apiKey, id)).json().data;
      return data.status === 'completed' ? data : undefined;
    },
    timeoutMs,
    200,
  );
}

async function wallet(tenantId: string) {
  const balance = await walletBalance(db.orm.em.fork(), tenantId);
  return { available: balance.availableMinor, pending: balance.pendingMinor };
}

async function batchRows(tenantId: string) {
  const [row] = await db.orm.em.fork().execute<{ batches: string; items: string; transfers: string }[]>(
    `select (select count(*) from transfer_batches where tenant_id = ?)::text as batches,
              (select count(*) from transfer_batch_items i join transfer_batches b on b.id = i.batch_id where b.tenant_id = ?)::text as items,
              (select count(*) from transfers where tenant_id = ?)::text as transfers`,
    [tenantId, tenantId, tenantId],
  );
  return { batches: Number(row!.batches), items: Number(row!.items), transfers: Number(row!.transfers) };
}

async function eventsOf(tenantId: string, type: string) {
  return db.orm.em
    .fork()
    .execute<{ payload: Record<string, unknown> }[]>(
      'select payload from events where tenant_id = ? and type = ? order by created_at',
      [tenantId, type],
    );
}

describe('POST /api/v1/transfers/bulk: validation and replays', () => {
  it('refuses a malformed batch whole (400 naming transfers[i].field) and creates nothing', async () => {
    const tenant = await createFundedTenant(db.orm, 10_000_000);
    const many = Array.from({ length: 1_001 }, () => item());
    const cases: [unknown, string][] = [
      [{ batch_reference: batchReference(), transfers: many }, 'transfers'],
      [{ batch_reference: batchReference(), transfers: [] }, 'transfers'],
      [{ batch_reference: batchReference() }, 'transfers'],
      [{ transfers: [item()] }, 'batch_reference'],
      [{ batch_reference: 'has spaces', transfers: [item()] }, 'batch_reference'],
      [
        { batch_reference: batchReference(), transfers: [item(), item(), item({ amount_minor: 99 })] },
        'transfers[2].amount_minor',
      ],
      [
        { batch_reference: batchReference(), transfers: [item({ recipient_account: '12' })] },
        'transfers[0].recipient_account',
      ],
      [{ batch_reference: batchReference(), transfers: [item(), item({ narration: '' })] }, 'transfers[1].narration'],
      [{ batch_reference: batchReference(), transfers: [item({ surprise: 1 })] }, 'transfers[0].surprise'],
      [
        { batch_reference: batchReference(), transfers: [item(), item({ recipient_bank_code: '999' })] },
        'transfers[1].recipient_bank_code',
      ],
      [
        { batch_reference: batchReference(), transfers: [item({ reference: 'same' }), item({ reference: 'same' })] },
        'transfers[1].reference',
      ],
      [{ batch_reference: batchReference(), transfers: [item(), item()], atomic: 'yes' }, 'atomic'],
      // 62 characters: `-0`…`-9` make references of 64, `-10` one of 65, longer than any reference may be.
      [
        { batch_reference: 'b'.repeat(62), transfers: Array.from({ length: 11 }, () => item()) },
        'transfers[10].reference',
      ],
    ];
    for (const [payload, field] of cases)
      expectFieldRefused(await post(tenant.apiKey, payload), field, 'validation_error');
    // A given reference that takes the form another item's derived reference has.
    const reference = batchReference();
    const collides = await post(tenant.apiKey, {
      batch_reference: reference,
      transfers: [item(), item({ reference: `${reference}-0` })],
    });
    expect(fieldPaths(collides)).toEqual(['transfers[1].reference']);
    expect(collides.json()).toMatchObject({ success: false, error: { code: 'validation_error' } });
    expect(await batchRows(tenant.tenantId)).toEqual({ batches: 0, items: 0, transfers: 0 });
    expect(await wallet(tenant.tenantId)).toEqual({ available: 10_000_000, pending: 0 });
  });

  it('answers a repeat of the batch_reference with the same batch (200), another body with 409 {batch_id}', async () => {
    const tenant = await createFundedTenant(db.orm, 10_000_000);
    const payload = { batch_reference: batchReference(), transfers: [item(), item({ amount_minor: 600_000 })] };
    const first = await post(tenant.apiKey, payload);
    expect(first.statusCode).toBe(202);
    expect(first.json()).toEqual({
      success: true,
      data: {
        id: expect.any(String),
        batch_reference: payload.batch_reference,
        status: 'processing',
        total_count: 2,
        total_amount_minor: 700_000,
        total_fee_minor: 1_000 + 2_500,
        atomic: false,
        created_at: expect.any(String),
        // No transfer policy holds it (decisions §20).
        approval: null,
      },
    });
    const again = await post(tenant.apiKey, payload);
    expect(again.statusCode).toBe(200);
    expect(again.json().data).toEqual(first.json().data);
    const other = await post(tenant.apiKey, { ...payload, transfers: [item()] });
    expect(other.statusCode).toBe(409);
    expect(other.json()).toEqual({
      success: false,
      error: {
        code: 'duplicate_reference',
        message: expect.stringContaining(payload.batch_reference),
        status: 409,
        details: { batch_id: first.json().data.id },
      },
    });
    await completed(tenant.apiKey, first.json().data.id);
    expect(await batchRows(tenant.tenantId)).toEqual({ batches: 1, items: 2, transfers: 2 });
    expect(await wallet(tenant.tenantId)).toEqual({ available: 10_000_000 - 700_000 - 3_500, pending: 0 });
    // Another tenant's id is unknown here.
    const stranger = await createFundedTenant(db.orm, 0);
    expect((await getBatch(stranger.apiKey, first.json().data.id)).statusCode).toBe(404);
    expect((await getBatch(stranger.apiKey, 'not-a-uuid')).statusCode).toBe(404);
  });

  it('settles 20 identical concurrent POSTs on one batch: one 202, the rest 200, one set of transfers', async () => {
    const tenant = await createFundedTenant(db.orm, 10_000_000);
    const payload = { batch_reference: batchReference(), transfers: [item(), item()] };
    const answers = await Promise.all(Array.from({ length: 20 }, () => post(tenant.apiKey, payload)));
    const statuses = answers.map((answer) => answer.statusCode).sort();
    expect(statuses).toEqual([...Array.from({ length: 19 }, () => 200), 202]);
    expect(new Set(answers.map((answer) => answer.json().data.id)).size).toBe(1);
    await completed(tenant.apiKey, answers[0]!.json().data.id);
    expect(await batchRows(tenant.tenantId)).toEqual({ batches: 1, items: 2, transfers: 2 });
  });
});

/** A batch of two items recorded as the API records it, without starting its workflow. */
async function recordedBatch(tenantId: string) {
  const id = randomUUID();
  const reference = batchReference();
  const items = [item(), item({ amount_minor: 200_000 })].map((entry, index) => ({
    index,
    reference: `${reference}-${index}`,
    amountMinor: entry.amount_minor,
    feeMinor: 1_000,
    recipientAccount: entry.recipient_account,
    recipientBankCode: entry.recipient_bank_code,
    recipientBank: 'Guaranty Trust Bank',
    savedName: null,
    narration: entry.narration,
    metadata: {},
    requestHash: 'h',
  }));
  await db.orm.em.fork().transactional((tx) =>
    insertBatch(
      tx,
      {
        id,
        tenantId,
        batchReference: reference,
        requestHash: 'h',
        atomic: false,
        mode: 'test',
        totalAmountMinor: 300_000,
        totalFeeMinor: 2_000,
        metadata: {},
      },
      items,
    ),
  );
  return { id, reference };
}

describe('worker lanes', () => {
  const queueOf = async (workflowId: string) =>
    (await stack.client.workflow.getHandle(workflowId).describe()).taskQueue;

  it('runs a batch and its items’ awaiting run on the batches lane, and a sandbox single transfer on the sandbox lane', async () => {
    const tenant = await createFundedTenant(db.orm, 1_000_000);
    const payload = { batch_reference: batchReference(), transfers: [item()] };
    const batch = (await post(tenant.apiKey, payload)).json().data;
    await completed(tenant.apiKey, batch.id);
    expect(await queueOf(transferBatchWorkflowId(tenant.tenantId, payload.batch_reference))).toBe(
      `${TASK_QUEUE}-batches`,
    );
    expect(await queueOf(transferBatchChunkWorkflowId(tenant.tenantId, payload.batch_reference, 0))).toBe(
      `${TASK_QUEUE}-batches`,
    );
    const reference = `single-${randomUUID().slice(0, 8)}`;
    const single = await app.inject({
      method: 'POST',
      url: '/api/v1/transfers',
      headers: auth(tenant.apiKey),
      payload: item({ reference }),
    });
    expect(single.statusCode).toBe(201);
    expect(await queueOf(transferWorkflowId(tenant.tenantId, reference))).toBe(`${TASK_QUEUE}-sandbox`);
    await eventually(async () => (await wallet(tenant.tenantId)).pending === 0, 30_000);
  });

  it('finishes a batch started on the gateway queue before the lanes existed, its items there too', async () => {
    const tenant = await createFundedTenant(db.orm, 1_000_000);
    const { id, reference } = await recordedBatch(tenant.tenantId);
    const workflowId = transferBatchWorkflowId(tenant.tenantId, reference);
    // As the API started batches before: on TEMPORAL_TASK_QUEUE itself.
    await stack.client.workflow.start(TRANSFER_BATCH_WORKFLOW_TYPE, {
      workflowId,
      taskQueue: TASK_QUEUE,
      args: [
        {
          batchId: id,
          tenantId: tenant.tenantId,
          batchReference: reference,
          totalCount: 2,
        } satisfies TransferBatchInput,
      ],
    });
    const done = await completed(tenant.apiKey, id);
    expect(done.counts).toEqual({ refused: 0, pending: 0, successful: 2, failed: 0 });
    expect(await queueOf(workflowId)).toBe(TASK_QUEUE);
    expect(await queueOf(transferBatchChunkWorkflowId(tenant.tenantId, reference, 0))).toBe(TASK_QUEUE);
    expect(await wallet(tenant.tenantId)).toEqual({ available: 1_000_000 - 302_000, pending: 0 });
  });
});

describe('a batch whose API died before starting its workflow', () => {
  it("is started by the worker's sweep, once, on the batches lane", async () => {
    const tenant = await createFundedTenant(db.orm, 1_000_000);
    // Recorded as the API records it, and no workflow started: the API died in between.
    const { id, reference } = await recordedBatch(tenant.tenantId);
    const logged: string[] = [];
    const sweep = new TransferBatchSweep({
      orm: db.orm,
      client: stack.client,
      taskQueue: TASK_QUEUE,
      log: (message) => logged.push(message),
    });
    expect(await sweep.pass(Date.now(), 0)).toBe(1);
    const done = await completed(tenant.apiKey, id);
    expect(done.counts).toEqual({ refused: 0, pending: 0, successful: 2, failed: 0 });
    // A batch its run has touched is not started again.
    expect(await sweep.pass(Date.now() + 3_600_000, 0)).toBe(0);
    expect(await wallet(tenant.tenantId)).toEqual({ available: 1_000_000 - 302_000, pending: 0 });
    const run = await stack.client.workflow.getHandle(transferBatchWorkflowId(tenant.tenantId, reference)).describe();
    expect(run.taskQueue).toBe(`${TASK_QUEUE}-batches`);
  });
});

describe('a batch that is not atomic', () => {
  it('keeps each refused item with its code while the others go on; items are ordinary transfers', async () => {
    // 1,000,000 kobo: the items below take 203,000 + 101,000 + 505,000; the 300,000 one does not fit after them.
    const tenant = await createFundedTenant(db.orm, 1_000_000);
    const taken = `taken-${randomUUID().slice(0, 8)}`;
    const single = await app.inject({
      method: 'POST',
      url: '/api/v1/transfers',
      headers: auth(tenant.apiKey),
      payload: item({ reference: taken, amount_minor: 100 }),
    });
    expect(single.statusCode).toBe(201);
    const reference = batchReference();
    const response = await post(tenant.apiKey, {
      batch_reference: reference,
      metadata: { run: 'november' },
      transfers: [
        item({ amount_minor: 200_000, metadata: { employee: 'E1' } }),
        item({ recipient_account: '0000000000' }),
        item({ reference: taken, amount_minor: 100 }),
        item({ amount_minor: 100_000, recipient_account: '1111111111' }),
        item({ amount_minor: 500_000 }),
        item({ amount_minor: 300_000 }),
        item({ amount_minor: 1_000 }),
      ],
    });
    expect(response.statusCode).toBe(202);
    const batch = response.json().data;
    const done = await completed(tenant.apiKey, batch.id);
    expect(done).toMatchObject({
      id: batch.id,
      status: 'completed',
      counts: { refused: 3, pending: 0, successful: 3, failed: 1 },
      completed_at: expect.any(String),
    });
    const items = await allItems(tenant.apiKey, batch.id);
    expect(
      items.map(({ index, reference: ref, status, error }) => ({
        index,
        ref,
        status,
        code: (error as { code?: string } | null)?.code ?? null,
      })),
    ).toEqual([
      { index: 0, ref: `${reference}-0`, status: 'successful', code: null },
      { index: 1, ref: `${reference}-1`, status: 'refused', code: 'invalid_account' },
      { index: 2, ref: taken, status: 'refused', code: 'duplicate_reference' },
      { index: 3, ref: `${reference}-3`, status: 'failed', code: 'transfer_failed' },
      { index: 4, ref: `${reference}-4`, status: 'successful', code: null },
      { index: 5, ref: `${reference}-5`, status: 'refused', code: 'insufficient_balance' },
      { index: 6, ref: `${reference}-6`, status: 'successful', code: null },
    ]);
    expect(items[1]!.transfer_id).toBeNull();
    // Fees as single creates pay them; the failed one refunded; the single create's 1,100 too.
    expect(await wallet(tenant.tenantId)).toEqual({
      available: 1_000_000 - 1_100 - 201_000 - 501_000 - 2_000,
      pending: 0,
    });
    // Each item that became a transfer is one: fetched by id, listed by reference, with its metadata.
    const first = await app.inject({
      method: 'GET',
      url: `/api/v1/transfers/${items[0]!.transfer_id as string}`,
      headers: auth(tenant.apiKey),
    });
    expect(first.json().data).toMatchObject({
      reference: `${reference}-0`,
      amount_minor: 200_000,
      status: 'successful',
    });
    const repeat = await app.inject({
      method: 'POST',
      url: '/api/v1/transfers',
      headers: auth(tenant.apiKey),
      payload: item({ amount_minor: 200_000, metadata: { employee: 'E1' }, reference: `${reference}-0` }),
    });
    expect(repeat.statusCode).toBe(200);
    expect(repeat.json().data).toMatchObject({ id: items[0]!.transfer_id, metadata: { employee: 'E1' } });
    expect(await journalOf(db.orm.em.fork(), `transfer:${items[0]!.transfer_id as string}:`)).toHaveLength(2);
    // Events as single transfers have them, and the batch's once, with its counts.
    const created = await eventsOf(tenant.tenantId, 'transfer.created');
    expect(created).toHaveLength(1 + 4);
    const done2 = await eventsOf(tenant.tenantId, 'transfer_batch.completed');
    expect(done2).toEqual([{ payload: { ...done } }]);
  });

  it('refuses, without a name enquiry, every item the wallet can no longer cover (200 items, 3 covered: 3 enquiries)', async () => {
    // The case: a wallet that pays 3 items of 200 (each 100,000 + 1,000).
    const tenant = await createFundedTenant(db.orm, 3 * 101_000);
    const account = ownAccount();
    const response = await post(tenant.apiKey, {
      batch_reference: batchReference(),
      transfers: Array.from({ length: 200 }, () => item({ recipient_account: account })),
    });
    expect(response.statusCode).toBe(202);
    const done = await completed(tenant.apiKey, response.json().data.id);
    expect(done.counts).toEqual({ refused: 197, pending: 0, successful: 3, failed: 0 });
    expect(enquiriesAtBank(account)).toBe(3);
    const items = await allItems(tenant.apiKey, response.json().data.id);
    expect(items.slice(0, 3).map((entry) => entry.status)).toEqual(['successful', 'successful', 'successful']);
    for (const entry of items.slice(3)) {
      expect(entry).toMatchObject({
        status: 'refused',
        transfer_id: null,
        error: {
          code: 'insufficient_balance',
          message: 'wallet balance is below the 101000 kobo required (amount plus fee)',
        },
      });
    }
    expect(await wallet(tenant.tenantId)).toEqual({ available: 0, pending: 0 });
  });

  it('refuses without a name enquiry an item over the daily limit', async () => {
    const tenant = await createFundedTenant(db.orm, 10_000_000);
    await db.orm.em
      .fork()
      .execute('update tenants set daily_transfer_limit_minor = 250000 where id = ?', [tenant.tenantId]);
    const [first, second, third] = [ownAccount(), ownAccount(), ownAccount()];
    const response = await post(tenant.apiKey, {
      batch_reference: batchReference(),
      transfers: [
        item({ recipient_account: first, amount_minor: 200_000 }),
        item({ recipient_account: second, amount_minor: 60_000 }),
        item({ recipient_account: third, amount_minor: 50_000 }),
      ],
    });
    const done = await completed(tenant.apiKey, response.json().data.id);
    expect(done.counts).toEqual({ refused: 1, pending: 0, successful: 2, failed: 0 });
    const items = await allItems(tenant.apiKey, response.json().data.id);
    expect(items[1]!.error).toEqual({
      code: 'limit_exceeded',
      message: 'daily transfer limit of 250000 kobo would be exceeded',
    });
    expect([enquiriesAtBank(first), enquiriesAtBank(second), enquiriesAtBank(third)]).toEqual([1, 0, 1]);
  });

  it('waits for an unknown account ahead to be refused before it refuses an item that then fits', async () => {
    // 302,000: the unknown account's 201,000 would leave too little for the next 201,000; it is
    // refused, so the next fits, and so does 101,000 after it; the last 2,000 does not.
    const tenant = await createFundedTenant(db.orm, 302_000);
    const [second, third, fourth] = [ownAccount(), ownAccount(), ownAccount()];
    const unknownBefore = enquiriesAtBank('0000000000');
    const response = await post(tenant.apiKey, {
      batch_reference: batchReference(),
      transfers: [
        item({ recipient_account: '0000000000', amount_minor: 200_000 }),
        item({ recipient_account: second, amount_minor: 200_000 }),
        item({ recipient_account: third, amount_minor: 100_000 }),
        item({ recipient_account: fourth, amount_minor: 1_000 }),
      ],
    });
    const done = await completed(tenant.apiKey, response.json().data.id);
    const items = await allItems(tenant.apiKey, response.json().data.id);
    expect(items.map((entry) => [entry.status, (entry.error as { code?: string } | null)?.code ?? null])).toEqual([
      ['refused', 'invalid_account'],
      ['successful', null],
      ['successful', null],
      ['refused', 'insufficient_balance'],
    ]);
    expect(done.counts).toEqual({ refused: 2, pending: 0, successful: 2, failed: 0 });
    expect([
      enquiriesAtBank('0000000000') - unknownBefore,
      enquiriesAtBank(second, third),
      enquiriesAtBank(fourth),
    ]).toEqual([1, 2, 0]);
    expect(await wallet(tenant.tenantId)).toEqual({ available: 0, pending: 0 });
  });

  it('keeps the daily limit exact across its items', async () => {
    const tenant = await createFundedTenant(db.orm, 10_000_000);
    await db.orm.em
      .fork()
      .execute('update tenants set daily_transfer_limit_minor = 1000000 where id = ?', [tenant.tenantId]);
    const response = await post(tenant.apiKey, {
      batch_reference: batchReference(),
      transfers: [item({ amount_minor: 600_000 }), item({ amount_minor: 400_001 }), item({ amount_minor: 400_000 })],
    });
    const done = await completed(tenant.apiKey, response.json().data.id);
    expect(done.counts).toEqual({ refused: 1, pending: 0, successful: 2, failed: 0 });
    const items = await allItems(tenant.apiKey, response.json().data.id);
    expect(items.map((entry) => entry.status)).toEqual(['successful', 'refused', 'successful']);
    expect(items[1]!.error).toEqual({ code: 'limit_exceeded', message: expect.stringContaining('1000000') });
    expect(await wallet(tenant.tenantId)).toEqual({ available: 10_000_000 - 602_500 - 401_000, pending: 0 });
  });
});

describe('at most 5 open batches per tenant and mode', () => {
  const small = () => ({ batch_reference: batchReference(), transfers: [item(), item()] });

  it('refuses the 6th open batch with 429 {limit: 5, open: 5}, answers a repeat of an open one, and takes another once one completes', async () => {
    const tenant = await createFundedTenant(db.orm, 0);
    const other = await createFundedTenant(db.orm, 0);
    // No worker: the batches stay open, as batches still being worked on do.
    await stack.stopWorker();
    const open: Record<string, unknown>[] = [];
    try {
      for (let i = 0; i < 5; i++) {
        const payload = small();
        const answer = await post(tenant.apiKey, payload);
        expect(answer.statusCode).toBe(202);
        open.push({ payload, id: answer.json().data.id });
      }
      const sixth = await post(tenant.apiKey, small());
      expect(sixth.statusCode).toBe(429);
      expect(sixth.headers['retry-after']).toBe('30');
      expect(sixth.json()).toEqual({
        success: false,
        error: {
          code: 'rate_limited',
          message: expect.stringContaining('still processing'),
          status: 429,
          details: { limit: 5, open: 5 },
        },
      });
      // A repeat of an open batch is that batch, not a 6th; another body under its reference is still a 409.
      const repeat = await post(tenant.apiKey, open[0]!.payload);
      expect(repeat.statusCode).toBe(200);
      expect(repeat.json().data.id).toBe(open[0]!.id);
      const conflicting = await post(tenant.apiKey, { ...(open[0]!.payload as object), transfers: [item()] });
      expect(conflicting.statusCode).toBe(409);
      // Another tenant's batches are its own.
      expect((await post(other.apiKey, small())).statusCode).toBe(202);
      expect(await batchRows(tenant.tenantId)).toMatchObject({ batches: 5 });
    } finally {
      await stack.startWorker();
    }
    for (const { id } of open) await completed(tenant.apiKey, id as string);
    expect((await post(tenant.apiKey, small())).statusCode).toBe(202);
  });

  it('lets 10 racing creates open exactly 5 batches', async () => {
    const tenant = await createFundedTenant(db.orm, 0);
    await stack.stopWorker();
    let answers;
    try {
      answers = await Promise.all(Array.from({ length: 10 }, () => post(tenant.apiKey, small())));
      expect(answers.map((answer) => answer.statusCode).sort()).toEqual([
        202, 202, 202, 202, 202, 429, 429, 429, 429, 429,
      ]);
      for (const refused of answers.filter((answer) => answer.statusCode === 429))
        expect(refused.json().error).toMatchObject({ code: 'rate_limited', details: { limit: 5, open: 5 } });
      expect(await batchRows(tenant.tenantId)).toMatchObject({ batches: 5 });
    } finally {
      await stack.startWorker();
    }
    for (const answer of answers.filter((entry) => entry.statusCode === 202))
      await completed(tenant.apiKey, answer.json().data.id);
  });
});

describe('at most BULK_ITEMS_PER_MINUTE items a minute per tenant and mode, a sixth of it in any 10 s', () => {
  it("refuses a batch past the minute's items with 429 {limit, window_seconds, admitted} and Retry-After, still answers a repeat, and leaves other tenants their own", async () => {
    // The service as the API builds it, with a budget of two full batches in any 10 seconds.
    const batches = new TransferBatchService({
      orm: db.orm,
      client: stack.client,
      taskQueue: TASK_QUEUE,
      banks: (mode) => banksOf(stack.providers(), mode),
      itemsPerMinute: 12_000,
    });
    const [tenant, other] = await Promise.all([createFundedTenant(db.orm, 0), createFundedTenant(db.orm, 0)]);
    const full = () => ({ batch_reference: batchReference(), transfers: Array.from({ length: 1_000 }, () => item()) });
    const first = full();
    const created = [];
    for (const payload of [first, full()]) {
      const answer = await batches.create(tenant.tenantId, payload, 'test');
      expect(answer.status).toBe(202);
      created.push(answer.body.data.id);
    }
    const refusal = await batches
      .create(tenant.tenantId, { batch_reference: batchReference(), transfers: [item()] }, 'test')
      .then(
        () => undefined,
        (error: unknown) => error,
      );
    expect(refusal).toBeInstanceOf(ApiError);
    expect(refusal).toMatchObject({
      kind: 'rate_limited',
      details: { limit: 2_000, window_seconds: 10, admitted: 2_000 },
      message: expect.stringContaining('items of this tenant'),
    });
    const retryAfter = Number((refusal as ApiError).headers['retry-after']);
    expect(retryAfter).toBeGreaterThanOrEqual(1);
    expect(retryAfter).toBeLessThanOrEqual(10);
    // A repeat of an admitted batch is that batch, not more items.
    const repeat = await batches.create(tenant.tenantId, first, 'test');
    expect(repeat).toMatchObject({ status: 200, body: { data: { id: created[0] } } });
    // Another tenant's minute is its own.
    expect((await batches.create(other.tenantId, full(), 'test')).status).toBe(202);
    expect(await batchRows(tenant.tenantId)).toMatchObject({ batches: 2 });
    for (const id of created) await completed(tenant.apiKey, id);
  }, 120_000);
});

describe('name enquiries at the bank', () => {
  it('never has more than 16 in flight while two tenants’ batches ask, and answers a third tenant meanwhile', async () => {
    const tenants = await Promise.all([
      createFundedTenant(db.orm, 100_000_000),
      createFundedTenant(db.orm, 100_000_000),
    ]);
    const third = await createFundedTenant(db.orm, 0);
    // Each enquiry held 100 ms at the bank: the two batches' 300 take at least 1.9 s at 16 at a time.
    stack.bank.slowNameEnquiries(100);
    stack.bank.nameEnquiries.maxInFlight = 0;
    try {
      const accounts = tenants.map(() => ownAccount());
      const answers = await Promise.all(
        tenants.map((tenant, i) =>
          post(tenant.apiKey, {
            batch_reference: batchReference(),
            transfers: Array.from({ length: 150 }, () => item({ recipient_account: accounts[i] })),
          }),
        ),
      );
      // While they ask, the third tenant's own enquiry gets a slot (its account is new: never cached).
      await eventually(() => enquiriesAtBank(...accounts) >= 32, 20_000, 20);
      const resolved = await app.inject({
        method: 'GET',
        url: `/api/v1/banks/resolve?bank_code=058&account_number=${ownAccount()}`,
        headers: auth(third.apiKey),
      });
      expect(resolved.statusCode).toBe(200);
      expect(enquiriesAtBank(...accounts)).toBeLessThan(300);
      for (const [i, answer] of answers.entries()) {
        const done = await completed(tenants[i]!.apiKey, answer.json().data.id, 120_000);
        expect(done.counts).toEqual({ refused: 0, pending: 0, successful: 150, failed: 0 });
      }
      expect(enquiriesAtBank(...accounts)).toBe(300);
      expect(stack.bank.nameEnquiries.maxInFlight).toBe(16);
    } finally {
      stack.bank.slowNameEnquiries(0);
    }
  }, 180_000);
});

describe('items naming saved recipients (decisions §20)', () => {
  async function save(apiKey: string, account: string) {
    const response = await app.inject({
      method: 'POST',
      url: '/api/v1/recipients',
      headers: auth(apiKey),
      payload: { bank_code: '058', account_number: account },
    });
    expect(response.statusCode).toBe(201);
    return response.json().data as { id: string; account_name: string };
  }
  /** The name a recipient is saved under, changed behind the API's back: as if its bank's name had changed since. */
  const renameSaved = (id: string, name: string) =>
    db.orm.em.fork().execute('update recipients set account_name = ? where id = ?', [name, id]);
  const byId = (recipientId: string, overrides: Record<string, unknown> = {}) => ({
    amount_minor: 100_000,
    recipient_id: recipientId,
    narration: 'Payout',
    ...overrides,
  });

  it('refuses the whole batch naming transfers[i].recipient_id (both, or not a saved recipient) or the missing account fields; nothing is created', async () => {
    const tenant = await createFundedTenant(db.orm, 1_000_000);
    const stranger = await createFundedTenant(db.orm, 0);
    const mine = await save(tenant.apiKey, ownAccount());
    const theirs = await save(stranger.apiKey, ownAccount());
    const cases: [unknown[], { path: string; message: string }[]][] = [
      [
        [byId(mine.id), byId(mine.id, { recipient_account: '0123456789', recipient_bank_code: '058' })],
        [
          {
            path: 'transfers[1].recipient_id',
            message: 'give either recipient_id or recipient_account and recipient_bank_code, not both',
          },
        ],
      ],
      [
        [{ amount_minor: 100_000, narration: 'Payout' }, byId(mine.id)],
        [
          { path: 'transfers[0].recipient_account', message: 'is required' },
          { path: 'transfers[0].recipient_bank_code', message: 'is required' },
        ],
      ],
      [
        [byId(mine.id), item(), byId(theirs.id), byId('not-a-uuid')],
        [
          {
            path: 'transfers[2].recipient_id',
            message: 'is not a saved recipient (GET /api/v1/recipients lists them)',
          },
          {
            path: 'transfers[3].recipient_id',
            message: 'is not a saved recipient (GET /api/v1/recipients lists them)',
          },
        ],
      ],
    ];
    for (const [transfers, fields] of cases) {
      const response = await post(tenant.apiKey, { batch_reference: batchReference(), transfers });
      expect({ transfers, status: response.statusCode }).toEqual({ transfers, status: 400 });
      expect(response.json().error).toMatchObject({ code: 'validation_error', details: { fields } });
    }
    expect(await batchRows(tenant.tenantId)).toEqual({ batches: 0, items: 0, transfers: 0 });
    expect(await wallet(tenant.tenantId)).toEqual({ available: 1_000_000, pending: 0 });
  });

  it('pays an item under its saved name and refuses as invalid_account one whose bank now gives another name, to the kobo', async () => {
    const tenant = await createFundedTenant(db.orm, 1_000_000);
    const good = await save(tenant.apiKey, ownAccount());
    const stale = await save(tenant.apiKey, ownAccount());
    await renameSaved(stale.id, 'BOLA ADEYEMI');
    const reference = batchReference();
    const payload = {
      batch_reference: reference,
      transfers: [
        byId(good.id, { amount_minor: 200_000, metadata: { employee: 'E1' } }),
        byId(stale.id, { amount_minor: 300_000 }),
        item({ amount_minor: 100_000 }),
      ],
    };
    const response = await post(tenant.apiKey, payload);
    expect(response.statusCode).toBe(202);
    const batch = response.json().data;
    expect(batch).toMatchObject({ total_count: 3, total_amount_minor: 600_000, total_fee_minor: 3_000 });
    const done = await completed(tenant.apiKey, batch.id);
    expect(done.counts).toEqual({ refused: 1, pending: 0, successful: 2, failed: 0 });
    const items = await allItems(tenant.apiKey, batch.id);
    expect(
      items.map(({ index, status, error }) => ({
        index,
        status,
        code: (error as { code?: string } | null)?.code ?? null,
      })),
    ).toEqual([
      { index: 0, status: 'successful', code: null },
      { index: 1, status: 'refused', code: 'invalid_account' },
      { index: 2, status: 'successful', code: null },
    ]);
    const staleMessage = (items[1]!.error as { message: string }).message;
    expect(staleMessage).toContain('BOLA ADEYEMI');
    expect(staleMessage).toContain(stale.account_name);
    expect(items[1]!.transfer_id).toBeNull();
    // 200,000 + 1,000 and 100,000 + 1,000 paid; the refused item took nothing.
    expect(await wallet(tenant.tenantId)).toEqual({ available: 1_000_000 - 201_000 - 101_000, pending: 0 });
    const paid = await app.inject({
      method: 'GET',
      url: `/api/v1/transfers/${items[0]!.transfer_id as string}`,
      headers: auth(tenant.apiKey),
    });
    expect(paid.json().data).toMatchObject({
      reference: `${reference}-0`,
      amount_minor: 200_000,
      accountName: good.account_name,
      bankCode: '058',
      status: 'successful',
    });
    // The body as given is the fingerprint: the batch again is the batch, its item again is its transfer.
    const again = await post(tenant.apiKey, payload);
    expect(again.statusCode).toBe(200);
    expect(again.json().data.id).toBe(batch.id);
    const single = await app.inject({
      method: 'POST',
      url: '/api/v1/transfers',
      headers: auth(tenant.apiKey),
      payload: byId(good.id, { amount_minor: 200_000, metadata: { employee: 'E1' }, reference: `${reference}-0` }),
    });
    expect(single.statusCode).toBe(200);
    expect(single.json().data).toMatchObject({ id: items[0]!.transfer_id, recipient_name: good.account_name });
    expect(await batchRows(tenant.tenantId)).toEqual({ batches: 1, items: 3, transfers: 2 });
    expect(await wallet(tenant.tenantId)).toEqual({ available: 698_000, pending: 0 });
  });

  it('gives an atomic batch back the share of an item refused for a renamed recipient', async () => {
    const tenant = await createFundedTenant(db.orm, 1_000_000);
    const good = await save(tenant.apiKey, ownAccount());
    const stale = await save(tenant.apiKey, ownAccount());
    await renameSaved(stale.id, 'BOLA ADEYEMI');
    const response = await post(tenant.apiKey, {
      batch_reference: batchReference(),
      atomic: true,
      transfers: [byId(good.id, { amount_minor: 100_000 }), byId(stale.id, { amount_minor: 200_000 })],
    });
    expect(response.statusCode).toBe(202);
    const batch = response.json().data;
    // Reserved whole before the answer: 100,000 + 1,000 + 200,000 + 1,000.
    expect(await wallet(tenant.tenantId)).toEqual({ available: 698_000, pending: 302_000 });
    const done = await completed(tenant.apiKey, batch.id);
    expect(done.counts).toEqual({ refused: 1, pending: 0, successful: 1, failed: 0 });
    expect(await wallet(tenant.tenantId)).toEqual({ available: 899_000, pending: 0 });
    const released = await journalOf(db.orm.em.fork(), `transfer-batch:${batch.id as string}:item:1:`);
    expect(released.map((entry) => entry.kind)).toEqual(['transfer_batch_release']);
  });
});

describe('an atomic batch', () => {
  it('reserves every amount and fee in one entry before the answer, and refunds an item refused after', async () => {
    const tenant = await createFundedTenant(db.orm, 2_000_000);
    const response = await post(tenant.apiKey, {
      batch_reference: batchReference(),
      atomic: true,
      transfers: [
        item({ amount_minor: 700_000 }),
        item({ amount_minor: 300_000, recipient_account: '0000000000' }),
        item(),
      ],
    });
    expect(response.statusCode).toBe(202);
    const batch = response.json().data;
    expect(batch).toMatchObject({
      atomic: true,
      total_amount_minor: 1_100_000,
      total_fee_minor: 2_500 + 1_000 + 1_000,
    });
    // Reserved before the answer: the whole batch, in one entry.
    expect(await wallet(tenant.tenantId)).toEqual({ available: 2_000_000 - 1_104_500, pending: 1_104_500 });
    const entries = await journalOf(db.orm.em.fork(), `transfer-batch:${batch.id as string}:`);
    expect(entries[0]).toMatchObject({
      kind: 'transfer_batch_reserve',
      postings: expect.arrayContaining([
        { account: 'wallet', amount_minor: -1_104_500 },
        { account: 'in_flight', amount_minor: 1_104_500 },
      ]),
    });
    const done = await completed(tenant.apiKey, batch.id);
    expect(done.counts).toEqual({ refused: 1, pending: 0, successful: 2, failed: 0 });
    expect(await wallet(tenant.tenantId)).toEqual({ available: 2_000_000 - 702_500 - 101_000, pending: 0 });
    const released = await journalOf(db.orm.em.fork(), `transfer-batch:${batch.id as string}:item:1:`);
    expect(released.map((entry) => entry.kind)).toEqual(['transfer_batch_release']);
  });

  it('is refused whole (422 with the batch totals) when the wallet or the daily limit cannot take it, creating nothing', async () => {
    const tenant = await createFundedTenant(db.orm, 1_000_000);
    const payload = {
      batch_reference: batchReference(),
      atomic: true,
      transfers: [item({ amount_minor: 500_000 }), item({ amount_minor: 499_000 })],
    };
    const short = await post(tenant.apiKey, payload);
    expect(short.statusCode).toBe(422);
    expect(short.json()).toEqual({
      success: false,
      error: {
        code: 'insufficient_balance',
        message: expect.any(String),
        status: 422,
        details: { required: 1_001_000, available: 1_000_000, total_amount_minor: 999_000, total_fee_minor: 2_000 },
      },
    });
    await db.orm.em
      .fork()
      .execute('update tenants set daily_transfer_limit_minor = 900000 where id = ?', [tenant.tenantId]);
    const over = await post(tenant.apiKey, {
      ...payload,
      transfers: [item({ amount_minor: 500_000 }), item({ amount_minor: 400_001 })],
    });
    expect(over.statusCode).toBe(422);
    expect(over.json().error).toMatchObject({
      code: 'limit_exceeded',
      details: { limit: 900_000, used: 0, total_amount_minor: 900_001, total_fee_minor: 2_000 },
    });
    expect(await batchRows(tenant.tenantId)).toEqual({ batches: 0, items: 0, transfers: 0 });
    expect(await wallet(tenant.tenantId)).toEqual({ available: 1_000_000, pending: 0 });
    // Nothing was kept of the refusals: the same reference may be used once the wallet can take it.
    const fits = await post(tenant.apiKey, { ...payload, transfers: [item({ amount_minor: 500_000 })] });
    expect(fits.statusCode).toBe(202);
    await completed(tenant.apiKey, fits.json().data.id);
  });

  it.each([
    { funded: 3_000_000, limit: 5_000_000, binding: 'the wallet' },
    { funded: 10_000_000, limit: 3_000_000, binding: 'the daily limit' },
  ])(
    'racing single creates on one wallet ($binding binding): never below zero, never over the daily limit',
    async ({ funded, limit }) => {
      const tenant = await createFundedTenant(db.orm, funded);
      await db.orm.em
        .fork()
        .execute('update tenants set daily_transfer_limit_minor = ? where id = ?', [limit, tenant.tenantId]);
      // Each atomic batch wants 1,000,000 + fees; each single 250,000 + 1,000. Together far more than the wallet.
      const batches = Array.from({ length: 4 }, () =>
        post(tenant.apiKey, {
          batch_reference: batchReference(),
          atomic: true,
          transfers: Array.from({ length: 4 }, () => item({ amount_minor: 250_000 })),
        }),
      );
      const singles = Array.from({ length: 12 }, (_, i) =>
        app.inject({
          method: 'POST',
          url: '/api/v1/transfers',
          headers: auth(tenant.apiKey),
          payload: item({ amount_minor: 250_000, reference: `race-${randomUUID().slice(0, 8)}-${i}` }),
        }),
      );
      const answers = await Promise.all([...batches, ...singles]);
      const batchAnswers = answers.slice(0, 4);
      const singleAnswers = answers.slice(4);
      for (const answer of answers) expect([200, 201, 202, 422]).toContain(answer.statusCode);
      const acceptedBatches = batchAnswers.filter((answer) => answer.statusCode === 202);
      const acceptedSingles = singleAnswers.filter((answer) => answer.statusCode === 201);
      for (const answer of acceptedBatches) await completed(tenant.apiKey, answer.json().data.id);
      await eventually(async () => (await wallet(tenant.tenantId)).pending === 0, 30_000);
      // Whatever the interleaving, a single create was refused once the rest could not take 250,000.
      const sent = acceptedBatches.length * 4 * 250_000 + acceptedSingles.length * 250_000;
      const spent = sent + (sent / 250_000) * 1_000;
      expect(Math.min(funded - spent, limit - sent)).toBeGreaterThanOrEqual(0);
      expect(Math.min(funded - spent, limit - sent)).toBeLessThan(251_000);
      expect(await wallet(tenant.tenantId)).toEqual({ available: funded - spent, pending: 0 });
      const [used] = await db.orm.em
        .fork()
        .execute<{ used: string }[]>(
          `select coalesce(sum(amount_minor), 0)::text as used from transfers where tenant_id = ? and status <> 'failed'`,
          [tenant.tenantId],
        );
      expect(Number(used!.used)).toBe(sent);
    },
  );
});

describe('a batch item its bank holds (2222222222)', () => {
  const admin = (...args: string[]) =>
    runAdmin(
      { DATABASE_URL: db.url, TEMPORAL_ADDRESS: options.temporalAddress!, GATEWAY_OPERATOR: 'ops-test' },
      ...args,
    );
  const transfersOf = (batchId: string) =>
    db.orm.em.fork().execute<{ id: string; status: string }[]>(
      `select t.id, t.status from transfer_batch_items i join transfers t on t.id = i.transfer_id
          where i.batch_id = ? order by i.index`,
      [batchId],
    );

  it('is awaited by its group’s run: listed stuck and shown with it, resolved through it by operator command, to the kobo', async () => {
    const tenant = await createFundedTenant(db.orm, 1_000_000);
    const payload = {
      batch_reference: batchReference(),
      transfers: [item({ amount_minor: 100_000 }), item({ recipient_account: '2222222222', amount_minor: 200_000 })],
    };
    const batch = (await post(tenant.apiKey, payload)).json().data;
    const group = transferBatchChunkWorkflowId(tenant.tenantId, payload.batch_reference, 0);
    const [paid, held] = await eventually(async () => {
      const rows = await transfersOf(batch.id as string);
      return rows[0]?.status === 'completed' && rows[1]?.status === 'processing' ? rows : undefined;
    }, 30_000);
    // Visibility is eventually consistent: give it a moment.
    const listed = await eventually(async () => {
      const result = await admin('transfers', 'stuck', '--older-than', '0s');
      return result.json.transfers?.some((t: { transfer_id: string }) => t.transfer_id === held!.id)
        ? result
        : undefined;
    }, 15_000);
    expect(listed.json.transfers).toContainEqual(
      expect.objectContaining({
        transfer_id: held!.id,
        workflow_id: group,
        tenant_id: tenant.tenantId,
        reference: `${payload.batch_reference}-1`,
        amount_minor: 200_000,
      }),
    );
    expect(listed.json.transfers.map((t: { transfer_id: string }) => t.transfer_id)).not.toContain(paid!.id);
    const shown = await admin('transfers', 'show', '--id', held!.id);
    expect(shown.json.workflow).toMatchObject({ workflow_id: group, status: 'RUNNING' });

    const resolved = await admin(
      'transfers',
      'resolve',
      '--id',
      held!.id,
      '--outcome',
      'failed',
      '--note',
      'bank said no',
    );
    expect(resolved.code).toBe(0);
    expect(resolved.json).toMatchObject({
      transfer_id: held!.id,
      workflow_id: group,
      outcome: 'failed',
      status: 'failed',
      decided_by: 'operator',
      operator: 'ops-test',
    });
    const done = await completed(tenant.apiKey, batch.id as string);
    expect(done.counts).toEqual({ refused: 0, pending: 0, successful: 1, failed: 1 });
    expect(await stack.client.workflow.getHandle(group).result()).toMatchObject({ open: 0, successful: 1, failed: 1 });
    // The held item's amount and fee are back; the paid one's are spent.
    expect(await wallet(tenant.tenantId)).toEqual({ available: 1_000_000 - 100_000 - 1_000, pending: 0 });
    const again = await admin('transfers', 'resolve', '--id', held!.id, '--outcome', 'successful', '--note', 'oops');
    expect(again.code).toBe(1);
    expect(again.stderr).toContain('already failed');
    // Replay fixtures (npm run record-histories): a batch awaiting its items in a group, and the group's run.
    await recordHistoryOf(
      'transfer-batch-grouped',
      stack.client.workflow.getHandle(transferBatchWorkflowId(tenant.tenantId, payload.batch_reference)),
    );
    await recordHistoryOf('transfer-batch-chunk-resolved', stack.client.workflow.getHandle(group));
  }, 90_000);
});

describe('a batch of 1,000', () => {
  it('reserves, submits and settles every item once, exact to the kobo, and completes once', async () => {
    const tenant = await createFundedTenant(db.orm, 200_000_000);
    const transfers = Array.from({ length: 1_000 }, (_, i) => item({ amount_minor: 10_000 + i }));
    const response = await post(tenant.apiKey, { batch_reference: batchReference(), transfers });
    expect(response.statusCode).toBe(202);
    const batch = response.json().data;
    const totalAmount = transfers.reduce((sum, entry) => sum + entry.amount_minor, 0);
    expect(batch).toMatchObject({
      total_count: 1_000,
      total_amount_minor: totalAmount,
      total_fee_minor: 1_000 * 1_000,
    });
    const workflow = stack.client.workflow.getHandle(
      transferBatchWorkflowId(tenant.tenantId, batch.batch_reference as string),
    );
    const done = await completed(tenant.apiKey, batch.id, 240_000);
    expect(done.counts).toEqual({ refused: 0, pending: 0, successful: 1_000, failed: 0 });
    expect(await workflow.query(batchStatusQuery)).toEqual({
      phase: 'completed',
      total: 1_000,
      refused: 0,
      accepted: 1_000,
      started: 1_000,
      successful: 1_000,
      failed: 0,
    });
    expect(await wallet(tenant.tenantId)).toEqual({ available: 200_000_000 - totalAmount - 1_000_000, pending: 0 });
    const items = await allItems(tenant.apiKey, batch.id);
    expect(items.map((entry) => entry.index)).toEqual(Array.from({ length: 1_000 }, (_, i) => i));
    expect(new Set(items.map((entry) => entry.transfer_id)).size).toBe(1_000);
    expect(await eventsOf(tenant.tenantId, 'transfer.settled')).toHaveLength(1_000);
    expect(await eventsOf(tenant.tenantId, 'transfer_batch.completed')).toHaveLength(1);
    // Awaited in groups of 100 (decisions §14): each item's row names its group's run, and each of
    // the ten runs finished its hundred items once.
    const awaited = await db.orm.em
      .fork()
      .execute<{ awaited_by: string; items: string }[]>(
        'select awaited_by, count(*) as items from transfer_batch_items where batch_id = ? group by awaited_by order by awaited_by',
        [batch.id],
      );
    const groups = Array.from({ length: 10 }, (_, k) =>
      transferBatchChunkWorkflowId(tenant.tenantId, batch.batch_reference as string, k),
    );
    expect(awaited.map((row) => [row.awaited_by, Number(row.items)])).toEqual(
      [...groups].sort().map((id) => [id, 100]),
    );
    let groupEvents = 0;
    for (const [k, id] of groups.entries()) {
      const group = stack.client.workflow.getHandle(id);
      expect(await group.result()).toMatchObject({ chunk: k, open: 0, successful: 100, failed: 0 });
      groupEvents = Math.max(groupEvents, (await group.fetchHistory()).events!.length);
    }
    // A word that came before its group's run was there was kept on its item: each the holder's
    // word of success about a transfer that completed on it, once (one transfer.settled each, above).
    const kept = await db.orm.em.fork().execute<{ word: { status: string; connector: string }; status: string }[]>(
      `select i.bank_word as word, t.status from transfer_batch_items i join transfers t on t.id = i.transfer_id
        where i.batch_id = ? and i.bank_word is not null`,
      [batch.id],
    );
    for (const row of kept) {
      expect(row).toMatchObject({ word: { status: 'successful', connector: 'sandbox' }, status: 'completed' });
    }
    // Within Temporal's limits, with room to spare.
    const { events } = await workflow.fetchHistory();
    expect(events!.length).toBeLessThan(1_000);
    expect(groupEvents).toBeLessThan(2_000);
    console.log(
      JSON.stringify({
        batch_of_1000: {
          history_events: events!.length,
          group_history_events: groupEvents,
          bank_words_kept: kept.length,
        },
      }),
    );
  }, 300_000);
});
