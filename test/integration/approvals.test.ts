// Payout approvals (decisions §20) on the real stack: a transfer the tenant's policy holds is
// reserved and answered `pending` with its approval required, reaches no bank until another key
// with transfers:approve approves it, is refused to the key that made it, and a rejection returns
// amount and fee to the kobo. 50 approvals at once submit it once. The policy's other holds (a
// payee never paid, every transfer) and saved_recipients_only, through the API as a tenant sets them.
import { randomUUID } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { walletBalance } from '../../src/ledger/ledger.ts';
import { transferWorkflowId } from '../../workflows/transfers/definitions.ts';
import { auth, transferBody } from '../support/api.ts';
import { createFundedTenant } from '../support/app.ts';
import { eventually } from '../support/eventually.ts';
import { useGatewayStack } from '../support/stack.ts';

const stack = useGatewayStack({ taskQueue: `approvals-${process.pid}`, bank: { completionDelayMs: 50 } });

const WALLET = 100_000_000;
/** ₦100,000: the policy holds anything above it. */
const THRESHOLD = 10_000_000;
/** ₦150,000 (fee ₦50) and ₦50,000 (fee ₦25). */
const ABOVE = 15_000_000;
const BELOW = 5_000_000;
const FEE_ABOVE = 5_000;
const FEE_BELOW = 2_500;

const call = (method: 'GET' | 'POST' | 'PUT' | 'DELETE', url: string, key: string, payload?: object) =>
  stack.app.inject({ method, url, headers: auth(key), ...(payload === undefined ? {} : { payload }) });

interface Tenant {
  tenantId: string;
  /** The tenant's first key: every scope. */
  owner: string;
  /** A key with transfers:write and read: what makes the transfers. */
  maker: string;
  makerId: string;
  /** A key with transfers:approve and read: what approves them. */
  approver: string;
  approverId: string;
}

async function makeKey(owner: string, name: string, scopes: string[]): Promise<{ secret: string; id: string }> {
  const made = await call('POST', '/api/v1/api-keys', owner, { name, scopes });
  expect(made.statusCode, made.body).toBe(201);
  return { secret: made.json().data.secret, id: made.json().data.id };
}

async function tenantWithPolicy(policy: Record<string, unknown>): Promise<Tenant> {
  const { tenantId, apiKey: owner } = await createFundedTenant(stack.db.orm, WALLET);
  const put = await call('PUT', '/api/v1/transfer-policy', owner, {
    approval: { above_minor: null, new_recipient: false, every_transfer: false },
    approval_expires_in_hours: 24,
    saved_recipients_only: false,
    live_keys_need_ip_allow_list: false,
    ...policy,
  });
  expect(put.statusCode, put.body).toBe(200);
  const maker = await makeKey(owner, 'payouts', ['transfers:write', 'read']);
  const approver = await makeKey(owner, 'finance approvals', ['transfers:approve', 'read']);
  return {
    tenantId,
    owner,
    maker: maker.secret,
    makerId: maker.id,
    approver: approver.secret,
    approverId: approver.id,
  };
}

const send = (tenant: Tenant, amount: number, fields: Record<string, unknown> = {}) =>
  call('POST', '/api/v1/transfers', tenant.maker, transferBody('held?', { amount_minor: amount, ...fields }));

async function available(tenantId: string): Promise<number> {
  return (await walletBalance(stack.db.orm.em.fork(), tenantId)).availableMinor;
}

/** Whether the sandbox bank holds a transfer under the transfer's id (what the gateway submits it as). */
async function atBank(transferId: string): Promise<number> {
  const { rows } = await stack.bank.store.pool.query<{ n: number }>(
    'select count(*) as n from sandbox_bank.transfers where reference = $1',
    [transferId],
  );
  return Number(rows[0]!.n);
}

/** The held transfer's run is waiting for its decision (its search attribute says so). */
async function awaitingDecision(tenantId: string, reference: string): Promise<void> {
  await eventually(async () => {
    const described = await stack.client.workflow.getHandle(transferWorkflowId(tenantId, reference)).describe();
    return described.searchAttributes.TransferApproval?.[0] === 'required';
  });
}

async function eventTypes(tenantId: string, transferId: string): Promise<string[]> {
  const rows = await stack.db.orm.em
    .fork()
    .execute<{ type: string }[]>(`select type from events where tenant_id = ? and payload->>'id' = ? order by seq`, [
      tenantId,
      transferId,
    ]);
  return rows.map((row) => row.type);
}

describe('a transfer the policy holds', () => {
  it('is reserved and reaches no bank until a second key approves it; then it is paid once', async () => {
    const tenant = await tenantWithPolicy({
      approval: { above_minor: THRESHOLD, new_recipient: false, every_transfer: false },
    });
    const reference = `held-${randomUUID().slice(0, 8)}`;
    const before = Date.now();
    const created = await send(tenant, ABOVE, { reference });
    expect(created.statusCode, created.body).toBe(201);
    const transfer = created.json().data;
    expect(transfer).toMatchObject({ status: 'pending', amount_minor: ABOVE, fee_minor: FEE_ABOVE });
    expect(transfer.approval).toEqual({
      status: 'required',
      expires_at: expect.any(String),
      decided_by: null,
      decided_at: null,
    });
    const expiresIn = Date.parse(transfer.approval.expires_at) - before;
    expect(expiresIn).toBeGreaterThan(24 * 3_600_000 - 60_000);
    expect(expiresIn).toBeLessThanOrEqual(24 * 3_600_000 + 60_000);
    expect(await available(tenant.tenantId)).toBe(WALLET - ABOVE - FEE_ABOVE);

    await awaitingDecision(tenant.tenantId, reference);
    expect(await atBank(transfer.id)).toBe(0);
    const listed = await call('GET', `/api/v1/transfers/${transfer.id}`, tenant.approver);
    expect(listed.json().data).toMatchObject({ status: 'pending', approval: { status: 'required' } });

    // The key that made it may not approve it, whatever its scopes; the owner's key may.
    const own = await call('POST', `/api/v1/transfers/${transfer.id}/approve`, tenant.maker);
    expect(own.statusCode).toBe(403);
    expect(own.json()).toMatchObject({ success: false, error: { code: 'forbidden' } });
    expect(await atBank(transfer.id)).toBe(0);

    const approved = await call('POST', `/api/v1/transfers/${transfer.id}/approve`, tenant.approver);
    expect(approved.statusCode, approved.body).toBe(200);
    expect(approved.json()).toMatchObject({ status: 'success', data: { id: transfer.id } });
    expect(approved.json().data.approval).toEqual({
      status: 'approved',
      expires_at: transfer.approval.expires_at,
      decided_by: { type: 'key', id: tenant.approverId, name: 'finance approvals' },
      decided_at: expect.any(String),
    });

    const paid = await eventually(async () => {
      const read = (await call('GET', `/api/v1/transfers/${transfer.id}`, tenant.maker)).json().data;
      return read.status === 'successful' ? read : undefined;
    });
    expect(paid.approval.status).toBe('approved');
    expect(await available(tenant.tenantId)).toBe(WALLET - ABOVE - FEE_ABOVE);
    expect(await eventTypes(tenant.tenantId, transfer.id)).toEqual([
      'transfer.created',
      'transfer.approval_required',
      'transfer.approved',
      'transfer.settled',
    ]);

    // Decided: a second decision either way is refused.
    for (const decision of ['approve', 'reject']) {
      const again = await call('POST', `/api/v1/transfers/${transfer.id}/${decision}`, tenant.owner);
      expect(again.statusCode).toBe(409);
      expect(again.json().error).toMatchObject({ code: 'already_decided', details: { status: 'approved' } });
    }
    const audit = await call('GET', '/api/v1/audit-log?action=transfer.approved', tenant.owner);
    expect(audit.json().data.items).toEqual([
      expect.objectContaining({
        action: 'transfer.approved',
        actor: { type: 'key', id: tenant.approverId, name: 'finance approvals' },
        target: { type: 'transfer', id: transfer.id },
        ip: '127.0.0.1',
        request_id: approved.headers['x-request-id'],
      }),
    ]);
  });

  it('rejected, fails with failure_reason rejected and its amount and fee back to the kobo', async () => {
    const tenant = await tenantWithPolicy({
      approval: { above_minor: THRESHOLD, new_recipient: false, every_transfer: false },
    });
    const reference = `reject-${randomUUID().slice(0, 8)}`;
    const transfer = (await send(tenant, ABOVE, { reference })).json().data;
    expect(await available(tenant.tenantId)).toBe(WALLET - ABOVE - FEE_ABOVE);

    const rejected = await call('POST', `/api/v1/transfers/${transfer.id}/reject`, tenant.approver, {
      reason: 'not in this month’s payroll',
    });
    expect(rejected.statusCode, rejected.body).toBe(200);
    expect(rejected.json().data).toMatchObject({
      status: 'failed',
      failure_reason: 'rejected',
      approval: { status: 'rejected', decided_by: { type: 'key', id: tenant.approverId } },
    });
    expect(await available(tenant.tenantId)).toBe(WALLET);
    expect(await atBank(transfer.id)).toBe(0);
    expect(await eventTypes(tenant.tenantId, transfer.id)).toEqual([
      'transfer.created',
      'transfer.approval_required',
      'transfer.rejected',
      'transfer.failed',
    ]);
    const approve = await call('POST', `/api/v1/transfers/${transfer.id}/approve`, tenant.approver);
    expect(approve.statusCode).toBe(409);
    expect(approve.json().error.details).toEqual({ status: 'rejected' });
    const audit = (await call('GET', '/api/v1/audit-log?action=transfer.rejected', tenant.owner)).json().data.items;
    expect(audit).toHaveLength(1);
    expect(audit[0].details).toMatchObject({
      reason: 'not in this month’s payroll',
      amount_minor: ABOVE,
      fee_minor: FEE_ABOVE,
    });
  });

  it('50 approvals at once submit it once: one 200, every other 409 already_decided', async () => {
    const tenant = await tenantWithPolicy({
      approval: { above_minor: null, new_recipient: false, every_transfer: true },
    });
    const reference = `race-${randomUUID().slice(0, 8)}`;
    const transfer = (await send(tenant, BELOW, { reference })).json().data;
    await awaitingDecision(tenant.tenantId, reference);
    const answers = await Promise.all(
      Array.from({ length: 50 }, () => call('POST', `/api/v1/transfers/${transfer.id}/approve`, tenant.approver)),
    );
    const statuses = answers.map((answer) => answer.statusCode).sort();
    expect(statuses).toEqual([200, ...Array.from({ length: 49 }, () => 409)]);
    for (const answer of answers.filter((one) => one.statusCode === 409)) {
      expect(answer.json().error.code).toBe('already_decided');
    }
    await eventually(
      async () =>
        (await call('GET', `/api/v1/transfers/${transfer.id}`, tenant.maker)).json().data.status === 'successful',
    );
    // Once: one update accepted, one decision recorded, one submission to the bank, in the run's history.
    const history = await stack.client.workflow
      .getHandle(transferWorkflowId(tenant.tenantId, reference))
      .fetchHistory();
    const events = history.events ?? [];
    const scheduled = (type: string) =>
      events.filter((event) => event.activityTaskScheduledEventAttributes?.activityType?.name === type).length;
    const decisions = events.filter(
      (event) =>
        event.workflowExecutionUpdateAcceptedEventAttributes?.acceptedRequest?.input?.name === 'decideApproval',
    );
    expect(decisions).toHaveLength(1);
    expect(scheduled('decideApproval')).toBe(1);
    expect(scheduled('submitToBank')).toBe(1);
    expect(await atBank(transfer.id)).toBe(1);
    expect(await available(tenant.tenantId)).toBe(WALLET - BELOW - FEE_BELOW);
    const audit = (await call('GET', '/api/v1/audit-log?action=transfer.approved', tenant.owner)).json().data.items;
    expect(audit).toHaveLength(1);
  });

  it('holds a first payment to a payee never paid, and not the next one', async () => {
    const tenant = await tenantWithPolicy({
      approval: { above_minor: null, new_recipient: true, every_transfer: false },
    });
    const account = { recipient_account: '0123456780', recipient_bank_code: '058' };
    const first = (await send(tenant, BELOW, account)).json().data;
    expect(first.approval.status).toBe('required');
    expect((await call('POST', `/api/v1/transfers/${first.id}/approve`, tenant.approver)).statusCode).toBe(200);
    await eventually(
      async () =>
        (await call('GET', `/api/v1/transfers/${first.id}`, tenant.maker)).json().data.status === 'successful',
    );
    const second = await send(tenant, BELOW, account);
    expect(second.statusCode).toBe(201);
    expect(second.json().data.approval).toBeNull();
    // Another account is new again.
    const other = (await send(tenant, BELOW, { recipient_account: '0123456781', recipient_bank_code: '058' })).json();
    expect(other.data.approval.status).toBe('required');
    expect((await call('POST', `/api/v1/transfers/${other.data.id}/reject`, tenant.approver)).statusCode).toBe(200);
    await eventually(
      async () =>
        (await call('GET', `/api/v1/transfers/${second.json().data.id}`, tenant.maker)).json().data.status ===
        'successful',
    );
    expect(await available(tenant.tenantId)).toBe(WALLET - 2 * (BELOW + FEE_BELOW));
  });

  it('goes straight to its bank below the threshold, and approving it is refused as not held', async () => {
    const tenant = await tenantWithPolicy({
      approval: { above_minor: THRESHOLD, new_recipient: false, every_transfer: false },
    });
    const at = (await send(tenant, THRESHOLD)).json().data;
    expect(at.approval).toBeNull();
    const approve = await call('POST', `/api/v1/transfers/${at.id}/approve`, tenant.approver);
    expect(approve.statusCode).toBe(422);
    expect(approve.json().error.code).toBe('failed_precondition');
    await eventually(
      async () => (await call('GET', `/api/v1/transfers/${at.id}`, tenant.maker)).json().data.status === 'successful',
    );
    expect(await available(tenant.tenantId)).toBe(WALLET - THRESHOLD - 5_000);
  });

  it('another tenant’s key, and the other mode’s, find no held transfer to decide (404)', async () => {
    const tenant = await tenantWithPolicy({
      approval: { above_minor: null, new_recipient: false, every_transfer: true },
    });
    const transfer = (await send(tenant, BELOW)).json().data;
    const stranger = await createFundedTenant(stack.db.orm, 0, 'stranger');
    const live = await stack.admin('key', 'create', '--tenant', tenant.tenantId, '--live');
    expect(live.code, live.stderr).toBe(0);
    for (const key of [stranger.apiKey, JSON.parse(live.stdout).api_key as string]) {
      for (const decision of ['approve', 'reject']) {
        const answer = await call('POST', `/api/v1/transfers/${transfer.id}/${decision}`, key);
        expect(answer.statusCode).toBe(404);
        expect(answer.json().error.code).toBe('not_found');
      }
    }
    expect((await call('POST', `/api/v1/transfers/${transfer.id}/reject`, tenant.approver)).statusCode).toBe(200);
    expect(await available(tenant.tenantId)).toBe(WALLET);
  });
});

describe('saved_recipients_only', () => {
  it('refuses an account that is not saved (422 recipient_not_allowed) and pays a saved one however it is named', async () => {
    const tenant = await tenantWithPolicy({ saved_recipients_only: true });
    const refused = await send(tenant, BELOW, { recipient_account: '0123456782', recipient_bank_code: '058' });
    expect(refused.statusCode).toBe(422);
    expect(refused.json()).toMatchObject({ success: false, error: { code: 'recipient_not_allowed' } });
    expect(await available(tenant.tenantId)).toBe(WALLET);

    const saved = await call('POST', '/api/v1/recipients', tenant.maker, {
      bank_code: '058',
      account_number: '0123456782',
    });
    expect(saved.statusCode, saved.body).toBe(201);
    const byNumber = await send(tenant, BELOW, { recipient_account: '0123456782', recipient_bank_code: '058' });
    expect(byNumber.statusCode, byNumber.body).toBe(201);
    const byId = await call('POST', '/api/v1/transfers', tenant.maker, {
      amount_minor: BELOW,
      recipient_id: saved.json().data.id,
      narration: 'saved',
    });
    expect(byId.statusCode, byId.body).toBe(201);
    for (const id of [byNumber.json().data.id, byId.json().data.id]) {
      await eventually(
        async () => (await call('GET', `/api/v1/transfers/${id}`, tenant.maker)).json().data.status === 'successful',
      );
    }
    expect(await available(tenant.tenantId)).toBe(WALLET - 2 * (BELOW + FEE_BELOW));
  });
});
