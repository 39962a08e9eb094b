// Saved recipients (decisions §20) against the real sandbox bank, worker and database: one name
// enquiry to save an account under its bank's name, the same account again answered from the one
// saved with no enquiry, pages newest first, another tenant's (or mode's) never seen, hostile input
// refused naming the field, delete, and when the account was last paid read from its transfers.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { accountNameFor } from '../../src/sandbox-bank/banks.ts';
import { auth, fieldPaths, transferBody } from '../support/api.ts';
import { createFundedTenant } from '../support/app.ts';
import { eventually } from '../support/eventually.ts';
import { type GatewayStack, startGatewayStack } from '../support/stack.ts';

let stack: GatewayStack;
let apiKey: string;

beforeAll(async () => {
  stack = await startGatewayStack({ taskQueue: `recipients-${process.pid}` });
  ({ apiKey } = await createFundedTenant(stack.db.orm, 10_000_000));
});
afterAll(async () => {
  await stack?.bank.store.setDown('nip', false);
  await stack?.close();
});

const call = (method: 'GET' | 'POST' | 'DELETE', url: string, payload?: object, key: string | null = apiKey) =>
  stack.app.inject({ method, url, headers: key ? auth(key) : {}, ...(payload === undefined ? {} : { payload }) });

const enquiriesFor = (account: string) => stack.bank.nameEnquiries.accounts.filter((seen) => seen === account).length;

describe('saved recipients', () => {
  it('saves an account after one name enquiry, under the name its bank gives; the same account again is the one saved', async () => {
    const created = await call('POST', '/api/v1/recipients', {
      bank_code: '044',
      account_number: '2220001111',
      label: 'Supplier',
      metadata: { vendor: 42 },
    });
    expect(created.statusCode).toBe(201);
    const recipient = created.json().data;
    expect(recipient).toEqual({
      id: expect.any(String),
      bank_code: '044',
      bank_name: 'Access Bank',
      account_number: '2220001111',
      account_name: accountNameFor('2220001111'),
      label: 'Supplier',
      metadata: { vendor: 42 },
      created_at: expect.any(String),
      last_paid_at: null,
    });
    expect(enquiriesFor('2220001111')).toBe(1);

    const again = await call('POST', '/api/v1/recipients', { bank_code: '044', account_number: '2220001111' });
    expect(again.statusCode).toBe(200);
    expect(again.json().data).toEqual(recipient);
    expect(enquiriesFor('2220001111')).toBe(1);

    const read = await call('GET', `/api/v1/recipients/${recipient.id}`);
    expect(read.statusCode).toBe(200);
    expect(read.json().data).toEqual(recipient);
  });

  it('lists a page of the tenant’s recipients, newest first, and none of another tenant’s or of its live mode', async () => {
    const tenant = await createFundedTenant(stack.db.orm);
    const ids: string[] = [];
    for (const account of ['2220002001', '2220002002', '2220002003']) {
      const response = await call(
        'POST',
        '/api/v1/recipients',
        { bank_code: '058', account_number: account },
        tenant.apiKey,
      );
      expect(response.statusCode).toBe(201);
      ids.push(response.json().data.id);
    }
    const page = await call('GET', '/api/v1/recipients?limit=2', undefined, tenant.apiKey);
    expect(page.statusCode).toBe(200);
    expect(page.json().data.items.map((item: { id: string }) => item.id)).toEqual([ids[2], ids[1]]);
    expect(page.json().data.pagination).toEqual({ page: 1, limit: 2, offset: 0, total: 3, pages: 2, has_more: true });
    const next = await call('GET', '/api/v1/recipients?limit=2&page=2', undefined, tenant.apiKey);
    expect(next.json().data.items.map((item: { id: string }) => item.id)).toEqual([ids[0]]);

    // Another tenant, and the same tenant's other mode, neither list nor read nor delete it.
    const other = await call('GET', '/api/v1/recipients');
    expect(other.json().data.items.map((item: { id: string }) => item.id)).not.toContain(ids[0]);
    expect((await call('GET', `/api/v1/recipients/${ids[0]}`)).statusCode).toBe(404);
    expect((await call('DELETE', `/api/v1/recipients/${ids[0]}`)).statusCode).toBe(404);
    const live = await createFundedTenant(stack.db.orm, 0, 'live recipients', 'live');
    const liveList = await call('GET', '/api/v1/recipients', undefined, live.apiKey);
    expect(liveList.statusCode).toBe(200);
    expect(liveList.json().data.items).toEqual([]);
    expect((await call('GET', `/api/v1/recipients/${ids[0]}`, undefined, live.apiKey)).statusCode).toBe(404);
    // A live key reaches no provider without a live connector: nothing is saved.
    const liveSave = await call(
      'POST',
      '/api/v1/recipients',
      { bank_code: '058', account_number: '2220002001' },
      live.apiKey,
    );
    expect(liveSave.statusCode).toBe(403);
    expect(liveSave.json().error.code).toBe('FORBIDDEN');
  });

  it('deletes a recipient, answering it as it was; then it is gone, and saving the account again makes a new one', async () => {
    const created = (
      await call('POST', '/api/v1/recipients', { bank_code: '058', account_number: '2220003001' })
    ).json().data;
    const deleted = await call('DELETE', `/api/v1/recipients/${created.id}`);
    expect(deleted.statusCode).toBe(200);
    expect(deleted.json().data).toEqual(created);
    expect((await call('GET', `/api/v1/recipients/${created.id}`)).statusCode).toBe(404);
    expect((await call('DELETE', `/api/v1/recipients/${created.id}`)).statusCode).toBe(404);
    const again = await call('POST', '/api/v1/recipients', { bank_code: '058', account_number: '2220003001' });
    expect(again.statusCode).toBe(201);
    expect(again.json().data.id).not.toBe(created.id);
    expect(enquiriesFor('2220003001')).toBe(2);
  });

  it('shows when the account was last paid: the completion of the latest transfer to it', async () => {
    const created = (
      await call('POST', '/api/v1/recipients', { bank_code: '058', account_number: '2220004001' })
    ).json().data;
    expect(created.last_paid_at).toBeNull();
    const transfer = await call(
      'POST',
      '/api/v1/transfers',
      transferBody('Paid recipient', { reference: 'recipient-paid-1', recipient_account: '2220004001' }),
    );
    expect(transfer.statusCode).toBe(201);
    const id = transfer.json().data.id;
    const completed = await eventually(async () => {
      const read = (await call('GET', `/api/v1/transfers/${id}`)).json().data;
      return read.status === 'successful' ? read : undefined;
    });
    const paid = (await call('GET', `/api/v1/recipients/${created.id}`)).json().data;
    expect(paid.last_paid_at).toBe(completed.completedAt);
  });

  it('answers 422 INVALID_ACCOUNT for an account the bank does not have, and 503 while the bank is down; nothing is saved', async () => {
    const invalid = await call('POST', '/api/v1/recipients', { bank_code: '044', account_number: '0000000000' });
    expect(invalid.statusCode).toBe(422);
    expect(invalid.json().error).toMatchObject({
      code: 'INVALID_ACCOUNT',
      message: 'no account 0000000000 at Access Bank',
    });
    await stack.bank.store.setDown('nip', true);
    try {
      const down = await call('POST', '/api/v1/recipients', { bank_code: '044', account_number: '2220005001' });
      expect(down.statusCode).toBe(503);
      expect(down.json().error.code).toBe('UNAVAILABLE');
      expect(Number(down.headers['retry-after'])).toBeGreaterThan(0);
    } finally {
      await stack.bank.store.setDown('nip', false);
    }
    const list = (await call('GET', '/api/v1/recipients?limit=100')).json().data.items;
    expect(list.map((item: { account_number: string }) => item.account_number)).not.toContain('0000000000');
    expect(list.map((item: { account_number: string }) => item.account_number)).not.toContain('2220005001');
  });

  it.each([
    [{ bank_code: '999', account_number: '0123456789' }, ['bank_code']],
    [{ bank_code: '044', account_number: '012345678' }, ['account_number']],
    [{ bank_code: '044', account_number: '０123456789' }, ['account_number']],
    [{ bank_code: '044' }, ['account_number']],
    [{}, ['account_number', 'bank_code']],
    [{ bank_code: '044', account_number: '0123456789', label: 'x'.repeat(101) }, ['label']],
    [{ bank_code: '044', account_number: '0123456789', label: '   ' }, ['label']],
    [{ bank_code: '044', account_number: '0123456789', metadata: 'not an object' }, ['metadata']],
    [{ bank_code: '044', account_number: '0123456789', recipient_name: 'Mallory' }, ['recipient_name']],
  ])('refuses %j with 400 naming %j', async (body, fields) => {
    const response = await call('POST', '/api/v1/recipients', body);
    expect(response.statusCode).toBe(400);
    expect(response.json().error.code).toBe('VALIDATION_ERROR');
    expect(fieldPaths(response).sort()).toEqual([...fields].sort());
  });

  it('answers 404 to an id that is not one, and 401 without a key', async () => {
    for (const id of ['not-a-uuid', '00000000-0000-4000-8000-000000000000', "' or 1=1 --"]) {
      const response = await call('GET', `/api/v1/recipients/${encodeURIComponent(id)}`);
      expect(response.statusCode).toBe(404);
      expect(response.json().error.code).toBe('NOT_FOUND');
    }
    expect((await call('GET', '/api/v1/recipients', undefined, null)).statusCode).toBe(401);
  });
});

describe('transfers to saved recipients (recipient_id)', () => {
  const as = (key: string) => ({
    call: (method: 'GET' | 'POST' | 'DELETE', url: string, payload?: object) => call(method, url, payload, key),
  });
  const wallet = async (key: string) => {
    const data = (await call('GET', '/api/v1/wallet', undefined, key)).json().data;
    return { available: data.available_minor, pending: data.pending_minor };
  };
  const transferCount = async (key: string) =>
    (await call('GET', '/api/v1/transfers?limit=1', undefined, key)).json().pagination.total;
  const save = async (key: string, account: string, bankCode = '058') => {
    const response = await call('POST', '/api/v1/recipients', { bank_code: bankCode, account_number: account }, key);
    expect(response.statusCode).toBe(201);
    return response.json().data as { id: string; account_name: string };
  };
  /** The name a recipient is saved under, changed behind the API's back: as if its bank's name had changed since. */
  const renameSaved = (id: string, name: string) =>
    stack.db.orm.em.fork().execute('update recipients set account_name = ? where id = ?', [name, id]);
  const settled = (key: string, id: string) =>
    eventually(async () => {
      const read = (await call('GET', `/api/v1/transfers/${id}`, undefined, key)).json().data;
      return read.status === 'successful' ? read : undefined;
    });

  it('pays a saved recipient under its saved name: 201, amount + fee reserved and then paid, to the kobo', async () => {
    const tenant = await createFundedTenant(stack.db.orm, 1_000_000);
    const { call: tenantCall } = as(tenant.apiKey);
    const recipient = await save(tenant.apiKey, '2220007001');
    expect(recipient.account_name).toBe(accountNameFor('2220007001'));
    const payload = { amount_minor: 250_000, recipient_id: recipient.id, narration: 'Rent', reference: 'saved-pay-1' };
    const created = await tenantCall('POST', '/api/v1/transfers', payload);
    expect(created.statusCode).toBe(201);
    const transfer = created.json().data;
    expect(transfer).toMatchObject({
      amount_minor: 250_000,
      fee_minor: 1_000,
      total_minor: 251_000,
      recipient_account: '2220007001',
      recipient_name: recipient.account_name,
      recipient_bank: 'Guaranty Trust Bank',
      recipient_bank_code: '058',
      status: 'pending',
      reference: 'saved-pay-1',
    });
    expect(await wallet(tenant.apiKey)).toEqual({ available: 749_000, pending: 251_000 });

    // The body as given is the fingerprint: the same again is the transfer (200), another is 409.
    const again = await tenantCall('POST', '/api/v1/transfers', payload);
    expect(again.statusCode).toBe(200);
    expect(again.json().data.id).toBe(transfer.id);
    const other = await tenantCall('POST', '/api/v1/transfers', { ...payload, amount_minor: 250_001 });
    expect(other.statusCode).toBe(409);
    expect(other.json().error).toMatchObject({ code: 'duplicate_reference', details: { transfer_id: transfer.id } });
    const byAccount = await tenantCall('POST', '/api/v1/transfers', {
      amount_minor: 250_000,
      recipient_account: '2220007001',
      recipient_bank_code: '058',
      narration: 'Rent',
      reference: 'saved-pay-1',
    });
    expect(byAccount.statusCode).toBe(409);

    const paid = await settled(tenant.apiKey, transfer.id);
    expect(paid).toMatchObject({ accountNumber: '2220007001', accountName: recipient.account_name, bankCode: '058' });
    expect(await wallet(tenant.apiKey)).toEqual({ available: 749_000, pending: 0 });
    expect(await transferCount(tenant.apiKey)).toBe(1);
    const read = (await tenantCall('GET', `/api/v1/recipients/${recipient.id}`)).json().data;
    expect(read.last_paid_at).toBe(paid.completedAt);
  });

  it('pays under the saved name when the bank’s differs from it only in case and spacing', async () => {
    const tenant = await createFundedTenant(stack.db.orm, 1_000_000);
    const recipient = await save(tenant.apiKey, '2220007002');
    const savedAs = recipient.account_name.toLowerCase().replace(' ', '   ');
    await renameSaved(recipient.id, savedAs);
    const created = await call(
      'POST',
      '/api/v1/transfers',
      { amount_minor: 600_000, recipient_id: recipient.id, narration: 'Stock', reference: 'saved-spacing-1' },
      tenant.apiKey,
    );
    expect(created.statusCode).toBe(201);
    expect(created.json().data).toMatchObject({ recipient_name: savedAs, fee_minor: 2_500, total_minor: 602_500 });
    await settled(tenant.apiKey, created.json().data.id);
    expect(await wallet(tenant.apiKey)).toEqual({ available: 397_500, pending: 0 });
  });

  it('refuses both or neither of recipient_id and the account with 400 naming the field; nothing moves', async () => {
    const tenant = await createFundedTenant(stack.db.orm, 1_000_000);
    const recipient = await save(tenant.apiKey, '2220007003');
    const base = { amount_minor: 100_000, narration: 'Both or neither' };
    const cases: [object, string[], string][] = [
      [
        { ...base, recipient_id: recipient.id, recipient_account: '2220007003', recipient_bank_code: '058' },
        ['recipient_id'],
        'give either recipient_id or recipient_account and recipient_bank_code, not both',
      ],
      [
        { ...base, recipient_id: recipient.id, recipient_bank_code: '058' },
        ['recipient_id'],
        'give either recipient_id or recipient_account and recipient_bank_code, not both',
      ],
      [base, ['recipient_account', 'recipient_bank_code'], 'is required'],
      [{ ...base, recipient_bank_code: '058' }, ['recipient_account'], 'is required'],
    ];
    for (const [payload, fields, message] of cases) {
      const response = await call('POST', '/api/v1/transfers', payload, tenant.apiKey);
      expect({ payload, status: response.statusCode }).toEqual({ payload, status: 400 });
      expect(response.json().error.code).toBe('validation_error');
      expect(fieldPaths(response)).toEqual(fields);
      for (const field of response.json().error.details.fields) expect(field.message).toBe(message);
    }
    expect(await wallet(tenant.apiKey)).toEqual({ available: 1_000_000, pending: 0 });
    expect(await transferCount(tenant.apiKey)).toBe(0);
  });

  it('refuses a recipient_id that is not a saved recipient of the tenant (another tenant’s, deleted, unknown, not a uuid) with 400 naming it; nothing moves', async () => {
    const tenant = await createFundedTenant(stack.db.orm, 1_000_000);
    const stranger = await createFundedTenant(stack.db.orm, 0);
    const theirs = await save(stranger.apiKey, '2220007004');
    const deleted = await save(tenant.apiKey, '2220007005');
    expect((await call('DELETE', `/api/v1/recipients/${deleted.id}`, undefined, tenant.apiKey)).statusCode).toBe(200);
    const enquiriesBefore = enquiriesFor('2220007004') + enquiriesFor('2220007005');
    for (const id of [theirs.id, deleted.id, '00000000-0000-4000-8000-000000000000', 'not-a-uuid', "' or 1=1 --"]) {
      const response = await call(
        'POST',
        '/api/v1/transfers',
        { amount_minor: 100_000, recipient_id: id, narration: 'Not mine' },
        tenant.apiKey,
      );
      expect({ id, status: response.statusCode }).toEqual({ id, status: 400 });
      expect(response.json().error).toMatchObject({
        code: 'validation_error',
        details: {
          fields: [{ path: 'recipient_id', message: 'is not a saved recipient (GET /api/v1/recipients lists them)' }],
        },
      });
    }
    expect(enquiriesFor('2220007004') + enquiriesFor('2220007005')).toBe(enquiriesBefore);
    expect(await wallet(tenant.apiKey)).toEqual({ available: 1_000_000, pending: 0 });
    expect(await transferCount(tenant.apiKey)).toBe(0);
    // The recipient is still its tenant's to pay (its wallet is empty: refused for that, not for the id).
    const own = await call(
      'POST',
      '/api/v1/transfers',
      { amount_minor: 100_000, recipient_id: theirs.id, narration: 'Mine' },
      stranger.apiKey,
    );
    expect(own.statusCode).toBe(422);
    expect(own.json().error.code).toBe('insufficient_balance');
  });

  it('refuses a saved recipient whose bank now gives another name: 422 invalid_account {saved_name, current_name}, the wallet untouched', async () => {
    const tenant = await createFundedTenant(stack.db.orm, 1_000_000);
    const recipient = await save(tenant.apiKey, '2220007006');
    const current = accountNameFor('2220007006');
    expect(recipient.account_name).toBe(current);
    await renameSaved(recipient.id, 'BOLA ADEYEMI');
    const enquiriesBefore = enquiriesFor('2220007006');
    const payload = { amount_minor: 400_000, recipient_id: recipient.id, narration: 'Renamed', reference: 'renamed-1' };
    const refused = await call('POST', '/api/v1/transfers', payload, tenant.apiKey);
    expect(refused.statusCode).toBe(422);
    expect(refused.json()).toEqual({
      success: false,
      error: {
        code: 'invalid_account',
        status: 422,
        message: expect.stringContaining('BOLA ADEYEMI'),
        details: { saved_name: 'BOLA ADEYEMI', current_name: current },
      },
    });
    expect(refused.json().error.message).toContain(current);
    // A fresh name enquiry was made, and nothing was reserved or recorded.
    expect(enquiriesFor('2220007006')).toBe(enquiriesBefore + 1);
    expect(await wallet(tenant.apiKey)).toEqual({ available: 1_000_000, pending: 0 });
    expect(await transferCount(tenant.apiKey)).toBe(0);
    // The refusal left the reference free: once the saved name is the bank's again, it pays.
    await renameSaved(recipient.id, current);
    const paid = await call('POST', '/api/v1/transfers', payload, tenant.apiKey);
    expect(paid.statusCode).toBe(201);
    expect(paid.json().data).toMatchObject({ recipient_name: current, total_minor: 401_000 });
    expect(await wallet(tenant.apiKey)).toEqual({ available: 599_000, pending: 401_000 });
    await settled(tenant.apiKey, paid.json().data.id);
    expect(await wallet(tenant.apiKey)).toEqual({ available: 599_000, pending: 0 });
  });
});
