// The console's transfers pages (decisions §22) over HTTP as a signed-in person: the list with its
// filters (status, dates, reference, recipient account), amounts to the kobo, a transfer's page with
// its timeline settling, another tenant's transfer answering 404, and hostile narration and metadata
// only ever escaped. And the API filters they read through: recipient_account, approval,
// expand=details on transfers, data_id on events.
import { describe, expect, it } from 'vitest';
import { timelineOf } from '../../src/console/pages/transfers.ts';
import { naira } from '../../src/console/render.ts';
import { auth, transferBody } from '../support/api.ts';
import { createFundedTenant } from '../support/app.ts';
import { type ConsoleClient, member } from '../support/console.ts';
import { eventually } from '../support/eventually.ts';
import { useGatewayStack } from '../support/stack.ts';

const stack = useGatewayStack({ taskQueue: `console-transfers-${process.pid}`, bank: { completionDelayMs: 50 } });

const HOSTILE_NARRATION = '<img src=x onerror=alert(1)>';
const HOSTILE_METADATA = '"><script>alert(1)</script>';

const call = (method: 'GET' | 'POST', url: string, key: string, payload?: object) =>
  stack.app.inject({ method, url, headers: auth(key), ...(payload === undefined ? {} : { payload }) });

function rows(html: string, testid = 'transfer-row'): string[] {
  return html.split(`data-testid="${testid}"`).slice(1);
}

function expectNoRaw(html: string): void {
  expect(html).not.toContain(HOSTILE_NARRATION);
  expect(html).not.toContain('<script>alert(1)</script>');
  expect(html).not.toContain('<img src=x');
}

describe('console transfers', () => {
  it('lists, filters and shows transfers to the kobo, escaped, and 404s another tenant', async () => {
    const tenant = await createFundedTenant(stack.db.orm, 100_000_000);
    const other = await createFundedTenant(stack.db.orm, 10_000_000);
    const a = await call(
      'POST',
      '/api/v1/transfers',
      tenant.apiKey,
      transferBody(HOSTILE_NARRATION, {
        amount_minor: 1_234_567,
        reference: 'console-a',
        metadata: { note: HOSTILE_METADATA },
      }),
    );
    expect(a.statusCode, a.body).toBe(201);
    const b = await call(
      'POST',
      '/api/v1/transfers',
      tenant.apiKey,
      transferBody('rent', { amount_minor: 50_001, reference: 'console-b', recipient_account: '1111111111' }),
    );
    expect(b.statusCode, b.body).toBe(201);
    const theirs = await call(
      'POST',
      '/api/v1/transfers',
      other.apiKey,
      transferBody('theirs', { amount_minor: 10_000 }),
    );
    expect(theirs.statusCode, theirs.body).toBe(201);
    const first = a.json().data;
    expect(naira(first.amount_minor)).toBe('₦12,345.67');

    const viewer: ConsoleClient = await member(stack.db.orm, stack.gatewayUrl, tenant.ownerTenantId, 'viewer');
    const list = await viewer.get('/dashboard/transfers');
    expect(list.status, list.html).toBe(200);
    expect(rows(list.html)).toHaveLength(2);
    expect(list.html).toContain('₦12,345.67');
    expect(list.html).toContain('₦500.01');
    expect(list.html).toContain(naira(first.fee_minor));
    expect(list.html).toContain(`href="/dashboard/transfers/${first.id}"`);
    expect(list.html).not.toContain('theirs');

    const byAccount = await viewer.get('/dashboard/transfers?recipient=1111111111');
    expect(rows(byAccount.html)).toHaveLength(1);
    expect(byAccount.html).toContain('console-b');
    expect(byAccount.html).toContain('value="1111111111"');
    const byReference = await viewer.get('/dashboard/transfers?reference=console-a');
    expect(rows(byReference.html)).toHaveLength(1);
    expect(byReference.html).toContain('₦12,345.67');
    const none = await viewer.get('/dashboard/transfers?from=2001-01-01&to=2001-01-02');
    expect(rows(none.html)).toHaveLength(0);
    const today = new Date().toISOString().slice(0, 10);
    const dated = await viewer.get(`/dashboard/transfers?from=${today}&to=${today}&status=`);
    expect(rows(dated.html).length).toBeGreaterThanOrEqual(1);
    const badAccount = await viewer.get('/dashboard/transfers?recipient=12');
    expect(badAccount.status).toBe(400);

    const page = await eventually(async () => {
      const shown = await viewer.get(`/dashboard/transfers/${first.id}`);
      expect(shown.status, shown.html).toBe(200);
      return shown.html.includes('data-testid="transfer-status">successful<') ? shown : undefined;
    });
    const html = page.html;
    expect(html).toContain('data-testid="transfer-amount">₦12,345.67<');
    expect(html).toContain(`data-testid="transfer-fee">${naira(first.fee_minor)}<`);
    expect(html).toContain(`data-testid="transfer-total">${naira(first.amount_minor + first.fee_minor)}<`);
    expect(html).toContain('data-kind="created"');
    expect(html).toContain('data-kind="settled"');
    expect(html.indexOf('data-kind="created"')).toBeLessThan(html.indexOf('data-kind="settled"'));
    expect(html).not.toContain('http-equiv="refresh"');
    expect(html).toContain('&lt;img src=x onerror=alert(1)&gt;');
    expect(html).toContain('&lt;script&gt;alert(1)&lt;/script&gt;');
    expectNoRaw(html);
    expectNoRaw((await viewer.get('/dashboard/transfers')).html);

    const foreign = await viewer.get(`/dashboard/transfers/${theirs.json().data.id}`);
    expect(foreign.status).toBe(404);
    expect((await viewer.get('/dashboard/transfers/not%20an%20id')).status).toBe(404);
  });

  it('shows a held transfer refreshing, then approved in the console by the person, submitted and settled', async () => {
    const tenant = await createFundedTenant(stack.db.orm, 100_000_000);
    const policy = await stack.app.inject({
      method: 'PUT',
      url: '/api/v1/transfer-policy',
      headers: auth(tenant.apiKey),
      payload: {
        approval: { above_minor: 1_000_000, new_recipient: false, every_transfer: false },
        approval_expires_in_hours: 24,
        saved_recipients_only: false,
        live_keys_need_ip_allow_list: false,
      },
    });
    expect(policy.statusCode, policy.body).toBe(200);
    const made = await call(
      'POST',
      '/api/v1/transfers',
      tenant.apiKey,
      transferBody('held', { amount_minor: 2_000_001 }),
    );
    expect(made.statusCode, made.body).toBe(201);
    const id = made.json().data.id;
    const approver = await member(stack.db.orm, stack.gatewayUrl, tenant.ownerTenantId, 'approver');

    const held = await eventually(async () => {
      const page = await approver.get(`/dashboard/transfers/${id}`);
      return page.html.includes('data-kind="approval_required"') ? page : undefined;
    });
    expect(held.html).toContain('<meta http-equiv="refresh" content="5">');
    expect(held.html).toContain('data-testid="transfer-status">pending<');
    expect(held.html).toContain('data-testid="approval-status">required<');
    expect(held.html).toContain('data-testid="transfer-amount">₦20,000.01<');
    expect(held.html).not.toContain('data-kind="submitted"');

    const approved = await approver.post(`/dashboard/transfers/${id}/approve`);
    expect(approved.status, approved.html).toBe(303);
    const settled = await eventually(async () => {
      const page = await approver.get(`/dashboard/transfers/${id}`);
      // The page reads the transfer, then its events: a settlement between the two shows on the next read.
      const done = page.html.includes('data-kind="settled"') && page.html.includes('transfer-status">successful<');
      return done ? page : undefined;
    });
    const html = settled.html;
    expect(html).toContain('data-testid="transfer-status">successful<');
    expect(html).not.toContain('http-equiv="refresh"');
    const kinds = [...html.matchAll(/<li data-kind="([a-z_]+)"/g)].map((match) => match[1]);
    expect(kinds).toEqual(['created', 'approval_required', 'approved', 'submitted', 'settled']);
    const approvedLine = html.slice(html.indexOf('data-kind="approved"'), html.indexOf('data-kind="submitted"'));
    expect(approvedLine).toContain(approver.email);
    expect(approvedLine).toContain('(user)');
  });

  it('puts a transfer the policy did not hold at its bank when it was created', () => {
    const pending = { createdAt: '2026-12-01T10:00:00.000Z', approval: null, status: 'pending' } as never;
    expect(timelineOf(pending, [], []).map((entry) => entry.kind)).toEqual(['created', 'submitted']);
  });

  it('shows a reversal after success with its time, from its event or from the transfer alone', () => {
    const transfer = {
      createdAt: '2026-12-01T10:00:00.000Z',
      approval: null,
      status: 'failed',
      failure_reason: 'reversed',
      completedAt: '2026-12-01T10:00:02.000Z',
      reversed_at: '2026-12-01T10:00:04.500Z',
    } as never;
    const events = [
      { id: 'e1', type: 'transfer.settled', created_at: '2026-12-01T10:00:02.000Z', data: {} },
      {
        id: 'e2',
        type: 'transfer.reversed',
        created_at: '2026-12-01T10:00:04.600Z',
        data: { reversed_at: '2026-12-01T10:00:04.500Z', failure_reason: 'reversed' },
      },
    ];
    const timeline = timelineOf(transfer, events, []);
    expect(timeline.map((entry) => [entry.kind, entry.at])).toEqual([
      ['created', '2026-12-01T10:00:00.000Z'],
      ['submitted', '2026-12-01T10:00:00.000Z'],
      ['settled', '2026-12-01T10:00:02.000Z'],
      ['reversed', '2026-12-01T10:00:04.500Z'],
    ]);
    expect(timeline[3]!.text).toMatch(/^Reversed/);
    // Its event not read yet: the transfer's reversed_at still puts it on the timeline, once.
    expect(timelineOf(transfer, events.slice(0, 1), []).filter((entry) => entry.kind === 'reversed')).toEqual([
      expect.objectContaining({ at: '2026-12-01T10:00:04.500Z' }),
    ]);
  });

  it("builds the timeline in time order: approval, its decider, settlement and each event's delivery", () => {
    const approval = {
      status: 'approved' as const,
      expires_at: '2026-12-01T11:00:00.000Z',
      decided_by: { type: 'user', id: 'u1', name: 'ada@example.com' },
      decided_at: '2026-12-01T10:05:00.000Z',
    };
    const transfer = { createdAt: '2026-12-01T10:00:00.000Z', approval, status: 'successful' } as never;
    const timeline = timelineOf(
      transfer,
      [
        { id: 'e3', type: 'transfer.settled', created_at: '2026-12-01T10:06:00.000Z', data: {} },
        { id: 'e2', type: 'transfer.approved', created_at: '2026-12-01T10:05:00.000Z', data: { approval } },
        {
          id: 'e1',
          type: 'transfer.approval_required',
          created_at: '2026-12-01T10:00:00.001Z',
          data: { approval: { ...approval, status: 'required', decided_by: null } },
        },
      ],
      [
        {
          id: 'd1',
          event_id: 'e3',
          event_type: 'transfer.settled',
          status: 'succeeded',
          attempt_count: 2,
          endpoint_id: 'w1',
          created_at: '2026-12-01T10:06:01.000Z',
        },
      ],
    );
    expect(timeline.map((entry) => entry.kind)).toEqual([
      'created',
      'approval_required',
      'approved',
      'submitted',
      'settled',
      'webhook_delivery',
    ]);
    expect(timeline[2]!.text).toContain('ada@example.com (user)');
    expect(timeline[5]).toMatchObject({
      href: '/dashboard/webhooks/deliveries/d1',
      text: expect.stringContaining('2 attempts'),
    });
  });
});

describe('the API filters the console reads through', () => {
  it('filters transfers by recipient account and approval, expands details, and finds events by data id', async () => {
    const tenant = await createFundedTenant(stack.db.orm, 10_000_000);
    const made = await call(
      'POST',
      '/api/v1/transfers',
      tenant.apiKey,
      transferBody('filters', { amount_minor: 20_000, reference: 'filter-a', recipient_account: '2222222222' }),
    );
    expect(made.statusCode, made.body).toBe(201);
    await call('POST', '/api/v1/transfers', tenant.apiKey, transferBody('other', { amount_minor: 20_000 }));
    const id = made.json().data.id;

    const byAccount = (await call('GET', '/api/v1/transfers?recipient_account=2222222222', tenant.apiKey)).json();
    expect(byAccount.data.map((t: { id: string }) => t.id)).toEqual([id]);
    expect(byAccount.data[0]).not.toHaveProperty('fee_minor');
    const bad = await call('GET', '/api/v1/transfers?recipient_account=22', tenant.apiKey);
    expect(bad.statusCode).toBe(400);
    const held = (await call('GET', '/api/v1/transfers?approval=required', tenant.apiKey)).json();
    expect(held.pagination.total).toBe(0);
    expect((await call('GET', '/api/v1/transfers?approval=maybe', tenant.apiKey)).statusCode).toBe(400);

    const expanded = (await call('GET', `/api/v1/transfers/${id}?expand=details`, tenant.apiKey)).json().data;
    expect(expanded).toMatchObject({
      id,
      amount_minor: 20_000,
      fee_minor: made.json().data.fee_minor,
      total_minor: 20_000 + made.json().data.fee_minor,
      narration: 'filters',
      metadata: {},
      recipient_bank: made.json().data.recipient_bank,
      batch_id: null,
    });
    const plain = (await call('GET', `/api/v1/transfers/${id}`, tenant.apiKey)).json().data;
    expect(plain).not.toHaveProperty('narration');
    const listed = (await call('GET', '/api/v1/transfers?expand=details&reference=filter-a', tenant.apiKey)).json();
    expect(listed.data[0]).toMatchObject({ id, narration: 'filters', fee_minor: made.json().data.fee_minor });

    await eventually(async () => {
      const events = (await call('GET', `/api/v1/events?data_id=${id}`, tenant.apiKey)).json().data;
      const types = events.items.map((event: { type: string }) => event.type);
      expect(events.items.every((event: { data: { id: string } }) => event.data.id === id)).toBe(true);
      return types.includes('transfer.created');
    });
  });
});
