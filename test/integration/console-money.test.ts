// The console's money pages over HTTP as a browser without script uses them (decisions §22): the
// overview's two wallets and today's transfers, virtual accounts with their credits (and the API's
// GET /api/v1/virtual-accounts/:id/credits they read), cards, and the wallet statement with its CSV
// export, all to the kobo; hostile strings stored through the API only ever printed escaped;
// another tenant's ids 404.
import { randomUUID } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { naira } from '../../src/console/render.ts';
import { lagosToday } from '../../src/console/pages/overview.ts';
import { auth, transferBody } from '../support/api.ts';
import { createFundedTenant } from '../support/app.ts';
import { member } from '../support/console.ts';
import { eventually } from '../support/eventually.ts';
import { useGatewayStack } from '../support/stack.ts';

const stack = useGatewayStack({ taskQueue: `console-money-${process.pid}`, bank: { completionDelayMs: 50 } });

const IMG = '<img src=x onerror=alert(1)>';
const SCRIPT = '"><script>alert(1)</script>';

const api = (method: 'GET' | 'POST', url: string, key: string, payload?: object) =>
  stack.app.inject({ method, url, headers: auth(key), ...(payload === undefined ? {} : { payload }) });

/** The text inside the element with this test id (its first closing tag), tags removed. */
function textOf(html: string, testId: string): string {
  const match = new RegExp(`data-testid="${testId}"[^>]*>([\\s\\S]*?)</(?:dd|td|span|p|pre)>`).exec(html);
  if (!match) throw new Error(`no ${testId} on the page`);
  return match[1]!
    .replace(/<[^>]+>/g, '')
    .replace(/\s+/g, ' ')
    .trim();
}

/** Everything between the opening of the element with this test id and the next closing div. */
function blockOf(html: string, testId: string): string {
  const start = html.indexOf(`data-testid="${testId}"`);
  if (start < 0) throw new Error(`no ${testId} on the page`);
  return html.slice(start, html.indexOf('</div>', start));
}

function expectEscaped(html: string) {
  expect(html).not.toContain('<img src=x');
  expect(html).not.toContain('<script>alert');
  expect(html).toContain('&lt;img src=x onerror=alert(1)&gt;');
  expect(html).toContain('&lt;script&gt;alert(1)&lt;/script&gt;');
}

describe('console: overview', () => {
  it("shows both modes' wallets and today's transfers to the kobo", async () => {
    const tenant = await createFundedTenant(stack.db.orm, 123_456_789);
    const owner = await member(stack.db.orm, stack.gatewayUrl, tenant.tenantId, 'owner');

    let page = await owner.get('/dashboard');
    expect(page.status, page.html).toBe(200);
    expect(textOf(page.html, 'available-test')).toBe('₦1,234,567.89');
    expect(textOf(page.html, 'pending-test')).toBe('₦0.00');
    expect(blockOf(page.html, 'balance-live')).toMatch(/no live mode yet/i);
    expect(textOf(page.html, 'today-count')).toBe('0');
    expect(textOf(page.html, 'today-volume')).toBe('₦0.00');

    expect((await stack.admin('key', 'create', '--tenant', tenant.tenantId, '--live')).code).toBe(0);
    const funded = await stack.admin(
      'wallet',
      'fund',
      '--tenant',
      tenant.tenantId,
      '--amount-minor',
      '5000001',
      '--live',
    );
    expect(funded.code, funded.stderr).toBe(0);

    const amounts = [15_000_000, 5_000_050];
    let fees = 0;
    for (const amount of amounts) {
      const made = await api(
        'POST',
        '/api/v1/transfers',
        tenant.apiKey,
        transferBody('overview', { amount_minor: amount }),
      );
      expect(made.statusCode, made.body).toBe(201);
      fees += made.json().data.fee_minor as number;
    }
    expect(fees).toBeGreaterThan(0);

    page = await owner.get('/dashboard');
    expect(textOf(page.html, 'today-count')).toBe('2');
    expect(textOf(page.html, 'today-volume')).toBe('₦200,000.50');
    expect(textOf(page.html, 'today-reserved')).toBe(naira(20_000_050 + fees));
    expect(textOf(page.html, 'available-test')).toBe(naira(123_456_789 - 20_000_050 - fees));
    expect(textOf(page.html, 'available-live')).toBe('₦50,000.01');
    expect(textOf(page.html, 'pending-live')).toBe('₦0.00');
    expect(textOf(page.html, 'today-failures')).toBe('0 failed today');
    expect(page.html).toContain(`href="/dashboard/transfers?status=failed&amp;from=${lagosToday().date}"`);

    // In live mode, today is the live mode's: nothing sent there.
    await owner.post('/dashboard/mode', { mode: 'live', back: '/dashboard' });
    page = await owner.get('/dashboard');
    expect(textOf(page.html, 'today-count')).toBe('0');
    expect(textOf(page.html, 'available-live')).toBe('₦50,000.01');
    expect(textOf(page.html, 'available-test')).toBe(naira(123_456_789 - 20_000_050 - fees));
  });
});

describe('console: virtual accounts', () => {
  it('lists accounts, shows a credit to the kobo, escapes what the tenant stored, and 404s another tenant', async () => {
    const tenant = await createFundedTenant(stack.db.orm);
    const other = await createFundedTenant(stack.db.orm);
    const created = await api('POST', '/api/v1/virtual-accounts', tenant.apiKey, {
      customer_id: IMG,
      account_name: `Ada ${SCRIPT}`,
      metadata: { label: IMG, note: SCRIPT },
    });
    expect(created.statusCode, created.body).toBe(201);
    const account = created.json().data as { id: string; account_number: string };
    const sent = await api('POST', `/api/v1/sandbox/virtual-accounts/${account.id}/credits`, tenant.apiKey, {
      amount_minor: 750_050,
      sender_name: IMG,
      reference: `cr-${randomUUID()}`,
    });
    expect(sent.statusCode, sent.body).toBe(202);

    // The API's list of the account's credits (and another tenant's key: the account does not exist).
    const credits = await eventually(async () => {
      const answer = await api('GET', `/api/v1/virtual-accounts/${account.id}/credits`, tenant.apiKey);
      expect(answer.statusCode, answer.body).toBe(200);
      return answer.json().data.items.length === 1 ? answer.json().data : false;
    });
    expect(credits.items[0]).toEqual({
      id: expect.any(String),
      amount_minor: 750_050,
      fee_minor: 0,
      sender_name: IMG,
      sender_account_number: null,
      sender_bank_code: null,
      transaction_reference: sent.json().data.transaction_reference,
      status: 'applied',
      returned_minor: 0,
      created_at: expect.any(String),
    });
    expect(credits.pagination).toMatchObject({ page: 1, total: 1, has_more: false });
    const foreign = await api('GET', `/api/v1/virtual-accounts/${account.id}/credits`, other.apiKey);
    expect(foreign.statusCode).toBe(404);

    const viewer = await member(stack.db.orm, stack.gatewayUrl, tenant.tenantId, 'viewer');
    const list = await viewer.get('/dashboard/virtual-accounts');
    expect(list.status, list.html).toBe(200);
    expect(list.html.match(/data-testid="va-row"/g)).toHaveLength(1);
    expect(list.html).toContain(account.account_number);
    expect(list.html).toContain('₦7,500.50');
    expectEscaped(list.html);

    const shown = await viewer.get(`/dashboard/virtual-accounts/${account.id}`);
    expect(shown.status, shown.html).toBe(200);
    expect(shown.html.match(/data-testid="credit-row"/g)).toHaveLength(1);
    expect(textOf(shown.html, 'credit-amount')).toBe('₦7,500.50');
    expect(textOf(shown.html, 'va-received')).toBe('₦7,500.50 in 1 credits');
    expect(textOf(shown.html, 'credit-status')).toBe('applied');
    expect(textOf(shown.html, 'credit-returned')).toBe('₦0.00');
    // A credit without its sender's account has no Return form, whoever looks.
    expect(shown.html).not.toContain('data-testid="credit-return"');
    expectEscaped(shown.html);

    const stranger = await member(stack.db.orm, stack.gatewayUrl, other.tenantId, 'viewer');
    expect((await stranger.get(`/dashboard/virtual-accounts/${account.id}`)).status).toBe(404);
    expect((await stranger.get('/dashboard/virtual-accounts/not%20an%20id')).status).toBe(404);
    expect((await stranger.get('/dashboard/virtual-accounts')).html).not.toContain('data-testid="va-row"');
  });
});

describe('console: returning a credit (decisions §21)', () => {
  it('returns part of a credit through the API from the Return form, shows its status and what was returned, and offers no form to a viewer', async () => {
    const tenant = await createFundedTenant(stack.db.orm, 10_000);
    const created = await api('POST', '/api/v1/virtual-accounts', tenant.apiKey, {
      customer_id: 'c',
      account_name: 'Ada',
    });
    const account = created.json().data as { id: string };
    const sent = await api('POST', `/api/v1/sandbox/virtual-accounts/${account.id}/credits`, tenant.apiKey, {
      amount_minor: 1_000_000,
      sender_name: 'EMEKA NWOSU',
      sender_account_number: '0123456789',
      sender_bank_code: '058',
    });
    expect(sent.statusCode, sent.body).toBe(202);
    const page = `/dashboard/virtual-accounts/${account.id}`;
    const owner = await member(stack.db.orm, stack.gatewayUrl, tenant.tenantId, 'owner');
    const before = await eventually(async () => {
      const shown = await owner.get(page);
      return shown.html.includes('data-testid="credit-return"') ? shown : false;
    });
    expect(before.html).toContain('at most ₦10,000.00');
    const creditId = /\/credits\/([0-9a-f-]{36})\/return/.exec(before.html)![1]!;

    // A malformed amount is refused before anything is sent.
    const malformed = await owner.post(`${page}/credits/${creditId}/return`, { amount: '12.345', reason: '' });
    expect(malformed.status).toBe(400);
    expect(malformed.html).toContain('The amount must be in naira');

    const returned = await owner.post(`${page}/credits/${creditId}/return`, {
      amount: '2,500.50',
      reason: 'paid twice',
    });
    expect(returned.status, returned.html).toBe(303);
    expect(returned.location).toBe(`${page}?notice=credit-returned`);
    const after = await owner.get(returned.location!);
    expect(after.html).toContain('The return is on its way');
    expect(textOf(after.html, 'credit-status')).toBe('partially returned');
    expect(textOf(after.html, 'credit-returned')).toBe('₦2,500.50');
    expect(after.html).toContain('at most ₦7,499.50');
    // The API's own answer: a transfer with return_of, its fee from the wallet.
    const transfers = await api('GET', '/api/v1/transfers?expand=details', tenant.apiKey);
    expect(transfers.json().data).toEqual([
      expect.objectContaining({
        amount_minor: 250_050,
        fee_minor: 1_000,
        narration: 'paid twice',
        return_of: creditId,
      }),
    ]);

    // More than is left: the API's refusal, on the page.
    const tooMuch = await owner.post(`${page}/credits/${creditId}/return`, { amount: '7499.51' });
    expect(tooMuch.status).toBe(422);
    expect(tooMuch.html).toContain('at most 749950 kobo');

    const viewer = await member(stack.db.orm, stack.gatewayUrl, tenant.tenantId, 'viewer');
    const seen = await viewer.get(page);
    expect(textOf(seen.html, 'credit-status')).toBe('partially returned');
    expect(seen.html).not.toContain('data-testid="credit-return"');
    // And a viewer's post is refused by the API's scope, nothing sent.
    expect((await viewer.post(`${page}/credits/${creditId}/return`, { amount: '1' })).status).toBe(403);
    expect((await api('GET', '/api/v1/transfers', tenant.apiKey)).json().data).toHaveLength(1);
  });
});

describe('console: cards', () => {
  it("shows a card's balance, settings and funding to the kobo, escaped, and 404s another tenant", async () => {
    const tenant = await createFundedTenant(stack.db.orm, 1_000_000);
    const other = await createFundedTenant(stack.db.orm);
    const issued = await api('POST', '/api/v1/cards', tenant.apiKey, {
      customer_id: 'cus_cards',
      metadata: { label: IMG, url: `https://example.com/${SCRIPT}` },
    });
    expect(issued.statusCode, issued.body).toBe(201);
    const card = issued.json().data as { id: string; last4: string };
    const funded = await api('POST', `/api/v1/cards/${card.id}/fund`, tenant.apiKey, {
      amount_minor: 120_050,
      transaction_reference: `fund-${randomUUID()}`,
    });
    expect(funded.statusCode, funded.body).toBe(202);

    const viewer = await member(stack.db.orm, stack.gatewayUrl, tenant.tenantId, 'viewer');
    const list = await viewer.get('/dashboard/cards');
    expect(list.status, list.html).toBe(200);
    expect(list.html.match(/data-testid="card-row"/g)).toHaveLength(1);
    expect(list.html).toContain(`•••• ${card.last4}`);

    const shown = await eventually(async () => {
      const page = await viewer.get(`/dashboard/cards/${card.id}`);
      expect(page.status, page.html).toBe(200);
      return page.html.includes('data-testid="funding-row"') && textOf(page.html, 'card-available') === '₦1,200.50'
        ? page
        : false;
    });
    expect(textOf(shown.html, 'card-held')).toBe('₦0.00');
    expect(shown.html).toContain('data-testid="card-security"');
    expect(shown.html).toContain('₦1,200.50');
    expectEscaped(shown.html);

    const stranger = await member(stack.db.orm, stack.gatewayUrl, other.tenantId, 'owner');
    expect((await stranger.get(`/dashboard/cards/${card.id}`)).status).toBe(404);
    expect((await stranger.get('/dashboard/cards')).html).not.toContain('data-testid="card-row"');
  });
});

describe('console: wallet statement', () => {
  it('pages the statement and exports the same rows and totals as CSV, formulas neutralised', async () => {
    const tenant = await createFundedTenant(stack.db.orm, 10_000_000);
    const references = [`-cmd-${randomUUID().slice(0, 8)}`, `plain-${randomUUID().slice(0, 8)}`];
    for (const [index, reference] of references.entries()) {
      const made = await api(
        'POST',
        '/api/v1/transfers',
        tenant.apiKey,
        transferBody('statement', { amount_minor: 1_000_025 * (index + 1), reference }),
      );
      expect(made.statusCode, made.body).toBe(201);
    }
    const statement = (await api('GET', '/api/v1/wallet/transactions?limit=100', tenant.apiKey)).json().data as {
      items: { amount_minor: number; balance_after_minor: number; type: string }[];
    };
    expect(statement.items.length).toBe(3);
    const total = statement.items.reduce((sum, item) => sum + item.amount_minor, 0);
    const available = (await api('GET', '/api/v1/wallet', tenant.apiKey)).json().data.available_minor as number;
    expect(total).toBe(available);

    const developer = await member(stack.db.orm, stack.gatewayUrl, tenant.tenantId, 'developer');
    const page = await developer.get('/dashboard/wallet');
    expect(page.status, page.html).toBe(200);
    expect(page.html.match(/data-testid="statement-row"/g)).toHaveLength(3);
    expect(textOf(page.html, 'statement-balance')).toBe(naira(available));
    expect(textOf(page.html, 'wallet-available')).toBe(naira(available));
    expect(page.html).toContain(naira(10_000_000));
    expect(page.html).toContain('href="/dashboard/wallet/statement.csv"');

    // A range the API refuses is its 400 on the page; a later page links back to the newer one.
    const paged = await developer.get('/dashboard/wallet?from=2000-01-01&page=2');
    expect(paged.status, paged.html).toBe(400);
    const today = lagosToday().date;
    const second = await developer.get(`/dashboard/wallet?from=${today}&page=2`);
    expect(second.status).toBe(200);
    expect(second.html).toContain(`href="/dashboard/wallet?from=${today}&amp;page=1"`);

    const csv = await developer.get(`/dashboard/wallet/statement.csv?from=${today}`);
    expect(csv.status, csv.html).toBe(200);
    expect(csv.headers.get('content-type')).toMatch(/^text\/csv/);
    expect(csv.headers.get('content-disposition')).toMatch(/^attachment; filename="statement-test-.*\.csv"$/);
    const lines = csv.html.trim().split('\r\n');
    expect(lines[0]).toBe(
      'created_at,id,entry_id,type,amount_minor,balance_after_minor,reference,resource_type,resource_id',
    );
    const rows = lines.slice(1).map((line) => line.split(','));
    expect(rows).toHaveLength(3);
    expect(rows.reduce((sum, row) => sum + Number(row[4]), 0)).toBe(total);
    expect(Number(rows.at(-1)![5])).toBe(available);
    expect(rows.map((row) => row[3])).toEqual(['wallet_funding', 'transfer_reserve', 'transfer_reserve']);
    expect(rows[1]![6]).toBe(`'${references[0]}`);
    expect(rows[2]![6]).toBe(references[1]);

    // Signed out, the export is a sign-in page, not a statement.
    const anonymous = await fetch(`${stack.gatewayUrl}/dashboard/wallet/statement.csv`, { redirect: 'manual' });
    expect(anonymous.status).toBe(303);
  });
});
