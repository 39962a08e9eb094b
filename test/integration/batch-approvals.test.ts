// Held batches (decisions §20) end to end on a real Temporal server, PostgreSQL and the sandbox
// bank over HTTP: a batch the tenant's transfer policy holds is reserved as its kind says (each
// item, or the atomic batch's one entry) and reaches no bank until another key approves it; the
// key that made it is refused, a second decision too; rejected or expired, every item fails with
// its money back to the kobo; saved_recipients_only refuses an item to an account that is not
// saved; a batch below every threshold is not held. The policy is written into its table
// (test/support/transfer-policy.ts); decisions go to the batch's workflow as the API's approve and
// reject send them. An approval hour lasts APPROVAL_HOUR_MS here: a policy of 1 hour expires in
// two seconds, one of 72 in over two minutes.
import { randomInt, randomUUID } from 'node:crypto';
import type { FastifyInstance } from 'fastify';
import { describe, expect, it } from 'vitest';
import { WorkflowNotFoundError, WorkflowUpdateFailedError } from '@temporalio/client';
import { walletBalance } from '../../src/ledger/ledger.ts';
import { issueKey } from '../../src/tenants/tenants.ts';
import {
  type ApprovalDecision,
  decideApprovalUpdate,
  transferBatchWorkflowId,
  transferWorkflowId,
} from '../../workflows/transfers/definitions.ts';
import { TransferApprovalKey } from '../../workflows/search-attributes.ts';
import { auth } from '../support/api.ts';
import { createFundedTenant } from '../support/app.ts';
import type { TestDatabase } from '../support/database.ts';
import { eventually } from '../support/eventually.ts';
import { type GatewayStack, useGatewayStack } from '../support/stack.ts';
import { setTransferPolicy } from '../support/transfer-policy.ts';
import { insertBatch } from '../../src/transfers/batch-store.ts';
import { TransferBatchSweep } from '../../src/transfers/batch-sweep.ts';
import { RECIPIENT_NOT_ALLOWED } from '../../src/transfers/approvals.ts';

const APPROVAL_HOUR_MS = 2_000;
/** The longest expiry a policy may give: 144 s here, longer than any test waits. */
const LONG = { approval_expires_in_hours: 72 };

let stack: GatewayStack;
let db: TestDatabase;
let app: FastifyInstance;

const TASK_QUEUE = `batch-approvals-${process.pid}`;

useGatewayStack(
  {
    taskQueue: TASK_QUEUE,
    providerTimeoutMs: 2_000,
    bank: { completionDelayMs: 100 },
    app: { approvalHourMs: APPROVAL_HOUR_MS },
  },
  (started) => {
    stack = started;
    ({ db, app } = stack);
  },
);

/** An account number of this test's own (none of the sandbox bank's magic ones): never paid before. */
const ownAccount = () => `5${String(randomInt(0, 1_000_000_000)).padStart(9, '0')}`;
const batchReference = () => `held-${randomUUID().slice(0, 8)}`;

function item(overrides: Record<string, unknown> = {}) {
  return {
    amount_minor: 100_000,
    recipient_account: ownAccount(),
    recipient_bank_code: '058',
    narration: 'Payroll',
    ...overrides,
  };
}

async function post(apiKey: string, payload: unknown) {
  return app.inject({
    method: 'POST',
    url: '/api/v1/transfers/bulk',
    headers: auth(apiKey),
    payload: payload as object,
  });
}

async function getBatch(apiKey: string, id: string) {
  const response = await app.inject({ method: 'GET', url: `/api/v1/transfers/bulk/${id}`, headers: auth(apiKey) });
  expect(response.statusCode).toBe(200);
  return response.json().data;
}

async function items(apiKey: string, id: string) {
  const response = await app.inject({
    method: 'GET',
    url: `/api/v1/transfers/bulk/${id}/items?page=1&limit=100`,
    headers: auth(apiKey),
  });
  expect(response.statusCode).toBe(200);
  return response.json().data as {
    index: number;
    status: string;
    transfer_id: string | null;
    error: { code: string; message: string } | null;
  }[];
}

async function completed(apiKey: string, id: string, timeoutMs = 60_000) {
  return eventually(
    async () => {
      const data = await getBatch(apiKey, id);
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

/** The batch's items' transfers as their rows stand. */
async function itemTransfers(batchId: string) {
  return db.orm.em.fork().execute<
    {
      id: string;
      reference: string;
      status: string;
      session_id: string | null;
      failure_reason: string | null;
      approval_status: string | null;
      created_by_key_id: string | null;
    }[]
  >(
    `select t.id, t.reference, t.status, t.session_id, t.failure_reason, t.approval_status, t.created_by_key_id
       from transfer_batch_items i join transfers t on t.id = i.transfer_id where i.batch_id = ? order by i.index`,
    [batchId],
  );
}

/** Whether the sandbox bank has seen any of these transfers (submitted under their transfer id or reference). */
async function bankKnowsAny(transfers: readonly { id: string; reference: string }[]) {
  for (const transfer of transfers) {
    if (await stack.bank.store.knowsReference(transfer.id)) return true;
    if (await stack.bank.store.knowsReference(transfer.reference)) return true;
  }
  return false;
}

async function keyIdOf(keyPrefix: string): Promise<string> {
  const [row] = await db.orm.em
    .fork()
    .execute<{ id: string }[]>('select id from api_keys where prefix = ?', [keyPrefix]);
  return row!.id;
}

/** A tenant with a wallet, its first key (which makes the batches) and a second key (which decides). */
async function heldTenant(walletMinor: number) {
  const tenant = await createFundedTenant(db.orm, walletMinor);
  const makerKeyId = await keyIdOf(tenant.keyPrefix);
  const approver = await issueKey(db.orm.em.fork(), tenant.tenantId, 'test');
  return { ...tenant, makerKeyId, approverKeyId: approver.key_id };
}

function decision(
  keyId: string,
  verdict: 'approve' | 'reject',
  extra: Partial<ApprovalDecision> = {},
): ApprovalDecision {
  return {
    decision: verdict,
    actor: { type: 'key', id: keyId, name: 'finance approvals' },
    ip: '127.0.0.1',
    requestId: `req-${randomUUID()}`,
    ...extra,
  };
}

function decide(tenantId: string, reference: string, sent: unknown) {
  return stack.client.workflow
    .getHandle(transferBatchWorkflowId(tenantId, reference))
    .executeUpdate(decideApprovalUpdate, { args: [sent as ApprovalDecision] });
}

/** What a refused decision's failure says: its ApplicationFailure type and message. */
async function refusedWith(sent: Promise<unknown>): Promise<{ type: string | undefined; message: string }> {
  const error = await sent.then(
    () => undefined,
    (caught: unknown) => caught,
  );
  expect(error).toBeInstanceOf(WorkflowUpdateFailedError);
  const cause = (error as WorkflowUpdateFailedError).cause as { type?: string; message: string };
  return { type: cause.type, message: cause.message };
}

async function auditOf(tenantId: string) {
  return db.orm.em.fork().execute<
    {
      action: string;
      actor_type: string;
      actor_id: string;
      target_type: string;
      target_id: string;
      request_id: string;
      details: Record<string, unknown>;
    }[]
  >('select action, actor_type, actor_id, target_type, target_id, request_id, details from audit_log where tenant_id = ? order by created_at', [tenantId]);
}

async function eventCount(tenantId: string, type: string) {
  const [row] = await db.orm.em
    .fork()
    .execute<{ n: string }[]>('select count(*)::text as n from events where tenant_id = ? and type = ?', [
      tenantId,
      type,
    ]);
  return Number(row!.n);
}

/** Waits until the batch's items are all reserved (its run then waits for the decision). */
async function reserved(batchId: string, count: number) {
  return eventually(async () => {
    const rows = await itemTransfers(batchId);
    return rows.length === count ? rows : undefined;
  });
}

describe('a held batch that is not atomic', () => {
  it('reserves each item, reaches no bank until another key approves it, refuses its maker and a second decision, then pays every item', async () => {
    const tenant = await heldTenant(1_000_000);
    await setTransferPolicy(db.orm.em.fork(), tenant.tenantId, { approval: { above_minor: 250_000 }, ...LONG });
    const reference = batchReference();
    // No item above 250,000, but their total (300,000) is.
    const payload = {
      batch_reference: reference,
      transfers: [item(), item(), item()],
    };
    const response = await post(tenant.apiKey, payload);
    expect(response.statusCode).toBe(202);
    const batch = response.json().data;
    expect(batch.approval).toMatchObject({ status: 'required', decided_by: null, decided_at: null });
    const expiresAt = Date.parse(batch.approval.expires_at);
    expect(expiresAt - Date.parse(batch.created_at)).toBeGreaterThan(72 * APPROVAL_HOUR_MS - 5_000);
    expect(expiresAt - Date.parse(batch.created_at)).toBeLessThanOrEqual(72 * APPROVAL_HOUR_MS + 1_000);

    // Reserved as any batch that is not atomic: each item's amount and fee, exactly.
    const rows = await reserved(batch.id, 3);
    await eventually(async () => (await wallet(tenant.tenantId)).pending === 303_000 || undefined);
    expect(await wallet(tenant.tenantId)).toEqual({ available: 1_000_000 - 303_000, pending: 303_000 });
    expect(rows.map((row) => [row.status, row.session_id, row.approval_status, row.created_by_key_id])).toEqual(
      Array.from({ length: 3 }, () => ['pending', null, 'required', tenant.makerKeyId]),
    );
    // A repeat answers the batch as it was made: held.
    const again = await post(tenant.apiKey, payload);
    expect(again.statusCode).toBe(200);
    expect(again.json().data).toEqual(batch);

    // The key that made it may not approve it; a malformed decision is refused, not thrown on.
    expect(await refusedWith(decide(tenant.tenantId, reference, decision(tenant.makerKeyId, 'approve')))).toEqual({
      type: 'forbidden',
      message: 'a batch cannot be approved by the key that made it',
    });
    expect((await refusedWith(decide(tenant.tenantId, reference, { decision: 'maybe' }))).type).toBe(
      'invalid_decision',
    );
    expect((await refusedWith(decide(tenant.tenantId, reference, null))).type).toBe('invalid_decision');
    // Still held, a second later: no item at the bank, none processing.
    await new Promise((resolve) => setTimeout(resolve, 1_000));
    const waiting = await itemTransfers(batch.id);
    expect(waiting.map((row) => [row.status, row.session_id])).toEqual(
      Array.from({ length: 3 }, () => ['pending', null]),
    );
    expect(await bankKnowsAny(waiting)).toBe(false);
    expect((await getBatch(tenant.apiKey, batch.id)).counts).toEqual({
      refused: 0,
      pending: 3,
      successful: 0,
      failed: 0,
    });

    const approve = decision(tenant.approverKeyId, 'approve');
    expect(await decide(tenant.tenantId, reference, approve)).toEqual({ status: 'approved' });
    // Recorded before the answer: the batch's approval and the audit entry.
    const decided = await getBatch(tenant.apiKey, batch.id);
    expect(decided.approval).toMatchObject({
      status: 'approved',
      decided_by: { type: 'key', id: tenant.approverKeyId, name: 'finance approvals' },
    });
    expect(decided.approval.decided_at).toEqual(expect.any(String));
    expect(await auditOf(tenant.tenantId)).toEqual([
      {
        action: 'batch.approved',
        actor_type: 'key',
        actor_id: tenant.approverKeyId,
        target_type: 'transfer_batch',
        target_id: batch.id,
        request_id: approve.requestId,
        details: expect.objectContaining({ batch_reference: reference, total_amount_minor: 300_000 }),
      },
    ]);
    // A second decision, either way, is refused.
    expect(await refusedWith(decide(tenant.tenantId, reference, decision(tenant.approverKeyId, 'reject')))).toEqual({
      type: 'already_decided',
      message: `batch ${reference} is already decided: approved`,
    });

    const done = await completed(tenant.apiKey, batch.id);
    expect(done.counts).toEqual({ refused: 0, pending: 0, successful: 3, failed: 0 });
    expect(await wallet(tenant.tenantId)).toEqual({ available: 1_000_000 - 303_000, pending: 0 });
    const paid = await itemTransfers(batch.id);
    expect(paid.map((row) => [row.status, row.approval_status])).toEqual(
      Array.from({ length: 3 }, () => ['completed', 'approved']),
    );
    expect(await bankKnowsAny(paid.slice(0, 1))).toBe(true);
    expect(await eventCount(tenant.tenantId, 'transfer.approval_required')).toBe(3);
    expect(await eventCount(tenant.tenantId, 'transfer.approved')).toBe(3);
    expect(await eventCount(tenant.tenantId, 'transfer_batch.completed')).toBe(1);
    const search = await stack.client.workflow
      .getHandle(transferBatchWorkflowId(tenant.tenantId, reference))
      .describe();
    expect(search.typedSearchAttributes.get(TransferApprovalKey)).toBe('approved');
  });

  it('fails every item when rejected, with its amount and fee back to the kobo, and starts no item run', async () => {
    const tenant = await heldTenant(1_000_000);
    await setTransferPolicy(db.orm.em.fork(), tenant.tenantId, { approval: { every_transfer: true }, ...LONG });
    const reference = batchReference();
    const response = await post(tenant.apiKey, {
      batch_reference: reference,
      transfers: [item({ amount_minor: 123_456 }), item({ amount_minor: 250_000 }), item({ amount_minor: 999 })],
    });
    expect(response.statusCode).toBe(202);
    const batch = response.json().data;
    expect(batch.approval.status).toBe('required');
    // 123,456 + 1,000; 250,000 + 1,000; 999 + 500... whatever the fees, the wallet's own figures.
    const rows = await reserved(batch.id, 3);
    const before = await eventually(async () => {
      const now = await wallet(tenant.tenantId);
      return now.pending > 0 ? now : undefined;
    });
    expect(before.available + before.pending).toBe(1_000_000);
    expect(before.pending).toBe(batch.total_amount_minor + batch.total_fee_minor);

    const reject = decision(tenant.approverKeyId, 'reject', { reason: 'not this month' });
    expect(await decide(tenant.tenantId, reference, reject)).toEqual({ status: 'rejected' });
    const done = await completed(tenant.apiKey, batch.id);
    expect(done.counts).toEqual({ refused: 0, pending: 0, successful: 0, failed: 3 });
    expect(done.approval).toMatchObject({ status: 'rejected', decided_by: { id: tenant.approverKeyId } });
    expect(await wallet(tenant.tenantId)).toEqual({ available: 1_000_000, pending: 0 });
    const failed = await itemTransfers(batch.id);
    expect(failed.map((row) => [row.status, row.failure_reason, row.approval_status, row.session_id])).toEqual(
      Array.from({ length: 3 }, () => ['failed', 'rejected', 'rejected', null]),
    );
    expect(await bankKnowsAny(rows)).toBe(false);
    // The item as GET shows it.
    const one = await app.inject({
      method: 'GET',
      url: `/api/v1/transfers/${rows[0]!.id}`,
      headers: auth(tenant.apiKey),
    });
    expect(one.json().data).toMatchObject({
      status: 'failed',
      failure_reason: 'rejected',
      approval: { status: 'rejected', decided_by: { type: 'key', id: tenant.approverKeyId } },
    });
    expect(await eventCount(tenant.tenantId, 'transfer.rejected')).toBe(3);
    expect(await eventCount(tenant.tenantId, 'transfer.failed')).toBe(3);
    expect((await auditOf(tenant.tenantId)).map((entry) => [entry.action, entry.details.reason])).toEqual([
      ['batch.rejected', 'not this month'],
    ]);
    // No item run was started: the items' transfer runs do not exist.
    for (const row of rows) {
      await expect(
        stack.client.workflow.getHandle(transferWorkflowId(tenant.tenantId, row.reference)).describe(),
      ).rejects.toThrow(WorkflowNotFoundError);
    }
    const run = await stack.client.workflow.getHandle(transferBatchWorkflowId(tenant.tenantId, reference)).describe();
    expect(run.typedSearchAttributes.get(TransferApprovalKey)).toBe('rejected');
  });
});

describe('a held atomic batch', () => {
  it('keeps its one reservation until rejected, then gives every kobo back', async () => {
    const tenant = await heldTenant(2_000_000);
    await setTransferPolicy(db.orm.em.fork(), tenant.tenantId, { approval: { new_recipient: true }, ...LONG });
    const reference = batchReference();
    const response = await post(tenant.apiKey, {
      batch_reference: reference,
      atomic: true,
      transfers: [
        item({ amount_minor: 700_000 }),
        // An account the bank does not know: refused after the reservation, its share released.
        item({ amount_minor: 300_000, recipient_account: '0000000000' }),
        item(),
      ],
    });
    expect(response.statusCode).toBe(202);
    const batch = response.json().data;
    expect(batch.approval.status).toBe('required');
    // Reserved before the answer, as every atomic batch: the whole batch in one entry.
    expect(await wallet(tenant.tenantId)).toEqual({ available: 2_000_000 - 1_104_500, pending: 1_104_500 });
    await reserved(batch.id, 2);
    await eventually(async () => (await wallet(tenant.tenantId)).pending === 1_104_500 - 301_000 || undefined);

    expect(await decide(tenant.tenantId, reference, decision(tenant.approverKeyId, 'reject'))).toEqual({
      status: 'rejected',
    });
    const done = await completed(tenant.apiKey, batch.id);
    expect(done.counts).toEqual({ refused: 1, pending: 0, successful: 0, failed: 2 });
    expect(await wallet(tenant.tenantId)).toEqual({ available: 2_000_000, pending: 0 });
  });

  it('is paid once approved', async () => {
    const tenant = await heldTenant(2_000_000);
    await setTransferPolicy(db.orm.em.fork(), tenant.tenantId, { approval: { above_minor: 500_000 }, ...LONG });
    const reference = batchReference();
    const response = await post(tenant.apiKey, {
      batch_reference: reference,
      atomic: true,
      transfers: [item({ amount_minor: 700_000 }), item()],
    });
    const batch = response.json().data;
    expect(batch.approval.status).toBe('required');
    // A decision that comes while the batch is still being reserved is taken.
    expect(await decide(tenant.tenantId, reference, decision(tenant.approverKeyId, 'approve'))).toEqual({
      status: 'approved',
    });
    const done = await completed(tenant.apiKey, batch.id);
    expect(done.counts).toEqual({ refused: 0, pending: 0, successful: 2, failed: 0 });
    expect(await wallet(tenant.tenantId)).toEqual({ available: 2_000_000 - 702_500 - 101_000, pending: 0 });
  });
});

describe('a held batch nobody decides', () => {
  it('expires at approval.expires_at: every item fails approval_expired with its money back, and a late decision is refused', async () => {
    const tenant = await heldTenant(1_000_000);
    // 1 hour: two seconds here.
    await setTransferPolicy(db.orm.em.fork(), tenant.tenantId, {
      approval: { every_transfer: true },
      approval_expires_in_hours: 1,
    });
    const reference = batchReference();
    const response = await post(tenant.apiKey, { batch_reference: reference, transfers: [item(), item()] });
    const batch = response.json().data;
    expect(batch.approval.status).toBe('required');
    const done = await completed(tenant.apiKey, batch.id, 30_000);
    expect(Date.now()).toBeGreaterThanOrEqual(Date.parse(batch.approval.expires_at));
    expect(done.approval).toMatchObject({ status: 'expired', decided_by: null });
    expect(done.counts).toEqual({ refused: 0, pending: 0, successful: 0, failed: 2 });
    expect(await wallet(tenant.tenantId)).toEqual({ available: 1_000_000, pending: 0 });
    const rows = await itemTransfers(batch.id);
    expect(rows.map((row) => [row.status, row.failure_reason, row.approval_status])).toEqual(
      Array.from({ length: 2 }, () => ['failed', 'approval_expired', 'expired']),
    );
    expect(await bankKnowsAny(rows)).toBe(false);
    expect(await auditOf(tenant.tenantId)).toEqual([]);
    // The run has ended: a decision now cannot reach it (the API answers already_decided from the row).
    await expect(decide(tenant.tenantId, reference, decision(tenant.approverKeyId, 'approve'))).rejects.toThrow();
  });
});

describe('saved_recipients_only', () => {
  async function save(apiKey: string, account: string) {
    const response = await app.inject({
      method: 'POST',
      url: '/api/v1/recipients',
      headers: auth(apiKey),
      payload: { bank_code: '058', account_number: account },
    });
    expect(response.statusCode).toBe(201);
    return response.json().data as { id: string; account_number: string };
  }

  it('refuses an item to an account that is not saved (recipient_not_allowed) and pays the others', async () => {
    const tenant = await heldTenant(1_000_000);
    const saved = await save(tenant.apiKey, ownAccount());
    await setTransferPolicy(db.orm.em.fork(), tenant.tenantId, { saved_recipients_only: true });
    const response = await post(tenant.apiKey, {
      batch_reference: batchReference(),
      transfers: [
        { amount_minor: 100_000, recipient_id: saved.id, narration: 'Payout' },
        item(),
        // The saved account named by its number is the saved recipient.
        item({ recipient_account: saved.account_number }),
      ],
    });
    expect(response.statusCode).toBe(202);
    const batch = response.json().data;
    expect(batch.approval).toBeNull();
    const done = await completed(tenant.apiKey, batch.id);
    expect(done.counts).toEqual({ refused: 1, pending: 0, successful: 2, failed: 0 });
    const listed = await items(tenant.apiKey, batch.id);
    expect(listed.map((entry) => [entry.status, entry.error?.code ?? null])).toEqual([
      ['successful', null],
      ['refused', 'recipient_not_allowed'],
      ['successful', null],
    ]);
    expect(listed[1]!.error!.message).toContain('saved recipients only');
    expect(await wallet(tenant.tenantId)).toEqual({ available: 1_000_000 - 202_000, pending: 0 });
  });

  it('reserves for an atomic batch only what its allowed items pay', async () => {
    const tenant = await heldTenant(300_000);
    const saved = await save(tenant.apiKey, ownAccount());
    await setTransferPolicy(db.orm.em.fork(), tenant.tenantId, { saved_recipients_only: true });
    // 250,000 to an account not saved would not fit beside the saved one's 101,000; refused, it is not reserved.
    const response = await post(tenant.apiKey, {
      batch_reference: batchReference(),
      atomic: true,
      transfers: [item({ amount_minor: 250_000 }), item({ recipient_account: saved.account_number })],
    });
    expect(response.statusCode).toBe(202);
    const batch = response.json().data;
    expect(await wallet(tenant.tenantId)).toEqual({ available: 300_000 - 101_000, pending: 101_000 });
    const done = await completed(tenant.apiKey, batch.id);
    expect(done.counts).toEqual({ refused: 1, pending: 0, successful: 1, failed: 0 });
    expect(await wallet(tenant.tenantId)).toEqual({ available: 199_000, pending: 0 });
  });
});

describe('a batch below every threshold', () => {
  it('is not held (approval null) and refuses a decision as not_held', async () => {
    const tenant = await heldTenant(1_000_000);
    await setTransferPolicy(db.orm.em.fork(), tenant.tenantId, { approval: { above_minor: 500_000 } });
    const reference = batchReference();
    const response = await post(tenant.apiKey, {
      batch_reference: reference,
      transfers: [item({ amount_minor: 200_000 }), item({ amount_minor: 300_000 })],
    });
    expect(response.statusCode).toBe(202);
    const batch = response.json().data;
    expect(batch.approval).toBeNull();
    expect(
      await refusedWith(decide(tenant.tenantId, reference, decision(tenant.approverKeyId, 'approve'))),
    ).toMatchObject({ type: 'not_held' });
    const done = await completed(tenant.apiKey, batch.id);
    expect(done.counts).toEqual({ refused: 0, pending: 0, successful: 2, failed: 0 });
    expect((await itemTransfers(batch.id)).map((row) => row.approval_status)).toEqual([null, null]);
  });

  it('is not held by new_recipient when every payee was paid before', async () => {
    const tenant = await heldTenant(1_000_000);
    const account = ownAccount();
    const first = await post(tenant.apiKey, {
      batch_reference: batchReference(),
      transfers: [item({ recipient_account: account })],
    });
    await completed(tenant.apiKey, first.json().data.id);
    await setTransferPolicy(db.orm.em.fork(), tenant.tenantId, { approval: { new_recipient: true }, ...LONG });
    const known = await post(tenant.apiKey, {
      batch_reference: batchReference(),
      transfers: [item({ recipient_account: account })],
    });
    expect(known.json().data.approval).toBeNull();
    await completed(tenant.apiKey, known.json().data.id);
    const reference = batchReference();
    const fresh = await post(tenant.apiKey, {
      batch_reference: reference,
      transfers: [item({ recipient_account: account }), item()],
    });
    expect(fresh.json().data.approval.status).toBe('required');
    await reserved(fresh.json().data.id, 2);
    await decide(tenant.tenantId, reference, decision(tenant.approverKeyId, 'reject'));
    await completed(tenant.apiKey, fresh.json().data.id);
    expect(await wallet(tenant.tenantId)).toEqual({ available: 1_000_000 - 202_000, pending: 0 });
  });
});

describe('a held batch of 1,000', () => {
  it('gives every item back to the kobo when rejected, its history well within bounds', async () => {
    const tenant = await heldTenant(200_000_000);
    await setTransferPolicy(db.orm.em.fork(), tenant.tenantId, { approval: { every_transfer: true }, ...LONG });
    const reference = batchReference();
    const transfers = Array.from({ length: 1_000 }, (_, index) =>
      item({ amount_minor: 100_000 + index, recipient_account: '0123456789' }),
    );
    const response = await post(tenant.apiKey, { batch_reference: reference, transfers });
    expect(response.statusCode).toBe(202);
    const batch = response.json().data;
    const total = batch.total_amount_minor + batch.total_fee_minor;
    await reserved(batch.id, 1_000);
    await eventually(async () => (await wallet(tenant.tenantId)).pending === total || undefined, 60_000);
    expect(await wallet(tenant.tenantId)).toEqual({ available: 200_000_000 - total, pending: total });
    expect(await decide(tenant.tenantId, reference, decision(tenant.approverKeyId, 'reject'))).toEqual({
      status: 'rejected',
    });
    const done = await completed(tenant.apiKey, batch.id, 60_000);
    expect(done.counts).toEqual({ refused: 0, pending: 0, successful: 0, failed: 1_000 });
    expect(await wallet(tenant.tenantId)).toEqual({ available: 200_000_000, pending: 0 });
    expect(await eventCount(tenant.tenantId, 'transfer.rejected')).toBe(1_000);
    const history = await stack.client.workflow
      .getHandle(transferBatchWorkflowId(tenant.tenantId, reference))
      .fetchHistory();
    expect(history.events!.length).toBeLessThan(100);
  }, 120_000);
});

describe('a held batch whose API died before starting its workflow', () => {
  it("is started by the worker's sweep held, with its maker and its row's expiry", async () => {
    const tenant = await heldTenant(1_000_000);
    const id = randomUUID();
    const reference = batchReference();
    const expiresAt = new Date(Date.now() + 120_000);
    const entry = (index: number, refusal?: { code: string; message: string }) => ({
      index,
      reference: `${reference}-${index}`,
      amountMinor: 100_000,
      feeMinor: 1_000,
      recipientAccount: ownAccount(),
      recipientBankCode: '058',
      recipientBank: 'Guaranty Trust Bank',
      savedName: null,
      narration: 'Payroll',
      metadata: {},
      requestHash: `h${index}`,
      ...(refusal ? { refusal } : {}),
    });
    // Recorded as the API records it (one item refused with the batch), and no workflow started.
    await db.orm.em.fork().transactional((tx) =>
      insertBatch(
        tx,
        {
          id,
          tenantId: tenant.tenantId,
          batchReference: reference,
          requestHash: 'h',
          atomic: false,
          mode: 'test',
          totalAmountMinor: 200_000,
          totalFeeMinor: 2_000,
          metadata: {},
          createdByKeyId: tenant.makerKeyId,
          approvalExpiresAt: expiresAt,
        },
        [entry(0), entry(1, { code: 'recipient_not_allowed', message: RECIPIENT_NOT_ALLOWED })],
      ),
    );
    const sweep = new TransferBatchSweep({ orm: db.orm, client: stack.client, taskQueue: TASK_QUEUE, log: () => {} });
    // An item refused with the batch is not its run's work: the batch is still untouched.
    expect(await sweep.pass(Date.now(), 0)).toBe(1);
    const rows = await reserved(id, 1);
    expect(rows.map((row) => [row.status, row.approval_status, row.created_by_key_id])).toEqual([
      ['pending', 'required', tenant.makerKeyId],
    ]);
    const [held] = await db.orm.em
      .fork()
      .execute<{ approval_expires_at: Date }[]>('select approval_expires_at from transfers where id = ?', [
        rows[0]!.id,
      ]);
    expect(new Date(held!.approval_expires_at).getTime()).toBe(expiresAt.getTime());
    expect((await refusedWith(decide(tenant.tenantId, reference, decision(tenant.makerKeyId, 'approve')))).type).toBe(
      'forbidden',
    );
    expect(await decide(tenant.tenantId, reference, decision(tenant.approverKeyId, 'approve'))).toEqual({
      status: 'approved',
    });
    const done = await completed(tenant.apiKey, id);
    expect(done.counts).toEqual({ refused: 1, pending: 0, successful: 1, failed: 0 });
    expect(await wallet(tenant.tenantId)).toEqual({ available: 1_000_000 - 101_000, pending: 0 });
  });
});

describe('decided over HTTP', () => {
  it('POST /api/v1/transfers/bulk/{id}/approve and /reject: the maker refused, another key decides the batch whole, items only with it', async () => {
    const tenant = await heldTenant(1_000_000);
    await setTransferPolicy(db.orm.em.fork(), tenant.tenantId, { approval: { every_transfer: true }, ...LONG });
    const route = (id: string, what: string, key: string, payload?: object) =>
      app.inject({
        method: 'POST',
        url: `/api/v1/transfers/bulk/${id}/${what}`,
        headers: auth(key),
        ...(payload ? { payload } : {}),
      });
    const approver = (await issueKey(db.orm.em.fork(), tenant.tenantId, 'test')).api_key;

    const paid = (await post(tenant.apiKey, { batch_reference: batchReference(), transfers: [item(), item()] })).json()
      .data;
    const rows = await reserved(paid.id, 2);
    // An item is decided with its batch, never alone.
    const alone = await app.inject({
      method: 'POST',
      url: `/api/v1/transfers/${rows[0]!.id}/approve`,
      headers: auth(approver),
    });
    expect(alone.statusCode).toBe(422);
    expect(alone.json().error.code).toBe('failed_precondition');
    const maker = await route(paid.id, 'approve', tenant.apiKey);
    expect(maker.statusCode).toBe(403);
    expect(maker.json()).toMatchObject({ success: false, error: { code: 'forbidden' } });
    const approved = await route(paid.id, 'approve', approver);
    expect(approved.statusCode, approved.body).toBe(200);
    expect(approved.json()).toMatchObject({
      status: 'success',
      data: { id: paid.id, approval: { status: 'approved', decided_by: { type: 'key' } } },
    });
    const twice = await route(paid.id, 'reject', approver);
    expect(twice.statusCode).toBe(409);
    expect(twice.json().error).toMatchObject({ code: 'already_decided', details: { status: 'approved' } });
    expect((await completed(tenant.apiKey, paid.id)).counts).toEqual({
      refused: 0,
      pending: 0,
      successful: 2,
      failed: 0,
    });

    const refused = (
      await post(tenant.apiKey, { batch_reference: batchReference(), transfers: [item(), item()] })
    ).json().data;
    await reserved(refused.id, 2);
    const rejected = await route(refused.id, 'reject', approver, { reason: 'duplicate payroll' });
    expect(rejected.statusCode, rejected.body).toBe(200);
    expect(rejected.json().data.approval.status).toBe('rejected');
    expect((await completed(tenant.apiKey, refused.id)).counts).toEqual({
      refused: 0,
      pending: 0,
      successful: 0,
      failed: 2,
    });
    // Two items of 100,000 paid (fee 1,000 each); the rejected two returned to the kobo.
    expect(await wallet(tenant.tenantId)).toEqual({ available: 1_000_000 - 202_000, pending: 0 });
  }, 120_000);
});
