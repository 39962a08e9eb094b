// The console's approvals queue, batches and recipients (decisions §20, §22) over HTTP, as a
// browser without JavaScript uses them: an approver approves a held transfer through the queue and
// it settles, the audit log naming the person; a viewer sees no button and a forged decision is
// refused by the API; another tenant's ids are no page; in live mode a decision needs a fresh
// authenticator code, checked before the API is called. Also the API's batch list these pages read.
import { randomInt, randomUUID } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { auth } from '../support/api.ts';
import { createFundedTenant } from '../support/app.ts';
import { type ConsoleClient, member } from '../support/console.ts';
import { eventually } from '../support/eventually.ts';
import { useGatewayStack } from '../support/stack.ts';

const stack = useGatewayStack({ taskQueue: `console-approvals-${process.pid}`, bank: { completionDelayMs: 50 } });

const WALLET = 100_000_000;
/** ₦150,000.37 (fee ₦50.00): held, since the policy holds every transfer. */
const AMOUNT = 15_000_037;
const HOSTILE_IMG = '<img src=x onerror=alert(1)>';
const HOSTILE_SCRIPT = '"><script>alert(1)</script>';

const call = (method: 'GET' | 'POST' | 'PUT', url: string, key: string, payload?: object) =>
  stack.app.inject({ method, url, headers: auth(key), ...(payload === undefined ? {} : { payload }) });

/** An account number of this test's own: never paid before. */
const ownAccount = () => `5${String(randomInt(0, 1_000_000_000)).padStart(9, '0')}`;

async function heldTenant() {
  const { tenantId, apiKey } = await createFundedTenant(stack.db.orm, WALLET);
  const put = await call('PUT', '/api/v1/transfer-policy', apiKey, {
    approval: { above_minor: null, new_recipient: false, every_transfer: true },
    approval_expires_in_hours: 24,
    saved_recipients_only: false,
    live_keys_need_ip_allow_list: false,
  });
  expect(put.statusCode, put.body).toBe(200);
  return { tenantId, apiKey };
}

async function heldTransfer(apiKey: string, fields: Record<string, unknown> = {}) {
  const made = await call('POST', '/api/v1/transfers', apiKey, {
    amount_minor: AMOUNT,
    recipient_account: ownAccount(),
    recipient_bank_code: '058',
    narration: 'Payroll',
    reference: `held-${randomUUID().slice(0, 8)}`,
    ...fields,
  });
  expect(made.statusCode, made.body).toBe(201);
  expect(made.json().data.approval.status).toBe('required');
  return made.json().data as { id: string; reference: string; fee_minor: number };
}

async function heldBatch(apiKey: string) {
  const made = await call('POST', '/api/v1/transfers/bulk', apiKey, {
    batch_reference: `batch-${randomUUID().slice(0, 8)}`,
    transfers: [
      { amount_minor: 100_001, recipient_account: ownAccount(), recipient_bank_code: '058', narration: 'one' },
      { amount_minor: 250_050, recipient_account: ownAccount(), recipient_bank_code: '058', narration: 'two' },
    ],
  });
  expect(made.statusCode, made.body).toBe(202);
  return made.json().data as { id: string; batch_reference: string };
}

const approvalRows = (html: string) => html.match(/data-testid="approval-row"/g)?.length ?? 0;

async function transferOf(apiKey: string, id: string) {
  return (await call('GET', `/api/v1/transfers/${id}`, apiKey)).json().data;
}

describe('GET /api/v1/transfers/bulk', () => {
  it("lists the tenant's batches newest first, paged, with an approval filter; never another tenant's", async () => {
    const { apiKey } = await heldTenant();
    const first = await heldBatch(apiKey);
    const second = await heldBatch(apiKey);
    const other = await createFundedTenant(stack.db.orm, WALLET);
    const list = await call('GET', '/api/v1/transfers/bulk?limit=1', apiKey);
    expect(list.statusCode, list.body).toBe(200);
    expect(list.json().pagination).toEqual({ page: 1, limit: 1, total: 2, totalPages: 2 });
    expect(list.json().data.map((b: { id: string }) => b.id)).toEqual([second.id]);
    expect(list.json().data[0]).toMatchObject({
      total_count: 2,
      total_amount_minor: 350_051,
      total_fee_minor: 2 * 1_000,
      approval: { status: 'required' },
    });
    const page2 = await call('GET', '/api/v1/transfers/bulk?limit=1&page=2', apiKey);
    expect(page2.json().data.map((b: { id: string }) => b.id)).toEqual([first.id]);
    expect((await call('GET', '/api/v1/transfers/bulk?approval=required', apiKey)).json().pagination.total).toBe(2);
    expect((await call('GET', '/api/v1/transfers/bulk?approval=approved', apiKey)).json().data).toEqual([]);
    expect((await call('GET', '/api/v1/transfers/bulk?approval=maybe', apiKey)).statusCode).toBe(400);
    expect((await call('GET', '/api/v1/transfers/bulk', other.apiKey)).json().data).toEqual([]);
  });
});

describe('the approvals queue', () => {
  it('an approver approves a held transfer, it settles, and the audit log names the person', async () => {
    const { tenantId, apiKey } = await heldTenant();
    const transfer = await heldTransfer(apiKey, {
      narration: HOSTILE_IMG,
      metadata: { note: HOSTILE_SCRIPT },
    });
    const batch = await heldBatch(apiKey);
    const approver = await member(stack.db.orm, stack.gatewayUrl, tenantId, 'approver');
    // The batch's items become held transfers as its workflow takes them: wait for both.
    await eventually(
      async () => (await call('GET', '/api/v1/transfers?approval=required', apiKey)).json().pagination.total === 3,
    );

    const queue = await approver.get('/dashboard/approvals');
    expect(queue.status).toBe(200);
    expect(approvalRows(queue.html)).toBe(2);
    // The batch's items are held with it: listed, decided only with their batch (no buttons of their own).
    expect(queue.html.match(/data-testid="approval-batch-item"/g)).toHaveLength(2);
    expect(queue.html.match(/>Approve<\/button>/g)).toHaveLength(2);
    expect(queue.html).toContain('₦150,000.37');
    expect(queue.html).toContain('₦50.00');
    expect(queue.html).toContain('₦3,500.51');
    expect(queue.html).toContain(`action="/dashboard/transfers/${transfer.id}/approve"`);
    expect(queue.html).toContain(`action="/dashboard/batches/${batch.id}/reject"`);
    expect(queue.html).toContain('>Approve</button>');
    // No live mode here: no code is asked for.
    expect(queue.html).not.toContain('name="code"');
    // The hostile narration is shown, escaped; never raw.
    expect(queue.html).toContain('&lt;img src=x onerror=alert(1)&gt;');
    expect(queue.html).not.toContain(HOSTILE_IMG);

    const approved = await approver.post(`/dashboard/transfers/${transfer.id}/approve`);
    expect(approved.status, approved.html).toBe(303);
    expect(approved.location).toBe('/dashboard/approvals?notice=approved');
    const after = await approver.get(approved.location!);
    expect(after.html).toContain('Approved: it goes on to the bank.');
    expect(approvalRows(after.html)).toBe(1);

    const settled = await eventually(async () => {
      const read = await transferOf(apiKey, transfer.id);
      return read.status === 'successful' ? read : undefined;
    });
    expect(settled.approval).toMatchObject({ status: 'approved', decided_by: { type: 'user' } });

    const audit = await call('GET', '/api/v1/audit-log?action=transfer.approved', apiKey);
    const entries = audit.json().data.items as { actor: { type: string }; target: { id: string } }[];
    expect(entries).toHaveLength(1);
    expect(entries[0]!.target.id).toBe(transfer.id);
    expect(entries[0]!.actor.type).toBe('user');
    expect(JSON.stringify(entries[0]!.actor)).toContain(approver.email);

    // The batch, rejected with a reason: every item fails and the queue is empty.
    const rejected = await approver.post(`/dashboard/batches/${batch.id}/reject`, { reason: 'not this month' });
    expect(rejected.status, rejected.html).toBe(303);
    expect(rejected.location).toBe('/dashboard/approvals?notice=rejected');
    const batchRead = (await call('GET', `/api/v1/transfers/bulk/${batch.id}`, apiKey)).json().data;
    expect(batchRead.approval).toMatchObject({ status: 'rejected', decided_by: { type: 'user' } });
    const empty = await approver.get('/dashboard/approvals?notice=rejected');
    expect(empty.html).toContain('Rejected: its amount and fee are back in the wallet.');
    expect(approvalRows(empty.html)).toBe(0);
  });

  it('a viewer sees no decision button, and a forged approval is refused 403 with the transfer still held', async () => {
    const { tenantId, apiKey } = await heldTenant();
    const transfer = await heldTransfer(apiKey);
    const viewer = await member(stack.db.orm, stack.gatewayUrl, tenantId, 'viewer');
    const queue = await viewer.get('/dashboard/approvals');
    expect(queue.status).toBe(200);
    expect(approvalRows(queue.html)).toBe(1);
    expect(queue.html).toContain('₦150,000.37');
    expect(queue.html).not.toContain('>Approve</button>');
    expect(queue.html).not.toContain('/approve"');

    const forged = await viewer.post(`/dashboard/transfers/${transfer.id}/approve`);
    expect(forged.status).toBe(403);
    expect((await transferOf(apiKey, transfer.id)).approval.status).toBe('required');
    // Without the page's CSRF token the form is refused before anything.
    const noToken = await viewer.post(`/dashboard/transfers/${transfer.id}/approve`, {}, { csrf: false });
    expect(noToken.status).toBe(403);
  });

  it("another tenant's transfer or batch is no page and no decision", async () => {
    const { apiKey } = await heldTenant();
    const transfer = await heldTransfer(apiKey);
    const batch = await heldBatch(apiKey);
    const other = await heldTenant();
    const stranger = await member(stack.db.orm, stack.gatewayUrl, other.tenantId, 'approver');
    expect((await stranger.get('/dashboard/approvals')).html).not.toContain(transfer.id);
    expect((await stranger.post(`/dashboard/transfers/${transfer.id}/approve`)).status).toBe(404);
    expect((await stranger.post(`/dashboard/batches/${batch.id}/reject`)).status).toBe(404);
    expect((await stranger.get(`/dashboard/batches/${batch.id}`)).status).toBe(404);
    expect((await stranger.post('/dashboard/transfers/not%20an%20id/approve')).status).toBe(404);
    expect((await transferOf(apiKey, transfer.id)).approval.status).toBe('required');
  });

  it('in live mode a decision needs a fresh authenticator code, checked before the API is called', async () => {
    const { tenantId } = await heldTenant();
    const live = await stack.admin('key', 'create', '--tenant', tenantId, '--live');
    expect(live.code).toBe(0);
    const owner = await member(stack.db.orm, stack.gatewayUrl, tenantId, 'owner');
    await owner.get('/dashboard/approvals');
    const switched = await owner.post('/dashboard/mode', { mode: 'live', back: '/dashboard/approvals' });
    expect(switched.status).toBe(303);
    const queue = await owner.get('/dashboard/approvals');
    expect(queue.status).toBe(200);
    expect(queue.html).toContain('Live data');

    // An id no transfer has: had the API been called it would answer 404, so a 403 is the code check.
    const missing = randomUUID();
    const withoutCode = await owner.post(`/dashboard/transfers/${missing}/approve`);
    expect(withoutCode.status).toBe(403);
    expect(withoutCode.html).toContain('data-testid="approval-error"');
    expect(withoutCode.html).toContain('Enter the code from your authenticator app');
    const wrong = await owner.post(`/dashboard/transfers/${missing}/approve`, { code: '000000' });
    expect(wrong.status).toBe(403);
    expect(wrong.html).toContain('wrong or was already used');

    const code = await owner.code();
    const accepted = await owner.post(`/dashboard/transfers/${missing}/approve`, { code });
    expect(accepted.status).toBe(404);
    const reused = await owner.post(`/dashboard/batches/${missing}/reject`, { code });
    expect(reused.status).toBe(403);
    expect(reused.html).toContain('already used');
  });
});

describe('batches and recipients pages', () => {
  it('lists batches and shows one with its totals and items, to the kobo', async () => {
    const { tenantId, apiKey } = await heldTenant();
    const batch = await heldBatch(apiKey);
    const viewer: ConsoleClient = await member(stack.db.orm, stack.gatewayUrl, tenantId, 'viewer');
    const list = await viewer.get('/dashboard/batches');
    expect(list.status).toBe(200);
    expect(list.html.match(/data-testid="batch-row"/g)).toHaveLength(1);
    expect(list.html).toContain(batch.batch_reference);
    expect(list.html).toContain('₦3,500.51');
    expect((await viewer.get('/dashboard/batches?approval=approved')).html).toContain('data-testid="no-batches"');

    const page = await viewer.get(`/dashboard/batches/${batch.id}`);
    expect(page.status).toBe(200);
    expect(page.html).toMatch(/data-testid="batch-amount">₦3,500.51</);
    expect(page.html).toMatch(/data-testid="batch-fees">₦20.00</);
    expect(page.html).toMatch(/data-testid="batch-total">₦3,520.51</);
    await eventually(async () => {
      const again = await viewer.get(`/dashboard/batches/${batch.id}`);
      return again.html.match(/data-testid="batch-item-row"/g)?.length === 2;
    });
    expect((await viewer.get(`/dashboard/batches/${randomUUID()}`)).status).toBe(404);
  });

  it('lists saved recipients with a hostile label escaped', async () => {
    const { tenantId, apiKey } = await heldTenant();
    const saved = await call('POST', '/api/v1/recipients', apiKey, {
      bank_code: '058',
      account_number: '0123456789',
      label: `${HOSTILE_SCRIPT}${HOSTILE_IMG}`,
    });
    expect(saved.statusCode, saved.body).toBe(201);
    const viewer = await member(stack.db.orm, stack.gatewayUrl, tenantId, 'viewer');
    const page = await viewer.get('/dashboard/recipients');
    expect(page.status).toBe(200);
    expect(page.html.match(/data-testid="recipient-row"/g)).toHaveLength(1);
    expect(page.html).toContain('0123456789');
    expect(page.html).toContain('&lt;script&gt;alert(1)&lt;/script&gt;');
    expect(page.html).toContain('&lt;img src=x onerror=alert(1)&gt;');
    expect(page.html).not.toContain('<script>');
    expect(page.html).not.toContain(HOSTILE_IMG);
    expect(page.html).toMatch(/data-testid="recipient-last-paid">never</);
  });
});
