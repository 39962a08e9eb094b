// Wallet statements (decisions §15) on the real stack: every movement of the available balance with
// its running balance, reference and resource, newest first and paginated; the wallet as it was at
// a past moment; ranges refused by name; another tenant's movements never shown; the operator's
// CSV export.
import type { FastifyInstance } from 'fastify';
import { describe, expect, it } from 'vitest';
import { walletBalance } from '../../src/ledger/ledger.ts';
import type { StatementItem } from '../../src/wallet/statement.ts';
import { auth, expectFieldRefused, transferBody } from '../support/api.ts';
import { createFundedTenant } from '../support/app.ts';
import type { TestDatabase } from '../support/database.ts';
import { eventually } from '../support/eventually.ts';
import { type GatewayStack, useGatewayStack } from '../support/stack.ts';

const TASK_QUEUE = `wallet-statements-${process.pid}`;

let stack: GatewayStack;
let db: TestDatabase;
let app: FastifyInstance;

useGatewayStack({ taskQueue: TASK_QUEUE, bank: { completionDelayMs: 100 } }, (started) => {
  stack = started;
  ({ db, app } = started);
});

const get = (apiKey: string, url: string) => app.inject({ method: 'GET', url, headers: auth(apiKey) });

/** A transfer made and awaited until the bank's answer is booked: its id. */
async function transferTo(apiKey: string, account: string, amountMinor: number, reference: string) {
  const created = await app.inject({
    method: 'POST',
    url: '/api/v1/transfers',
    headers: auth(apiKey),
    payload: transferBody('statement test', { recipient_account: account, amount_minor: amountMinor, reference }),
  });
  expect(created.statusCode).toBe(201);
  const id = created.json().data.id as string;
  await eventually(async () => {
    const status = (await get(apiKey, `/api/v1/transfers/${id}`)).json().data.status as string;
    return ['successful', 'failed', 'reversed'].includes(status);
  });
  return id;
}

/** A virtual account credited through the sandbox bank, awaited: the account's id and the bank's reference. */
async function creditedAccount(apiKey: string, amountMinor: number) {
  const account = await app.inject({
    method: 'POST',
    url: '/api/v1/virtual-accounts',
    headers: auth(apiKey),
    payload: { customer_id: 'statement', account_name: 'Ada Obi' },
  });
  expect(account.statusCode).toBe(201);
  const id = account.json().data.id as string;
  const sent = await app.inject({
    method: 'POST',
    url: `/api/v1/sandbox/virtual-accounts/${id}/credits`,
    headers: auth(apiKey),
    payload: { amount_minor: amountMinor, sender_name: 'OKAFOR STORES' },
  });
  expect(sent.statusCode).toBe(202);
  await eventually(
    async () => (await get(apiKey, `/api/v1/virtual-accounts/${id}`)).json().data.transaction_count === 1,
  );
  return { id, transactionReference: sent.json().data.transaction_reference as string };
}

type Item = StatementItem;

describe('GET /api/v1/wallet/transactions', () => {
  it('lists every movement of the available balance, newest first, with its running balance', async () => {
    const tenant = await createFundedTenant(db.orm, 1_000_000);
    const fundedAt = new Date();
    const paid = await transferTo(tenant.apiKey, '0123456789', 250_000, 'stmt-paid');
    // 1111111111: the sandbox bank fails it, so its reservation comes back.
    const failed = await transferTo(tenant.apiKey, '1111111111', 100_000, '-stmt-failed');
    const credit = await creditedAccount(tenant.apiKey, 40_050);

    const response = await get(tenant.apiKey, '/api/v1/wallet/transactions');
    expect(response.statusCode).toBe(200);
    const { items, pagination, period } = response.json().data as {
      items: Item[];
      pagination: Record<string, unknown>;
      period: { from: string; to: string };
    };
    expect(Date.parse(period.to) - Date.parse(period.from)).toBe(30 * 86_400_000);
    expect(pagination).toEqual({ page: 1, limit: 20, offset: 0, total: 5, pages: 1, has_more: false });
    expect(
      items.map(({ type, amount_minor, balance_after_minor, reference, resource }) => ({
        type,
        amount_minor,
        balance_after_minor,
        reference,
        resource,
      })),
    ).toEqual([
      {
        type: 'inbound_credit',
        amount_minor: 40_050,
        balance_after_minor: 789_050,
        reference: credit.transactionReference,
        resource: { type: 'virtual_account', id: credit.id },
      },
      {
        type: 'transfer_reverse',
        amount_minor: 101_000,
        balance_after_minor: 749_000,
        reference: '-stmt-failed',
        resource: { type: 'transfer', id: failed },
      },
      {
        type: 'transfer_reserve',
        amount_minor: -101_000,
        balance_after_minor: 648_000,
        reference: '-stmt-failed',
        resource: { type: 'transfer', id: failed },
      },
      {
        type: 'transfer_reserve',
        amount_minor: -251_000,
        balance_after_minor: 749_000,
        reference: 'stmt-paid',
        resource: { type: 'transfer', id: paid },
      },
      {
        type: 'wallet_funding',
        amount_minor: 1_000_000,
        balance_after_minor: 1_000_000,
        reference: 'test-initial',
        resource: { type: 'journal_entry', id: items[4]!.entry_id },
      },
    ]);
    // The newest balance is the wallet's, and each one is the one before it plus its movement.
    expect(items[0]!.balance_after_minor).toBe((await walletBalance(db.orm.em.fork(), tenant.tenantId)).availableMinor);
    for (let i = 0; i < items.length - 1; i++) {
      expect(items[i]!.balance_after_minor).toBe(items[i + 1]!.balance_after_minor + items[i]!.amount_minor);
    }
    expect(new Set(items.map((item) => item.id)).size).toBe(5);
    expect(Date.parse(items[4]!.created_at)).toBeLessThanOrEqual(fundedAt.getTime());

    // Two at a time: the same items, in the same order, over three pages.
    const pages: Item[] = [];
    for (let page = 1; page <= 3; page++) {
      const data = (await get(tenant.apiKey, `/api/v1/wallet/transactions?limit=2&page=${page}`)).json().data;
      expect(data.pagination).toMatchObject({ page, limit: 2, total: 5, pages: 3, has_more: page < 3 });
      pages.push(...data.items);
    }
    expect(pages).toEqual(items);

    // A range that ends before the first transfer holds only the funding.
    const early = (
      await get(tenant.apiKey, `/api/v1/wallet/transactions?to=${encodeURIComponent(fundedAt.toISOString())}`)
    ).json().data;
    expect(early.items.map((item: Item) => item.type)).toEqual(['wallet_funding']);
    // A range that starts tomorrow (a Lagos date) holds nothing.
    const tomorrow = new Date(Date.now() + 2 * 86_400_000).toISOString().slice(0, 10);
    const later = (await get(tenant.apiKey, `/api/v1/wallet/transactions?from=${tomorrow}&to=${tomorrow}`)).json();
    expect(later.data.items).toEqual([]);
    expect(later.data.period.to).toBe(new Date(Date.parse(`${tomorrow}T00:00:00+01:00`) + 86_400_000).toISOString());

    // Another tenant sees none of it.
    const other = await createFundedTenant(db.orm, 5_000);
    const theirs = (await get(other.apiKey, '/api/v1/wallet/transactions')).json().data;
    expect(theirs.items.map((item: Item) => [item.type, item.amount_minor])).toEqual([['wallet_funding', 5_000]]);
  });

  it('refuses a range backwards, longer than 366 days, or not a date, naming the field', async () => {
    const tenant = await createFundedTenant(db.orm);
    const cases: [query: string, field: string][] = [
      ['from=2026-03-01&to=2026-02-01', 'to'],
      ['from=2026-03-01T10:00:00Z&to=2026-03-01T10:00:00Z', 'to'],
      ['from=2025-01-01&to=2026-01-02', 'to'],
      ['from=yesterday', 'from'],
      ['from=2026-02-30', 'from'],
      ['to=2026-11-27T10:00:00', 'to'],
      [`from=${'9'.repeat(50)}`, 'from'],
      ['limit=101', 'limit'],
      ['page=0', 'page'],
    ];
    for (const [query, field] of cases) {
      expectFieldRefused(await get(tenant.apiKey, `/api/v1/wallet/transactions?${query}`), field);
    }
    // Exactly 366 days is allowed.
    expect((await get(tenant.apiKey, '/api/v1/wallet/transactions?from=2025-01-01&to=2026-01-01')).statusCode).toBe(
      200,
    );
  });
});

describe('GET /api/v1/wallet?at=', () => {
  it('answers the balances as they were at that moment', async () => {
    const tenant = await createFundedTenant(db.orm, 500_000);
    const beforeAll = new Date(Date.now() - 86_400_000);
    const funded = new Date();
    await transferTo(tenant.apiKey, '0123456789', 100_000, 'at-paid');
    const at = async (moment: string) =>
      (await get(tenant.apiKey, `/api/v1/wallet?at=${encodeURIComponent(moment)}`)).json().data;

    expect(await at(beforeAll.toISOString())).toMatchObject({
      currency: 'NGN',
      available_minor: 0,
      pending_minor: 0,
      at: beforeAll.toISOString(),
    });
    expect(await at(funded.toISOString())).toMatchObject({ available_minor: 500_000, pending_minor: 0 });
    const now = await at(new Date().toISOString());
    const current = (await get(tenant.apiKey, '/api/v1/wallet')).json().data;
    expect(now).toMatchObject({ available_minor: 399_000, pending_minor: 0 });
    expect(current).toMatchObject({ available_minor: 399_000, pending_minor: 0 });
    expect(current).not.toHaveProperty('at');
    expectFieldRefused(await get(tenant.apiKey, '/api/v1/wallet?at=last-week'), 'at');
  });
});

describe('admin wallet statement', () => {
  it('exports the statement as CSV, oldest first, a formula-like reference defused', async () => {
    const tenant = await createFundedTenant(db.orm, 300_000);
    const paid = await transferTo(tenant.apiKey, '0123456789', 50_000, '-2-1');
    const csv = await stack.admin('wallet', 'statement', '--tenant', tenant.tenantId, '--csv');
    expect(csv.code).toBe(0);
    const lines = csv.stdout.trimEnd().split('\r\n');
    expect(lines[0]).toBe(
      'created_at,id,entry_id,type,amount_minor,balance_after_minor,reference,resource_type,resource_id',
    );
    expect(lines.slice(1).map((line) => line.split(',').slice(3))).toEqual([
      ['wallet_funding', '300000', '300000', 'test-initial', 'journal_entry', expect.any(String)],
      ['transfer_reserve', '-51000', '249000', "'-2-1", 'transfer', paid],
    ]);
    const json = await stack.admin('wallet', 'statement', '--tenant', tenant.tenantId);
    expect(json.code).toBe(0);
    expect(json.json).toMatchObject({ tenant_id: tenant.ownerTenantId, mode: 'test', count: 2 });
    const refused = await stack.admin(
      'wallet',
      'statement',
      '--tenant',
      tenant.tenantId,
      '--from',
      '2026-05-01',
      '--to',
      '2026-04-01',
    );
    expect(refused.code).toBe(2);
    expect(refused.stderr).toContain('--to: must be after from');
  });
});
