// A held transfer nobody decides (decisions §20), under Temporal's time-skipping test server with
// the real activities and database: it waits, reserved and never sent, for the whole of its
// approval (the policy's approval_expires_in_hours: 2 here), and at its expiry fails with
// failure_reason approval_expired and its amount and fee back in the wallet to the kobo. A decision
// that comes after the expiry is refused already_decided.
import { randomUUID } from 'node:crypto';
import { ApplicationFailure } from '@temporalio/common';
import { WorkflowUpdateFailedError } from '@temporalio/client';
import type { TestWorkflowEnvironment } from '@temporalio/testing';
import { describe, expect, it } from 'vitest';
import { postingsTotal, walletBalance } from '../../src/ledger/ledger.ts';
import { TransferService } from '../../src/transfers/service.ts';
import { findTransfer } from '../../src/transfers/store.ts';
import { decideApprovalUpdate, statusQuery, transferWorkflowId } from '../../workflows/transfers/definitions.ts';
import { createFundedTenant, resolvedTestKey } from '../support/app.ts';
import { ApprovalService } from '../../src/transfers/approval-service.ts';
import { ApiError } from '../../src/http/errors.ts';
import type { TestDatabase } from '../support/database.ts';
import { recordHistoryOf } from '../support/histories.ts';
import type { TestSandboxBank } from '../support/sandbox-bank.ts';
import { useTimeSkippingStack } from '../support/time-skipping.ts';

const TASK_QUEUE = 'approval-expiry';
const MAKER = randomUUID();
const APPROVER = randomUUID();
const OTHER = randomUUID();

let env: TestWorkflowEnvironment;
let db: TestDatabase;
let bank: TestSandboxBank;
let transfers: TransferService;

useTimeSkippingStack(
  { taskQueue: TASK_QUEUE, bank: true, providerTimeoutMs: 2_000, searchAttributes: true },
  (stack) => {
    ({ env, db } = stack);
    bank = stack.bank!;
    transfers = new TransferService({
      orm: db.orm,
      client: env.client,
      taskQueue: TASK_QUEUE,
      banks: () => stack.providers.banks,
    });
  },
);

async function wallet(tenantId: string): Promise<[number, number]> {
  const balance = await walletBalance(db.orm.em.fork(), tenantId);
  return [balance.availableMinor, balance.pendingMinor];
}

describe('a held transfer nobody decides', () => {
  it('fails at its expiry with approval_expired, amount and fee returned; a late decision is refused', async () => {
    const tenant = await createFundedTenant(db.orm, 1_000_000);
    await db.orm.em
      .fork()
      .execute(
        'insert into transfer_policies (tenant_id, every_transfer, approval_expires_in_hours) values (?, true, 2)',
        [tenant.tenantId],
      );
    const created = await transfers.create(
      tenant.tenantId,
      { amount_minor: 400_000, recipient_account: '0123456789', recipient_bank_code: '058', narration: 'held' },
      undefined,
      'test',
      MAKER,
    );
    expect(created.status).toBe(201);
    const { id, approval } = created.body.data;
    expect(approval?.status).toBe('required');
    const handle = env.client.workflow.getHandle(transferWorkflowId(tenant.tenantId, created.body.data.reference));
    expect(await wallet(tenant.tenantId)).toEqual([599_000, 401_000]);

    await env.sleep('1 hour');
    expect((await handle.query(statusQuery)).approval).toMatchObject({ status: 'required' });
    expect((await findTransfer(db.orm.em.fork(), id))!.status).toBe('pending');

    await env.sleep('61 minutes');
    const state = await handle.result();
    expect(state).toMatchObject({ status: 'failed', approval: { status: 'expired' } });
    const row = (await findTransfer(db.orm.em.fork(), id))!;
    expect(row).toMatchObject({ status: 'failed', failure_reason: 'approval_expired', approval_status: 'expired' });
    expect(row.approval_decided_by).toBeNull();
    expect(row.session_id).toBeNull();
    expect(await wallet(tenant.tenantId)).toEqual([1_000_000, 0]);
    expect(await postingsTotal(db.orm.em.fork())).toBe(0);
    const { rows } = await bank.store.pool.query('select 1 from sandbox_bank.transfers where reference = $1', [id]);
    expect(rows).toEqual([]);
    const types = await db.orm.em
      .fork()
      .execute<{ type: string }[]>(`select type from events where payload->>'id' = ? order by seq`, [id]);
    expect(types.map((event) => event.type)).toEqual([
      'transfer.created',
      'transfer.approval_required',
      'transfer.rejected',
      'transfer.failed',
    ]);
    // A decision now finds it expired, from its row, without reaching its (finished) run.
    const approvals = new ApprovalService({ orm: db.orm, client: env.client });
    const late = await approvals
      .decideTransfer(resolvedTestKey(tenant.tenantId, []), id, {
        decision: 'approve',
        ip: '127.0.0.1',
        requestId: 'late',
      })
      .then(
        () => undefined,
        (error: unknown) => error,
      );
    expect(late).toBeInstanceOf(ApiError);
    expect(late).toMatchObject({ kind: 'already_decided', details: { status: 'expired' } });
    await recordHistoryOf('transfer-approval-expired', handle);
  }, 120_000);

  it('refuses the key that made it, and decides once when approved before its expiry', async () => {
    const tenant = await createFundedTenant(db.orm, 1_000_000);
    await db.orm.em
      .fork()
      .execute('insert into transfer_policies (tenant_id, above_minor) values (?, 100000)', [tenant.tenantId]);
    const created = await transfers.create(
      tenant.tenantId,
      { amount_minor: 400_000, recipient_account: '0123456789', recipient_bank_code: '058', narration: 'held' },
      undefined,
      'test',
      MAKER,
    );
    const { id, reference } = created.body.data;
    const handle = env.client.workflow.getHandle(transferWorkflowId(tenant.tenantId, reference));
    const decision = (actorId: string, decided: 'approve' | 'reject') => ({
      decision: decided,
      actor: { type: 'key' as const, id: actorId, name: actorId },
      ip: '127.0.0.1',
      requestId: `req-${actorId}`,
    });
    const refusal = async (promise: Promise<unknown>) => {
      const error = await promise.then(
        () => undefined,
        (caught: unknown) => caught,
      );
      expect(error).toBeInstanceOf(WorkflowUpdateFailedError);
      const cause = (error as WorkflowUpdateFailedError).cause;
      expect(cause).toBeInstanceOf(ApplicationFailure);
      return (cause as ApplicationFailure).type;
    };
    expect(await refusal(handle.executeUpdate(decideApprovalUpdate, { args: [decision(MAKER, 'approve')] }))).toBe(
      'forbidden',
    );
    await env.sleep('30 minutes');
    expect(await handle.executeUpdate(decideApprovalUpdate, { args: [decision(APPROVER, 'approve')] })).toEqual({
      status: 'approved',
    });
    expect(await refusal(handle.executeUpdate(decideApprovalUpdate, { args: [decision(OTHER, 'reject')] }))).toBe(
      'already_decided',
    );
    expect(await handle.result()).toMatchObject({ status: 'completed', approval: { status: 'approved' } });
    const row = (await findTransfer(db.orm.em.fork(), id))!;
    expect(row).toMatchObject({ status: 'completed', approval_status: 'approved' });
    expect(row.approval_decided_by).toEqual({ type: 'key', id: APPROVER, name: APPROVER });
    expect(await wallet(tenant.tenantId)).toEqual([599_000, 0]);
    await recordHistoryOf('transfer-approved', handle);
  }, 120_000);
});
