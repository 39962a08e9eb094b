// Account-name resolution (decisions §11, #15 item 5): GET /api/v1/banks/resolve against the real
// sandbox bank — the name it gives, its magic invalid account, bad input naming the field, a bank
// that is down (503, while a name resolved a moment ago is still answered from the cache), and
// live keys without a production provider.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { accountNameFor } from '../../src/sandbox-bank/banks.ts';
import { auth } from '../support/api.ts';
import { createFundedTenant } from '../support/app.ts';
import { type GatewayStack, startGatewayStack } from '../support/stack.ts';

let stack: GatewayStack;
let apiKey: string;

beforeAll(async () => {
  stack = await startGatewayStack({ taskQueue: `banks-resolve-${process.pid}` });
  ({ apiKey } = await createFundedTenant(stack.db.orm));
});
afterAll(async () => {
  await stack?.bank.store.setDown('nip', false);
  await stack?.close();
});

const resolve = (query: string, key: string | null = apiKey) =>
  stack.app.inject({ method: 'GET', url: `/api/v1/banks/resolve?${query}`, headers: key ? auth(key) : {} });

describe('GET /api/v1/banks/resolve', () => {
  it("answers the account's name at its bank, with the bank's name", async () => {
    const response = await resolve('bank_code=044&account_number=0123456789');
    expect(response.statusCode).toBe(200);
    expect(response.json().data).toEqual({
      account_number: '0123456789',
      account_name: accountNameFor('0123456789'),
      bank_code: '044',
      bank_name: 'Access Bank',
    });
    expect(response.json().meta).toMatchObject({ requestId: response.headers['x-request-id'] });
  });

  it('answers 422 INVALID_ACCOUNT for an account the bank does not have', async () => {
    const response = await resolve('bank_code=044&account_number=0000000000');
    expect(response.statusCode).toBe(422);
    expect(response.json().error).toMatchObject({
      code: 'INVALID_ACCOUNT',
      message: 'no account 0000000000 at Access Bank',
    });
  });

  it.each([
    ['bank_code=999&account_number=0123456789', ['bank_code']],
    ['bank_code=044&account_number=012345678', ['account_number']],
    ['bank_code=044&account_number=01234567890', ['account_number']],
    ['bank_code=044&account_number=01234x6789', ['account_number']],
    ['bank_code=044&account_number=%EF%BC%90123456789', ['account_number']],
    ['bank_code=044', ['account_number']],
    ['', ['bank_code', 'account_number']],
    [`bank_code=${'4'.repeat(11)}&account_number=0123456789`, ['bank_code']],
  ])('answers 400 VALIDATION_ERROR to %s, naming %j', async (query, fields) => {
    const response = await resolve(query);
    expect(response.statusCode).toBe(400);
    expect(response.json().error.code).toBe('VALIDATION_ERROR');
    expect(
      response
        .json()
        .error.details.fields.map((field: { path: string }) => field.path)
        .sort(),
    ).toEqual([...fields].sort());
  });

  it('answers 503 with Retry-After while the bank is down, and a name resolved a moment ago from the cache', async () => {
    expect((await resolve('bank_code=058&account_number=5550001111')).statusCode).toBe(200);
    await stack.bank.store.setDown('nip', true);
    try {
      const cached = await resolve('bank_code=058&account_number=5550001111');
      expect(cached.statusCode).toBe(200);
      expect(cached.json().data.account_name).toBe(accountNameFor('5550001111'));
      const fresh = await resolve('bank_code=058&account_number=5550002222');
      expect(fresh.statusCode).toBe(503);
      expect(fresh.json().error.code).toBe('UNAVAILABLE');
      expect(Number(fresh.headers['retry-after'])).toBeGreaterThan(0);
    } finally {
      await stack.bank.store.setDown('nip', false);
    }
    // An outage is never remembered: the account resolves as soon as the bank is back.
    expect((await resolve('bank_code=058&account_number=5550002222')).json().data.account_name).toBe(
      accountNameFor('5550002222'),
    );
  });

  it('answers 401 without a key, and 403 to a live key when no production provider is configured', async () => {
    expect((await resolve('bank_code=044&account_number=0123456789', null)).statusCode).toBe(401);
    const live = await createFundedTenant(stack.db.orm, 0, 'live resolver', 'live');
    const response = await resolve('bank_code=044&account_number=0123456789', live.apiKey);
    expect(response.statusCode).toBe(403);
    expect(response.json().error.code).toBe('FORBIDDEN');
  });
});
