// Defects the OpenAPI fuzzer found, kept as plain examples: each request as the fuzzer sent it, and
// its answer checked as the fuzzer checks every answer (test/fuzz/responses.ts): a status the
// document declares for the operation, in the declared shape and envelope, never a 5xx.
import { beforeAll, describe, expect, it } from 'vitest';
import { issueKey } from '../../src/tenants/tenants.ts';
import { auth, newSigningSecret, registerEndpoint, transferBody } from '../support/api.ts';
import { createFundedTenant } from '../support/app.ts';
import { type Operation, documentOperations } from '../support/openapi.ts';
import { type GatewayStack, useGatewayStack } from '../support/stack.ts';
import type { FuzzRequest } from './requests.ts';
import { type Answer, answerOf, faultsOf } from './responses.ts';

let stack: GatewayStack;
let apiKey: string;
let liveKey: string;
let operations: Map<string, Operation>;

useGatewayStack({ taskQueue: `fuzz-regressions-${process.pid}` }, (started) => {
  stack = started;
});

beforeAll(async () => {
  let tenantId: string;
  ({ apiKey, tenantId } = await createFundedTenant(stack.db.orm, 1_000_000));
  liveKey = (await issueKey(stack.db.orm.em.fork(), tenantId, 'live')).api_key;
  operations = new Map((await documentOperations(stack.app)).map((operation) => [operation.key, operation]));
});

/** Sends `request` as operation `key` and returns the answer with what the fuzzer would find wrong in it. */
async function check(
  key: string,
  request: Omit<FuzzRequest, 'mutation'>,
): Promise<{ answer: Answer; faults: string[] }> {
  const operation = operations.get(key);
  if (!operation) throw new Error(`${key} is not in the document`);
  const sent = { ...request, mutation: 'regression' };
  const answer = await answerOf(stack.app, sent, 15_000);
  return { answer, faults: faultsOf(operation, sent, answer) };
}

/** The answer is the refusal `status` with error `code`, and the fuzzer finds nothing wrong in it. */
function expectRefusal({ answer, faults }: { answer: Answer; faults: string[] }, status: number, code: string): void {
  expect(answer.status).toBe(status);
  expect(JSON.parse(answer.body).error.code).toBe(code);
  expect(faults).toEqual([]);
}

describe('answers the fuzzer found outside the document', () => {
  it('declares 413 on DELETE: a webhook endpoint deleted with a body over the limit', async () => {
    const endpoint = await registerEndpoint(stack.app, apiKey, {
      url: 'http://127.0.0.1:9/regression',
      events: ['transfer.settled'],
      signing_secret: newSigningSecret(),
    });
    expect(endpoint.statusCode).toBe(201);
    const deleted = await check('DELETE /api/v1/webhook-endpoints/{id}', {
      method: 'DELETE',
      url: `/api/v1/webhook-endpoints/${endpoint.json().data.id}`,
      headers: { ...auth(apiKey), 'content-type': 'application/json' },
      payload: JSON.stringify('x'.repeat(1_100_000)),
    });
    expectRefusal(deleted, 413, 'PAYLOAD_TOO_LARGE');
  });

  it('declares 401 on the public provider-callback route: a callback without its signature', async () => {
    const unsigned = await check('POST /provider-callbacks/{provider}', {
      method: 'POST',
      url: '/provider-callbacks/sandbox',
      headers: {},
    });
    expectRefusal(unsigned, 401, 'UNAUTHORIZED');
  });

  it("declares the router's resource-style 400 on a transfer route: an id over 100 characters", async () => {
    const { answer, faults } = await check('GET /api/v1/transfers/{id}', {
      method: 'GET',
      url: `/api/v1/transfers/${'x'.repeat(101)}`,
      headers: auth(apiKey),
    });
    expect(answer.status).toBe(400);
    expect(JSON.parse(answer.body).error).toEqual({
      code: 'VALIDATION_ERROR',
      message: 'id: must be at most 100 characters',
      details: { fields: [{ path: 'id', message: 'must be at most 100 characters' }] },
    });
    expect(faults).toEqual([]);
    // The route's own refusals keep the transfer style.
    const own = await check('GET /api/v1/transfers/{id}', {
      method: 'GET',
      url: '/api/v1/transfers/a%00b',
      headers: auth(apiKey),
    });
    expect(own.answer.status).toBe(400);
    expect(JSON.parse(own.answer.body)).toMatchObject({ success: false, error: { code: 'validation_error' } });
    expect(own.faults).toEqual([]);
  });

  it("declares 403 where a live key is refused: routes that reach a provider, and the sandbox's", async () => {
    const transfer = await check('POST /api/v1/transfers', {
      method: 'POST',
      url: '/api/v1/transfers',
      headers: { ...auth(liveKey), 'content-type': 'application/json' },
      payload: JSON.stringify(transferBody('live', { reference: 'regression-live' })),
    });
    expectRefusal(transfer, 403, 'forbidden');
    const credit = await check('POST /api/v1/sandbox/virtual-accounts/{id}/credits', {
      method: 'POST',
      url: '/api/v1/sandbox/virtual-accounts/00000000-0000-4000-8000-000000000000/credits',
      headers: { ...auth(liveKey), 'content-type': 'application/json' },
      payload: JSON.stringify({ amount_minor: 100 }),
    });
    expect(credit.answer.status).toBe(403);
    expect(credit.faults).toEqual([]);
  });
});

describe('lone surrogates, sent as JSON escapes', () => {
  // Before: a card or virtual account with `metadata:{"a":"\ud800"}` started a workflow whose insert
  // PostgreSQL's jsonb refused, retried for ever, and the request answered 503 after 10 s; text
  // columns kept U+FFFD instead of what was sent. Now refused at the edge like NUL (decisions §12).
  it.each([
    ['/api/v1/cards', '{"customer_id":"c","metadata":{"a":"\\ud800"}}', 'metadata.a'],
    ['/api/v1/cards', '{"customer_id":"c\\udfff"}', 'customer_id'],
    [
      '/api/v1/virtual-accounts',
      '{"customer_id":"c","account_name":"A B","metadata":{"\\udc00":1}}',
      'metadata.\\udc00',
    ],
    [
      '/api/v1/transfers',
      '{"amount_minor":100000,"recipient_account":"0123456789","recipient_bank_code":"058","narration":"n\\ud83d","reference":"surrogate-1"}',
      'narration',
    ],
  ])('POST %s refuses a lone surrogate at once, naming the field', async (url, payload, field) => {
    const started = Date.now();
    // The operation is the path itself: none of these has a parameter.
    const { answer, faults } = await check(`POST ${url}`, {
      method: 'POST',
      url,
      headers: { ...auth(apiKey), 'content-type': 'application/json' },
      payload,
    });
    expect(answer.status).toBe(400);
    expect(Date.now() - started).toBeLessThan(2_000);
    expect(JSON.parse(answer.body).error.details.fields).toEqual([
      { path: field, message: 'must be well-formed Unicode (no lone surrogate)' },
    ]);
    expect(faults).toEqual([]);
  });

  it('keeps well-formed pairs (emoji) and leaves nothing behind for the refused ones', async () => {
    const card = await stack.app.inject({
      method: 'POST',
      url: '/api/v1/cards',
      headers: auth(apiKey),
      payload: { customer_id: 'emoji 💸', metadata: { note: '🇳🇬' } },
    });
    expect(card.statusCode).toBe(201);
    expect(card.json().data).toMatchObject({ customer_id: 'emoji 💸', metadata: { note: '🇳🇬' } });
    const cards = await stack.app.inject({ method: 'GET', url: '/api/v1/cards', headers: auth(apiKey) });
    expect(cards.json().data.items.map((item: { customer_id: string }) => item.customer_id)).toEqual(['emoji 💸']);
  });
});
