// The sandbox bank does its background work when it falls due, not at its runner's next poll: a
// transfer it accepts completes, and its callback leaves, once completionDelayMs has passed; a
// control request that queues a callback has it sent at once. The runner here polls every 10
// minutes, so a callback that arrives within the test's wait came from the bank being told.
import { type IncomingMessage, type Server, createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CONTRACT_PATHS } from '../../src/connectors/generic/contract.ts';
import { MAGIC_ACCOUNTS, buildSandboxBank } from '../../src/sandbox-bank/app.ts';
import { SandboxRunner } from '../../src/sandbox-bank/runner.ts';
import { SandboxStore } from '../../src/sandbox-bank/store.ts';
import { TEST_CALLBACK_SECRET, TEST_SANDBOX_BANK_API_KEY } from '../support/app.ts';
import { type TestDatabase, createTestDatabase } from '../support/database.ts';
import { eventually } from '../support/eventually.ts';

let db: TestDatabase;
let store: SandboxStore;
let bank: FastifyInstance;
let runner: SandboxRunner;
let receiver: Server;
const received: { type: string; data: Record<string, unknown> }[] = [];

const body = (request: IncomingMessage) =>
  new Promise<string>((resolve) => {
    let text = '';
    request.setEncoding('utf8');
    request.on('data', (chunk: string) => (text += chunk));
    request.on('end', () => resolve(text));
  });

beforeAll(async () => {
  db = await createTestDatabase(2);
  receiver = createServer((request, response) => {
    void body(request).then((text) => {
      received.push(JSON.parse(text) as (typeof received)[number]);
      response.writeHead(200).end('{}');
    });
  });
  await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', resolve));
  const { port } = receiver.address() as AddressInfo;
  store = new SandboxStore(db.url);
  await store.migrate();
  runner = new SandboxRunner({
    store,
    callbackUrl: `http://127.0.0.1:${port}/provider-callbacks/sandbox`,
    callbackSecret: TEST_CALLBACK_SECRET,
    intervalMs: 600_000,
  });
  bank = await buildSandboxBank({
    store,
    apiKey: TEST_SANDBOX_BANK_API_KEY,
    completionDelayMs: 300,
    hangMs: 1,
    logLevel: 'silent',
    onDue: (inMs) => runner.dueIn(inMs),
  });
  // Its first pass runs now and finds nothing; the next poll would be 10 minutes away.
  runner.start();
});
afterAll(async () => {
  await runner?.stop();
  await bank?.close();
  await store?.close();
  await new Promise((resolve) => receiver?.close(resolve));
  await db?.drop();
});

const submit = (reference: string, account: string) =>
  bank.inject({
    method: 'POST',
    url: CONTRACT_PATHS.transfers,
    headers: { authorization: `Bearer ${TEST_SANDBOX_BANK_API_KEY}` },
    payload: {
      reference,
      amount_minor: 1_234_500,
      currency: 'NGN',
      bank_code: '058',
      account_number: account,
      account_name: 'TEST RECIPIENT',
      narration: 'due test',
    },
  });

const callbackOf = (reference: string) => () => received.find((callback) => callback.data.reference === reference);

describe('the sandbox bank’s background work, when due', () => {
  it('completes an accepted transfer after its delay and calls back then, without waiting for a poll', async () => {
    const accepted = await submit('due-ordinary', '0123456789');
    expect(accepted.statusCode).toBe(202);
    const acceptedAt = Date.now();
    const callback = await eventually(callbackOf('due-ordinary'), 20_000, 10);
    // Not before its delay: completion is when the bank said, and no earlier.
    expect(Date.now() - acceptedAt).toBeGreaterThanOrEqual(300);
    expect(callback).toMatchObject({
      type: 'transfer.completed',
      data: { reference: 'due-ordinary', status: 'successful', code: '00' },
    });
    expect((await store.findTransfer('due-ordinary'))?.status).toBe('successful');
  });

  it('leaves a held transfer alone, and sends its callback as soon as an operator confirms it', async () => {
    expect((await submit('due-held', MAGIC_ACCOUNTS.neverConfirms)).statusCode).toBe(202);
    const confirmed = await bank.inject({ method: 'POST', url: '/control/transfers/due-held/confirm' });
    expect(confirmed.json()).toEqual({ reference: 'due-held', status: 'successful' });
    const callback = await eventually(callbackOf('due-held'), 20_000, 10);
    expect(callback).toMatchObject({ data: { reference: 'due-held', status: 'successful' } });
    expect(received.filter((one) => one.data.reference === 'due-held')).toHaveLength(1);
  });
});
