// Runs the real sandbox bank (HTTP server and its background runner) for a test file, with its
// state in that file's database and its callbacks aimed at that file's gateway. Name enquiries are
// counted where they arrive (by account number, and how many were in flight at once), and can be
// made slow, for the tests of the bounds on them (decisions §18); a transfer's answer can be made to
// leave after the bank has taken (and completed) it.
import { setTimeout as delay } from 'node:timers/promises';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { CONTRACT_PATHS } from '../../src/connectors/generic/contract.ts';
import { buildSandboxBank } from '../../src/sandbox-bank/app.ts';
import { SandboxRunner } from '../../src/sandbox-bank/runner.ts';
import { SandboxStore } from '../../src/sandbox-bank/store.ts';
import { TEST_CALLBACK_SECRET, TEST_SANDBOX_BANK_API_KEY, TEST_SANDBOX_CONTROL_TOKEN } from './app.ts';

export interface TestSandboxBank {
  url: string;
  app: FastifyInstance;
  store: SandboxStore;
  /** POSTs to a control route, with the bank's control token, and returns the JSON answer. */
  control(path: string, body?: unknown): Promise<{ status: number; body: any }>;
  /** Calls a route of the contract with the bank's API key (or the given Authorization header). */
  call(
    method: 'GET' | 'POST',
    path: string,
    body?: unknown,
    authorization?: string,
  ): Promise<{ status: number; body: any }>;
  /** The API key its contract routes need (TEST_SANDBOX_BANK_API_KEY). */
  apiKey: string;
  /** How many requests the bank has received so far (from anyone: the gateway, the tests). */
  requestCount(): Promise<number>;
  /** The token its /control/* routes need (TEST_SANDBOX_CONTROL_TOKEN unless the test gave another). */
  controlToken: string;
  /** The name enquiries it has received: each one's account number, and the most it held at once. */
  nameEnquiries: { accounts: string[]; maxInFlight: number };
  /** From now on each name enquiry takes `ms` before it is answered (0: at once, as by default). */
  slowNameEnquiries(ms: number): void;
  /**
   * From now on the answer to each transfer it takes leaves `ms` after the bank has taken it (0: at
   * once, as by default): its completion, and its callback, may come first.
   */
  slowTransferAnswers(ms: number): void;
  close(): Promise<void>;
}

export async function startSandboxBank(options: {
  databaseUrl: string;
  gatewayUrl: string;
  port?: number;
  completionDelayMs?: number;
  hangMs?: number;
  /** Where the card processor asks for authorization decisions (the gateway's callback route by default). */
  authorizationUrl?: string;
  /** SANDBOX_BANK_CONTROL_TOKEN of this bank; TEST_SANDBOX_CONTROL_TOKEN by default. */
  controlToken?: string;
}): Promise<TestSandboxBank> {
  const controlToken = options.controlToken ?? TEST_SANDBOX_CONTROL_TOKEN;
  const store = new SandboxStore(options.databaseUrl);
  await store.migrate();
  const app = await buildSandboxBank({
    store,
    completionDelayMs: options.completionDelayMs ?? 200,
    hangMs: options.hangMs ?? 3_000,
    logLevel: 'warn',
    apiKey: TEST_SANDBOX_BANK_API_KEY,
    authorizationUrl: options.authorizationUrl ?? `${options.gatewayUrl}/provider-callbacks/sandbox`,
    callbackSecret: TEST_CALLBACK_SECRET,
    controlToken,
  });
  let requests = 0;
  app.addHook('onRequest', async () => {
    requests += 1;
  });
  const nameEnquiries = { accounts: [] as string[], maxInFlight: 0 };
  const enquiring = new WeakSet<FastifyRequest>();
  let inFlight = 0;
  let enquiryDelayMs = 0;
  app.addHook('preHandler', async (request) => {
    if (request.routeOptions.url !== CONTRACT_PATHS.nameEnquiry) return;
    enquiring.add(request);
    inFlight += 1;
    nameEnquiries.maxInFlight = Math.max(nameEnquiries.maxInFlight, inFlight);
    nameEnquiries.accounts.push((request.body as { account_number: string }).account_number);
    if (enquiryDelayMs > 0) await delay(enquiryDelayMs);
  });
  app.addHook('onResponse', async (request) => {
    if (enquiring.has(request)) inFlight -= 1;
  });
  let transferAnswerDelayMs = 0;
  app.addHook('onSend', async (request, _reply, payload) => {
    if (transferAnswerDelayMs > 0 && request.method === 'POST' && request.routeOptions.url === CONTRACT_PATHS.transfers)
      await delay(transferAnswerDelayMs);
    return payload;
  });
  const url = await app.listen({ host: '127.0.0.1', port: options.port ?? 0 });
  const runner = new SandboxRunner({
    store,
    callbackUrl: `${options.gatewayUrl}/provider-callbacks/sandbox`,
    callbackSecret: TEST_CALLBACK_SECRET,
    intervalMs: 50,
  });
  runner.start();
  return {
    url,
    app,
    store,
    controlToken,
    apiKey: TEST_SANDBOX_BANK_API_KEY,
    async call(method, path, body, authorization = `Bearer ${TEST_SANDBOX_BANK_API_KEY}`) {
      const response = await fetch(`${url}${path}`, {
        method,
        headers: { authorization, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
        body: body === undefined ? undefined : JSON.stringify(body),
      });
      return { status: response.status, body: await response.json() };
    },
    async control(path, body) {
      const response = await fetch(`${url}${path}`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', authorization: `Bearer ${controlToken}` },
        body: JSON.stringify(body ?? {}),
      });
      return { status: response.status, body: await response.json() };
    },
    async requestCount() {
      return requests;
    },
    nameEnquiries,
    slowNameEnquiries(ms) {
      enquiryDelayMs = ms;
    },
    slowTransferAnswers(ms) {
      transferAnswerDelayMs = ms;
    },
    async close() {
      await runner.stop();
      await app.close();
      await store.close();
    },
  };
}
