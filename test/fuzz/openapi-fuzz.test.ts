// Fuzzing from the app's own OpenAPI document (issue #14 item 3): for every operation the document
// lists — so a route added later is fuzzed without editing this file — valid requests built from
// its schemas (with the test tenant's real ids, so that they reach the handlers) and mutated ones
// (test/fuzz/requests.ts) go to the real app on real PostgreSQL and Temporal. Every answer must be
// one the document declares for the operation, in its declared shape and its area's envelope, and
// never a 5xx (test/fuzz/responses.ts). `npm test` runs a fixed seed and a small budget; `npm run
// test:long` twenty times more at a fresh seed. A failure prints the seed and the exact request.
import { createHash } from 'node:crypto';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { postMovement } from '../../src/ledger/ledger.ts';
import { walletFunding } from '../../src/ledger/movements.ts';
import { createTenant, issueKey, revokeKey } from '../../src/tenants/tenants.ts';
import { auth, newSigningSecret } from '../support/api.ts';
import { budget, runSeed } from '../support/long-run.ts';
import { type Operation, createTenantResources, documentOperations } from '../support/openapi.ts';
import { type GatewayStack, useGatewayStack } from '../support/stack.ts';
import { type FuzzContext, type FuzzRequest, requestsFor } from './requests.ts';
import { type Answer, answerOf, faultsOf, isStreamOperation, streamAnswerOf } from './responses.ts';

const TASK_QUEUE = `fuzz-${process.pid}`;
const SEED = runSeed('openapi-fuzz');
/** Requests per operation. */
const RUNS = budget(75, 1_500);
/** Valid requests sent per writing operation (each may create a transfer, a card, a funding…). */
const VALID_WRITES = budget(10, 200);
/** The whole run's limit: 100 ms a request on average, far slower than it runs (10–20 ms here). */
const RUN_WITHIN_MS = budget(300_000, 7_200_000);
/** Longer than any request may wait for a dependency (DEPENDENCY_TIMEOUT_MS, 10 s): past it, a hang. */
const ANSWER_WITHIN_MS = 15_000;

let stack: GatewayStack;

useGatewayStack({ taskQueue: TASK_QUEUE, bank: { completionDelayMs: 100 } }, (started) => {
  stack = started;
});

/** The operation's own seed, stable when operations are added or reordered. */
const seedOf = (operation: Operation) =>
  (SEED ^ createHash('sha256').update(operation.key).digest().readUInt32BE(0)) >>> 0 || 1;

/** The request as a reader can replay it (long bodies cut, with their length). */
function describeRequest(request: FuzzRequest): string {
  const payload =
    request.payload === undefined
      ? '(no body)'
      : request.payload.length > 2_000
        ? `${JSON.stringify(request.payload.slice(0, 2_000))}… (${request.payload.length} characters)`
        : JSON.stringify(request.payload);
  return [
    `  mutation: ${request.mutation}`,
    `  ${request.method} ${request.url.length > 2_000 ? `${request.url.slice(0, 2_000)}…` : request.url}`,
    `  headers: ${JSON.stringify(request.headers, (_key, value: unknown) => (typeof value === 'string' && value.length > 300 ? `${value.slice(0, 300)}… (${value.length})` : value))}`,
    `  body: ${payload}`,
  ].join('\n');
}

/** A sandbox tenant with every feature, a wallet that pays for every valid write, and one resource of each kind. */
async function fuzzContext(): Promise<FuzzContext> {
  const em = stack.db.orm.em.fork();
  const { tenant, key } = await createTenant(em, {
    name: 'fuzz',
    features: ['identity_customers'],
    dailyTransferLimitMinor: 1_000_000_000_000_000,
  });
  await postMovement(
    em,
    tenant.tenant_id,
    walletFunding({ tenantId: tenant.tenant_id, reference: 'fuzz', amountMinor: 10_000_000_000_000 }),
  );
  const other = await createTenant(em, { name: 'fuzz other' });
  const live = await issueKey(em, tenant.tenant_id, 'live');
  const revoked = await issueKey(em, tenant.tenant_id, 'test');
  await revokeKey(em, revoked.key_prefix);
  const resources = await createTenantResources(stack, key.api_key, 'fuzz');
  // Deliveries to the receiver are not needed once the resources exist; fuzzed endpoints get none.
  await resources.close();
  const banks = await stack.app.inject({ method: 'GET', url: '/api/v1/banks', headers: auth(key.api_key) });
  const codes = (banks.json().data.items as { code: string }[]).map((bank) => bank.code);
  const bankCode = fc.constantFrom(...codes);
  // Sandbox bank accounts (decisions §9): paid, unknown to name enquiry, failed at the bank. Not
  // 2222222222 (never confirmed) nor 3333333333 (errors twice first): transfers that linger.
  const account = fc.constantFrom('0123456789', '0000000000', '1111111111');
  return {
    apiKey: key.api_key,
    otherKeys: [live.api_key, revoked.api_key, other.key.api_key],
    ids: resources.ids,
    hints: {
      recipient_bank_code: bankCode,
      bank_code: bankCode,
      recipient_account: account,
      recipient_id: fc.constant(resources.ids.recipient),
      account_number: account,
      url: fc.constant('http://127.0.0.1:9/fuzz'),
      signing_secret: fc.constant(newSigningSecret()),
      '{provider}': fc.constant('sandbox'),
      provider: fc.constantFrom('auto', 'wema', 'providus'),
      account_type: fc.constantFrom('standard', 'dedicated', 'temporary'),
      country: fc.constantFrom('NG', 'GH'),
      sort: fc.constantFrom('created_at', '-created_at', 'account_number', '-total_received_minor'),
    },
  };
}

interface Tally {
  sent: number;
  statuses: Record<string, number>;
  validWrites: number;
  /** Valid requests sent, and those refused (a business rule the schemas do not state, a resource's state). */
  valid: number;
  validRefused: number;
}

describe('fuzzing from the OpenAPI document', () => {
  it(
    'answers every operation, valid or hostile, as the document declares: never 5xx, a declared status, the declared shape',
    async () => {
      const started = Date.now();
      const context = await fuzzContext();
      // Deletions last: a deleted webhook endpoint would leave its delivery's replay nothing to do.
      const operations = (await documentOperations(stack.app)).sort(
        (a, b) => Number(a.method === 'DELETE') - Number(b.method === 'DELETE'),
      );
      expect(operations.length).toBeGreaterThanOrEqual(30);
      const tallies = new Map<string, Tally>();
      const failures: string[] = [];
      for (const operation of operations) {
        const tally: Tally = { sent: 0, statuses: {}, validWrites: 0, valid: 0, validRefused: 0 };
        tallies.set(operation.key, tally);
        const property = fc.asyncProperty(requestsFor(operation, context), async (request) => {
          if (request.mutation === 'valid' && operation.method !== 'GET') {
            // Sandbox side effects stay bounded: past the budget, valid writes are skipped.
            fc.pre(tally.validWrites < VALID_WRITES);
            tally.validWrites += 1;
          }
          tally.sent += 1;
          let answer: Answer;
          try {
            answer = isStreamOperation(operation)
              ? await streamAnswerOf(stack.gatewayUrl, request, ANSWER_WITHIN_MS)
              : await answerOf(stack.app, request, ANSWER_WITHIN_MS);
          } catch (error) {
            throw new Error(`${operation.key}: ${(error as Error).message}\n${describeRequest(request)}`, {
              cause: error,
            });
          }
          tally.statuses[answer.status] = (tally.statuses[answer.status] ?? 0) + 1;
          if (request.mutation === 'valid') {
            tally.valid += 1;
            if (answer.status >= 400) tally.validRefused += 1;
          }
          const faults = faultsOf(operation, request, answer);
          if (faults.length > 0) {
            throw new Error(
              `${operation.key}: ${faults.join('; ')}\n${describeRequest(request)}\n` +
                `  answer: ${answer.status} ${answer.body.slice(0, 1_000)}`,
            );
          }
        });
        const seed = seedOf(operation);
        const result = await fc.check(property, { seed, numRuns: RUNS, endOnFailure: true, maxSkipsPerRun: 1_000 });
        if (result.failed) {
          const error =
            result.errorInstance instanceof Error ? result.errorInstance.message : String(result.errorInstance);
          failures.push(
            `${error}\n  replay: FC_SEED=${SEED} (operation seed ${seed}, path ${result.counterexamplePath ?? '-'})`,
          );
        }
      }
      const sent = [...tallies.values()].reduce((sum, tally) => sum + tally.sent, 0);
      const lines = [...tallies].map(
        ([key, tally]) =>
          `  ${key}: ${tally.sent} sent (${tally.valid} valid, ${tally.validRefused} of them refused), ${JSON.stringify(tally.statuses)}`,
      );
      console.log(
        `[openapi-fuzz] seed ${SEED}: ${operations.length} operations, ${sent} requests in ${Math.round((Date.now() - started) / 1000)} s\n${lines.join('\n')}`,
      );
      expect(failures, failures.join('\n\n')).toEqual([]);
      // The valid requests reached the handlers: most operations answered a success at least once.
      const succeeded = [...tallies.values()].filter((tally) =>
        Object.keys(tally.statuses).some((status) => status.startsWith('2')),
      ).length;
      expect(succeeded).toBeGreaterThanOrEqual(Math.floor(operations.length * 0.8));
    },
    RUN_WITHIN_MS,
  );
});
