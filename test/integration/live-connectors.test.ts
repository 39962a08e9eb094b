// Live keys move money through the live connectors, by the code the sandbox runs (decisions §13):
// a deployment with LIVE_CONNECTORS=paystack (the Paystack simulator of test/simulators/ behind
// it) sends a live key's transfer to Paystack, records the connector on it, settles or refunds it
// on Paystack's signed webhook, and answers 403 naming the capability for what no live connector
// serves. The sandbox key's transfers still go to the sandbox bank.
import { createHmac } from 'node:crypto';
import type { FastifyInstance } from 'fastify';
import { describe, expect, it } from 'vitest';
import { walletBalance } from '../../src/ledger/ledger.ts';
import { findTransfer } from '../../src/transfers/store.ts';
import { auth, transferBody } from '../support/api.ts';
import { eventually } from '../support/eventually.ts';
import { type GatewayStack, useGatewayStack } from '../support/stack.ts';
import type { PaystackSimulator } from '../simulators/paystack.ts';

const TASK_QUEUE = `live-connectors-${process.pid}`;

let stack: GatewayStack;
let app: FastifyInstance;
let paystack: PaystackSimulator;
useGatewayStack({ taskQueue: TASK_QUEUE, bank: { completionDelayMs: 100 }, paystack: true }, (started) => {
  stack = started;
  app = started.app;
  paystack = started.paystack!;
});

async function liveTenant(name: string, fundMinor: number) {
  const created = await stack.admin('tenant', 'create', '--name', name);
  const tenantId = created.json.tenant_id as string;
  const live = await stack.admin('key', 'create', '--tenant', tenantId, '--live');
  await stack.admin('wallet', 'fund', '--tenant', tenantId, '--amount-minor', String(fundMinor), '--live');
  return {
    tenantId,
    liveTenantId: live.json.mode_tenant_id as string,
    testKey: created.json.api_key as string,
    liveKey: live.json.api_key as string,
  };
}

const post = (key: string, url: string, payload: object, headers: Record<string, string> = {}) =>
  app.inject({ method: 'POST', url, headers: auth(key, headers), payload });

describe('a live key on a deployment with LIVE_CONNECTORS=paystack', () => {
  it('sends its transfer to Paystack, records the connector, and settles it on the signed webhook', async () => {
    const { liveTenantId, liveKey } = await liveTenant('live paystack', 1_000_000);
    const banks = await app.inject({ method: 'GET', url: '/api/v1/banks', headers: auth(liveKey) });
    expect(banks.statusCode).toBe(200);
    // Paystack's list, not the sandbox bank's.
    expect(banks.json().data.items).toContainEqual({
      code: '058',
      name: 'Guaranty Trust Bank',
      slug: 'guaranty-trust-bank',
    });

    const created = await post(liveKey, '/api/v1/transfers', transferBody('live payout', { reference: 'live-1' }));
    expect(created.statusCode).toBe(201);
    const id = created.json().data.id as string;
    const row = await findTransfer(stack.db.orm.em.fork(), id);
    expect(row).toMatchObject({ connector: 'paystack', amount_minor: 100_000, fee_minor: 1_000 });
    // Reserved: 1,000,000 − 100,000 − 1,000.
    expect((await walletBalance(stack.db.orm.em.fork(), liveTenantId)).availableMinor).toBe(899_000);

    const atPaystack = await eventually(() => paystack.transfers.get(id));
    expect(atPaystack).toMatchObject({ amount: 100_000, currency: 'NGN', status: 'pending' });
    await paystack.finishTransfer(id, 'success');
    await eventually(async () => (await findTransfer(stack.db.orm.em.fork(), id))?.status === 'completed');
    expect((await walletBalance(stack.db.orm.em.fork(), liveTenantId)).availableMinor).toBe(899_000);
    const shown = await stack.admin('transfers', 'show', '--id', id);
    expect(shown.json.transfer).toMatchObject({ connector: 'paystack', status: 'completed' });
  });

  it('refunds amount and fee when Paystack fails the transfer', async () => {
    const { liveTenantId, liveKey } = await liveTenant('live paystack failed', 500_000);
    const created = await post(liveKey, '/api/v1/transfers', transferBody('will fail', { reference: 'live-2' }));
    expect(created.statusCode).toBe(201);
    const id = created.json().data.id as string;
    await eventually(() => paystack.transfers.get(id));
    expect((await walletBalance(stack.db.orm.em.fork(), liveTenantId)).availableMinor).toBe(399_000);
    await paystack.finishTransfer(id, 'failed');
    await eventually(async () => (await findTransfer(stack.db.orm.em.fork(), id))?.status === 'failed');
    expect((await walletBalance(stack.db.orm.em.fork(), liveTenantId)).availableMinor).toBe(500_000);
  });

  it('refuses a Paystack callback with a bad signature (401), applying nothing', async () => {
    const { liveKey } = await liveTenant('live paystack callbacks', 500_000);
    const created = await post(liveKey, '/api/v1/transfers', transferBody('callbacks', { reference: 'live-3' }));
    const id = created.json().data.id as string;
    await eventually(() => paystack.transfers.get(id));
    const body = JSON.stringify({
      event: 'transfer.success',
      data: { reference: id, status: 'success', amount: 100_000 },
    });
    const forged = await app.inject({
      method: 'POST',
      url: '/provider-callbacks/paystack',
      headers: {
        'content-type': 'application/json',
        'x-paystack-signature': createHmac('sha512', 'sk_test_not_the_key').update(body).digest('hex'),
      },
      payload: body,
    });
    expect(forged.statusCode).toBe(401);
    expect((await findTransfer(stack.db.orm.em.fork(), id))?.status).not.toBe('completed');
  });

  it("books Paystack's fee on a dedicated-account credit: gross in, fee out, in one entry; reconciled net", async () => {
    const { liveTenantId, liveKey } = await liveTenant('live credit with fee', 1_000_000);
    const created = await post(liveKey, '/api/v1/virtual-accounts', {
      customer_id: 'cus-fee',
      account_name: 'ADA OBI',
    });
    expect(created.statusCode).toBe(201);
    const account = created.json().data as { id: string; provider: string; account_number: string };
    expect(account.provider).toBe('paystack');
    const day = new Date().toISOString().slice(0, 10);

    // Paystack's signed charge.success: ₦12,345.67 paid in, of which Paystack keeps ₦123.46 (1%).
    const { charge, webhook } = await paystack.creditDedicatedAccount(account.account_number, 1_234_567);
    expect(webhook.answered).toBe(200);
    expect(JSON.parse(webhook.body).data).toMatchObject({ amount: 1_234_567, fees: 12_346 });
    const read = async () =>
      (
        await app.inject({ method: 'GET', url: `/api/v1/virtual-accounts/${account.id}`, headers: auth(liveKey) })
      ).json().data;
    await eventually(async () => (await read()).transaction_count === 1);
    // The account counts what the sender paid; the wallet holds what is left once Paystack's fee is taken.
    expect(await read()).toMatchObject({ total_received_minor: 1_234_567, transaction_count: 1 });
    expect((await walletBalance(stack.db.orm.em.fork(), liveTenantId)).availableMinor).toBe(1_000_000 + 1_222_221);

    const statement = (
      await app.inject({ method: 'GET', url: '/api/v1/wallet/transactions', headers: auth(liveKey) })
    ).json().data.items as Record<string, unknown>[];
    expect(statement.slice(0, 2)).toEqual([
      expect.objectContaining({
        type: 'provider_fee',
        amount_minor: -12_346,
        balance_after_minor: 2_222_221,
        reference: charge.reference,
        resource: { type: 'virtual_account', id: account.id },
      }),
      expect.objectContaining({
        type: 'inbound_credit',
        amount_minor: 1_234_567,
        balance_after_minor: 2_234_567,
        reference: charge.reference,
        resource: { type: 'virtual_account', id: account.id },
      }),
    ]);
    expect(statement[0]!.entry_id).toBe(statement[1]!.entry_id);
    expect(statement).toHaveLength(3);

    const events = (
      await app.inject({
        method: 'GET',
        url: '/api/v1/events?type=virtual_account.credited',
        headers: auth(liveKey),
      })
    ).json().data.items as { data: Record<string, any> }[];
    expect(events).toHaveLength(1);
    expect(events[0]!.data).toMatchObject({
      id: account.id,
      total_received_minor: 1_234_567,
      credit: { amount_minor: 1_234_567, fee_minor: 12_346, transaction_reference: charge.reference },
    });

    // Reconciliation compares what Paystack settles, the net amount, with the books' net amount.
    const days = [...new Set([day, new Date().toISOString().slice(0, 10)])];
    const items: Record<string, unknown>[] = [];
    for (const date of days) {
      const run = await stack.admin('reconcile', 'run', '--date', date, '--connector', 'paystack');
      expect(run.code, run.stderr).toBe(0);
      const report = await stack.admin('reconcile', 'report', '--date', date, '--connector', 'paystack', '--all');
      expect(report.code, report.stderr).toBe(0);
      items.push(...(report.json.runs[0].items as Record<string, unknown>[]));
    }
    expect(items.filter((item) => item.reference === charge.reference)).toEqual([
      expect.objectContaining({
        outcome: 'matched',
        kind: 'inbound_credit',
        tenant_id: liveTenantId,
        bank_amount_minor: 1_222_221,
        our_amount_minor: 1_222_221,
        bank_status: 'successful',
        our_status: 'applied',
      }),
    ]);
  });

  it('answers 403 naming the capability no live connector serves, and nothing is made', async () => {
    const { liveKey } = await liveTenant('live no cards', 0);
    const card = await post(liveKey, '/api/v1/cards', { customer_id: 'c-1' });
    expect(card.statusCode).toBe(403);
    expect(JSON.stringify(card.json())).toContain('live mode has no connector for cards');
  });

  it("keeps the sandbox key's transfers on the sandbox bank", async () => {
    const { tenantId, testKey } = await liveTenant('test beside live', 0);
    await stack.admin('wallet', 'fund', '--tenant', tenantId, '--amount-minor', '300000');
    const created = await post(testKey, '/api/v1/transfers', transferBody('sandbox', { reference: 'test-1' }));
    expect(created.statusCode).toBe(201);
    const id = created.json().data.id as string;
    expect((await findTransfer(stack.db.orm.em.fork(), id))?.connector).toBe('sandbox');
    expect(paystack.transfers.has(id)).toBe(false);
  });
});
