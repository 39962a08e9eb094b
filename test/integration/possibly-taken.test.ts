// Decisions §17 on a deployment with LIVE_CONNECTORS=generic,paystack (the generic test bank first,
// the Paystack simulator second): a submission that may have been taken stays with its connector,
// whatever a later attempt would meet, whichever process makes it.
//  - On the whole stack: the generic bank takes a transfer and its answer is lost, and a retry would
//    meet its 422 `limit_exceeded` (a limit check that counts the first attempt): nothing is retried,
//    Paystack never sees the transfer, the generic bank's word settles it to the kobo, and Paystack's
//    later word about it is a connector conflict.
//  - submitToBank itself, on the real database and banks: the possibly-taken mark written before a
//    request leaves, read by the next attempt (a process that died mid-request), and what each answer
//    makes of it.
import { randomUUID } from 'node:crypto';
import { ApplicationFailure } from '@temporalio/common';
import { MockActivityEnvironment } from '@temporalio/testing';
import { beforeAll, describe, expect, it } from 'vitest';
import { createTransferActivities } from '../../activities/transfers/transfers.ts';
import { walletBalance } from '../../src/ledger/ledger.ts';
import { beginSubmission, findTransfer } from '../../src/transfers/store.ts';
import { transferFee } from '../../src/transfers/domain.ts';
import type { TransferRequest } from '../../workflows/transfers/definitions.ts';
import { auth, transferBody } from '../support/api.ts';
import { createFundedTenant } from '../support/app.ts';
import { eventually } from '../support/eventually.ts';
import { offersAt, useLiveBanks } from '../support/live-banks.ts';
import type { GatewayStack } from '../support/stack.ts';
import type { GenericTestBank } from '../simulators/generic-bank.ts';
import type { PaystackSimulator } from '../simulators/paystack.ts';

const live = useLiveBanks({ taskQueue: `possibly-taken-${process.pid}`, liveConnectors: 'generic,paystack' });
let stack: GatewayStack;
let paystack: PaystackSimulator;
let bank: GenericTestBank;
beforeAll(() => {
  ({ stack, paystack, bank } = live);
});

/** A call to the test bank's contract or control routes. */
async function atBank(method: string, path: string, body?: unknown): Promise<{ status: number; json: any }> {
  const response = await fetch(`${bank.url}${path}`, {
    method,
    headers: { authorization: `Bearer ${live.bankKey}`, ...(body ? { 'content-type': 'application/json' } : {}) },
    ...(body ? { body: JSON.stringify(body) } : {}),
  });
  return { status: response.status, json: await response.json() };
}

const paystackSubmissions = () =>
  paystack.requests.filter((request) => request === 'POST /transfer' || request === 'POST /transferrecipient');

describe('the whole stack', () => {
  it("(d) a lost answer at the generic bank, then its 422 on a retry: it stays there, Paystack never sees it, and Paystack's word about it is a conflict", async () => {
    const created = await stack.admin('tenant', 'create', '--name', 'generic first');
    const tenantId = created.json.tenant_id as string;
    const live = await stack.admin('key', 'create', '--tenant', tenantId, '--live');
    await stack.admin('wallet', 'fund', '--tenant', tenantId, '--amount-minor', '500000', '--live');
    const liveTenantId = live.json.mode_tenant_id as string;
    expect((await atBank('POST', '/control/faults', { fault: 'lose_answer', count: 1 })).status).toBe(200);
    const answer = await stack.app.inject({
      method: 'POST',
      url: '/api/v1/transfers',
      headers: auth(live.json.api_key as string),
      payload: transferBody('generic first', { reference: 'lost-at-generic-1' }),
    });
    expect(answer.statusCode).toBe(201);
    const id = answer.json().data.id as string;
    // Once its first answer is lost, any further submission would meet the bank's 422 (the bank
    // answers edge faults before anything else, so it is planned only now).
    await eventually(async () => (await findTransfer(stack.db.orm.em.fork(), id))?.ambiguous_since !== null);
    expect(
      (await atBank('POST', '/control/faults', { fault: 'limit_422', count: 1, route: 'POST /transfers' })).status,
    ).toBe(200);
    await eventually(async () => (await findTransfer(stack.db.orm.em.fork(), id))?.status === 'completed');
    const row = await findTransfer(stack.db.orm.em.fork(), id);
    expect(row).toMatchObject({ connector: 'generic', status: 'completed', amount_minor: 100_000, fee_minor: 1_000 });
    expect(row!.ambiguous_since).toBeInstanceOf(Date);
    expect(offersAt(bank, id)).toBe(1);
    // The 422 a retry would have met was never met; Paystack was never asked to take it.
    expect((await atBank('GET', '/control/faults')).json.faults).toEqual([
      { fault: 'limit_422', remaining: 1, route: 'POST /transfers' },
    ]);
    await atBank('DELETE', '/control/faults');
    expect(paystackSubmissions()).toEqual([]);
    expect(paystack.transfers.has(id)).toBe(false);
    expect((await walletBalance(stack.db.orm.em.fork(), liveTenantId)).availableMinor).toBe(399_000);

    // Paystack's signed word about a transfer the generic bank holds: kept, never applied.
    paystack.transfers.set(id, {
      id: 1,
      transfer_code: 'TRF_conflict',
      reference: id,
      amount: 100_000,
      reason: 'generic first',
      currency: 'NGN',
      status: 'pending',
      recipient: { id: 1, recipient_code: 'RCP_x', name: 'X', account_number: '0123456789', bank_code: '058' },
      session: { provider: null, id: null },
      gateway_response: null,
      createdAt: new Date().toISOString(),
      updatedAt: new Date().toISOString(),
      transferred_at: null,
    });
    const webhook = await paystack.finishTransfer(id, 'success');
    paystack.transfers.delete(id);
    expect(webhook.answered).toBe(200);
    const listed = await stack.admin('transfers', 'discrepancies');
    expect(listed.json.connector_conflicts).toEqual([
      expect.objectContaining({
        transfer_id: id,
        holder: 'generic',
        connector: 'paystack',
        said: 'successful',
        transfer_status: 'completed',
      }),
    ]);
    const conflictId = (listed.json.connector_conflicts as { id: string }[])[0]!.id;
    const closed = await stack.admin(
      'transfers',
      'close-conflict',
      '--id',
      conflictId,
      '--note',
      'never paid: Paystack support',
    );
    expect(closed.json).toMatchObject({
      id: conflictId,
      closed_by: 'ops-test',
      close_note: 'never paid: Paystack support',
    });
    const again = await stack.admin('transfers', 'close-conflict', '--id', conflictId, '--note', 'again');
    expect(again.code).not.toBe(0);
    expect((await stack.admin('transfers', 'discrepancies')).json.connector_conflicts).toEqual([]);
    expect((await walletBalance(stack.db.orm.em.fork(), liveTenantId)).availableMinor).toBe(399_000);
  });
});

describe('submitToBank, one attempt after another', () => {
  let activities: ReturnType<typeof createTransferActivities>;
  beforeAll(() => {
    const direct = createTransferActivities({ orm: stack.db.orm, providers: stack.providers() });
    // Each call in an activity's context, as a worker runs it (its log needs one).
    activities = Object.fromEntries(
      Object.entries(direct).map(([name, activity]) => [
        name,
        (input: unknown) => new MockActivityEnvironment().run(activity as (input: unknown) => Promise<unknown>, input),
      ]),
    ) as typeof direct;
  });

  /** A transfer reserved for `account` at `connector`, ready to be submitted. */
  async function reserved(connector: string, account = '0123456789') {
    const tenant = await createFundedTenant(stack.db.orm, 1_000_000);
    const request: TransferRequest = {
      tenantId: tenant.tenantId,
      reference: `attempt-${randomUUID()}`,
      requestHash: 'h',
      amountMinor: 100_000,
      feeMinor: transferFee(100_000),
      currency: 'NGN',
      recipientAccount: account,
      recipientBankCode: '058',
      recipientBankName: 'Guaranty Trust Bank',
      narration: 'attempts',
      metadata: {},
      mode: 'live',
    };
    const transferId = randomUUID();
    await activities.reserveFunds({
      transferId,
      request,
      recipientName: 'ADA OBI',
      nameEnquirySessionId: 'enquiry',
      connector,
    });
    const submission = { transferId, request, recipientName: 'ADA OBI', connector };
    return { transferId, submission };
  }
  const rowOf = async (id: string) => (await findTransfer(stack.db.orm.em.fork(), id))!;

  it('sends nothing after an attempt whose process died mid-request: possibly taken, its status asked instead', async () => {
    const { transferId, submission } = await reserved('generic');
    // The mark an attempt writes before its request leaves, with nothing after it: the process died.
    await beginSubmission(stack.db.orm.em.fork(), transferId);
    const answer = await activities.submitToBank(submission);
    expect(answer).toMatchObject({
      status: 'possibly_taken',
      possiblyTaken: {
        connector: 'generic',
        kind: 'lost',
        reason: 'an earlier submission got no answer; not sent again',
      },
    });
    expect(offersAt(bank, transferId)).toBe(0);
    const row = await rowOf(transferId);
    expect(row.possibly_taken_at).toBeInstanceOf(Date);
    expect(row.ambiguous_since).toBeInstanceOf(Date);
  });

  it('takes a 422 on a clean first attempt as "not taken", and its mark goes', async () => {
    const { transferId, submission } = await reserved('generic');
    await atBank('POST', '/control/faults', { fault: 'limit_422', count: 1, route: 'POST /transfers' });
    const refused = await activities.submitToBank(submission).then(
      () => undefined,
      (error: unknown) => error,
    );
    expect(refused).toBeInstanceOf(ApplicationFailure);
    expect(refused).toMatchObject({ type: 'bank_not_taken', nonRetryable: true });
    expect(offersAt(bank, transferId)).toBe(0);
    expect((await rowOf(transferId)).possibly_taken_at).toBeNull();
    expect((await rowOf(transferId)).ambiguous_since).toBeNull();
  });

  it('reads a 422 after an ambiguous attempt as proving nothing, even once its status query cleared the mark', async () => {
    const { transferId, submission } = await reserved('generic');
    await atBank('POST', '/control/faults', { fault: '503', count: 1, route: 'POST /transfers' });
    expect(await activities.submitToBank(submission)).toMatchObject({
      status: 'possibly_taken',
      possiblyTaken: { kind: 'lost' },
    });
    // Its status query proved it never taken (the workflow's part), and it is sent again: refused.
    const first = await rowOf(transferId);
    await activities.clearPossiblyTaken({ transferId, lastAttemptAt: first.possibly_taken_at!.getTime() });
    expect((await rowOf(transferId)).possibly_taken_at).toBeNull();
    await atBank('POST', '/control/faults', { fault: 'limit_422', count: 1, route: 'POST /transfers' });
    expect(await activities.submitToBank(submission)).toMatchObject({
      status: 'possibly_taken',
      possiblyTaken: { connector: 'generic', kind: 'refused' },
    });
    const row = await rowOf(transferId);
    expect(row.possibly_taken_at).toBeInstanceOf(Date);
    expect(row.ambiguous_since).toEqual(first.ambiguous_since);
  });

  it('retries a 429 (the bank says it did not act) as a first attempt: its mark goes', async () => {
    const { transferId, submission } = await reserved('sandbox', '4444444444');
    const error = await activities.submitToBank(submission).then(
      () => undefined,
      (thrown: unknown) => thrown,
    );
    expect(error).toMatchObject({ name: 'ProviderError', transient: true, ambiguous: false, httpStatus: 429 });
    const row = await rowOf(transferId);
    expect(row.possibly_taken_at).toBeNull();
    expect(row.ambiguous_since).toBeNull();
  });

  it('fails a transfer Paystack holds for an OTP (it will never pay it), and sends it nowhere else', async () => {
    const { transferId, submission } = await reserved('paystack');
    paystack.requireOtp(true);
    try {
      const error = await activities.submitToBank(submission).then(
        () => undefined,
        (thrown: unknown) => thrown,
      );
      expect(error).toMatchObject({ type: 'bank_rejected', nonRetryable: true });
    } finally {
      paystack.requireOtp(false);
    }
    expect((await rowOf(transferId)).possibly_taken_at).toBeNull();
  });
});
