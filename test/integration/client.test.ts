// The typed client (src/client/) against the real gateway listening on a port: calls typed from
// the generated schema, errors of each envelope style as the union names them, the Idempotency-Key
// it adds (claimed by the gateway) and one it is given (replayed), pagination walking several pages
// of both shapes, and verifyWebhook on a real delivery. Also: the document the app serves is the
// one the client's types were generated from.
import { randomUUID } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { gatewayOpenApiDocument } from '../../scripts/client-types.ts';
import {
  type GatewayClientOptions,
  WebhookVerificationError,
  createGatewayClient,
  verifyWebhook,
} from '../../src/client/index.ts';
import { newSigningSecret } from '../support/api.ts';
import { createFundedTenant } from '../support/app.ts';
import { eventually } from '../support/eventually.ts';
import { type Receiver, startReceiver } from '../support/receiver.ts';
import { type GatewayStack, useGatewayStack } from '../support/stack.ts';

let stack: GatewayStack;
let receiver: Receiver;

useGatewayStack(
  { taskQueue: `client-${process.pid}`, bank: { completionDelayMs: 100 }, webhookScheduleMs: [0, 500] },
  async (started) => {
    stack = started;
    receiver = await startReceiver();
  },
  () => receiver.close(),
);

const clientOf = (apiKey: string, options: Partial<GatewayClientOptions> = {}) =>
  createGatewayClient({ baseUrl: stack.gatewayUrl, apiKey, ...options });

const transfer = (fields: { amount_minor?: number; reference?: string } = {}) => ({
  amount_minor: 100_000,
  recipient_account: '0123456789',
  recipient_bank_code: '058',
  narration: 'typed client',
  ...fields,
});

/** The Idempotency-Keys the gateway holds for the tenant, oldest first. */
async function claimedKeys(tenantId: string): Promise<string[]> {
  const rows = await stack.db.orm.em
    .fork()
    .execute<{ key: string }[]>('select key from idempotency_keys where tenant_id = ? order by created_at, key', [
      tenantId,
    ]);
  return rows.map((row) => row.key);
}

describe('calls', () => {
  it('creates a transfer and reads it back, each answer typed', async () => {
    const tenant = await createFundedTenant(stack.db.orm, 1_000_000);
    const client = clientOf(tenant.apiKey);
    const created = await client.POST('/api/v1/transfers', { body: transfer({ reference: `typed-${randomUUID()}` }) });
    expect(created.error).toBeUndefined();
    expect(created.response?.status).toBe(201);
    expect(created.data).toMatchObject({
      success: true,
      data: { amount_minor: 100_000, fee_minor: 1_000, total_minor: 101_000, status: 'pending' },
    });
    const id = created.data!.data.id;
    const settled = await eventually(async () => {
      const { data } = await client.GET('/api/v1/transfers/{id}', { params: { path: { id } } });
      return data?.data.status === 'successful' ? data : undefined;
    });
    expect(settled).toMatchObject({ status: 'success', data: { id, amount_minor: 100_000, bankCode: '058' } });
    const wallet = await client.GET('/api/v1/wallet');
    expect(wallet.data?.data).toMatchObject({ available_minor: 899_000, pending_minor: 0 });
  });
});

describe('errors, one variant per envelope style', () => {
  it('a transfer refusal: kind transfer, its code, details and the request id of the answer', async () => {
    const tenant = await createFundedTenant(stack.db.orm, 50_000);
    const { data, error, response } = await clientOf(tenant.apiKey).POST('/api/v1/transfers', { body: transfer() });
    expect(data).toBeUndefined();
    expect(error).toEqual({
      kind: 'transfer',
      status: 422,
      code: 'insufficient_balance',
      message: expect.any(String),
      details: { required: 101_000, available: 50_000 },
      requestId: response!.headers.get('x-request-id'),
    });
  });

  it('a resource refusal: kind resource, with its details and meta', async () => {
    const tenant = await createFundedTenant(stack.db.orm);
    const { error, response } = await clientOf(tenant.apiKey).GET('/api/v1/cards/{card_id}', {
      params: { path: { card_id: 'no-such-card' } },
      headers: { 'x-request-id': 'client-test-404' },
    });
    expect(response?.status).toBe(404);
    expect(error).toEqual({
      kind: 'resource',
      status: 404,
      code: 'NOT_FOUND',
      message: expect.any(String),
      details: null,
      requestId: 'client-test-404',
      path: '/api/v1/cards/no-such-card',
      method: 'GET',
    });
  });

  it('validation errors name the fields in both styles', async () => {
    const tenant = await createFundedTenant(stack.db.orm);
    const client = clientOf(tenant.apiKey);
    const refusedTransfer = await client.POST('/api/v1/transfers', { body: transfer({ amount_minor: 1 }) });
    expect(refusedTransfer.error).toMatchObject({
      kind: 'transfer',
      status: 400,
      code: 'validation_error',
      details: { fields: [{ path: 'amount_minor', message: expect.any(String) }] },
    });
    const refusedList = await client.GET('/api/v1/virtual-accounts', { params: { query: { limit: 101 } } });
    expect(refusedList.error).toMatchObject({
      kind: 'resource',
      status: 400,
      code: 'VALIDATION_ERROR',
      details: { fields: [{ path: 'limit', message: expect.any(String) }] },
    });
  });

  it('an unknown key: 401 in the style of the route', async () => {
    const client = clientOf('sk_test_not-a-key-of-anyone');
    expect((await client.GET('/api/v1/transfers')).error).toMatchObject({
      kind: 'transfer',
      status: 401,
      code: 'unauthorized',
    });
    expect((await client.GET('/api/v1/wallet')).error).toMatchObject({
      kind: 'resource',
      status: 401,
      code: 'UNAUTHORIZED',
    });
  });
});

describe('Idempotency-Key', () => {
  const account = { customer_id: 'c', account_name: 'Key Holder' };

  it('is added to every POST, a fresh one each time, and the gateway claims each', async () => {
    const tenant = await createFundedTenant(stack.db.orm);
    const client = clientOf(tenant.apiKey);
    const first = await client.POST('/api/v1/virtual-accounts', { body: account });
    const second = await client.POST('/api/v1/virtual-accounts', { body: account });
    // Two keys, two accounts: an identical body is a new request when its key is new.
    expect([first.response?.status, second.response?.status]).toEqual([201, 201]);
    expect(first.data!.data.id).not.toBe(second.data!.data.id);
    const keys = await claimedKeys(tenant.tenantId);
    expect(keys).toHaveLength(2);
    for (const key of keys)
      expect(key).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
  });

  it('is the one the call gives, and a repeat with it replays the first answer', async () => {
    const tenant = await createFundedTenant(stack.db.orm);
    const client = clientOf(tenant.apiKey);
    const key = `given-${randomUUID()}`;
    const send = () => client.POST('/api/v1/virtual-accounts', { body: account, headers: { 'Idempotency-Key': key } });
    const first = await send();
    const repeat = await send();
    expect([first.response?.status, repeat.response?.status]).toEqual([201, 200]);
    expect(repeat.response?.headers.get('idempotent-replayed')).toBe('true');
    expect(repeat.data).toEqual(first.data);
    expect(await claimedKeys(tenant.tenantId)).toEqual([key]);
    const reused = await client.POST('/api/v1/virtual-accounts', {
      body: { ...account, account_name: 'Someone Else' },
      headers: { 'Idempotency-Key': key },
    });
    expect(reused.error).toMatchObject({ kind: 'resource', status: 422, code: 'IDEMPOTENCY_KEY_REUSED' });
  });
});

describe('paginate', () => {
  it('walks every transfer across pages, newest first, as one list read at once shows them', async () => {
    const tenant = await createFundedTenant(stack.db.orm, 10_000_000);
    const pages: string[] = [];
    const client = clientOf(tenant.apiKey, {
      fetch: (request) => {
        pages.push(new URL(request.url).search);
        return fetch(request);
      },
    });
    for (let i = 0; i < 7; i += 1) {
      const created = await client.POST('/api/v1/transfers', { body: transfer({ reference: `page-${i}` }) });
      expect(created.response?.status).toBe(201);
    }
    pages.length = 0;
    const walked: string[] = [];
    for await (const item of client.paginate('/api/v1/transfers', { params: { query: { limit: 3 } } }))
      walked.push(item.reference);
    const whole = await client.GET('/api/v1/transfers', { params: { query: { limit: 100 } } });
    expect(walked).toEqual(whole.data!.data.map((item) => item.reference));
    expect([...walked].sort()).toEqual(Array.from({ length: 7 }, (_, i) => `page-${i}`));
    expect(pages).toEqual(['?limit=3&page=1', '?limit=3&page=2', '?limit=3&page=3', '?limit=100']);
  });

  it('walks a resource list across pages until has_more is false, keeping its filters', async () => {
    const tenant = await createFundedTenant(stack.db.orm);
    const client = clientOf(tenant.apiKey);
    for (const customer of ['a', 'b', 'a', 'a', 'b', 'a', 'a']) {
      const created = await client.POST('/api/v1/virtual-accounts', {
        body: { customer_id: customer, account_name: `Customer ${customer.toUpperCase()}` },
      });
      expect(created.response?.status).toBe(201);
    }
    const walked = [];
    for await (const item of client.paginate('/api/v1/virtual-accounts', {
      params: { query: { limit: 2, customer_id: 'a' } },
    }))
      walked.push(item);
    expect(walked).toHaveLength(5);
    expect(new Set(walked.map((item) => item.id)).size).toBe(5);
    expect(walked.every((item) => item.customer_id === 'a')).toBe(true);
  });
});

describe('verifyWebhook', () => {
  it('returns the event of a real delivery, and refuses the same delivery with its body changed', async () => {
    const tenant = await createFundedTenant(stack.db.orm, 1_000_000);
    const client = clientOf(tenant.apiKey);
    const secret = newSigningSecret();
    const endpoint = await client.POST('/api/v1/webhook-endpoints', {
      body: { url: `${receiver.url}/client`, events: ['transfer.settled'], signing_secret: secret },
    });
    expect(endpoint.response?.status).toBe(201);
    const created = await client.POST('/api/v1/transfers', { body: transfer() });
    const delivery = await eventually(() => receiver.on('/client')[0]);

    const event = verifyWebhook(delivery.body, delivery.headers, secret);
    expect(event).toEqual({
      id: delivery.headers['webhook-id'],
      type: 'transfer.settled',
      created_at: expect.any(String),
      data: expect.objectContaining({ id: created.data!.data.id, status: 'successful', amount_minor: 100_000 }),
    });
    const tampered = delivery.body.replace('"amount_minor":100000', '"amount_minor":900000');
    expect(tampered).not.toBe(delivery.body);
    expect(() => verifyWebhook(tampered, delivery.headers, secret)).toThrow(WebhookVerificationError);
    expect(() => verifyWebhook(tampered, delivery.headers, secret)).toThrow(
      expect.objectContaining({ reason: 'signature' }),
    );
  });
});

describe('the OpenAPI document', () => {
  it('the gateway serves the document the client types are generated from', async () => {
    const served: unknown = await (await fetch(`${stack.gatewayUrl}/openapi.json`)).json();
    expect(served).toEqual(await gatewayOpenApiDocument());
  });
});
