// The generic test bank (test/simulators/generic-bank.ts) against the contract it stands for
// (decisions §13, generic HTTP bank contract v1), over real HTTP with fetch: every route's answer
// and errors, idempotency by reference, the magic accounts, the statement to the kobo, callbacks
// verified with the `standardwebhooks` library, the /control faults, and a bank process killed
// with SIGKILL and started again on its data directory.
import { appendFileSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { spawn } from 'node:child_process';
import { Webhook } from 'standardwebhooks';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { bankByCode } from '../../src/sandbox-bank/banks.ts';
import {
  type GenericTestBank,
  type GenericTestBankOptions,
  MAGIC_ACCOUNTS,
  spawnGenericTestBank,
  startGenericTestBank,
} from '../simulators/generic-bank.ts';
import { eventually } from '../support/eventually.ts';
import { freePort } from '../support/ports.ts';
import { type ReceivedWebhook, type Receiver, startReceiver } from '../support/receiver.ts';

const API_KEY = 'tb_key_7f3c1e9a5d';
const SECRET = `whsec_${Buffer.from('generic-test-bank-signing-key-32b').toString('base64')}`;
const CALLBACK_PATH = '/provider-callbacks/generic';
const NE_SESSION = '999058261125100000000000000001';
const signatures = new Webhook(SECRET);

const dirs: string[] = [];
function dataDir(): string {
  const dir = mkdtempSync(join(tmpdir(), 'generic-test-bank-'));
  dirs.push(dir);
  return dir;
}

/** What every bank here starts with: the key, the signing secret and a data directory of its own. */
const bankSettings = () => ({ apiKey: API_KEY, webhookSecret: SECRET, dataDir: dataDir() });

/** A bank in this process whose callbacks go to the receiver; `options` add to the settings or override them. */
function startBankCallingBack(receiver: Receiver, options: Partial<GenericTestBankOptions> = {}) {
  return startGenericTestBank({ ...bankSettings(), callbackUrl: `${receiver.url}${CALLBACK_PATH}`, ...options });
}

interface Answer {
  status: number;
  body: any;
  text: string;
  headers: Headers;
}

type Call = ReturnType<typeof client>;

function client(url: () => string) {
  return async (method: string, path: string, body?: unknown, key: string | null = API_KEY): Promise<Answer> => {
    const response = await fetch(`${url()}${path}`, {
      method,
      headers: {
        'content-type': 'application/json',
        ...(key === null ? {} : { authorization: `Bearer ${key}` }),
      },
      ...(body === undefined ? {} : { body: typeof body === 'string' ? body : JSON.stringify(body) }),
    });
    const text = await response.text();
    let parsed: unknown;
    try {
      parsed = text === '' ? undefined : JSON.parse(text);
    } catch {
      parsed = undefined;
    }
    return { status: response.status, body: parsed, text, headers: response.headers };
  };
}

let sequence = 0;
function transfer(accountNumber = '0123456789', overrides: Record<string, unknown> = {}) {
  sequence += 1;
  return {
    reference: `trf_${process.pid}_${sequence}`,
    amount_minor: 150_000,
    currency: 'NGN',
    bank_code: '058',
    account_number: accountNumber,
    account_name: 'ADAOBI OKAFOR',
    narration: 'November rent',
    session_id: NE_SESSION,
    ...overrides,
  };
}

/** The callback bodies a receiver got, each checked with the standardwebhooks library first. */
function verifiedCallbacks(receiver: Receiver): { request: ReceivedWebhook; body: any }[] {
  return receiver.on(CALLBACK_PATH).map((request) => ({
    request,
    body: signatures.verify(request.body, request.headers as Record<string, string>),
  }));
}

function callbacksAbout(receiver: Receiver, key: 'reference' | 'transaction_reference', value: string) {
  return verifiedCallbacks(receiver).filter(({ body }) => body.data[key] === value);
}

/** Waits for the callbacks about `value`: until `count` of them have come, or (without a count) the first. */
function arrivedCallbacks(
  receiver: Receiver,
  key: 'reference' | 'transaction_reference',
  value: string,
  count?: number,
) {
  return eventually(() => {
    const found = callbacksAbout(receiver, key, value);
    return (count === undefined ? found.length > 0 : found.length === count) && found;
  });
}

/** A transfer's status as the bank gives it: with a 30-digit session of the bank's own, and the code and message. */
const statusAnswer = (reference: string, status: string, code: string, message: string) => ({
  reference,
  status,
  session_id: expect.stringMatching(/^\d{30}$/),
  code,
  message,
});

/** Opens a virtual account (reference, name, customer only) and gives the bank's answer's body. */
async function openAccount(call: Call, reference: string, accountName: string, customerId: string) {
  return (await call('POST', '/virtual-accounts', { reference, account_name: accountName, customer_id: customerId }))
    .body;
}

function isNuban(bankCode: string, accountNumber: string): boolean {
  const weights = [3, 7, 3, 3, 7, 3, 3, 7, 3, 3, 7, 3];
  const digits = `${bankCode}${accountNumber.slice(0, 9)}`;
  const sum = [...digits].reduce((total, digit, i) => total + Number(digit) * weights[i]!, 0);
  return /^\d{10}$/.test(accountNumber) && (10 - (sum % 10)) % 10 === Number(accountNumber[9]);
}

afterAll(() => {
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
});

describe('the contract, on a bank in this process', () => {
  let bank: GenericTestBank;
  let receiver: Receiver;
  const call = client(() => bank.url);

  beforeAll(async () => {
    receiver = await startReceiver();
    bank = await startBankCallingBack(receiver, { completionDelayMs: 200, callbackRetryBaseMs: 50 });
  });

  afterAll(async () => {
    await bank.stop();
    await receiver.close();
  });

  const finalStatus = (reference: string) =>
    eventually(async () => {
      const answer = await call('GET', `/transfers/${reference}`);
      return answer.body.status !== 'pending' && answer;
    });

  describe('bearer key', () => {
    it('answers 401 unauthorized without a key, with another key, and on control routes', async () => {
      for (const [path, key] of [
        ['/banks', null],
        ['/banks', 'not-the-key'],
        ['/control/callbacks', null],
      ] as const) {
        const answer = await call('GET', path, undefined, key);
        expect(answer.status).toBe(401);
        expect(answer.body).toEqual({
          code: 'unauthorized',
          message: 'Authorization: Bearer <api key> is missing or wrong',
        });
        expect(answer.headers.get('www-authenticate')).toBe('Bearer');
      }
    });

    it('takes the scheme in any case', async () => {
      const response = await fetch(`${bank.url}/banks`, { headers: { authorization: `bearer ${API_KEY}` } });
      expect(response.status).toBe(200);
    });
  });

  it("GET /banks lists the banks it knows as {code, name}, named as the sandbox bank's list names them", async () => {
    const answer = await call('GET', '/banks');
    expect(answer.status).toBe(200);
    const codes = ['044', '050', '070', '011', '214', '058', '101', '221', '232', '032', '033', '035', '057'];
    expect(answer.body).toEqual({ banks: codes.map((code) => ({ code, name: bankByCode(code)!.name })) });
    // Spot checks of the names themselves, first and last.
    expect(answer.body.banks[0].name).toBe('Access Bank');
    expect(answer.body.banks[12].name).toBe('Zenith Bank');
  });

  describe('POST /name-enquiry', () => {
    it('names the holder (the same name each time) with a 30-digit session id', async () => {
      const first = await call('POST', '/name-enquiry', { bank_code: '058', account_number: '0123456789' });
      const second = await call('POST', '/name-enquiry', { bank_code: '058', account_number: '0123456789' });
      expect(first.status).toBe(200);
      expect(Object.keys(first.body).sort()).toEqual(['account_name', 'session_id']);
      expect(first.body.account_name).toMatch(/^[A-Z]+ [A-Z]+$/);
      expect(second.body.account_name).toBe(first.body.account_name);
      expect(first.body.session_id).toMatch(/^\d{30}$/);
      expect(second.body.session_id).not.toBe(first.body.session_id);
    });

    it('answers 404 invalid_account for 0000000000', async () => {
      const answer = await call('POST', '/name-enquiry', { bank_code: '058', account_number: MAGIC_ACCOUNTS.invalid });
      expect(answer.status).toBe(404);
      expect(answer.body).toEqual({
        code: 'invalid_account',
        message: 'Invalid account: no such account at that bank',
      });
    });

    it('refuses a bank it does not list and an account number that is not 10 digits (400 validation_error)', async () => {
      const bankCode = await call('POST', '/name-enquiry', { bank_code: '999', account_number: '0123456789' });
      expect(bankCode.status).toBe(400);
      expect(bankCode.body).toEqual({
        code: 'validation_error',
        message: 'bank_code: is not a bank code this bank lists',
      });
      const digits = await call('POST', '/name-enquiry', { bank_code: '058', account_number: '012345678' });
      expect(digits.status).toBe(400);
      expect(digits.body).toEqual({ code: 'validation_error', message: 'account_number: must be 10 digits' });
    });
  });

  describe('POST /transfers and GET /transfers/{reference}', () => {
    it('takes an ordinary transfer (202 pending), settles it, and tells the gateway transfer.completed', async () => {
      const body = transfer();
      const taken = await call('POST', '/transfers', body);
      expect(taken.status).toBe(202);
      expect(taken.body).toEqual({ reference: body.reference, status: 'pending' });

      const final = await finalStatus(body.reference);
      expect(final.status).toBe(200);
      expect(final.body).toEqual(
        statusAnswer(body.reference, 'successful', '00', 'Approved or completed successfully'),
      );
      // The bank's own session for the transfer, not the name enquiry's.
      expect(final.body.session_id).not.toBe(NE_SESSION);

      const [callback] = await arrivedCallbacks(receiver, 'reference', body.reference);
      expect(callback!.body).toEqual({
        id: expect.stringMatching(/^evt_/),
        type: 'transfer.completed',
        data: final.body,
      });
      expect(callback!.request.headers['webhook-id']).toBe(callback!.body.id);
    });

    it('answers a pending transfer with status pending, code 09', async () => {
      const body = transfer(MAGIC_ACCOUNTS.neverCompletes);
      await call('POST', '/transfers', body);
      const answer = await call('GET', `/transfers/${body.reference}`);
      expect(answer.status).toBe(200);
      expect(answer.body).toEqual(statusAnswer(body.reference, 'pending', '09', 'Transaction in progress'));
    });

    it('answers a repeat for the same transfer: 202 while pending, 200 with the final status after', async () => {
      const body = transfer();
      await call('POST', '/transfers', body);
      const pendingRepeat = await call('POST', '/transfers', body);
      expect(pendingRepeat.status).toBe(202);
      expect(pendingRepeat.body).toEqual({ reference: body.reference, status: 'pending' });
      const final = await finalStatus(body.reference);
      const finalRepeat = await call('POST', '/transfers', body);
      expect(finalRepeat.status).toBe(200);
      expect(finalRepeat.body).toEqual(final.body);
      // A retry after a fresh name enquiry carries another session id: still the same transfer.
      const newSession = await call('POST', '/transfers', { ...body, session_id: '999058261125100000000000000002' });
      expect(newSession.status).toBe(200);
      expect(newSession.body).toEqual(final.body);
    });

    it('answers 409 duplicate_reference to the same reference with another body, and keeps the first', async () => {
      const body = transfer();
      await call('POST', '/transfers', body);
      for (const change of [
        { amount_minor: 150_001 },
        { account_number: '0123456780' },
        { bank_code: '057' },
        { account_name: 'SOMEONE ELSE' },
        { narration: 'another' },
      ]) {
        const answer = await call('POST', '/transfers', { ...body, ...change });
        expect(answer.status).toBe(409);
        expect(answer.body).toEqual({
          code: 'duplicate_reference',
          message: `reference ${body.reference} was already used for another transfer`,
        });
      }
      const settled = await finalStatus(body.reference);
      expect(settled.body.status).toBe('successful');
      const statement = await call('GET', `/statements/settlement/${new Date().toISOString().slice(0, 10)}`);
      const items = statement.body.items.filter((item: any) => item.reference === body.reference);
      expect(items.map((item: any) => item.amount_minor)).toEqual([150_000]);
    });

    it('answers 404 for a reference it never took', async () => {
      const answer = await call('GET', '/transfers/never-seen');
      expect(answer.status).toBe(404);
      expect(answer.body).toEqual({ code: 'not_found', message: 'The bank never took a transfer with this reference' });
    });

    it('refuses bodies the contract does not allow with 400 validation_error, and takes nothing', async () => {
      const cases: [Record<string, unknown>, string][] = [
        [{ currency: 'USD' }, 'currency: Invalid input: expected "NGN"'],
        [{ amount_minor: 0 }, 'amount_minor: Too small: expected number to be >=1'],
        [{ amount_minor: 1.5 }, 'amount_minor: must be an integer (kobo)'],
        [{ amount_minor: '1500' }, 'amount_minor: Invalid input: expected number, received string'],
        [{ narration: undefined }, 'narration: Invalid input: expected string, received undefined'],
        [{ session_id: 42 }, 'session_id: Invalid input: expected string, received number'],
        [{ reference: 'a\u0000b' }, 'reference: must not contain NUL'],
      ];
      for (const [change, message] of cases) {
        const body = transfer('0123456789', change);
        const answer = await call('POST', '/transfers', body);
        expect(answer.status, JSON.stringify(change)).toBe(400);
        expect(answer.body).toEqual({ code: 'validation_error', message });
        if (typeof body.reference === 'string' && !body.reference.includes('\u0000')) {
          expect((await call('GET', `/transfers/${body.reference}`)).status).toBe(404);
        }
      }
    });

    it('answers malformed JSON, unknown routes, wrong methods and oversized bodies with {code, message}', async () => {
      expect(await call('POST', '/transfers', '{"reference":')).toMatchObject({
        status: 400,
        body: { code: 'invalid_json', message: 'The body is not valid JSON' },
      });
      expect(await call('GET', '/nowhere')).toMatchObject({
        status: 404,
        body: { code: 'not_found', message: 'No route GET /nowhere' },
      });
      expect(await call('DELETE', '/transfers')).toMatchObject({
        status: 405,
        body: { code: 'method_not_allowed', message: 'DELETE is not allowed here' },
      });
      expect(await call('POST', '/transfers', JSON.stringify({ narration: 'x'.repeat(70_000) }))).toMatchObject({
        status: 413,
        body: { code: 'too_large', message: 'bodies are at most 65536 bytes' },
      });
      expect(await call('GET', '/transfers/%E0%A4%A')).toMatchObject({
        status: 400,
        body: { code: 'validation_error', message: 'path: bad percent-encoding' },
      });
    });
  });

  describe('magic accounts', () => {
    it('1111111111: taken, then failed with code 57, and transfer.completed says so', async () => {
      const body = transfer(MAGIC_ACCOUNTS.failsAfterAcceptance, { amount_minor: 25_050 });
      expect((await call('POST', '/transfers', body)).status).toBe(202);
      const final = await finalStatus(body.reference);
      expect(final.body).toEqual(statusAnswer(body.reference, 'failed', '57', 'Transaction not permitted to sender'));
      const [callback] = await arrivedCallbacks(receiver, 'reference', body.reference);
      expect(callback!.body.type).toBe('transfer.completed');
      expect(callback!.body.data).toEqual(final.body);
    });

    it('2222222222: taken and never settled on its own, while a transfer taken after it settles', async () => {
      const held = transfer(MAGIC_ACCOUNTS.neverCompletes);
      const ordinary = transfer();
      expect((await call('POST', '/transfers', held)).status).toBe(202);
      expect((await call('POST', '/transfers', ordinary)).status).toBe(202);
      await finalStatus(ordinary.reference);
      expect((await call('GET', `/transfers/${held.reference}`)).body.status).toBe('pending');
    });

    it('3333333333: takes it, then answers 500 (the answer lost); a repeat answers for the transfer taken', async () => {
      const body = transfer(MAGIC_ACCOUNTS.answerLost);
      const first = await call('POST', '/transfers', body);
      expect(first).toMatchObject({ status: 500, body: { code: 'system_malfunction', message: 'System malfunction' } });
      expect((await call('GET', `/transfers/${body.reference}`)).body).toMatchObject({
        reference: body.reference,
        status: 'pending',
      });
      const repeat = await call('POST', '/transfers', body);
      expect(repeat.status).toBe(202);
      expect(repeat.body).toEqual({ reference: body.reference, status: 'pending' });
      expect((await finalStatus(body.reference)).body.status).toBe('successful');
    });

    it('4444444444: 422 refused_not_taken, every time, and the bank never took it', async () => {
      const body = transfer(MAGIC_ACCOUNTS.refused);
      for (let i = 0; i < 2; i += 1) {
        const answer = await call('POST', '/transfers', body);
        expect(answer.status).toBe(422);
        expect(answer.body).toEqual({
          code: 'refused_not_taken',
          message: 'The beneficiary bank refused the transfer; it was not taken',
        });
      }
      expect((await call('GET', `/transfers/${body.reference}`)).status).toBe(404);
      // Its name enquiry answers: the refusal comes at submission, where failover happens.
      expect(
        (await call('POST', '/name-enquiry', { bank_code: '058', account_number: MAGIC_ACCOUNTS.refused })).status,
      ).toBe(200);
    });

    it('0000000000: a submission is refused 422 invalid_account, not taken', async () => {
      const body = transfer(MAGIC_ACCOUNTS.invalid);
      const answer = await call('POST', '/transfers', body);
      expect(answer.status).toBe(422);
      expect(answer.body).toEqual({ code: 'invalid_account', message: 'Invalid account: the transfer was not taken' });
      expect((await call('GET', `/transfers/${body.reference}`)).status).toBe(404);
    });
  });

  describe('control of transfers', () => {
    it('completes and fails a pending transfer (with the code given), each once', async () => {
      const completed = transfer(MAGIC_ACCOUNTS.neverCompletes);
      const failed = transfer(MAGIC_ACCOUNTS.neverCompletes);
      await call('POST', '/transfers', completed);
      await call('POST', '/transfers', failed);

      const done = await call('POST', `/control/transfers/${completed.reference}/complete`);
      expect(done.status).toBe(200);
      expect(done.body).toMatchObject({ reference: completed.reference, status: 'successful', code: '00' });
      const refused = await call('POST', `/control/transfers/${failed.reference}/fail`, {
        code: '51',
        message: 'Insufficient funds',
      });
      expect(refused.body).toMatchObject({ status: 'failed', code: '51', message: 'Insufficient funds' });
      expect((await call('GET', `/transfers/${failed.reference}`)).body).toEqual(refused.body);

      const again = await call('POST', `/control/transfers/${completed.reference}/fail`);
      expect(again.status).toBe(409);
      expect(again.body).toEqual({ code: 'already_final', message: 'The transfer is already successful' });
      expect((await call('POST', '/control/transfers/nope/complete')).status).toBe(404);

      const sent = await eventually(() => {
        const found = [
          ...callbacksAbout(receiver, 'reference', completed.reference),
          ...callbacksAbout(receiver, 'reference', failed.reference),
        ];
        return found.length === 2 && found;
      });
      expect(sent.map(({ body }) => body.data)).toEqual([done.body, refused.body]);
    });
  });

  describe('virtual accounts and credits', () => {
    it('opens an account (201, a NUBAN at Wema Bank) and the same one for a repeat of the reference', async () => {
      const body = {
        reference: `va_${process.pid}_1`,
        account_name: 'TOLU STORES',
        customer_id: 'cus_1',
        bvn: '22222222222',
      };
      const opened = await call('POST', '/virtual-accounts', body);
      expect(opened.status).toBe(201);
      expect(opened.body).toEqual({ account_number: expect.any(String), bank_code: '035', bank_name: 'Wema Bank' });
      expect(isNuban('035', opened.body.account_number)).toBe(true);
      const repeat = await call('POST', '/virtual-accounts', body);
      expect(repeat.status).toBe(201);
      expect(repeat.body).toEqual(opened.body);
      // Name enquiry on it gives the name it was opened with.
      const named = await call('POST', '/name-enquiry', {
        bank_code: '035',
        account_number: opened.body.account_number,
      });
      expect(named.body.account_name).toBe('TOLU STORES');
    });

    it('honours preferred_bank by slug or code, and opens at Wema Bank for a bank it does not issue at', async () => {
      const at = async (preferred: string, n: number) =>
        (
          await call('POST', '/virtual-accounts', {
            reference: `va_${process.pid}_pref_${n}`,
            account_name: 'A B',
            customer_id: 'cus_2',
            preferred_bank: preferred,
          })
        ).body;
      expect(await at('providus-bank', 1)).toMatchObject({ bank_code: '101', bank_name: 'Providus Bank' });
      expect(await at('101', 2)).toMatchObject({ bank_code: '101' });
      expect(await at('zenith-bank', 3)).toMatchObject({ bank_code: '035' });
      const account = await at('providus-bank', 4);
      expect(isNuban('101', account.account_number)).toBe(true);
    });

    it('refuses a BVN that is not 11 digits without repeating it back', async () => {
      const answer = await call('POST', '/virtual-accounts', {
        reference: 'va_bad_bvn',
        account_name: 'A B',
        customer_id: 'c',
        bvn: '1234567890',
      });
      expect(answer.status).toBe(400);
      expect(answer.body).toEqual({ code: 'validation_error', message: 'bvn: must be 11 digits' });
    });

    it('credits an account and sends virtual_account.credited; a repeat of the reference is the same credit notified again', async () => {
      const account = await openAccount(call, `va_${process.pid}_credit`, 'KOLA ENTERPRISES', 'cus_3');
      const path = `/control/virtual-accounts/${account.account_number}/credits`;
      const credit = {
        amount_minor: 1_234_567,
        sender_name: 'EMEKA EZE',
        reference: 'pay-1',
        sender_account_number: '0011223344',
        sender_bank_code: '044',
      };
      const first = await call('POST', path, credit);
      expect(first.status).toBe(202);
      expect(first.body).toEqual({
        transaction_reference: expect.stringMatching(/^TBCR[0-9A-F]{24}$/),
        reference: 'pay-1',
        session_id: expect.stringMatching(/^\d{30}$/),
        amount_minor: 1_234_567,
        callback_id: expect.stringMatching(/^evt_/),
      });
      const second = await call('POST', path, credit);
      expect(second.status).toBe(202);
      expect(second.body).toEqual({ ...first.body, callback_id: expect.stringMatching(/^evt_/) });
      expect(second.body.callback_id).not.toBe(first.body.callback_id);

      const sent = await arrivedCallbacks(receiver, 'transaction_reference', first.body.transaction_reference, 2);
      for (const { body } of sent) {
        expect(body.type).toBe('virtual_account.credited');
        expect(body.data).toEqual({
          account_number: account.account_number,
          amount_minor: 1_234_567,
          transaction_reference: first.body.transaction_reference,
          sender_name: 'EMEKA EZE',
          sender_account_number: '0011223344',
          sender_bank_code: '044',
        });
      }
      expect(sent.map(({ body }) => body.id)).toEqual([first.body.callback_id, second.body.callback_id]);

      const conflict = await call('POST', path, { ...credit, amount_minor: 1_234_568 });
      expect(conflict.status).toBe(409);
      expect(conflict.body).toEqual({
        code: 'duplicate_reference',
        message: 'This reference was already used for a credit of another amount',
      });
    });

    it('sends a credit without sender details with only the fields it has', async () => {
      const account = await openAccount(call, `va_${process.pid}_plain`, 'PLAIN', 'cus_4');
      const { body: credit } = await call('POST', `/control/virtual-accounts/${account.account_number}/credits`, {
        amount_minor: 500,
      });
      const [sent] = await arrivedCallbacks(receiver, 'transaction_reference', credit.transaction_reference, 1);
      expect(sent!.body.data).toEqual({
        account_number: account.account_number,
        amount_minor: 500,
        transaction_reference: credit.transaction_reference,
        sender_name: 'TEST BANK SENDER',
      });
    });

    it('closes an account (200, again 200), refuses new credits to it, and 404s an unknown one', async () => {
      const account = await openAccount(call, `va_${process.pid}_close`, 'CLOSING', 'cus_5');
      for (let i = 0; i < 2; i += 1) {
        const closed = await call('POST', `/virtual-accounts/${account.account_number}/close`);
        expect(closed.status).toBe(200);
        expect(closed.body).toEqual({ ...account, status: 'closed' });
      }
      const credit = await call('POST', `/control/virtual-accounts/${account.account_number}/credits`, {
        amount_minor: 100,
      });
      expect(credit.status).toBe(409);
      expect(credit.body).toEqual({ code: 'account_closed', message: 'The virtual account is closed' });
      const unknown = await call('POST', '/virtual-accounts/0000000001/close');
      expect(unknown.status).toBe(404);
      expect(unknown.body).toEqual({ code: 'not_found', message: 'No virtual account with this number' });
      expect((await call('POST', '/control/virtual-accounts/0000000001/credits', { amount_minor: 100 })).status).toBe(
        404,
      );
    });
  });

  describe('faults', () => {
    it('answers the next N calls with 503, then as usual', async () => {
      await call('POST', '/control/faults', { fault: '503', count: 2 });
      for (let i = 0; i < 2; i += 1) {
        const answer = await call('GET', '/banks');
        expect(answer.status).toBe(503);
        expect(answer.body).toEqual({ code: 'unavailable', message: 'Service temporarily unavailable' });
      }
      expect((await call('GET', '/banks')).status).toBe(200);
    });

    it('answers an HTML error page, as a proxy in front of a bank does', async () => {
      await call('POST', '/control/faults', { fault: 'html' });
      const answer = await call('GET', '/banks');
      expect(answer.status).toBe(502);
      expect(answer.headers.get('content-type')).toBe('text/html');
      expect(answer.text).toContain('<h1>502 Bad Gateway</h1>');
    });

    it('resets the connection, and hangs without answering', async () => {
      await call('POST', '/control/faults', { fault: 'reset' });
      await expect(call('GET', '/banks')).rejects.toThrow('fetch failed');
      await call('POST', '/control/faults', { fault: 'hang' });
      await expect(
        fetch(`${bank.url}/banks`, {
          headers: { authorization: `Bearer ${API_KEY}` },
          signal: AbortSignal.timeout(300),
        }),
      ).rejects.toThrow(/aborted due to timeout/);
      expect((await call('GET', '/banks')).status).toBe(200);
    });

    it('meets only the calls its route names', async () => {
      await call('POST', '/control/faults', { fault: '503', route: 'POST /transfers' });
      expect((await call('GET', '/banks')).status).toBe(200);
      expect((await call('POST', '/name-enquiry', { bank_code: '058', account_number: '0123456789' })).status).toBe(
        200,
      );
      expect((await call('GET', '/control/faults')).body).toEqual({
        faults: [{ fault: '503', remaining: 1, route: 'POST /transfers' }],
      });
      expect((await call('POST', '/transfers', transfer())).status).toBe(503);
      expect((await call('GET', '/control/faults')).body).toEqual({ faults: [] });
    });

    it('loses the answer to a submission it took: the connection dies, the transfer is known', async () => {
      await call('POST', '/control/faults', { fault: 'lose_answer' });
      const body = transfer(MAGIC_ACCOUNTS.neverCompletes);
      await expect(call('POST', '/transfers', body)).rejects.toThrow('fetch failed');
      const known = await call('GET', `/transfers/${body.reference}`);
      expect(known.status).toBe(200);
      expect(known.body).toMatchObject({ reference: body.reference, status: 'pending' });
      // The retry the gateway makes answers for that one transfer.
      const retry = await call('POST', '/transfers', body);
      expect(retry.status).toBe(202);
      expect(retry.body).toEqual({ reference: body.reference, status: 'pending' });
    });

    it('clears planned faults', async () => {
      await call('POST', '/control/faults', { fault: 'reset', count: 5 });
      expect((await call('DELETE', '/control/faults')).body).toEqual({ faults: [] });
      expect((await call('GET', '/banks')).status).toBe(200);
    });
  });
});

describe('callbacks', () => {
  /** Runs `work` against a bank of its own whose callbacks go to the receiver; closes both after. */
  async function withBankCallingBack(
    receiver: Receiver,
    options: Partial<GenericTestBankOptions>,
    work: (call: Call) => Promise<void>,
  ) {
    const bank = await startBankCallingBack(receiver, options);
    try {
      await work(client(() => bank.url));
    } finally {
      await bank.stop();
      await receiver.close();
    }
  }

  it('retries a callback the gateway did not take, with the same id and body, each try signed', async () => {
    const receiver = await startReceiver();
    receiver.plan(CALLBACK_PATH, { status: 500, body: 'busy' }, { status: 503 });
    await withBankCallingBack(receiver, { completionDelayMs: 0, callbackRetryBaseMs: 20 }, async (call) => {
      const body = transfer();
      await call('POST', '/transfers', body);
      const tries = await arrivedCallbacks(receiver, 'reference', body.reference, 3);
      expect(new Set(tries.map(({ request }) => request.headers['webhook-id'])).size).toBe(1);
      expect(new Set(tries.map(({ request }) => request.body)).size).toBe(1);
      const [callback] = (await call('GET', '/control/callbacks')).body.callbacks;
      expect(callback).toMatchObject({ id: tries[0]!.body.id, state: 'delivered', attempts: 3, last_error: null });
    });
  });

  it('gives up after the bounded number of tries', async () => {
    const receiver = await startReceiver({ answer: () => ({ status: 500 }) });
    const options = { completionDelayMs: 0, callbackRetryBaseMs: 10, callbackMaxAttempts: 4 };
    await withBankCallingBack(receiver, options, async (call) => {
      await call('POST', '/transfers', transfer());
      const [callback] = await eventually(async () => {
        const { callbacks } = (await call('GET', '/control/callbacks')).body;
        return callbacks[0]?.state === 'gave_up' && callbacks;
      });
      expect(callback).toMatchObject({ attempts: 4, last_error: 'HTTP 500: ' });
      expect(receiver.on(CALLBACK_PATH).map((request) => request.headers['webhook-id'])).toEqual(
        Array(4).fill(callback.id),
      );
    });
  });

  it('in drop mode loses callbacks (never sent), and delivers again once switched back', async () => {
    const receiver = await startReceiver();
    await withBankCallingBack(receiver, { completionDelayMs: 0 }, async (call) => {
      expect((await call('POST', '/control/callbacks', { mode: 'drop' })).body).toEqual({ mode: 'drop' });
      const lost = transfer(MAGIC_ACCOUNTS.neverCompletes);
      await call('POST', '/transfers', lost);
      await call('POST', `/control/transfers/${lost.reference}/complete`);
      expect((await call('POST', '/control/callbacks', { mode: 'deliver' })).body).toEqual({ mode: 'deliver' });
      const kept = transfer(MAGIC_ACCOUNTS.neverCompletes);
      await call('POST', '/transfers', kept);
      await call('POST', `/control/transfers/${kept.reference}/complete`);
      // Callbacks go out in the order they were queued: had the lost one been sent, it came first.
      await arrivedCallbacks(receiver, 'reference', kept.reference, 1);
      expect(verifiedCallbacks(receiver).map(({ body }) => body.data.reference)).toEqual([kept.reference]);
      const { body: listed } = await call('GET', '/control/callbacks');
      expect(listed.callbacks.map((callback: any) => [callback.data.reference, callback.state])).toEqual([
        [lost.reference, 'dropped'],
        [kept.reference, 'delivered'],
      ]);
      expect((await call('POST', '/control/callbacks', { mode: 'sometimes' })).status).toBe(400);
    });
  });
});

describe('GET /statements/settlement/{date}', () => {
  it("lists the UTC day's ended transfers and received credits, to the kobo, with the connector's name on credits", async () => {
    let clock = new Date('2026-03-14T09:00:00.000Z');
    const bank = await startGenericTestBank({
      ...bankSettings(),
      completionDelayMs: 0,
      connectorName: 'acme-bank',
      now: () => clock,
    });
    try {
      const call = client(() => bank.url);
      const paid = transfer('0123456789', { amount_minor: 150_000, bank_code: '058' });
      const failed = transfer(MAGIC_ACCOUNTS.failsAfterAcceptance, { amount_minor: 25_050, bank_code: '033' });
      const pending = transfer(MAGIC_ACCOUNTS.neverCompletes, { amount_minor: 99_999 });
      const tomorrow = transfer(MAGIC_ACCOUNTS.neverCompletes, { amount_minor: 7_001 });
      const settled = async (body: { reference: string }) =>
        eventually(async () => (await call('GET', `/transfers/${body.reference}`)).body.status !== 'pending');
      for (const body of [pending, tomorrow, paid]) await call('POST', '/transfers', body);
      await settled(paid);
      clock = new Date('2026-03-14T09:05:00.000Z');
      await call('POST', '/transfers', failed);
      await settled(failed);
      clock = new Date('2026-03-14T15:30:00.000Z');
      const account = await openAccount(call, 'stmt-va', 'STATEMENT LTD', 'cus_s');
      const { body: credit } = await call('POST', `/control/virtual-accounts/${account.account_number}/credits`, {
        amount_minor: 1_000_000,
        reference: 'in-1',
      });
      // The same credit notified again is still one credit.
      await call('POST', `/control/virtual-accounts/${account.account_number}/credits`, {
        amount_minor: 1_000_000,
        reference: 'in-1',
      });
      clock = new Date('2026-03-14T23:59:59.999Z');
      const { body: late } = await call('POST', `/control/virtual-accounts/${account.account_number}/credits`, {
        amount_minor: 12_345,
      });
      clock = new Date('2026-03-15T00:00:00.000Z');
      await call('POST', `/control/transfers/${tomorrow.reference}/complete`);
      clock = new Date('2026-03-15T08:00:00.000Z');

      const session = async (reference: string) => (await call('GET', `/transfers/${reference}`)).body.session_id;
      const day = await call('GET', '/statements/settlement/2026-03-14');
      expect(day.status).toBe(200);
      expect(day.body).toEqual({
        date: '2026-03-14',
        generated_at: '2026-03-15T08:00:00.000Z',
        items: [
          {
            kind: 'transfer',
            reference: paid.reference,
            session_id: await session(paid.reference),
            amount_minor: 150_000,
            status: 'successful',
            provider: null,
            bank_code: '058',
            account_number: '0123456789',
            value_time: '2026-03-14T09:00:00.000Z',
          },
          {
            kind: 'transfer',
            reference: failed.reference,
            session_id: await session(failed.reference),
            amount_minor: 25_050,
            status: 'failed',
            provider: null,
            bank_code: '033',
            account_number: MAGIC_ACCOUNTS.failsAfterAcceptance,
            value_time: '2026-03-14T09:05:00.000Z',
          },
          {
            kind: 'inbound_credit',
            reference: credit.transaction_reference,
            session_id: credit.session_id,
            amount_minor: 1_000_000,
            status: 'successful',
            provider: 'acme-bank',
            bank_code: '035',
            account_number: account.account_number,
            value_time: '2026-03-14T15:30:00.000Z',
          },
          {
            kind: 'inbound_credit',
            reference: late.transaction_reference,
            session_id: late.session_id,
            amount_minor: 12_345,
            status: 'successful',
            provider: 'acme-bank',
            bank_code: '035',
            account_number: account.account_number,
            value_time: '2026-03-14T23:59:59.999Z',
          },
        ],
      });
      const sum = (kind: string, status: string) =>
        day.body.items
          .filter((item: any) => item.kind === kind && item.status === status)
          .reduce((total: number, item: any) => total + item.amount_minor, 0);
      expect(sum('transfer', 'successful')).toBe(150_000);
      expect(sum('transfer', 'failed')).toBe(25_050);
      expect(sum('inbound_credit', 'successful')).toBe(1_012_345);

      const next = await call('GET', '/statements/settlement/2026-03-15');
      expect(next.body.items).toEqual([
        expect.objectContaining({ reference: tomorrow.reference, amount_minor: 7_001, status: 'successful' }),
      ]);
      expect((await call('GET', '/statements/settlement/2026-03-13')).body.items).toEqual([]);
      const bad = await call('GET', '/statements/settlement/2026-02-30');
      expect(bad.status).toBe(400);
      expect(bad.body).toEqual({ code: 'validation_error', message: 'date: must be a date such as 2026-11-24' });
    } finally {
      await bank.stop();
    }
  });
});

describe('as its own process', () => {
  it('keeps what it took across SIGKILL and a restart on the same data directory', async () => {
    const receiver = await startReceiver();
    const settings = {
      ...bankSettings(),
      port: await freePort(),
      callbackUrl: `${receiver.url}${CALLBACK_PATH}`,
      completionDelayMs: 1500,
      callbackRetryBaseMs: 50,
    };
    let bank = await spawnGenericTestBank(settings);
    const call = client(() => bank.url);
    try {
      // Delivered before the kill: never sent again after.
      const early = transfer(MAGIC_ACCOUNTS.neverCompletes);
      await call('POST', '/transfers', early);
      await call('POST', `/control/transfers/${early.reference}/complete`);
      await arrivedCallbacks(receiver, 'reference', early.reference, 1);

      const ordinary = transfer('0123456789', { amount_minor: 777_777 });
      const held = transfer(MAGIC_ACCOUNTS.neverCompletes);
      expect((await call('POST', '/transfers', ordinary)).status).toBe(202);
      expect((await call('POST', '/transfers', held)).status).toBe(202);
      const account = await openAccount(call, 'kill-va', 'SURVIVOR', 'cus_k');
      await bank.kill();
      // A line cut short by a crash mid-write: the restarted bank drops it and goes on.
      appendFileSync(join(settings.dataDir, 'journal.jsonl'), '{"kind":"transfer.accep');

      bank = await spawnGenericTestBank(settings);
      const known = await call('GET', `/transfers/${ordinary.reference}`);
      expect(known.status).toBe(200);
      expect(known.body.reference).toBe(ordinary.reference);
      expect((await call('GET', `/transfers/${held.reference}`)).body.status).toBe('pending');
      expect((await call('POST', '/transfers', { ...ordinary, amount_minor: 1 })).status).toBe(409);
      expect(
        (await call('POST', '/virtual-accounts', { reference: 'kill-va', account_name: 'X', customer_id: 'y' })).body,
      ).toEqual(account);

      // It settles after the restart, and the gateway hears of it once; the early one stays told once.
      const [callback] = await arrivedCallbacks(receiver, 'reference', ordinary.reference, 1);
      expect(callback!.body.data).toMatchObject({ reference: ordinary.reference, status: 'successful' });
      expect(callbacksAbout(receiver, 'reference', early.reference)).toHaveLength(1);
      expect(await bank.stop()).toBe(0);
      expect(bank.output()).toContain(`generic test bank listening on http://127.0.0.1:${settings.port}`);
    } finally {
      await bank.kill();
      await receiver.close();
    }
  });

  it('kill() in the same process cuts connections at once, and a bank started on the directory knows what it took', async () => {
    const settings = bankSettings();
    const first = await startGenericTestBank(settings);
    const held = transfer(MAGIC_ACCOUNTS.neverCompletes);
    expect((await client(() => first.url)('POST', '/transfers', held)).status).toBe(202);
    await client(() => first.url)('POST', '/control/faults', { fault: 'hang' });
    const hanging = fetch(`${first.url}/banks`, { headers: { authorization: `Bearer ${API_KEY}` } });
    // The call has reached the bank (its fault taken) and waits there when the bank dies.
    await eventually(async () => (await client(() => first.url)('GET', '/control/faults')).body.faults.length === 0);
    await first.kill();
    await expect(hanging).rejects.toThrow('fetch failed');
    const second = await startGenericTestBank({ ...settings, port: first.port });
    try {
      const known = await client(() => second.url)('GET', `/transfers/${held.reference}`);
      expect(known.status).toBe(200);
      expect(known.body).toMatchObject({ reference: held.reference, status: 'pending' });
    } finally {
      await second.stop();
    }
  });

  it('refuses to start without an API key, in one line', async () => {
    const { GENERIC_BANK_API_KEY: _key, GENERIC_BANK_WEBHOOK_SECRET: _secret, ...env } = process.env;
    const child = spawn(
      process.execPath,
      ['test/simulators/generic-bank.ts', '--webhook-secret', SECRET, '--data-dir', dataDir()],
      { env, stdio: ['ignore', 'pipe', 'pipe'] },
    );
    let stderr = '';
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    const code = await new Promise<number | null>((resolve) => child.once('exit', resolve));
    expect(code).toBe(2);
    expect(stderr).toBe('generic test bank: --api-key (or GENERIC_BANK_API_KEY) is required\n');
  });
});
