// The sandbox connector (the generic contract's client) against the real sandbox bank over HTTP:
// every magic account, the flaky bank's two transient failures, a provider taken down and brought
// back, virtual-account allocation, and Standard Webhooks callbacks arriving at the gateway (and
// forged ones refused).
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parse as parseYaml } from 'yaml';
import { Webhook } from 'standardwebhooks';
import type { FastifyInstance } from 'fastify';
import { CallbackDispatcher, type ProviderCallback } from '../../src/provider-callbacks/dispatcher.ts';
import { createSandboxConnector } from '../../src/connectors/sandbox/index.ts';
import type { BankSwitch, VirtualAccountProvider } from '../../src/connectors/capabilities.ts';
import type { ProviderError } from '../../src/connectors/capabilities.ts';
import { providerError } from '../support/provider-error.ts';
import { buildSandboxBank, callbackHeaders as bankCallbackHeaders } from '../../src/sandbox-bank/app.ts';
import { contractBody } from '../../src/sandbox-bank/runner.ts';
import { isValidNuban } from '../../src/sandbox-bank/banks.ts';
import { PROJECT_ROOT } from '../../src/stack/tools.ts';
import {
  TEST_CALLBACK_SECRET,
  TEST_SANDBOX_BANK_API_KEY,
  type TestApp,
  createFundedTenant,
  createTestApp,
} from '../support/app.ts';
import { callbackHeaders } from '../support/callbacks.ts';
import { type TestDatabase, createTestDatabase } from '../support/database.ts';
import { eventually } from '../support/eventually.ts';
import { freePort } from '../support/ports.ts';
import { type TestSandboxBank, startSandboxBank } from '../support/sandbox-bank.ts';

let db: TestDatabase;
let gateway: TestApp;
let app: FastifyInstance;
let bank: TestSandboxBank;
let bankSwitch: BankSwitch;
const received: ProviderCallback[] = [];

/** The sandbox connector at `baseUrl`, with the test bank's API key (and control token, if given). */
function connectorAt(baseUrl: string, timeoutMs: number, controlToken?: string) {
  return createSandboxConnector({
    sandboxBankUrl: baseUrl,
    PROVIDER_TIMEOUT_MS: timeoutMs,
    sandboxBankApiKey: TEST_SANDBOX_BANK_API_KEY,
    providerCallbackSecret: TEST_CALLBACK_SECRET,
    ...(controlToken ? { SANDBOX_BANK_CONTROL_TOKEN: controlToken } : {}),
  });
}

/** One of the sandbox bank's virtual-account providers, through the connector. */
function virtualAccounts(name: string, controlToken?: string): VirtualAccountProvider {
  return connectorAt(bank.url, 2_000, controlToken).virtualAccounts!.find((route) => route.provider.name === name)!
    .provider;
}

beforeAll(async () => {
  db = await createTestDatabase();
  const bankPort = await freePort();
  const dispatcher = new CallbackDispatcher();
  gateway = await createTestApp(db.orm, { sandboxBankUrl: `http://127.0.0.1:${bankPort}`, dispatcher });
  // Observe what reaches the dispatcher, in place of the gateway's own handlers (tested elsewhere).
  for (const type of ['transfer.successful', 'transfer.failed', 'transfer.reversed', 'virtual_account.credit']) {
    dispatcher.on(type, async (callback) => {
      received.push(callback);
      return `seen ${callback.type}`;
    });
  }
  app = gateway.app;
  const gatewayUrl = await app.listen({ host: '127.0.0.1', port: 0 });
  bank = await startSandboxBank({
    databaseUrl: db.url,
    gatewayUrl,
    port: bankPort,
    completionDelayMs: 150,
    hangMs: 1_500,
  });
  bankSwitch = connectorAt(bank.url, 500).transfers!;
});
afterAll(async () => {
  await bank?.close();
  await gateway?.close();
  await db?.drop();
});

/** What a ProviderError makes of the bank's answer: its outcome, whether it is transient, the HTTP status, the bank's code. */
const verdict = (error: ProviderError) => [error.outcome, error.transient, error.httpStatus, error.rawCode];

const transferInput = (reference: string, accountNumber: string) => ({
  reference,
  amountMinor: 1_234_500,
  bankCode: '058',
  accountNumber,
  accountName: 'TEST RECIPIENT',
  narration: 'sandbox test',
});

const callbackFor = (reference: string) => () => received.find((callback) => callback.data.reference === reference);

describe('name enquiry', () => {
  it('refuses 0000000000 as a definitive invalid_account (404 invalid_account), keeping the code', async () => {
    const error = await providerError(bankSwitch.nameEnquiry('058', '0000000000'));
    expect(error).toMatchObject({
      outcome: 'invalid_account',
      transient: false,
      rawCode: 'invalid_account',
      httpStatus: 404,
    });
    expect(error.notTaken).toBe(false);
  });

  it('returns the same account name for the same number', async () => {
    const first = await bankSwitch.nameEnquiry('044', '0123456789');
    const second = await bankSwitch.nameEnquiry('058', '0123456789');
    expect(first.accountName).toMatch(/^[A-Z]+ [A-Z]+$/);
    expect(second.accountName).toBe(first.accountName);
    expect((await bankSwitch.nameEnquiry('044', '0123456780')).accountName).not.toBe(first.accountName);
  });
});

describe('transfers', () => {
  it('accepts an ordinary account, completes it in about a second, and calls the gateway back', async () => {
    const reference = `ok-${Date.now()}`;
    const accepted = await bankSwitch.submitTransfer(transferInput(reference, '0123456789'));
    expect(accepted).toEqual({
      status: 'pending',
      sessionId: expect.stringMatching(/^\d{30}$/),
      rawCode: '09',
      message: 'Transaction in progress',
    });

    const callback = await eventually(callbackFor(reference));
    expect(callback).toMatchObject({ provider: 'sandbox', type: 'transfer.successful' });
    expect(callback.eventId).toMatch(/^sbx_evt_[0-9a-f]{32}$/);
    expect(callback.data).toEqual({
      reference,
      session_id: accepted.sessionId,
      response_code: '00',
      message: 'Approved or completed successfully',
    });
    expect(await bankSwitch.transferStatus(reference)).toEqual({
      status: 'successful',
      rawCode: '00',
      sessionId: accepted.sessionId,
      message: 'Approved or completed successfully',
    });

    // The same reference submitted again is the same transfer, not a second one: answered final now.
    const again = await bankSwitch.submitTransfer(transferInput(reference, '0123456789'));
    expect(again).toMatchObject({ status: 'successful', sessionId: accepted.sessionId });
    // …and with another amount, the contract's 409: definitive, yet no proof the bank did not take it.
    const conflict = await providerError(
      bankSwitch.submitTransfer({ ...transferInput(reference, '0123456789'), amountMinor: 1_234_501 }),
    );
    expect(verdict(conflict)).toEqual(['rejected', false, 409, 'conflict']);
    expect(conflict.notTaken).toBe(false);
  });

  it('refuses 0000000000 at submission with 422, definitive and not taken (no status to query)', async () => {
    const reference = `invalid-${Date.now()}`;
    const refused = await providerError(bankSwitch.submitTransfer(transferInput(reference, '0000000000')));
    expect(verdict(refused)).toEqual(['invalid_account', false, 422, 'invalid_account']);
    expect(refused.notTaken).toBe(true);
    expect(await providerError(bankSwitch.transferStatus(reference))).toMatchObject({ outcome: 'not_found' });
  });

  it('accepts 1111111111 and then fails it at the bank', async () => {
    const reference = `fail-${Date.now()}`;
    expect((await bankSwitch.submitTransfer(transferInput(reference, '1111111111'))).status).toBe('pending');
    const callback = await eventually(callbackFor(reference));
    expect(callback.type).toBe('transfer.failed');
    expect(callback.data).toMatchObject({ response_code: '57', message: 'Transaction not permitted to sender' });
    expect(await bankSwitch.transferStatus(reference)).toMatchObject({ status: 'failed', rawCode: '57' });
  });

  it('holds 2222222222 pending until an operator confirms or fails it', async () => {
    const held = `held-${Date.now()}`;
    const heldToo = `held2-${Date.now()}`;
    await bankSwitch.submitTransfer(transferInput(held, '2222222222'));
    await bankSwitch.submitTransfer(transferInput(heldToo, '2222222222'));
    // A witness submitted after them completes and calls back: by then the held ones would have too.
    const witness = `witness-${Date.now()}`;
    await bankSwitch.submitTransfer(transferInput(witness, '0123456789'));
    await eventually(callbackFor(witness));
    expect((await bankSwitch.transferStatus(held)).status).toBe('pending');
    expect(callbackFor(held)()).toBeUndefined();

    expect(await bank.control(`/control/transfers/${held}/confirm`)).toEqual({
      status: 200,
      body: { reference: held, status: 'successful' },
    });
    expect((await eventually(callbackFor(held))).type).toBe('transfer.successful');
    expect((await bank.control(`/control/transfers/${heldToo}/fail`)).status).toBe(200);
    expect((await eventually(callbackFor(heldToo))).type).toBe('transfer.failed');
    // Settled transfers cannot be settled again.
    expect((await bank.control(`/control/transfers/${held}/fail`)).status).toBe(409);
    expect((await bankSwitch.transferStatus(held)).status).toBe('successful');
  });

  it('takes 3333333333 and then answers 500: its answer is lost, its status query finds it, and it completes', async () => {
    const reference = `answer-lost-${Date.now()}`;
    const lost = await providerError(bankSwitch.submitTransfer(transferInput(reference, '3333333333')));
    expect(verdict(lost)).toEqual(['unavailable', true, 500, 'system_malfunction']);
    expect(lost.ambiguous).toBe(true);
    expect((await bankSwitch.transferStatus(reference)).status).toBe('pending');
    expect((await eventually(callbackFor(reference))).type).toBe('transfer.successful');
  });

  it('times out on 6666666666 without taking it (not found), and takes it on the next submission', async () => {
    const reference = `untaken-${Date.now()}`;
    const first = await providerError(bankSwitch.submitTransfer(transferInput(reference, '6666666666')));
    expect(first).toMatchObject({ outcome: 'timeout', transient: true, ambiguous: true });
    expect(await providerError(bankSwitch.transferStatus(reference))).toMatchObject({
      outcome: 'not_found',
      transient: false,
    });
    expect((await bankSwitch.submitTransfer(transferInput(reference, '6666666666'))).status).toBe('pending');
    expect((await eventually(callbackFor(reference))).type).toBe('transfer.successful');
  });

  it('completes 5555555555, then reverses it about 2 s later: its callback and its status query agree (v1.1)', async () => {
    const reference = `reversed-${Date.now()}`;
    const accepted = await bankSwitch.submitTransfer(transferInput(reference, '5555555555'));
    expect(accepted.status).toBe('pending');
    const completed = await eventually(callbackFor(reference));
    expect(completed.type).toBe('transfer.successful');
    const succeededAt = Date.now();
    expect((await bankSwitch.transferStatus(reference)).status).toBe('successful');
    const reversal = await eventually(() =>
      received.find((callback) => callback.data.reference === reference && callback.type === 'transfer.reversed'),
    );
    // About 2 s after its success (the bank's runner ticks every 200 ms).
    expect(Date.now() - succeededAt).toBeGreaterThan(1_000);
    expect(reversal.eventId).not.toBe(completed.eventId);
    expect(reversal.data).toEqual({
      reference,
      session_id: accepted.sessionId,
      response_code: '00',
      message: 'Reversed by the beneficiary bank',
    });
    expect(await bankSwitch.transferStatus(reference)).toEqual({
      status: 'reversed',
      sessionId: accepted.sessionId,
      rawCode: '00',
      message: 'Reversed by the beneficiary bank',
    });
    // Once reversed, never again: the control route refuses it (409), and no second callback goes out.
    expect((await bank.control(`/control/transfers/${reference}/reverse`)).status).toBe(409);
    // Listed failed on the day it was reversed, as the generic contract's statement has it.
    const today = new Date().toISOString().slice(0, 10);
    const statement = await bank.call('GET', `/statements/settlement/${today}`);
    expect(
      (statement.body.items as { reference: string; status: string }[]).filter((item) => item.reference === reference),
    ).toEqual([expect.objectContaining({ reference, status: 'failed', amount_minor: 1_234_500 })]);
    expect(
      received.filter((callback) => callback.data.reference === reference).map((callback) => callback.type),
    ).toEqual(['transfer.successful', 'transfer.reversed']);
  });

  it('reverses a completed transfer on its control route, and refuses one still pending (409) or unknown (404)', async () => {
    const held = `reverse-held-${Date.now()}`;
    await bankSwitch.submitTransfer(transferInput(held, '2222222222'));
    expect((await bank.control(`/control/transfers/${held}/reverse`)).status).toBe(409);
    expect((await bank.control('/control/transfers/never-sent/reverse')).status).toBe(404);
    expect((await bank.control(`/control/transfers/${held}/confirm`)).status).toBe(200);
    expect(await bank.control(`/control/transfers/${held}/reverse`)).toEqual({
      status: 200,
      body: { reference: held, status: 'reversed' },
    });
    await eventually(() =>
      received.find((callback) => callback.data.reference === held && callback.type === 'transfer.reversed'),
    );
    expect((await bankSwitch.transferStatus(held)).status).toBe('reversed');
  });

  it('answers a status query for an unknown reference with a definitive not_found', async () => {
    const error = await providerError(bankSwitch.transferStatus('never-sent'));
    expect(error).toMatchObject({ outcome: 'not_found', transient: false, rawCode: 'not_found', httpStatus: 404 });
  });
});

describe('a provider taken down', () => {
  it('makes calls fail as transient, and they succeed again once it is back', async () => {
    expect((await bank.control('/control/providers/nip/down')).status).toBe(200);
    try {
      const error = await providerError(bankSwitch.nameEnquiry('058', '0123456789'));
      expect(error).toMatchObject({ outcome: 'unavailable', transient: true, httpStatus: 503, rawCode: 'unavailable' });
      const submit = await providerError(bankSwitch.submitTransfer(transferInput(`down-${Date.now()}`, '0123456789')));
      expect(submit.transient).toBe(true);
    } finally {
      expect((await bank.control('/control/providers/nip/up')).status).toBe(200);
    }
    expect((await bankSwitch.nameEnquiry('058', '0123456789')).accountName).toBeTruthy();
  });

  it('is a transient network error when nothing listens at all', async () => {
    const nowhere = connectorAt('http://127.0.0.1:9', 500).transfers!;
    expect(await providerError(nowhere.nameEnquiry('058', '0123456789'))).toMatchObject({
      outcome: 'network_error',
      transient: true,
    });
  });
});

describe('virtual accounts', () => {
  it('allocates NUBAN-shaped accounts, unique per provider, once per reference', async () => {
    const wema = virtualAccounts('wema');
    const providus = virtualAccounts('providus');
    const a = await wema.allocate({ reference: 'va-1', accountName: 'Ada Obi', customerId: 'cus_1' });
    const b = await wema.allocate({ reference: 'va-2', accountName: 'Ada Obi', customerId: 'cus_1' });
    const again = await wema.allocate({ reference: 'va-1', accountName: 'Ada Obi', customerId: 'cus_1' });
    const c = await providus.allocate({ reference: 'va-1', accountName: 'Ada Obi', customerId: 'cus_1' });
    expect(a).toMatchObject({ bankCode: '035', bankName: 'Wema Bank' });
    expect(c).toMatchObject({ bankCode: '101', bankName: 'Providus Bank' });
    for (const account of [a, b, c]) expect(isValidNuban(account.bankCode, account.accountNumber)).toBe(true);
    expect(b.accountNumber).not.toBe(a.accountNumber);
    expect(again.accountNumber).toBe(a.accountNumber);

    await wema.close(a.accountNumber, 'customer left');
    const closedAgain = wema.close(a.accountNumber);
    await expect(closedAgain).resolves.toBeUndefined();
    expect(await providerError(wema.close('0000000001'))).toMatchObject({ outcome: 'not_found', transient: false });
  });

  it('sends an inbound credit callback with its own transaction reference', async () => {
    const wema = virtualAccounts('wema');
    const account = await wema.allocate({ reference: 'va-credit', accountName: 'Musa Bello', customerId: 'cus_2' });
    const sent = await bank.control(`/control/providers/wema/virtual-accounts/${account.accountNumber}/credits`, {
      amount_minor: 750_050,
      sender_name: 'OKAFOR STORES',
    });
    expect(sent.status).toBe(202);
    expect(sent.body.transaction_reference).toMatch(/^SBXCR\d{20}$/);
    const callback = await eventually(() =>
      received.find(
        (cb) =>
          cb.type === 'virtual_account.credit' && cb.data.transaction_reference === sent.body.transaction_reference,
      ),
    );
    expect(callback.data).toEqual({
      provider: 'wema',
      account_number: account.accountNumber,
      amount_minor: 750_050,
      sender_name: 'OKAFOR STORES',
      transaction_reference: sent.body.transaction_reference,
      session_id: sent.body.session_id,
    });
    expect(account.providerReference).toBe('va-credit');
  });
});

describe('callback intake', () => {
  const post = (body: string, headers: Record<string, string> | undefined) =>
    app.inject({
      method: 'POST',
      url: '/provider-callbacks/sandbox',
      headers: { 'content-type': 'application/json', ...headers },
      payload: body,
    });
  const signed = (body: string, options: { secret?: string; timestamp?: number } = {}) =>
    callbackHeaders((JSON.parse(body) as { id: string }).id, body, options);
  const storedCount = async (eventId: string) => {
    const [row] = await db.orm.em
      .fork()
      .execute<{ n: string }[]>('select count(*) as n from provider_callbacks where event_id = ?', [eventId]);
    return Number(row?.n);
  };

  it('refuses a bad signature with 401 and applies nothing', async () => {
    const body = JSON.stringify({
      id: 'forged-1',
      type: 'transfer.completed',
      data: { reference: 'forged-ref', status: 'successful', session_id: 's', code: '00', message: 'ok' },
    });
    const good = signed(body);
    const { 'webhook-signature': _signature, ...unsigned } = good;
    for (const headers of [
      undefined,
      unsigned,
      signed(body, { secret: 'not-the-secret-at-all' }),
      { ...good, 'webhook-signature': 'garbage' },
      // Signed over other bytes, or under another id than the one sent.
      { ...good, 'webhook-signature': signed(`${body} `)['webhook-signature']! },
      { ...good, 'webhook-id': 'forged-2' },
    ]) {
      const response = await post(body, headers);
      expect(response.statusCode).toBe(401);
      expect(response.json().error.code).toBe('UNAUTHORIZED');
    }
    expect(await storedCount('forged-1')).toBe(0);
    expect(callbackFor('forged-ref')()).toBeUndefined();
  });

  it('refuses a correctly signed callback whose timestamp is stale', async () => {
    const body = JSON.stringify({
      id: 'stale-1',
      type: 'transfer.completed',
      data: { reference: 'stale-ref', status: 'successful', session_id: 's', code: '00', message: 'ok' },
    });
    for (const offset of [-600, 600]) {
      const response = await post(body, signed(body, { timestamp: Math.floor(Date.now() / 1000) + offset }));
      expect(response.statusCode).toBe(401);
      expect(response.json().error.message).toContain('tolerance');
    }
    expect(await storedCount('stale-1')).toBe(0);
  });

  it('applies a signed event once, however often it arrives', async () => {
    const body = JSON.stringify({
      id: 'dup-1',
      type: 'transfer.completed',
      data: { reference: 'dup-ref', status: 'successful', session_id: 's', code: '00', message: 'ok' },
    });
    const responses = await Promise.all(Array.from({ length: 3 }, () => post(body, signed(body))));
    expect(responses.map((response) => response.statusCode)).toEqual([200, 200, 200]);
    expect(responses.map((response) => response.json().data.status).sort()).toEqual([
      'accepted',
      'duplicate',
      'duplicate',
    ]);
    expect(received.filter((callback) => callback.eventId === 'dup-1')).toHaveLength(1);
    expect(await storedCount('dup-1')).toBe(1);
  });

  it('answers 404 for a provider it has no secret for, and 400 for a signed body that is not a callback', async () => {
    const body = JSON.stringify({ hello: 'world' });
    const headers = callbackHeaders('hello-1', body);
    const unknown = await app.inject({ method: 'POST', url: '/provider-callbacks/acme-bank', headers, payload: body });
    expect(unknown.statusCode).toBe(404);
    const invalid = await post(body, headers);
    expect(invalid.statusCode).toBe(400);
    expect(invalid.json().error.details.fields.map((field: { path: string }) => field.path)).toEqual(
      expect.arrayContaining(['id', 'type', 'data']),
    );
    // A contract event whose data is not the contract's: 400 naming the fields, nothing applied.
    const broken = JSON.stringify({
      id: 'broken-1',
      type: 'transfer.completed',
      data: { reference: 'x', status: 'done' },
    });
    const refused = await post(broken, signed(broken));
    expect(refused.statusCode).toBe(400);
    expect(refused.json().error.details.fields.map((field: { path: string }) => field.path)).toEqual(['data.status']);
    expect(await storedCount('broken-1')).toBe(0);
  });
});

/** Every route of the bank, from its own route table (so a control route added later is covered). */
function routesOf(app: FastifyInstance): { method: string; path: string }[] {
  const routes: { method: string; path: string }[] = [];
  const stack: string[] = [];
  for (const line of app.printRoutes({ commonPrefix: false }).split('\n')) {
    const match = /^([│ ├└─]*)(\/\S*) \(([^)]+)\)$/.exec(line);
    if (!match) continue;
    const depth = match[1]!.length / 4;
    stack.length = depth;
    const path = `${stack.join('')}${match[2]}`;
    stack.push(match[2]!);
    for (const method of match[3]!.split(', ')) if (method !== 'HEAD') routes.push({ method, path });
  }
  return routes;
}
describe('the contract routes over HTTP, as any client of the contract meets them', () => {
  it('are the routes docs/generic-bank-contract-v1.yaml lists, virtual accounts under /providers/{name}', async () => {
    const doc = parseYaml(await readFile(join(PROJECT_ROOT, 'docs/generic-bank-contract-v1.yaml'), 'utf8')) as {
      paths: Record<string, Record<string, unknown>>;
      webhooks: Record<string, unknown>;
    };
    const shape = (path: string) => path.replace(/\{\w+\}|:\w+/g, '{}');
    const documented = Object.entries(doc.paths)
      .flatMap(([path, operations]) =>
        Object.keys(operations).map(
          (method) =>
            `${method.toUpperCase()} ${shape(path.startsWith('/virtual-accounts') ? `/providers/{provider}${path}` : path)}`,
        ),
      )
      .sort();
    const served = routesOf(bank.app)
      .filter((route) => !route.path.startsWith('/control/') && route.path !== '/health')
      .map((route) => `${route.method} ${shape(route.path)}`)
      .sort();
    expect(served).toEqual(documented);
    // The callbacks the bank sends are the documented ones (and the gateway's receiver reads them).
    const { rows } = await bank.store.pool.query<{ type: string }>('select distinct type from sandbox_bank.callbacks');
    for (const { type } of rows) expect(Object.keys(doc.webhooks)).toContain(type);
    expect(rows.map((row) => row.type)).toEqual(
      expect.arrayContaining(['transfer.completed', 'virtual_account.credited']),
    );
  });

  const keys = (value: object) => Object.keys(value).sort();

  it('needs the API key on every contract route, 401 {code, message} otherwise', async () => {
    for (const [method, path] of [
      ['GET', '/banks'],
      ['POST', '/name-enquiry'],
      ['POST', '/transfers'],
      ['GET', '/transfers/x'],
      ['GET', '/statements/settlement/2026-11-24'],
      ['POST', '/identity/bvn-lookup'],
      ['POST', '/cards'],
      ['POST', '/providers/wema/virtual-accounts'],
    ] as const) {
      for (const authorization of ['', `Bearer ${bank.apiKey}x`, `Bearer ${bank.controlToken}`, bank.apiKey]) {
        const answer = await bank.call(method, path, method === 'POST' ? {} : undefined, authorization);
        expect({ path, authorization, answer }).toEqual({
          path,
          authorization,
          answer: {
            status: 401,
            body: { code: 'unauthorized', message: 'the bank needs Authorization: Bearer <SANDBOX_BANK_API_KEY>' },
          },
        });
      }
    }
  });

  it('answers the bank list, name enquiries and unknown paths in the contract shapes', async () => {
    const banks = await bank.call('GET', '/banks');
    expect(banks.status).toBe(200);
    expect(keys(banks.body)).toEqual(['banks']);
    expect(banks.body.banks).toContainEqual({ code: '058', name: 'Guaranty Trust Bank' });
    for (const entry of banks.body.banks) expect(keys(entry)).toEqual(['code', 'name']);

    const found = await bank.call('POST', '/name-enquiry', { bank_code: '058', account_number: '0123456789' });
    expect(found).toEqual({
      status: 200,
      body: { account_name: expect.stringMatching(/^[A-Z]+ [A-Z]+$/), session_id: expect.stringMatching(/^\d{30}$/) },
    });
    expect(await bank.call('POST', '/name-enquiry', { bank_code: '058', account_number: '0000000000' })).toEqual({
      status: 404,
      body: { code: 'invalid_account', message: 'Invalid account' },
    });
    const badCode = await bank.call('POST', '/name-enquiry', { bank_code: '999', account_number: '0123456789' });
    expect(badCode).toMatchObject({ status: 400, body: { code: 'validation_error' } });
    // The old NIP paths are no routes: a code of their own, never "not found" about a transfer.
    const old = await bank.call('POST', '/nip/transfers', {});
    expect(old).toEqual({ status: 404, body: { code: 'unknown_route', message: 'no route POST /nip/transfers' } });
  });

  it('takes a transfer once per reference: 202 pending, the same answer again, 409 for another body, 422 and 429 as decided', async () => {
    const reference = `contract-${Date.now()}`;
    const body = {
      reference,
      amount_minor: 50_000,
      currency: 'NGN',
      bank_code: '058',
      account_number: '2222222222',
      account_name: 'HELD RECIPIENT',
      narration: 'contract',
      session_id: 'NE-SESSION',
    };
    const accepted = await bank.call('POST', '/transfers', body);
    expect(accepted).toEqual({
      status: 202,
      body: {
        reference,
        status: 'pending',
        session_id: expect.stringMatching(/^\d{30}$/),
        code: '09',
        message: 'Transaction in progress',
      },
    });
    expect(await bank.call('POST', '/transfers', body)).toEqual(accepted);
    expect(await bank.call('GET', `/transfers/${reference}`)).toEqual({ ...accepted, status: 200 });
    for (const other of [{ amount_minor: 50_001 }, { account_number: '0123456789' }, { bank_code: '044' }]) {
      expect(await bank.call('POST', '/transfers', { ...body, ...other })).toEqual({
        status: 409,
        body: { code: 'conflict', message: `reference ${reference} was used for another transfer` },
      });
    }
    const { currency: _currency, ...withoutCurrency } = body;
    expect(await bank.call('POST', '/transfers', { ...withoutCurrency, reference: `${reference}-x` })).toMatchObject({
      status: 400,
      body: { code: 'validation_error' },
    });
    expect(
      await bank.call('POST', '/transfers', { ...body, reference: `${reference}-inv`, account_number: '0000000000' }),
    ).toEqual({ status: 422, body: { code: 'invalid_account', message: 'Invalid account' } });
    const throttled = await fetch(`${bank.url}/transfers`, {
      method: 'POST',
      headers: { authorization: `Bearer ${bank.apiKey}`, 'content-type': 'application/json' },
      body: JSON.stringify({ ...body, reference: `${reference}-429`, account_number: '4444444444' }),
    });
    expect([throttled.status, throttled.headers.get('retry-after'), await throttled.json()]).toEqual([
      429,
      '1',
      { code: 'too_many_requests', message: 'Too many requests; try again later' },
    ]);
    // Neither refusal took anything: the bank has no record of them.
    for (const refused of [`${reference}-inv`, `${reference}-429`, `${reference}-x`]) {
      expect(await bank.call('GET', `/transfers/${refused}`)).toEqual({
        status: 404,
        body: { code: 'not_found', message: 'Unable to locate record' },
      });
    }
  });

  it('serves each virtual-account provider under /providers/{name}, once per reference', async () => {
    const body = { reference: `va-contract-${Date.now()}`, account_name: 'Ada Obi', customer_id: 'cus_c' };
    const created = await bank.call('POST', '/providers/providus/virtual-accounts', body);
    expect(created).toEqual({
      status: 201,
      body: { account_number: expect.stringMatching(/^\d{10}$/), bank_code: '101', bank_name: 'Providus Bank' },
    });
    expect(await bank.call('POST', '/providers/providus/virtual-accounts', body)).toEqual(created);
    const close = `/providers/providus/virtual-accounts/${created.body.account_number}/close`;
    expect(await bank.call('POST', close, {})).toEqual({
      status: 200,
      body: { account_number: created.body.account_number, status: 'closed' },
    });
    expect(await bank.call('POST', '/providers/wema/virtual-accounts/0000000001/close', {})).toEqual({
      status: 404,
      body: { code: 'not_found', message: 'Unable to locate record' },
    });
    expect(await bank.call('POST', '/providers/acme/virtual-accounts', body)).toEqual({
      status: 404,
      body: { code: 'unknown_route', message: 'unknown provider acme' },
    });
  });

  it('looks BVNs up by the magic numbers, never repeating one', async () => {
    const lookup = (bvn: string) =>
      bank.call('POST', '/identity/bvn-lookup', { bvn, first_name: 'Ada', last_name: 'Obi' });
    expect(await lookup('22222222222')).toEqual({ status: 200, body: { first_name: 'ADA', last_name: 'OBI' } });
    expect(await lookup('12345678901')).toEqual({ status: 200, body: { first_name: 'ADA', last_name: 'OBI' } });
    expect(await lookup('11111111111')).toEqual({ status: 200, body: { first_name: 'NOT ADA', last_name: 'NOT OBI' } });
    expect(await lookup('00000000000')).toEqual({ status: 404, body: { code: 'not_found', message: 'BVN not found' } });
    const malformed = await lookup('1234567890x');
    expect(malformed).toMatchObject({ status: 400, body: { code: 'validation_error' } });
    expect(JSON.stringify(malformed.body)).not.toContain('1234567890x');
  });

  it('issues, locks, unlocks and funds cards, each once per reference', async () => {
    const reference = `card-contract-${Date.now()}`;
    const issued = await bank.call('POST', '/cards', { reference, customer_id: 'cus_c' });
    expect(issued).toEqual({
      status: 201,
      body: { card_reference: expect.stringMatching(/^crd_[0-9a-f]{16}$/), last4: expect.stringMatching(/^\d{4}$/) },
    });
    expect(await bank.call('POST', '/cards', { reference, customer_id: 'cus_c' })).toEqual(issued);
    const card = issued.body.card_reference as string;
    expect(await bank.call('POST', `/cards/${card}/lock`, {})).toEqual({
      status: 200,
      body: { card_reference: card, status: 'locked' },
    });
    expect(await bank.call('POST', `/cards/${card}/unlock`, {})).toEqual({
      status: 200,
      body: { card_reference: card, status: 'active' },
    });
    expect(await bank.call('POST', '/cards/crd_nobody/lock', {})).toEqual({
      status: 404,
      body: { code: 'not_found', message: 'no such card' },
    });
    const funding = { reference: `${reference}-f1`, amount_minor: 12_345 };
    const funded = { status: 200, body: { reference: funding.reference, status: 'successful' } };
    expect(await bank.call('POST', `/cards/${card}/fund`, funding)).toEqual(funded);
    expect(await bank.call('POST', `/cards/${card}/fund`, funding)).toEqual(funded);
    const { rows } = await bank.store.pool.query(
      'select balance_minor::int as n from sandbox_bank.cards where card_reference = $1',
      [card],
    );
    expect(rows[0].n).toBe(12_345);
    expect(
      await bank.call('POST', '/cards/crd_nobody/fund', { reference: `${reference}-f2`, amount_minor: 1 }),
    ).toEqual({
      status: 404,
      body: { code: 'not_found', message: 'no such card' },
    });
  });

  it("answers the day's settlement statement itself, its items in the contract's fields only", async () => {
    const today = new Date().toISOString().slice(0, 10);
    const statement = await bank.call('GET', `/statements/settlement/${today}`);
    expect(statement.status).toBe(200);
    expect(keys(statement.body)).toEqual(['date', 'generated_at', 'items']);
    expect(statement.body.date).toBe(today);
    // This file's transfers and credits settled today are on it.
    expect(statement.body.items.length).toBeGreaterThan(0);
    for (const item of statement.body.items) {
      expect(keys(item)).toEqual([
        'account_number',
        'amount_minor',
        'kind',
        'provider',
        'reference',
        'session_id',
        'status',
        'value_time',
      ]);
    }
  });

  it('signs its callbacks as Standard Webhooks under the secret’s UTF-8 bytes, as the library verifies them', () => {
    const body = JSON.stringify({ id: 'sbx_evt_1', type: 'transfer.completed', data: { reference: 'r' } });
    const headers = bankCallbackHeaders(TEST_CALLBACK_SECRET, 'sbx_evt_1', body);
    expect(Object.keys(headers).sort()).toEqual([
      'content-type',
      'webhook-id',
      'webhook-signature',
      'webhook-timestamp',
    ]);
    const library = new Webhook(Buffer.from(TEST_CALLBACK_SECRET, 'utf8'), { format: 'raw' });
    expect(library.verify(body, headers)).toEqual(JSON.parse(body));
    expect(() => library.verify(`${body} `, headers)).toThrow();
  });

  it('sends callbacks queued before it spoke the contract in the contract’s words', () => {
    const row = (type: string, data: Record<string, unknown>) => ({
      event_id: 'sbx_evt_old',
      type,
      attempts: 0,
      payload: { event_id: 'sbx_evt_old', type, occurred_at: '2026-11-24T10:00:00Z', data },
    });
    expect(
      contractBody(
        row('transfer.failed', {
          reference: 'r',
          session_id: 's',
          amount_minor: 5,
          bank_code: '058',
          account_number: '0123456789',
          status: 'failed',
          response_code: '57',
          message: 'm',
        }),
      ),
    ).toEqual({
      id: 'sbx_evt_old',
      type: 'transfer.completed',
      data: { reference: 'r', status: 'failed', session_id: 's', code: '57', message: 'm' },
    });
    expect(
      contractBody(
        row('virtual_account.credit', {
          provider: 'wema',
          account_number: '8100000017',
          provider_reference: 'va-1',
          amount_minor: 5,
          currency: 'NGN',
          sender_name: 'X',
          transaction_reference: 'CR',
          session_id: 's',
        }),
      ),
    ).toEqual({
      id: 'sbx_evt_old',
      type: 'virtual_account.credited',
      data: {
        provider: 'wema',
        account_number: '8100000017',
        amount_minor: 5,
        sender_name: 'X',
        transaction_reference: 'CR',
        session_id: 's',
      },
    });
    const current = {
      event_id: 'sbx_evt_new',
      type: 'card.authorization.reversed',
      attempts: 0,
      payload: { id: 'sbx_evt_new', type: 'card.authorization.reversed', data: { authorization_id: 'a' } },
    };
    expect(contractBody(current)).toEqual({
      id: 'sbx_evt_new',
      type: 'card.authorization.reversed',
      data: { authorization_id: 'a' },
    });
  });
});

describe('GET /api/v1/banks', () => {
  it('lists the sandbox bank list in the {data:{items}, meta} envelope for a tenant key', async () => {
    const tenant = await createFundedTenant(db.orm);
    const response = await app.inject({
      method: 'GET',
      url: '/api/v1/banks',
      headers: { authorization: `Bearer ${tenant.apiKey}` },
    });
    expect(response.statusCode).toBe(200);
    const body = response.json();
    expect(body.data.items).toContainEqual({ code: '058', name: 'Guaranty Trust Bank', slug: 'guaranty-trust-bank' });
    expect(body.data.items.length).toBeGreaterThanOrEqual(20);
    expect(body.meta.requestId).toBe(response.headers['x-request-id']);
    expect((await app.inject({ method: 'GET', url: '/api/v1/banks' })).statusCode).toBe(401);
  });
});

describe('control routes need the control token (SANDBOX_BANK_CONTROL_TOKEN)', () => {
  const filled = (path: string) => path.replace(/:(\w+)/g, (_whole, name: string) => `probe-${name}`);

  it('refuses every /control route without it, or with a wrong one, 401, changing nothing', async () => {
    const control = routesOf(bank.app).filter((route) => route.path.startsWith('/control/'));
    expect(control.map((route) => route.path)).toEqual(
      expect.arrayContaining([
        '/control/providers/:provider/virtual-accounts/:accountNumber/credits',
        '/control/cards/:cardReference/purchases',
        '/control/card-authorizations/:authorizationId/clear',
        '/control/providers/:provider/down',
        '/control/transfers/:reference/fail',
        '/control/statements/invent',
      ]),
    );
    expect(control.length).toBeGreaterThanOrEqual(11);
    const wrong = [
      undefined,
      'Bearer not-the-token-at-all-0000000000000000',
      `Bearer ${bank.controlToken}x`,
      `Bearer ${bank.controlToken.slice(0, -1)}`,
      `Basic ${Buffer.from(`x:${bank.controlToken}`).toString('base64')}`,
      bank.controlToken,
      'Bearer ',
    ];
    for (const route of control) {
      for (const authorization of wrong) {
        const answer = await bank.app.inject({
          method: route.method as 'POST',
          url: filled(route.path).replace('probe-provider', 'nip'),
          headers: { 'content-type': 'application/json', ...(authorization ? { authorization } : {}) },
          payload: { amount_minor: 1_000, reference: 'x', kind: 'transfer' },
        });
        expect({ route: route.path, authorization, status: answer.statusCode }).toEqual({
          route: route.path,
          authorization,
          status: 401,
        });
        expect(answer.headers['www-authenticate']).toBe('Bearer');
      }
    }
    // Nothing was done: nip is up, no statement was edited.
    expect(await bank.store.isDown('nip')).toBe(false);
    const { rows } = await bank.store.pool.query('select count(*)::int as n from sandbox_bank.statement_adjustments');
    expect(rows[0].n).toBe(0);
  });

  it('takes the token in any case of the Bearer scheme, and leaves the bank routes the gateway calls as they are', async () => {
    const down = await bank.app.inject({
      method: 'POST',
      url: '/control/providers/bvn/down',
      headers: { authorization: `bearer  ${bank.controlToken}` },
    });
    expect(down.statusCode).toBe(200);
    expect(await bank.store.isDown('bvn')).toBe(true);
    expect((await bank.control('/control/providers/bvn/up')).status).toBe(200);
    const banks = { method: 'GET' as const, url: '/banks' };
    expect((await bank.app.inject({ ...banks, headers: { authorization: `Bearer ${bank.apiKey}` } })).statusCode).toBe(
      200,
    );
    // The contract's routes take the API key, not the control token; /health takes nothing.
    expect(
      (await bank.app.inject({ ...banks, headers: { authorization: `Bearer ${bank.controlToken}` } })).statusCode,
    ).toBe(401);
    expect((await bank.app.inject({ method: 'GET', url: '/health' })).statusCode).toBe(200);
  });

  it("is sent by the gateway's adapter on control routes only, and without it the adapter's credit fails", async () => {
    const withToken = virtualAccounts('wema', bank.controlToken);
    const account = await withToken.allocate({ reference: 'va-token', accountName: 'Ada Obi', customerId: 'c' });
    await expect(
      withToken.simulateInboundCredit!(account.accountNumber, { amountMinor: 5_000 }),
    ).resolves.toMatchObject({
      transactionReference: expect.stringMatching(/^SBXCR/),
    });
    const withoutToken = virtualAccounts('wema');
    const refused = await providerError(
      withoutToken.simulateInboundCredit!(account.accountNumber, { amountMinor: 5_000 }),
    );
    expect(refused).toMatchObject({ httpStatus: 401, transient: false });
    expect(refused.message).toContain('SANDBOX_BANK_CONTROL_TOKEN');
    const { rows } = await bank.store.pool.query(
      'select count(*)::int as n from sandbox_bank.inbound_credits where account_number = $1',
      [account.accountNumber],
    );
    expect(rows[0].n).toBe(1);
  });

  it('stays open on loopback when no token is configured (local development, as before)', async () => {
    const open = await buildSandboxBank({
      store: bank.store,
      apiKey: TEST_SANDBOX_BANK_API_KEY,
      completionDelayMs: 1,
      hangMs: 1,
      logLevel: 'silent',
    });
    try {
      const down = await open.inject({ method: 'POST', url: '/control/providers/cards/down' });
      expect(down.statusCode).toBe(200);
      expect(await bank.store.isDown('cards')).toBe(true);
    } finally {
      await bank.control('/control/providers/cards/up');
      await open.close();
    }
  });
});
