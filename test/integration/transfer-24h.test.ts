// The 24-hour path under Temporal's time-skipping test server: a transfer the bank never confirms
// stays `processing` (never guessed at), is flagged as stuck after 24 h, and settles once the
// bank's own status query finally reports it. A transfer the bank never took (every submission
// answered 429 for the whole hour of retries, then "no such transfer") is not refunded on that
// guess either: it stays processing until the bank or an operator decides.
import type { TestWorkflowEnvironment } from '@temporalio/testing';
import { describe, expect, it } from 'vitest';
import { postingsTotal, walletBalance } from '../../src/ledger/ledger.ts';
import { TransferService } from '../../src/transfers/service.ts';
import { type TransferRow, findTransfer } from '../../src/transfers/store.ts';
import { resolveUpdate, statusQuery, transferWorkflowId } from '../../workflows/transfers/definitions.ts';
import { createFundedTenant } from '../support/app.ts';
import type { TestDatabase } from '../support/database.ts';
import { recordHistoryOf } from '../support/histories.ts';
import type { TestSandboxBank } from '../support/sandbox-bank.ts';
import { useTimeSkippingStack } from '../support/time-skipping.ts';

const TASK_QUEUE = 'transfers-24h';

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

async function row(id: string): Promise<TransferRow> {
  return (await findTransfer(db.orm.em.fork(), id))!;
}

/** The tenant's wallet as [available, pending], in kobo. */
async function wallet(tenantId: string): Promise<[number, number]> {
  const balance = await walletBalance(db.orm.em.fork(), tenantId);
  return [balance.availableMinor, balance.pendingMinor];
}

/**
 * Creates a transfer of 400,000 kobo (fee 1,000) to a sandbox account whose behaviour the test
 * wants; its id and the handle of its workflow.
 */
async function createTransfer(tenantId: string, recipientAccount: string, narration: string, reference: string) {
  const created = await transfers.create(tenantId, {
    amount_minor: 400_000,
    recipient_account: recipientAccount,
    recipient_bank_code: '058',
    narration,
    reference,
  });
  expect(created.status).toBe(201);
  const id = (created.body as { data: { id: string } }).data.id;
  return { id, handle: env.client.workflow.getHandle(transferWorkflowId(tenantId, reference)) };
}

describe('a transfer the bank never confirms', () => {
  it('stays processing past 24 h, is flagged stuck, and settles when the bank finally reports it', async () => {
    const tenant = await createFundedTenant(db.orm, 1_000_000);
    const { id, handle } = await createTransfer(tenant.tenantId, '2222222222', 'rent', 'held-for-a-day');
    while ((await handle.query(statusQuery)).status !== 'processing') await new Promise((r) => setTimeout(r, 100));

    await env.sleep('23 hours');
    expect((await handle.query(statusQuery)).stuck).toBe(false);
    expect((await row(id)).stuck_since).toBeNull();

    await env.sleep('2 hours');
    const state = await handle.query(statusQuery);
    expect(state).toMatchObject({ status: 'processing', stuck: true });
    expect(state.statusChecks).toBeGreaterThanOrEqual(8);
    const stuck = await row(id);
    expect(stuck.status).toBe('processing');
    expect(stuck.stuck_since).not.toBeNull();
    expect(await wallet(tenant.tenantId)).toEqual([599_000, 401_000]);

    // The bank settles it on its side; its callback cannot reach us, so the next status query finds it.
    expect((await bank.control(`/control/transfers/${id}/confirm`)).status).toBe(200);
    await env.sleep('7 hours');
    expect(await handle.result()).toMatchObject({ status: 'completed', stuck: true });
    expect((await row(id)).status).toBe('completed');
    expect(await wallet(tenant.tenantId)).toEqual([599_000, 0]);
    expect(await postingsTotal(db.orm.em.fork())).toBe(0);
    await recordHistoryOf('transfer-stuck-then-confirmed', handle);
  }, 120_000);
});

describe('a transfer whose submissions the bank throttles for longer than the retries last', () => {
  it('keeps the money reserved and the transfer processing on "no such transfer", until an operator fails it', async () => {
    const tenant = await createFundedTenant(db.orm, 1_000_000);
    const { id, handle } = await createTransfer(tenant.tenantId, '4444444444', 'throttled', 'throttled-for-an-hour');

    // Past the hour of submission retries (429 is transient) and the status query after them,
    // which finds nothing at the bank.
    await env.sleep('2 hours');
    const state = await handle.query(statusQuery);
    expect(state).toMatchObject({ status: 'processing', stuck: false });
    expect(state.bankOutcome).toBeUndefined();
    expect((await row(id)).status).toBe('processing');
    expect(await wallet(tenant.tenantId)).toEqual([599_000, 401_000]);

    // Stuck after 24 h of waiting for the bank's answer, counted from the end of the submission hour.
    await env.sleep('25 hours');
    expect(await handle.query(statusQuery)).toMatchObject({ status: 'processing', stuck: true });
    expect((await row(id)).stuck_since).not.toBeNull();

    const resolved = await handle.executeUpdate(resolveUpdate, {
      args: [{ outcome: 'failed', note: 'never reached the bank', operator: 'ops@test' }],
    });
    expect(resolved).toEqual({
      transferId: id,
      status: 'failed',
      decidedBy: 'operator',
      resolution: { outcome: 'failed', note: 'never reached the bank', operator: 'ops@test' },
    });
    expect(await handle.result()).toMatchObject({ status: 'failed' });
    expect((await row(id)).status).toBe('failed');
    expect(await wallet(tenant.tenantId)).toEqual([1_000_000, 0]);
    expect(await postingsTotal(db.orm.em.fork())).toBe(0);
    await recordHistoryOf('transfer-unknown-at-bank-resolved', handle);
  }, 120_000);
});
