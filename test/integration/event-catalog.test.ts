// The event catalog (decisions §15) on the real stack: GET /api/v1/event-types, and a real event of
// every type but the card ones (event-catalog-cards.test.ts makes those), each recorded payload
// and each webhook body checked with Ajv against the JSON Schema the catalog serves for its type:
// transfers settled, failed (the sandbox bank's failing account) and reversed (its reversing
// one), a bulk batch, a webhook endpoint, a test event to it and its deliveries (failed once, then
// succeeded, to a local receiver), another endpoint disabled by its tenant, a virtual account credited and closed, identity customers verified and not, and a
// reconciliation whose bank statement forgets a transfer and invents a credit.
import { Ajv2020 } from 'ajv/dist/2020.js';
import type { FastifyInstance } from 'fastify';
import { describe, expect, it } from 'vitest';
import { describeEventTypes } from '../../src/events/catalog.ts';
import { createTenant } from '../../src/tenants/tenants.ts';
import { EVENT_TYPES } from '../../src/features.ts';
import { auth, newSigningSecret, registerEndpoint, transferBody } from '../support/api.ts';
import { createFundedTenant } from '../support/app.ts';
import { OTHER_EVENT_TYPES, catalogMisfits, recordedEvents, typesMissing } from '../support/event-catalog.ts';
import { eventually } from '../support/eventually.ts';
import { openApiDocument } from '../support/openapi.ts';
import { type Receiver, startReceiver } from '../support/receiver.ts';
import { type GatewayStack, useGatewayStack } from '../support/stack.ts';

const TASK_QUEUE = `event-catalog-${process.pid}`;

let stack: GatewayStack;
let app: FastifyInstance;
let receiver: Receiver;

useGatewayStack(
  { taskQueue: TASK_QUEUE, bank: { completionDelayMs: 100 }, webhookScheduleMs: [0, 300, 600] },
  async (started) => {
    stack = started;
    ({ app } = started);
    receiver = await startReceiver();
  },
  () => receiver.close(),
);

const get = (apiKey: string, url: string) => app.inject({ method: 'GET', url, headers: auth(apiKey) });
const post = (apiKey: string, url: string, payload?: object) =>
  app.inject({ method: 'POST', url, headers: auth(apiKey), ...(payload ? { payload } : {}) });

/** Every event so far whose data its catalog schema refuses: none, or the types with Ajv's errors. */
async function expectEveryEventFits() {
  const events = await recordedEvents(stack.db.orm.em.fork());
  expect(catalogMisfits(events)).toEqual([]);
  return events;
}

/** Waits until an event of each type exists, then checks every event. */
async function expectMadeAndFitting(types: readonly string[], timeoutMs = 30_000) {
  await eventually(
    async () => typesMissing(await recordedEvents(stack.db.orm.em.fork()), types).length === 0,
    timeoutMs,
  );
  await expectEveryEventFits();
}

async function finalTransfer(apiKey: string, id: string) {
  return eventually(async () => {
    const status = (await get(apiKey, `/api/v1/transfers/${id}`)).json().data.status as string;
    return status !== 'pending' && status;
  });
}

describe('GET /api/v1/event-types', () => {
  it('answers every event type in order, with its description and the JSON Schema of its data, to any key', async () => {
    const tenant = await createFundedTenant(stack.db.orm);
    const response = await get(tenant.apiKey, '/api/v1/event-types');
    expect(response.statusCode).toBe(200);
    const body = response.json();
    expect(body.meta).toEqual({ timestamp: expect.any(String), requestId: expect.any(String) });
    expect(Object.keys(body.data)).toEqual(['items']);
    expect(body.data.items.map((item: { type: string }) => item.type)).toEqual([...EVENT_TYPES]);
    expect(body.data.items).toEqual(JSON.parse(JSON.stringify(describeEventTypes())));
    const ajv = new Ajv2020({ strict: true });
    for (const item of body.data.items as { type: string; description: string; schema: object }[]) {
      expect({ type: item.type, valid: ajv.validateSchema(item.schema) }).toEqual({ type: item.type, valid: true });
      expect(item.description.length, item.type).toBeGreaterThan(10);
    }
    // A live key reads the same catalog: it reaches no provider.
    const live = await createFundedTenant(stack.db.orm, 0, 'live catalog reader', 'live');
    expect((await get(live.apiKey, '/api/v1/event-types')).json().data).toEqual(body.data);
    expect((await app.inject({ method: 'GET', url: '/api/v1/event-types' })).statusCode).toBe(401);
  });

  it('is in the OpenAPI document with its answer and errors', async () => {
    const operation = (await openApiDocument(app)).paths['/api/v1/event-types']?.get;
    expect(operation?.security).toEqual([{ apiKey: [] }]);
    expect(Object.keys(operation?.responses ?? {})).toEqual(expect.arrayContaining(['200', '401', '429']));
    const answer = JSON.stringify(operation!.responses!['200']!.content!['application/json']!.schema);
    for (const field of ['items', 'type', 'description', 'schema', 'requestId']) expect(answer).toContain(field);
  });
});

describe("every recorded event fits its type's catalog schema", () => {
  let tenant: Awaited<ReturnType<typeof createFundedTenant>>;
  let settledId: string;
  const firstDay = new Date().toISOString().slice(0, 10);
  let account: { id: string; provider: string; account_number: string };

  it('transfers settled, failed and reversed, a bulk batch, and a webhook endpoint with a delivery that fails, then succeeds', async () => {
    tenant = await createFundedTenant(stack.db.orm, 10_000_000, 'catalog tenant');
    receiver.plan('/catalog', { status: 500, body: 'not yet' });
    const endpoint = await registerEndpoint(app, tenant.apiKey, {
      url: `${receiver.url}/catalog`,
      events: ['transfer.settled', 'transfer.failed'],
      signing_secret: newSigningSecret(),
    });
    expect(endpoint.statusCode).toBe(201);

    const settled = await post(tenant.apiKey, '/api/v1/transfers', transferBody('catalog', { reference: 'cat-1' }));
    expect(settled.statusCode).toBe(201);
    settledId = settled.json().data.id as string;
    const failed = await post(
      tenant.apiKey,
      '/api/v1/transfers',
      transferBody('catalog', { reference: 'cat-2', recipient_account: '1111111111' }),
    );
    expect(failed.statusCode).toBe(201);
    // Paid out, then reversed by the sandbox bank about 2 s later (decisions §21).
    const reversed = await post(
      tenant.apiKey,
      '/api/v1/transfers',
      transferBody('catalog', { reference: 'cat-3', recipient_account: '5555555555' }),
    );
    expect(reversed.statusCode).toBe(201);
    expect(await finalTransfer(tenant.apiKey, settledId)).toBe('successful');
    expect(await finalTransfer(tenant.apiKey, failed.json().data.id)).toBe('failed');

    const batch = await post(tenant.apiKey, '/api/v1/transfers/bulk', {
      batch_reference: 'cat-batch',
      transfers: [
        transferBody('catalog', { reference: 'cat-b-1' }),
        transferBody('catalog', { reference: 'cat-b-2', recipient_account: '1111111111' }),
        transferBody('catalog', { reference: 'cat-b-3', recipient_account: '0000000000' }),
      ],
    });
    expect(batch.statusCode).toBe(202);
    await eventually(
      async () =>
        (await get(tenant.apiKey, `/api/v1/transfers/bulk/${batch.json().data.id}`)).json().data.status === 'completed',
      60_000,
    );
    // A test event to the endpoint: webhook.endpoint.test, recorded through its schema too.
    expect((await post(tenant.apiKey, `/api/v1/webhook-endpoints/${endpoint.json().data.id}/test`)).statusCode).toBe(
      202,
    );
    // Another endpoint, disabled by the tenant: webhook.endpoint.disabled.
    const disabled = await registerEndpoint(app, tenant.apiKey, {
      url: `${receiver.url}/catalog-disabled`,
      events: ['webhook.endpoint.disabled'],
      signing_secret: newSigningSecret(),
    });
    expect(
      (
        await app.inject({
          method: 'PATCH',
          url: `/api/v1/webhook-endpoints/${disabled.json().data.id}`,
          headers: auth(tenant.apiKey),
          payload: { enabled: false },
        })
      ).statusCode,
    ).toBe(200);
    await expectMadeAndFitting(
      [
        'webhook.endpoint.test',
        'transfer.created',
        'transfer.settled',
        'transfer.failed',
        'transfer.reversed',
        'transfer_batch.completed',
        'webhook.endpoint.created',
        'webhook.endpoint.disabled',
        'event.delivery.queued',
        'event.delivery.failed',
        'event.delivery.succeeded',
      ],
      60_000,
    );
    // The bodies the receiver got carry the same data: each fits its type's schema too.
    // At least the failed attempt, its retry and one more delivery (the rest may still be on their way).
    await eventually(() => receiver.on('/catalog').length >= 3);
    const bodies = receiver.on('/catalog').map((webhook) => JSON.parse(webhook.body) as Record<string, unknown>);
    expect(
      catalogMisfits(bodies.map(({ id, type, data }) => ({ id: String(id), type: String(type), payload: data }))),
    ).toEqual([]);
  }, 120_000);

  it('a held transfer approved by a second key, and another rejected', async () => {
    const held = await createFundedTenant(stack.db.orm, 10_000_000, 'catalog approvals');
    const policy = await app.inject({
      method: 'PUT',
      url: '/api/v1/transfer-policy',
      headers: auth(held.apiKey),
      payload: {
        approval: { above_minor: null, new_recipient: false, every_transfer: true },
        approval_expires_in_hours: 24,
        saved_recipients_only: false,
        live_keys_need_ip_allow_list: false,
      },
    });
    expect(policy.statusCode).toBe(200);
    const approver = await post(held.apiKey, '/api/v1/api-keys', {
      name: 'catalog approver',
      scopes: ['transfers:approve'],
    });
    expect(approver.statusCode).toBe(201);
    const approverKey = approver.json().data.secret as string;
    const approved = (
      await post(held.apiKey, '/api/v1/transfers', transferBody('catalog', { reference: 'cat-held-1' }))
    ).json().data.id as string;
    const rejected = (
      await post(held.apiKey, '/api/v1/transfers', transferBody('catalog', { reference: 'cat-held-2' }))
    ).json().data.id as string;
    expect((await post(approverKey, `/api/v1/transfers/${approved}/approve`)).statusCode).toBe(200);
    expect((await post(approverKey, `/api/v1/transfers/${rejected}/reject`, { reason: 'catalog' })).statusCode).toBe(
      200,
    );
    expect(await finalTransfer(held.apiKey, approved)).toBe('successful');
    await expectMadeAndFitting(['transfer.approval_required', 'transfer.approved', 'transfer.rejected']);
  });

  it('a virtual account opened, credited and closed', async () => {
    const created = await post(tenant.apiKey, '/api/v1/virtual-accounts', {
      customer_id: 'cus_catalog',
      account_name: 'CATALOG CUSTOMER',
    });
    expect(created.statusCode).toBe(201);
    account = created.json().data;
    const credit = await post(tenant.apiKey, `/api/v1/sandbox/virtual-accounts/${account.id}/credits`, {
      amount_minor: 500_000,
      sender_name: 'OKAFOR STORES',
      reference: 'cat-credit-1',
    });
    expect(credit.statusCode).toBe(202);
    await eventually(
      async () =>
        (await get(tenant.apiKey, `/api/v1/virtual-accounts/${account.id}`)).json().data.transaction_count === 1,
    );
    // A second account is closed, so that the first can still be reconciled.
    const other = (
      await post(tenant.apiKey, '/api/v1/virtual-accounts', { customer_id: 'cus_closed', account_name: 'CLOSED ONE' })
    ).json().data as { id: string };
    expect(
      (await post(tenant.apiKey, `/api/v1/virtual-accounts/${other.id}/close`, { reason: 'catalog' })).statusCode,
    ).toBe(200);
    await expectMadeAndFitting(['virtual_account.created', 'virtual_account.credited', 'virtual_account.closed']);
  });

  it('identity customers created, verified and failing verification', async () => {
    const { key } = await createTenant(stack.db.orm.em.fork(), {
      name: 'catalog identity',
      features: ['identity_customers'],
    });
    const customer = async (reference: string) => {
      const response = await post(key.api_key, '/api/v1/identity/customers', {
        external_reference: reference,
        first_name: 'Ada',
        last_name: 'Obi',
        email: 'ada@example.com',
      });
      expect(response.statusCode).toBe(201);
      return response.json().data.id as string;
    };
    const verified = await customer('cat-verified');
    const notFound = await customer('cat-not-found');
    for (const [id, bvn] of [
      [verified, '22222222222'],
      [notFound, '00000000000'],
    ] as const) {
      expect((await post(key.api_key, `/api/v1/identity/customers/${id}/bvn-verification`, { bvn })).statusCode).toBe(
        202,
      );
    }
    await expectMadeAndFitting([
      'identity.customer.created',
      'identity.customer.verified',
      'identity.customer.verification_failed',
    ]);
  });

  it('a reconciliation that finds a transfer the bank forgot and a credit it invented', async () => {
    expect((await stack.bank.control('/control/statements/forget', { reference: settledId })).status).toBe(200);
    const invented = await stack.bank.control('/control/statements/invent', {
      kind: 'inbound_credit',
      date: firstDay,
      amount_minor: 123_456,
      provider: account.provider,
      account_number: account.account_number,
    });
    expect(invented.status).toBe(201);
    // The day (or two, when the test crossed midnight UTC) the transactions fell on.
    for (const day of new Set([firstDay, new Date().toISOString().slice(0, 10)])) {
      const run = await stack.admin('reconcile', 'run', '--date', day);
      expect(run.code, run.stderr).toBe(0);
    }
    const events = await expectEveryEventFits();
    expect(typesMissing(events, ['reconciliation.completed', 'reconciliation.mismatch'])).toEqual([]);
    // Both shapes of a mismatch: a transfer's, and a credit's with the account it reached.
    const mismatches = events.filter((event) => event.type === 'reconciliation.mismatch');
    expect(mismatches.map((event) => (event.payload as { kind: string }).kind).sort()).toEqual([
      'inbound_credit',
      'transfer',
    ]);
  }, 120_000);

  it("leaves no type of this file's share unmade", async () => {
    expect(typesMissing(await expectEveryEventFits(), OTHER_EVENT_TYPES)).toEqual([]);
  });
});
