// The generic connector's client against a scripted bank on a local port: what every kind of
// answer becomes (value, transient or definitive error, notTaken), what it sends; its settings from
// the environment; and its callback receiver (Standard Webhooks signatures, each event normalized).
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { Webhook } from 'standardwebhooks';
import { createGenericConnector, genericConnector, GenericSettings } from '../../src/connectors/generic/index.ts';
import { verifyStandardWebhook } from '../../src/connectors/generic/contract.ts';
import { normalizeContractCallback } from '../../src/connectors/generic/receiver.ts';
import { signWebhook } from '../../src/runtime/standard-webhooks.ts';
import { freePort } from '../support/ports.ts';
import { providerError } from '../support/provider-error.ts';

type Handler = (request: IncomingMessage, response: ServerResponse, body: string) => void;

let server: Server;
let baseUrl: string;
/** The scripted answer per `METHOD path`; an unscripted call gets a 599 the tests never expect. */
const script = new Map<string, Handler>();
const seen: { method: string; path: string; headers: IncomingMessage['headers']; body: string }[] = [];

const API_KEY = 'generic-test-key-0123456789';
const WEBHOOK_SECRET = `whsec_${Buffer.alloc(32, 5).toString('base64')}`;

beforeAll(async () => {
  server = createServer((request, response) => {
    let body = '';
    request.on('data', (chunk: Buffer) => (body += chunk.toString('utf8')));
    request.on('end', () => {
      const key = `${request.method} ${request.url}`;
      seen.push({ method: request.method!, path: request.url!, headers: request.headers, body });
      const handler = script.get(key);
      if (handler) handler(request, response, body);
      else response.writeHead(599).end();
    });
  });
  const port = await freePort();
  await new Promise<void>((resolve) => server.listen(port, '127.0.0.1', resolve));
  baseUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
afterAll(async () => {
  server.closeAllConnections();
  await new Promise((resolve) => server.close(resolve));
});
beforeEach(() => {
  script.clear();
  seen.length = 0;
});

// The timeout tests set a short one of their own; the rest get the production default, so that a
// loaded machine's slow answer is never read as the bank's silence.
function connector(timeoutMs = 5_000, url = baseUrl) {
  return createGenericConnector({
    name: 'acme',
    modes: ['live'],
    baseUrl: url,
    apiKey: API_KEY,
    webhookSecret: WEBHOOK_SECRET,
    capabilities: ['transfers', 'virtual_accounts', 'identity', 'cards'],
    timeoutMs,
    virtualAccountProviders: [{ name: 'wema', pathPrefix: '/providers/wema', supportsPreferredBank: false }],
  });
}

const json =
  (status: number, body: unknown, headers: Record<string, string> = {}): Handler =>
  (_request, response) =>
    response.writeHead(status, { 'content-type': 'application/json', ...headers }).end(JSON.stringify(body));
const raw =
  (status: number, text: string, contentType = 'text/html'): Handler =>
  (_request, response) =>
    response.writeHead(status, { 'content-type': contentType }).end(text);

const TRANSFER = {
  reference: 'trf-1',
  amountMinor: 250_000,
  bankCode: '058',
  accountNumber: '0123456789',
  accountName: 'ADA OBI',
  narration: 'rent',
};

describe('the client: what each answer becomes', () => {
  const banks = { code: '058', name: 'Guaranty Trust Bank' };

  it.each([
    [
      '500 with the contract body',
      json(500, { code: 'system_malfunction', message: 'boom' }),
      'unavailable',
      500,
      'system_malfunction',
    ],
    ['503 as an HTML page', raw(503, '<html>down</html>'), 'unavailable', 503, undefined],
    ['502 with no body', raw(502, ''), 'unavailable', 502, undefined],
    ['408', json(408, { code: 'slow', message: 'x' }), 'timeout', 408, 'slow'],
    ['425', json(425, { code: 'early', message: 'x' }), 'unavailable', 425, 'early'],
    [
      '429',
      json(429, { code: 'too_many_requests', message: 'x' }, { 'retry-after': '1' }),
      'unavailable',
      429,
      'too_many_requests',
    ],
    ['200 as an HTML page', raw(200, '<!doctype html><p>Welcome</p>'), 'unknown', 200, undefined],
    ['200 that is not JSON', raw(200, '{"banks": [', 'application/json'), 'unknown', 200, undefined],
    ['200 with a field missing', json(200, { banks: [{ code: '058' }] }), 'unknown', 200, undefined],
    ['200 with the wrong shape', json(200, [banks]), 'unknown', 200, undefined],
    ['200 with an empty body', raw(200, '', 'application/json'), 'unknown', 200, undefined],
    ['403 as a proxy page, not the bank', raw(403, '<h1>Forbidden</h1>'), 'unknown', 403, undefined],
    ['404 without the contract body', json(404, { error: 'Not Found' }), 'unknown', 404, undefined],
    ['a redirect', raw(302, ''), 'unknown', 302, undefined],
  ])('%s → transient', async (_name, handler, outcome, httpStatus, rawCode) => {
    script.set('GET /banks', handler);
    const error = await providerError(connector().transfers!.listBanks());
    // Ambiguous (the bank may have acted, decisions §17) unless it says it did not: 425 and 429 only.
    const ambiguous = httpStatus !== 425 && httpStatus !== 429;
    expect(error).toMatchObject({
      provider: 'acme',
      outcome,
      transient: true,
      ambiguous,
      httpStatus,
      rawCode,
      notTaken: false,
    });
  });

  it.each([
    [400, 'validation_error', 'rejected'],
    [401, 'unauthorized', 'rejected'],
    [403, 'forbidden', 'rejected'],
    [404, 'unknown_route', 'rejected'],
    [404, 'not_found', 'not_found'],
    [410, 'gone', 'rejected'],
  ])('%i with {code: %s} → definitive %s, the code and message kept', async (status, code, outcome) => {
    script.set('GET /banks', json(status, { code, message: `refused: ${code}` }));
    const error = await providerError(connector().transfers!.listBanks());
    expect(error).toMatchObject({
      outcome,
      transient: false,
      ambiguous: false,
      httpStatus: status,
      rawCode: code,
      notTaken: false,
    });
    expect(error.message).toContain(`refused: ${code}`);
  });

  it('is a transient timeout when the bank never answers, or stalls after its headers', async () => {
    script.set('GET /banks', () => undefined);
    const silent = await providerError(connector(200).transfers!.listBanks());
    expect(silent).toMatchObject({ outcome: 'timeout', transient: true, ambiguous: true, httpStatus: undefined });
    expect(silent.message).toBe('acme did not answer GET /banks within 200 ms');
    script.set('GET /banks', (_request, response) => {
      response.writeHead(200, { 'content-type': 'application/json' });
      response.write('{"banks": [');
    });
    expect(await providerError(connector(200).transfers!.listBanks())).toMatchObject({
      outcome: 'timeout',
      transient: true,
    });
  });

  it('is a transient network error when the connection is reset (ambiguous) or refused (nothing was sent)', async () => {
    script.set('GET /banks', (request) => request.socket.destroy());
    expect(await providerError(connector().transfers!.listBanks())).toMatchObject({
      outcome: 'network_error',
      transient: true,
      ambiguous: true,
    });
    script.set('GET /banks', (_request, response) => {
      response.writeHead(200, { 'content-type': 'application/json', 'content-length': '100' });
      response.write('{"banks":');
      response.socket?.destroy();
    });
    expect(await providerError(connector().transfers!.listBanks())).toMatchObject({ transient: true, ambiguous: true });
    const port = await freePort();
    const nowhere = createGenericConnector({
      name: 'acme',
      modes: ['live'],
      baseUrl: `http://127.0.0.1:${port}`,
      apiKey: API_KEY,
      webhookSecret: WEBHOOK_SECRET,
      capabilities: ['transfers'],
      timeoutMs: 300,
    });
    expect(await providerError(nowhere.transfers!.listBanks())).toMatchObject({
      outcome: 'network_error',
      transient: true,
      ambiguous: false,
    });
  });

  it('sends the bearer key, and reads the bank list with slugs made from the names', async () => {
    script.set('GET /banks', json(200, { banks: [banks, { code: '101', name: 'Providus Bank' }] }));
    expect(await connector().transfers!.listBanks()).toEqual([
      { code: '058', name: 'Guaranty Trust Bank', slug: 'guaranty-trust-bank' },
      { code: '101', name: 'Providus Bank', slug: 'providus-bank' },
    ]);
    expect(seen[0]!.headers.authorization).toBe(`Bearer ${API_KEY}`);
    expect(seen[0]!.headers.accept).toBe('application/json');
  });
});

describe('the client: transfers', () => {
  it('submits the contract body and reads 202 pending and 200 final answers', async () => {
    script.set('POST /transfers', json(202, { reference: 'trf-1', status: 'pending', session_id: 'S1' }));
    const bank = connector().transfers!;
    expect(await bank.submitTransfer({ ...TRANSFER, sessionId: 'NE1' })).toEqual({
      status: 'pending',
      sessionId: 'S1',
      rawCode: '',
    });
    expect(seen[0]!.headers['content-type']).toBe('application/json');
    expect(JSON.parse(seen[0]!.body)).toEqual({
      reference: 'trf-1',
      amount_minor: 250_000,
      currency: 'NGN',
      bank_code: '058',
      account_number: '0123456789',
      account_name: 'ADA OBI',
      narration: 'rent',
      session_id: 'NE1',
    });
    script.set(
      'POST /transfers',
      json(200, { reference: 'trf-1', status: 'failed', session_id: 'S1', code: '57', message: 'not permitted' }),
    );
    expect(await bank.submitTransfer(TRANSFER)).toEqual({
      status: 'failed',
      sessionId: 'S1',
      rawCode: '57',
      message: 'not permitted',
    });
  });

  it('takes 422 as a definitive refusal that did not take the transfer, and nothing else', async () => {
    const bank = connector().transfers!;
    script.set('POST /transfers', json(422, { code: 'insufficient_funds', message: 'float too low' }));
    expect(await providerError(bank.submitTransfer(TRANSFER))).toMatchObject({
      outcome: 'rejected',
      transient: false,
      notTaken: true,
      httpStatus: 422,
      rawCode: 'insufficient_funds',
    });
    script.set('POST /transfers', json(422, { code: 'invalid_account', message: 'no such account' }));
    expect(await providerError(bank.submitTransfer(TRANSFER))).toMatchObject({
      outcome: 'invalid_account',
      notTaken: true,
    });
    for (const [status, code, transient, ambiguous] of [
      [409, 'conflict', false, false],
      [400, 'validation_error', false, false],
      [500, 'system_malfunction', true, true],
      [429, 'too_many_requests', true, false],
    ] as const) {
      script.set('POST /transfers', json(status, { code, message: 'x' }));
      expect(await providerError(bank.submitTransfer(TRANSFER))).toMatchObject({
        httpStatus: status,
        transient,
        ambiguous,
        notTaken: false,
      });
    }
    // A 422 page that is not the bank's answer proves nothing.
    script.set('POST /transfers', raw(422, '<html>unprocessable</html>'));
    expect(await providerError(bank.submitTransfer(TRANSFER))).toMatchObject({ transient: true, notTaken: false });
  });

  it('refuses an answer about another transfer, or one missing its status', async () => {
    const bank = connector().transfers!;
    script.set('POST /transfers', json(202, { reference: 'trf-2', status: 'pending' }));
    expect(await providerError(bank.submitTransfer(TRANSFER))).toMatchObject({ outcome: 'unknown', transient: true });
    script.set('POST /transfers', json(202, { reference: 'trf-1' }));
    expect(await providerError(bank.submitTransfer(TRANSFER))).toMatchObject({ outcome: 'unknown', transient: true });
    script.set('POST /transfers', json(202, { reference: 'trf-1', status: 'done' }));
    expect(await providerError(bank.submitTransfer(TRANSFER))).toMatchObject({ outcome: 'unknown', transient: true });
  });

  it('queries a status by its encoded reference: 404 not_found is definitive, anything else unsure', async () => {
    const bank = connector().transfers!;
    script.set(
      'GET /transfers/a%2Fb%20c',
      json(200, { reference: 'a/b c', status: 'successful', session_id: 'S9', code: '00', message: 'ok' }),
    );
    expect(await bank.transferStatus('a/b c')).toEqual({
      status: 'successful',
      sessionId: 'S9',
      rawCode: '00',
      message: 'ok',
    });
    script.set('GET /transfers/trf-1', json(404, { code: 'not_found', message: 'never took it' }));
    expect(await providerError(bank.transferStatus('trf-1'))).toMatchObject({
      outcome: 'not_found',
      transient: false,
      httpStatus: 404,
    });
    script.set('GET /transfers/trf-1', raw(404, 'Cannot GET /transfers/trf-1', 'text/plain'));
    expect(await providerError(bank.transferStatus('trf-1'))).toMatchObject({ transient: true });
    script.set('GET /transfers/trf-1', json(200, { reference: 'trf-1', status: 'pending' }));
    expect(await providerError(bank.transferStatus('trf-1'))).toMatchObject({ outcome: 'unknown', transient: true });
  });

  it('reads a name enquiry, and 404 invalid_account as a definitive invalid_account', async () => {
    const bank = connector().transfers!;
    script.set('POST /name-enquiry', json(200, { account_name: 'ADA OBI', session_id: 'NE1' }));
    expect(await bank.nameEnquiry('058', '0123456789')).toEqual({
      accountNumber: '0123456789',
      bankCode: '058',
      accountName: 'ADA OBI',
      sessionId: 'NE1',
    });
    expect(JSON.parse(seen[0]!.body)).toEqual({ bank_code: '058', account_number: '0123456789' });
    script.set('POST /name-enquiry', json(404, { code: 'invalid_account' }));
    expect(await providerError(bank.nameEnquiry('058', '0000000000'))).toMatchObject({
      outcome: 'invalid_account',
      transient: false,
      rawCode: 'invalid_account',
      notTaken: false,
    });
  });

  it('reads the settlement statement of the day asked for, and refuses another day or a bad item', async () => {
    const item = {
      kind: 'inbound_credit',
      reference: 'CR1',
      session_id: 'S',
      amount_minor: 5_000,
      status: 'successful',
      provider: 'wema',
      account_number: '8100000017',
      value_time: '2026-11-24T10:00:00.000Z',
    };
    const path = 'GET /statements/settlement/2026-11-24';
    script.set(path, json(200, { date: '2026-11-24', generated_at: '2026-11-25T02:00:00Z', items: [item] }));
    const bank = connector().transfers!;
    expect(await bank.settlementReport('2026-11-24')).toEqual({
      date: '2026-11-24',
      generatedAt: '2026-11-25T02:00:00Z',
      items: [
        {
          kind: 'inbound_credit',
          reference: 'CR1',
          sessionId: 'S',
          amountMinor: 5_000,
          status: 'successful',
          provider: 'wema',
          accountNumber: '8100000017',
          valueTime: '2026-11-24T10:00:00.000Z',
        },
      ],
    });
    expect(await connector().settlementReport!('2026-11-24')).toMatchObject({ date: '2026-11-24' });
    script.set(path, json(200, { date: '2026-11-23', generated_at: 'x', items: [] }));
    expect(await providerError(bank.settlementReport('2026-11-24'))).toMatchObject({ transient: true });
    script.set(path, json(200, { date: '2026-11-24', generated_at: 'x', items: [{ ...item, amount_minor: -5 }] }));
    expect(await providerError(bank.settlementReport('2026-11-24'))).toMatchObject({ transient: true });
  });
});

describe('the client: virtual accounts, cards, identity', () => {
  it("reaches a virtual-account provider under its prefix, under the provider's name", async () => {
    const route = connector().virtualAccounts![0]!;
    expect(route).toMatchObject({ countries: ['NG'], currencies: ['NGN'], supportsPreferredBank: false });
    script.set(
      'POST /providers/wema/virtual-accounts',
      json(201, { account_number: '8100000017', bank_code: '035', bank_name: 'Wema Bank' }),
    );
    expect(
      await route.provider.allocate({
        reference: 'va-1',
        accountName: 'Ada Obi',
        customerId: 'c1',
        bvn: '12345678901',
      }),
    ).toEqual({ accountNumber: '8100000017', bankCode: '035', bankName: 'Wema Bank', providerReference: 'va-1' });
    expect(JSON.parse(seen[0]!.body)).toEqual({
      reference: 'va-1',
      account_name: 'Ada Obi',
      customer_id: 'c1',
      bvn: '12345678901',
    });
    script.set(
      'POST /providers/wema/virtual-accounts',
      json(201, { account_number: '81', bank_code: '035', bank_name: 'W' }),
    );
    expect(
      await providerError(route.provider.allocate({ reference: 'va-2', accountName: 'A', customerId: 'c' })),
    ).toMatchObject({ provider: 'wema', transient: true });
    // Close answers 200, with or without a body; an unknown account is a definitive not_found.
    script.set('POST /providers/wema/virtual-accounts/8100000017/close', raw(200, '', 'application/json'));
    await expect(route.provider.close('8100000017', 'left')).resolves.toBeUndefined();
    expect(seen.at(-1)!.body).toBe('{"reason":"left"}');
    script.set(
      'POST /providers/wema/virtual-accounts/8100000017/close',
      json(404, { code: 'not_found', message: 'x' }),
    );
    expect(await providerError(route.provider.close('8100000017'))).toMatchObject({
      outcome: 'not_found',
      transient: false,
    });
  });

  it('issues, locks, unlocks and funds cards, checking what the processor says it did', async () => {
    const cards = connector().cards!;
    script.set('POST /cards', json(201, { card_reference: 'crd_1', last4: '4242' }));
    expect(await cards.issue({ reference: 'card-1', customerId: 'c1' })).toEqual({
      cardReference: 'crd_1',
      last4: '4242',
    });
    script.set('POST /cards/crd_1/lock', json(200, { card_reference: 'crd_1', status: 'locked' }));
    await expect(cards.setLocked('crd_1', true)).resolves.toBeUndefined();
    script.set('POST /cards/crd_1/unlock', json(200, { card_reference: 'crd_1', status: 'locked' }));
    expect(await providerError(cards.setLocked('crd_1', false))).toMatchObject({ transient: true });
    script.set('POST /cards/crd_x/lock', json(404, { code: 'not_found', message: 'no such card' }));
    expect(await providerError(cards.setLocked('crd_x', true))).toMatchObject({
      outcome: 'not_found',
      transient: false,
    });
    script.set('POST /cards/crd_1/fund', json(200, { reference: 'f1', status: 'successful' }));
    await expect(cards.fund({ cardReference: 'crd_1', reference: 'f1', amountMinor: 10_000 })).resolves.toBeUndefined();
    expect(JSON.parse(seen.at(-1)!.body)).toEqual({ reference: 'f1', amount_minor: 10_000 });
    script.set('POST /cards/crd_1/fund', json(422, { code: 'not_permitted', message: 'no' }));
    expect(await providerError(cards.fund({ cardReference: 'crd_1', reference: 'f2', amountMinor: 1 }))).toMatchObject({
      transient: false,
      notTaken: false,
    });
  });

  it('looks a BVN up in the body only: the holder, null for 404 not_found, and never the BVN in an error', async () => {
    const identity = connector().identity!;
    const bvn = '12345678901';
    script.set('POST /identity/bvn-lookup', json(200, { first_name: 'ADA', last_name: 'OBI' }));
    expect(await identity.lookUpBvn({ bvn, firstName: 'Ada', lastName: 'Obi' })).toEqual({
      firstName: 'ADA',
      lastName: 'OBI',
    });
    expect(JSON.parse(seen[0]!.body)).toEqual({ bvn, first_name: 'Ada', last_name: 'Obi' });
    script.set('POST /identity/bvn-lookup', json(404, { code: 'not_found', message: 'BVN not found' }));
    expect(await identity.lookUpBvn({ bvn, firstName: 'Ada', lastName: 'Obi' })).toBeNull();
    for (const handler of [json(404, { code: 'unknown_route', message: 'x' }), json(200, { first_name: 'ADA' })]) {
      script.set('POST /identity/bvn-lookup', handler);
      const error = await providerError(identity.lookUpBvn({ bvn, firstName: 'Ada', lastName: 'Obi' }));
      expect(error.message).not.toContain(bvn);
    }
  });
});

describe('the connector and its settings', () => {
  const env = {
    GENERIC_BANK_URL: 'https://bank.example/api/v1',
    GENERIC_BANK_API_KEY: 'live-key-abcdefghijklmnop',
    GENERIC_BANK_WEBHOOK_SECRET: WEBHOOK_SECRET,
  };
  const issuesOf = (input: Record<string, string>) => {
    const parsed = GenericSettings.safeParse(input);
    return parsed.success ? [] : parsed.error.issues.map((issue) => `${issue.path.join('.')}: ${issue.message}`);
  };

  it('reads the environment, transfers and virtual accounts by default', () => {
    expect(GenericSettings.parse(env)).toEqual({
      baseUrl: 'https://bank.example/api/v1',
      apiKey: 'live-key-abcdefghijklmnop',
      webhookSecret: WEBHOOK_SECRET,
      capabilities: ['transfers', 'virtual_accounts'],
    });
    expect(
      GenericSettings.parse({ ...env, GENERIC_BANK_CAPABILITIES: ' cards, identity,cards ' }).capabilities,
    ).toEqual(['cards', 'identity']);
    const live = genericConnector.create(GenericSettings.parse(env), { timeoutMs: 1_000 });
    expect(live).toMatchObject({ name: 'generic', modes: ['live'], capabilities: ['transfers', 'virtual_accounts'] });
    expect(live.cards).toBeUndefined();
    expect(live.identity).toBeUndefined();
    expect(live.virtualAccounts!.map((route) => [route.provider.name, route.supportsPreferredBank])).toEqual([
      ['generic', true],
    ]);
    expect(genericConnector.name).toBe('generic');
    // Its credits may name no provider but its own.
    const credit = (provider: string) =>
      JSON.stringify({
        id: 'evt',
        type: 'virtual_account.credited',
        data: { account_number: '8100000017', amount_minor: 1, transaction_reference: 'T', sender_name: 'S', provider },
      });
    expect(live.callbacks!.normalize(credit('generic'))).toMatchObject({
      ok: true,
      callback: { data: { provider: 'generic' } },
    });
    expect(live.callbacks!.normalize(credit('wema'))).toMatchObject({ ok: false, issues: [{ path: 'data.provider' }] });
  });

  it('names the variable of each bad setting and never repeats a secret', () => {
    const cases: [Record<string, string>, string][] = [
      [{ ...env, GENERIC_BANK_URL: 'ftp://bank.example' }, 'GENERIC_BANK_URL'],
      [{ ...env, GENERIC_BANK_URL: 'not a url' }, 'GENERIC_BANK_URL'],
      [{ ...env, GENERIC_BANK_API_KEY: '' }, 'GENERIC_BANK_API_KEY'],
      [{ ...env, GENERIC_BANK_API_KEY: 'has a space-secret-value' }, 'GENERIC_BANK_API_KEY'],
      [{ ...env, GENERIC_BANK_WEBHOOK_SECRET: 'plain-secret-value-long-enough' }, 'GENERIC_BANK_WEBHOOK_SECRET'],
      [
        { ...env, GENERIC_BANK_WEBHOOK_SECRET: `whsec_${Buffer.alloc(23, 1).toString('base64')}` },
        'GENERIC_BANK_WEBHOOK_SECRET',
      ],
      [{ ...env, GENERIC_BANK_WEBHOOK_SECRET: 'whsec_not*base64*secret-value-long' }, 'GENERIC_BANK_WEBHOOK_SECRET'],
      [{ ...env, GENERIC_BANK_CAPABILITIES: 'transfers,payroll' }, 'GENERIC_BANK_CAPABILITIES'],
      [{ ...env, GENERIC_BANK_CAPABILITIES: ' , ' }, 'GENERIC_BANK_CAPABILITIES'],
    ];
    for (const [input, variable] of cases) {
      const issues = issuesOf(input);
      expect(issues, variable).toHaveLength(1);
      expect(issues[0]).toMatch(new RegExp(`^${variable}: `));
      for (const secret of [input.GENERIC_BANK_API_KEY, input.GENERIC_BANK_WEBHOOK_SECRET]) {
        if (secret) expect(issues[0]).not.toContain(secret.replace(/^whsec_/, ''));
      }
    }
    const { GENERIC_BANK_API_KEY: _key, GENERIC_BANK_WEBHOOK_SECRET: _secret, ...missing } = env;
    expect(issuesOf(missing)).toEqual([
      'GENERIC_BANK_API_KEY: is required',
      'GENERIC_BANK_WEBHOOK_SECRET: is required',
    ]);
  });
});

describe('the callback receiver', () => {
  // The connector's own receiver (its calls go nowhere here).
  const receiver = connector(300, 'http://127.0.0.1:9').callbacks!;
  const now = 1_800_000_000;
  const body = JSON.stringify({ id: 'evt_1', type: 'test.ping', data: {} });
  const headers = (overrides: Record<string, string | undefined> = {}, timestamp = now, secret = WEBHOOK_SECRET) => {
    const all: Record<string, string | undefined> = {
      'webhook-id': 'evt_1',
      'webhook-timestamp': String(timestamp),
      'webhook-signature': signWebhook(secret, 'evt_1', timestamp, body),
      ...overrides,
    };
    return Object.fromEntries(Object.entries(all).filter(([, value]) => value !== undefined)) as Record<string, string>;
  };

  it('accepts a good signature, also as the standardwebhooks library makes it, among others', () => {
    expect(receiver.verify(body, headers(), now)).toEqual({ ok: true });
    const library = new Webhook(WEBHOOK_SECRET).sign('evt_1', new Date(now * 1000), body);
    expect(receiver.verify(body, headers({ 'webhook-signature': library }), now)).toEqual({ ok: true });
    // A bank rotating its secret sends both signatures.
    const rotating = `v1,${Buffer.alloc(32).toString('base64')} ${headers()['webhook-signature']}`;
    expect(receiver.verify(body, headers({ 'webhook-signature': rotating }), now)).toEqual({ ok: true });
    // Within the tolerance on either side.
    expect(receiver.verify(body, headers(), now + 300)).toEqual({ ok: true });
    expect(receiver.verify(body, headers(), now - 300)).toEqual({ ok: true });
  });

  it('refuses a missing, bad or expired signature with the reason', () => {
    expect(receiver.verify(body, {}, now)).toEqual({
      ok: false,
      reason: 'missing webhook-id, webhook-timestamp, webhook-signature header',
    });
    expect(receiver.verify(body, headers({ 'webhook-signature': undefined }), now)).toEqual({
      ok: false,
      reason: 'missing webhook-signature header',
    });
    const mismatch = { ok: false, reason: 'signature does not match' };
    expect(receiver.verify(body, headers({}, now, `whsec_${Buffer.alloc(32, 6).toString('base64')}`), now)).toEqual(
      mismatch,
    );
    expect(receiver.verify(`${body} `, headers(), now)).toEqual(mismatch);
    expect(receiver.verify(body, headers({ 'webhook-id': 'evt_2' }), now)).toEqual(mismatch);
    expect(receiver.verify(body, headers({ 'webhook-signature': 'v2,abc garbage v1' }), now)).toEqual(mismatch);
    expect(receiver.verify(body, headers({ 'webhook-timestamp': 'soon' }), now)).toEqual({
      ok: false,
      reason: 'malformed webhook-id or webhook-timestamp',
    });
    const expired = { ok: false, reason: 'signature timestamp outside the 5 minute tolerance' };
    expect(receiver.verify(body, headers(), now + 301)).toEqual(expired);
    expect(receiver.verify(body, headers(), now - 301)).toEqual(expired);
    // The secret's UTF-8 bytes, where it is no whsec_ secret (the sandbox bank's PROVIDER_CALLBACK_SECRET).
    expect(verifyStandardWebhook('plain-secret', body, headers({}, now, 'plain-secret'), now)).toEqual({ ok: true });
  });

  const normalized = (event: unknown) => receiver.normalize(JSON.stringify(event));

  it('turns transfer.completed into transfer.successful or transfer.failed', () => {
    expect(
      normalized({
        id: 'evt_t1',
        type: 'transfer.completed',
        data: { reference: 'trf-1', status: 'successful', session_id: 'S1', code: '00', message: 'done' },
      }),
    ).toEqual({
      ok: true,
      callback: {
        eventId: 'evt_t1',
        type: 'transfer.successful',
        data: { reference: 'trf-1', session_id: 'S1', response_code: '00', message: 'done' },
      },
    });
    expect(
      normalized({
        id: 'evt_t2',
        type: 'transfer.completed',
        data: { reference: 'trf-2', status: 'failed', session_id: null, code: '57', message: null, extra: 1 },
      }),
    ).toEqual({
      ok: true,
      callback: { eventId: 'evt_t2', type: 'transfer.failed', data: { reference: 'trf-2', response_code: '57' } },
    });
    expect(
      normalized({ id: 'evt_t3', type: 'transfer.completed', data: { reference: 'trf-3', status: 'pending' } }),
    ).toEqual({ ok: false, issues: [{ path: 'data.status', message: expect.any(String) }] });
  });

  it('reads v1.1 transfer.reversed as transfer.reversed, and refuses one without its reference', () => {
    expect(
      normalized({
        id: 'evt_r1',
        type: 'transfer.reversed',
        data: { reference: 'trf-1', session_id: 'S1', code: '00', message: 'Reversed by the beneficiary bank' },
      }),
    ).toEqual({
      ok: true,
      callback: {
        eventId: 'evt_r1',
        type: 'transfer.reversed',
        data: {
          reference: 'trf-1',
          session_id: 'S1',
          response_code: '00',
          message: 'Reversed by the beneficiary bank',
        },
      },
    });
    expect(normalized({ id: 'evt_r2', type: 'transfer.reversed', data: { reference: 'trf-2' } })).toEqual({
      ok: true,
      callback: { eventId: 'evt_r2', type: 'transfer.reversed', data: { reference: 'trf-2' } },
    });
    expect(normalized({ id: 'evt_r3', type: 'transfer.reversed', data: { session_id: 'S3' } })).toEqual({
      ok: false,
      issues: [{ path: 'data.reference', message: expect.any(String) }],
    });
    // `reversed` is no status of transfer.completed: a reversal has its own event.
    expect(
      normalized({ id: 'evt_r4', type: 'transfer.completed', data: { reference: 'trf-4', status: 'reversed' } }),
    ).toEqual({ ok: false, issues: [{ path: 'data.status', message: expect.any(String) }] });
  });

  it('turns virtual_account.credited into virtual_account.credit, keeping a provider the bank has', () => {
    // What the gateway keeps of every credit, the sender's account and bank included (where a
    // return of it goes: decisions §21).
    const kept = {
      account_number: '8100000017',
      amount_minor: 750_050,
      transaction_reference: 'CR1',
      sender_name: 'OKAFOR STORES',
      sender_account_number: '0123456789',
      sender_bank_code: '058',
    };
    const credit = { ...kept, session_id: 'S2' };
    expect(
      normalized({ id: 'evt_c1', type: 'virtual_account.credited', data: { ...credit, provider: 'wema' } }),
    ).toEqual({
      ok: true,
      callback: {
        eventId: 'evt_c1',
        type: 'virtual_account.credit',
        data: { ...kept, session_id: 'S2', provider: 'wema' },
      },
    });
    const { session_id: _session, sender_account_number: _account, sender_bank_code: _bank, ...bare } = credit;
    expect(normalized({ id: 'evt_c2', type: 'virtual_account.credited', data: bare })).toEqual({
      ok: true,
      callback: { eventId: 'evt_c2', type: 'virtual_account.credit', data: bare },
    });
    expect(
      normalized({ id: 'evt_c3', type: 'virtual_account.credited', data: { ...credit, provider: 'providus' } }),
    ).toEqual({
      ok: false,
      issues: [{ path: 'data.provider', message: "is not one of this bank's virtual-account providers" }],
    });
    for (const amount of [0, -1, 1.5, '100', 2 ** 53]) {
      const result = normalized({
        id: 'evt_c4',
        type: 'virtual_account.credited',
        data: { ...credit, amount_minor: amount },
      });
      expect(result).toMatchObject({ ok: false, issues: [{ path: 'data.amount_minor' }] });
    }
  });

  it('passes card authorizations and other events through with their data', () => {
    for (const [type, data] of [
      [
        'card.authorization.request',
        {
          authorization_id: 'auth_1',
          card_reference: 'crd_1',
          amount_minor: 5_000,
          currency: 'NGN',
          merchant_name: 'Shop',
          merchant_category: '5411',
          channel: 'pos',
        },
      ],
      ['card.authorization.cleared', { authorization_id: 'auth_1', card_reference: 'crd_1', amount_minor: 4_000 }],
      ['card.authorization.reversed', { authorization_id: 'auth_1', card_reference: 'crd_1' }],
      ['bank.maintenance', { window: 'tonight' }],
    ] as const) {
      expect(normalized({ id: `evt_${type}`, type, data })).toEqual({
        ok: true,
        callback: { eventId: `evt_${type}`, type, data },
      });
    }
  });

  it('never throws on a hostile body', () => {
    const deep = `${'['.repeat(5_000)}${']'.repeat(5_000)}`;
    for (const hostile of [
      '',
      'null',
      '[]',
      '"x"',
      '{"id":1,"type":"x","data":{}}',
      '{"id":"a","type":"b","data":[]}',
      deep,
      '{"__proto__":{"id":"x"}}',
    ]) {
      const result = normalizeContractCallback(hostile);
      expect(result.ok, hostile.slice(0, 30)).toBe(false);
    }
    expect(normalizeContractCallback('{"id":"a","type":"transfer.completed","data":null}')).toMatchObject({
      ok: false,
    });
  });
});
