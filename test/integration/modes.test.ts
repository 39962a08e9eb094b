// Test and live are separate worlds, even inside one tenant (decisions §16): one tenant holds a
// sandbox key and a live key; everything the sandbox key makes, moves or reads is invisible to the
// live key (another mode's id is 404, lists are empty), sandbox money never reaches the live wallet
// (not through the sandbox routes, not through a sandbox provider's callback naming a live
// account), the same Idempotency-Key or reference in the two modes are unrelated, and the live
// wallet is funded only by an audited operator command. Tenants that already had live keys before
// the separation get a live mode of their own, with an empty wallet, by migration 0020.
import { randomUUID } from 'node:crypto';
import type { FastifyInstance } from 'fastify';
import { describe, expect, it } from 'vitest';
import { migrate } from '../../src/orm.ts';
import { resolveApiKey } from '../../src/tenants/tenants.ts';
import { generateApiKey, hashApiKey, keyPrefix } from '../../src/tenants/api-keys.ts';
import { openCardAccount, walletBalance } from '../../src/ledger/ledger.ts';
import { insertAccount } from '../../src/virtual-accounts/store.ts';
import { insertCard } from '../../src/cards/store.ts';
import { auth, newSigningSecret, registerEndpoint, transferBody } from '../support/api.ts';
import { creditCallback, inboundCreditOutcome, postSignedCallback } from '../support/callbacks.ts';
import { TEST_BVN_SECRET } from '../support/app.ts';
import { createVirtualAccountActivities } from '../../activities/virtual-accounts/virtual-accounts.ts';
import { bvnKeysFrom } from '../../src/identity/bvn.ts';
import { type TestDatabase, createTestDatabase } from '../support/database.ts';
import { eventually } from '../support/eventually.ts';
import { type GatewayStack, fakeDns, useGatewayStack } from '../support/stack.ts';

const TASK_QUEUE = `modes-${process.pid}`;
// A public name for the live key's webhook endpoint (live keys need https and a public address).
const resolver = fakeDns({ 'hooks.example.test': ['93.184.216.34'], localhost: ['127.0.0.1'] });

let stack: GatewayStack;
let db: TestDatabase;
let app: FastifyInstance;
useGatewayStack({ taskQueue: TASK_QUEUE, resolver, bank: { completionDelayMs: 100 } }, (started) => {
  stack = started;
  ({ db, app } = started);
});

/** A tenant with the identity feature, its sandbox key, then a live key issued by the operator CLI. */
async function tenantWithBothKeys(name: string) {
  const created = await stack.admin('tenant', 'create', '--name', name, '--feature', 'identity_customers');
  expect(created.code).toBe(0);
  const tenantId = created.json.tenant_id as string;
  const live = await stack.admin('key', 'create', '--tenant', tenantId, '--live');
  expect(live.code).toBe(0);
  expect(live.json).toMatchObject({ tenant_id: tenantId, mode: 'live' });
  const liveTenantId = live.json.mode_tenant_id as string;
  expect(liveTenantId).not.toBe(tenantId);
  return {
    tenantId,
    liveTenantId,
    testKey: created.json.api_key as string,
    liveKey: live.json.api_key as string,
  };
}

/** A live-mode virtual account at Wema Bank written straight to the store, as `provider`'s; its id. */
async function insertLiveAccount(liveTenantId: string, accountNumber: string, provider: string): Promise<string> {
  const accountId = randomUUID();
  await insertAccount(db.orm.em.fork(), {
    id: accountId,
    tenant_id: liveTenantId,
    customer_id: 'live-cust',
    account_number: accountNumber,
    account_name: 'Live Account',
    bank_code: '035',
    bank_name: 'Wema Bank',
    provider,
    provider_reference: `live-${accountId}`,
    status: 'active',
    account_type: 'standard',
    metadata: null,
    request_id: null,
    expires_at: null,
  });
  return accountId;
}

const get = (apiKey: string, url: string) => app.inject({ method: 'GET', url, headers: auth(apiKey) });
const post = (apiKey: string, url: string, payload?: object, headers: Record<string, string> = {}) =>
  app.inject({ method: 'POST', url, headers: auth(apiKey, headers), ...(payload ? { payload } : {}) });

describe('a tenant with a sandbox key and a live key', () => {
  it('keeps every object, list, event and wallet of one mode out of the other', async () => {
    const { tenantId, liveTenantId, testKey, liveKey } = await tenantWithBothKeys('two modes');
    expect(
      (await stack.admin('wallet', 'fund', '--tenant', tenantId, '--amount-minor', '5000000')).json.wallet,
    ).toMatchObject({ available_minor: 5_000_000 });

    // The sandbox key makes one of each thing it can.
    const account = await post(testKey, '/api/v1/virtual-accounts', {
      customer_id: 'cust-1',
      account_name: 'Ada Obi',
    });
    expect(account.statusCode).toBe(201);
    const accountId = account.json().data.id as string;
    expect(account.json().data.tenant_id).toBe(tenantId);
    const credit = await post(testKey, `/api/v1/sandbox/virtual-accounts/${accountId}/credits`, {
      amount_minor: 750_000,
      reference: 'modes-credit',
    });
    expect(credit.statusCode).toBe(202);
    const card = await post(testKey, '/api/v1/cards', { customer_id: 'cust-1' });
    expect(card.statusCode).toBe(201);
    const cardId = card.json().data.id as string;
    const transfer = await post(testKey, '/api/v1/transfers', transferBody('modes', { reference: 'same-ref' }));
    expect(transfer.statusCode).toBe(201);
    const transferId = transfer.json().data.id as string;
    const customer = await post(testKey, '/api/v1/identity/customers', {
      external_reference: 'same-customer',
      first_name: 'Ada',
      last_name: 'Obi',
    });
    expect(customer.statusCode).toBe(201);
    const endpoint = await registerEndpoint(app, testKey, {
      url: 'http://localhost:9/hooks',
      events: ['*'],
      signing_secret: newSigningSecret(),
    });
    expect(endpoint.statusCode).toBe(201);

    // The sandbox credit reaches the test wallet: 5,000,000 − (100,000 + 1,000 fee) + 750,000.
    await eventually(async () => {
      const wallet = await get(testKey, '/api/v1/wallet');
      return wallet.json().data.available_minor === 5_649_000;
    });
    const testEvents = (await get(testKey, '/api/v1/events?limit=100')).json().data;
    expect(testEvents.pagination.total).toBeGreaterThanOrEqual(5);
    const testEventId = testEvents.items[0].id as string;

    // The live key sees none of it: another mode's id is 404, lists are empty, its wallet is its own.
    expect((await get(liveKey, '/api/v1/wallet')).json().data).toMatchObject({
      available_minor: 0,
      pending_minor: 0,
    });
    for (const [url, code] of [
      [`/api/v1/virtual-accounts/${accountId}`, 'NOT_FOUND'],
      [`/api/v1/cards/${cardId}`, 'NOT_FOUND'],
      [`/api/v1/cards/${cardId}/balance`, 'NOT_FOUND'],
      [`/api/v1/transfers/${transferId}`, 'not_found'],
      [`/api/v1/identity/customers/${customer.json().data.id}`, 'NOT_FOUND'],
      [`/api/v1/events/${testEventId}`, 'NOT_FOUND'],
    ] as const) {
      const response = await get(liveKey, url);
      expect({ url, status: response.statusCode, code: response.json().error.code }).toEqual({
        url,
        status: 404,
        code,
      });
    }
    for (const url of ['/api/v1/virtual-accounts', '/api/v1/cards', '/api/v1/webhook-endpoints', '/api/v1/events']) {
      const response = await get(liveKey, url);
      expect({ url, status: response.statusCode, items: response.json().data.items }).toEqual({
        url,
        status: 200,
        items: [],
      });
    }
    const liveTransfers = await get(liveKey, '/api/v1/transfers');
    expect([liveTransfers.json().data, liveTransfers.json().pagination.total]).toEqual([[], 0]);
    expect((await get(liveKey, '/api/v1/webhook-deliveries')).json().data.items).toEqual([]);
    // Nor can it act on a test object: the sandbox routes are the sandbox key's, the rest 404 or 403.
    expect(
      (await post(liveKey, `/api/v1/sandbox/virtual-accounts/${accountId}/credits`, { amount_minor: 1 })).statusCode,
    ).toBe(403);
    expect((await post(liveKey, `/api/v1/cards/${cardId}/lock`, {})).statusCode).toBe(403);

    // The sandbox key's view is untouched by the live key's requests, and sees nothing live.
    expect((await get(testKey, `/api/v1/virtual-accounts/${accountId}`)).json().data).toMatchObject({
      total_received_minor: 750_000,
      transaction_count: 1,
    });
    expect((await get(liveKey, '/api/v1/wallet')).json().data.available_minor).toBe(0);
    expect((await walletBalance(db.orm.em.fork(), liveTenantId)).availableMinor).toBe(0);
    expect((await walletBalance(db.orm.em.fork(), tenantId)).availableMinor).toBe(5_649_000);
  });

  it('treats the same Idempotency-Key and the same reference in the two modes as unrelated', async () => {
    const { testKey, liveKey } = await tenantWithBothKeys('same keys');
    // An endpoint registered under the one Idempotency-Key; the ids of the endpoints a key sees.
    const register = (apiKey: string, url: string, events: string[]) =>
      post(
        apiKey,
        '/api/v1/webhook-endpoints',
        { url, events, signing_secret: newSigningSecret() },
        { 'idempotency-key': 'one-key-two-modes' },
      );
    const endpointIds = async (apiKey: string) =>
      (await get(apiKey, '/api/v1/webhook-endpoints')).json().data.items.map((e: { id: string }) => e.id);
    const first = await register(testKey, 'http://localhost:9/a', ['*']);
    expect(first.statusCode).toBe(201);
    // Another body under the same key: in the same mode that is 422; in the other mode it is a new request.
    const other = await register(liveKey, 'https://hooks.example.test/b', ['transfer.settled']);
    expect(other.statusCode).toBe(201);
    expect(other.json().data.id).not.toBe(first.json().data.id);
    const reused = await register(testKey, 'http://localhost:9/c', ['*']);
    expect([reused.statusCode, reused.json().error.code]).toEqual([422, 'IDEMPOTENCY_KEY_REUSED']);
    expect(await endpointIds(testKey)).toEqual([first.json().data.id]);
    expect(await endpointIds(liveKey)).toEqual([other.json().data.id]);

    // One external_reference, two customers: one per mode.
    const body = { external_reference: 'ext-both', first_name: 'Ada', last_name: 'Obi' };
    const inTest = await post(testKey, '/api/v1/identity/customers', body);
    const inLive = await post(liveKey, '/api/v1/identity/customers', body);
    expect([inTest.statusCode, inLive.statusCode]).toEqual([201, 201]);
    expect(inLive.json().data.id).not.toBe(inTest.json().data.id);
  });

  it('funds the live wallet only by the audited operator command, and never from the sandbox', async () => {
    const { tenantId, liveTenantId, liveKey } = await tenantWithBothKeys('live funding');
    const funded = await stack.admin('wallet', 'fund', '--tenant', tenantId, '--amount-minor', '250000', '--live');
    expect(funded.json).toMatchObject({
      tenant_id: tenantId,
      mode: 'live',
      mode_tenant_id: liveTenantId,
      amount_minor: 250_000,
      applied: true,
      wallet: { available_minor: 250_000, pending_minor: 0 },
    });
    expect((await get(liveKey, '/api/v1/wallet')).json().data.available_minor).toBe(250_000);
    expect((await walletBalance(db.orm.em.fork(), tenantId)).availableMinor).toBe(0);
    const audit = await stack.admin('audit', 'list', '--limit', '5');
    expect(audit.json.items[0]).toMatchObject({ command: 'wallet fund', operator: 'ops-test' });
    expect(audit.json.items[0].arguments).toMatchObject({ tenant: tenantId, live: true, 'amount-minor': '250000' });
    // The live mode's own id (as operators' listings print it) without --live is refused, never
    // quietly taken for the tenant's test mode; with --live it is that mode.
    const ambiguous = await stack.admin('wallet', 'fund', '--tenant', liveTenantId, '--amount-minor', '1');
    expect(ambiguous.code).toBe(2);
    expect(ambiguous.stderr).toContain(`${liveTenantId} is the live mode of tenant ${tenantId}: add --live`);
    const byLiveId = await stack.admin('wallet', 'fund', '--tenant', liveTenantId, '--amount-minor', '1', '--live');
    expect(byLiveId.json).toMatchObject({ mode_tenant_id: liveTenantId, wallet: { available_minor: 250_001 } });
    expect((await walletBalance(db.orm.em.fork(), tenantId)).availableMinor).toBe(0);

    // A live account under a sandbox provider's name (no route makes one: it stands for an account
    // number the sandbox bank might name). The sandbox bank's credit for it is refused, counted nowhere.
    const accountId = await insertLiveAccount(liveTenantId, '8199999999', 'wema');
    // The sandbox bank's credit notice for it, signed as the sandbox bank signs.
    const sent = await postSignedCallback(app, creditCallback(`evt-${accountId}`, '8199999999', 'sandbox-to-live'));
    expect(sent.statusCode).toBe(200);
    const refused = await inboundCreditOutcome(db.orm, 'virtual_account_id', accountId);
    expect(refused).toEqual({ status: 'refused', refusal_reason: 'provider wema does not serve live-mode accounts' });
    expect((await walletBalance(db.orm.em.fork(), liveTenantId)).availableMinor).toBe(250_001);
    const [totals] = await db.orm.em
      .fork()
      .execute<{ total: string; count: number }[]>(
        'select total_received_minor::text as total, transaction_count as count from virtual_accounts where id = ?',
        [accountId],
      );
    expect(totals).toEqual({ total: '0', count: 0 });
  });

  it('applies a credit notice only from a sender that serves the account’s mode, whatever provider it names', async () => {
    const { liveTenantId } = await tenantWithBothKeys('live provider name');
    // A deployment whose live virtual-account provider shares a name with a sandbox one.
    const sandbox = stack.providers();
    const live = { ...sandbox.virtualAccounts[0]!, modes: ['live'] as const };
    const activities = createVirtualAccountActivities({
      orm: db.orm,
      providers: { ...sandbox, virtualAccounts: [live, ...sandbox.virtualAccounts] },
      client: stack.client,
      bvnKeys: bvnKeysFrom(TEST_BVN_SECRET),
    });
    await insertLiveAccount(liveTenantId, '8199999998', live.provider.name);
    const credit = {
      provider: live.provider.name,
      accountNumber: '8199999998',
      amountMinor: 5_000_000,
      senderName: 'X',
      sessionId: 's',
    };
    // The sandbox bank names the live provider: refused, counted nowhere.
    expect(
      await activities.applyInboundCredit({ ...credit, sender: 'sandbox', transactionReference: 'mode-sender-1' }),
    ).toEqual({ status: 'refused', reason: 'sandbox does not serve live-mode accounts' });
    expect((await walletBalance(db.orm.em.fork(), liveTenantId)).availableMinor).toBe(0);
  });

  it("never lets the sandbox bank's word about a transfer touch a live one", async () => {
    const { liveTenantId } = await tenantWithBothKeys('live transfer');
    // A live transfer as the books hold it: failed at creation, nothing reserved (no route makes one
    // in a deployment without a live provider; it stands for one a live bank took).
    const transferId = randomUUID();
    await db.orm.em.fork().execute(
      `insert into transfers (id, tenant_id, reference, request_hash, amount_minor, fee_minor, recipient_account,
         recipient_bank_code, recipient_bank, recipient_name, narration, status, failure_reason)
       values (?, ?, 'live-ref', 'h', 100000, 1000, '0123456789', '058', 'Guaranty Trust Bank', 'X', 'n', 'failed', 'x')`,
      [transferId, liveTenantId],
    );
    const answer = await postSignedCallback(app, {
      id: `evt-${transferId}`,
      type: 'transfer.completed',
      data: { reference: transferId, status: 'successful', session_id: 's', code: '00', message: 'Approved' },
    });
    expect(answer.statusCode).toBe(200);
    const [recorded] = await db.orm.em
      .fork()
      .execute<{ dispatch_result: string }[]>('select dispatch_result from provider_callbacks where event_id = ?', [
        `evt-${transferId}`,
      ]);
    expect(recorded?.dispatch_result).toBe('ignored: sandbox does not serve live-mode transfers');
    // Not even kept as a discrepancy: the sandbox bank is no witness to live money.
    const discrepancies = await db.orm.em
      .fork()
      .execute('select 1 from transfer_discrepancies where transfer_id = ?', [transferId]);
    expect(discrepancies).toEqual([]);
  });

  it('never lets the sandbox card processor spend or settle for a live card', async () => {
    const { tenantId, liveTenantId } = await tenantWithBothKeys('live card');
    await stack.admin('wallet', 'fund', '--tenant', tenantId, '--amount-minor', '500000', '--live');
    // A live card with JIT funding from the live wallet (no route issues one without a live
    // processor; it stands for a card a live processor issued).
    const cardId = randomUUID();
    const cardReference = `live-card-${cardId}`;
    await db.orm.em.fork().transactional(async (tx) => {
      await insertCard(tx, {
        id: cardId,
        tenant_id: liveTenantId,
        customer_id: 'live-cust',
        status: 'active',
        last4: '4242',
        currency: 'NGN',
        metadata: null,
        processor_reference: cardReference,
      });
      await openCardAccount(tx, liveTenantId, cardId);
      await tx.execute('update cards set jit_funding = true where id = ?', [cardId]);
    });
    // The sandbox processor asks about a purchase on it, as it would about one of its own cards.
    const asked = await postSignedCallback(app, {
      id: `evt-auth-${cardId}`,
      type: 'card.authorization.request',
      data: {
        authorization_id: 'auth-live-1',
        card_reference: cardReference,
        amount_minor: 100_000,
        currency: 'NGN',
        merchant_name: 'Anywhere',
        merchant_category: '5411',
        channel: 'pos',
      },
    });
    expect(asked.statusCode).toBe(200);
    expect(asked.json().data.authorization).toEqual({
      authorization_id: 'auth-live-1',
      decision: 'declined',
      reason: 'card_not_found',
    });
    // …and reverses or clears on it: refused, as for a card it never issued.
    for (const [type, extra] of [
      ['card.authorization.reversed', {}],
      ['card.authorization.cleared', { amount_minor: 100_000 }],
    ] as const) {
      const eventId = `evt-${type}-${cardId}`;
      await postSignedCallback(app, {
        id: eventId,
        type,
        data: { authorization_id: 'auth-live-1', card_reference: cardReference, ...extra },
      });
      const [recorded] = await db.orm.em
        .fork()
        .execute<{ dispatch_result: string }[]>('select dispatch_result from provider_callbacks where event_id = ?', [
          eventId,
        ]);
      expect(recorded?.dispatch_result).toBe(`refused: no card ${cardReference}`);
    }
    expect((await walletBalance(db.orm.em.fork(), liveTenantId)).availableMinor).toBe(500_000);
    const rows = await db.orm.em
      .fork()
      .execute(
        'select 1 from card_authorizations where card_id = ? union all select 1 from card_authorization_voids where card_id = ?',
        [cardId, cardId],
      );
    expect(rows).toEqual([]);
  });

  it('refuses to fund a live wallet that does not exist yet, naming the way to make it', async () => {
    const created = await stack.admin('tenant', 'create', '--name', 'test only');
    const tenantId = created.json.tenant_id as string;
    const refused = await stack.admin('wallet', 'fund', '--tenant', tenantId, '--amount-minor', '100', '--live');
    expect(refused.code).not.toBe(0);
    expect(refused.stderr).toContain(`tenant ${tenantId} has no live mode yet: issue it a live key first`);
    const listed = await stack.admin('tenant', 'list');
    expect(listed.json.tenants.find((t: { tenant_id: string }) => t.tenant_id === tenantId)).toMatchObject({
      live_tenant_id: null,
    });
  });
});

describe('migration 0020 on a database made before it', () => {
  it('keeps existing rows in test mode and moves existing live keys to a new live mode with an empty wallet', async () => {
    const legacy = await createTestDatabase(2, { migrateTo: '0019-virtual-account-bvns' });
    const orm = legacy.orm;
    try {
      const em = orm.em.fork();
      const tenantId = randomUUID();
      await em.execute(`insert into tenants (id, name) values (?, 'before')`, [tenantId]);
      await em.execute(
        `insert into ledger_accounts (id, tenant_id, code, currency, balance_minor) values
           (gen_random_uuid(), ?, 'wallet', 'NGN', 0), (gen_random_uuid(), ?, 'in_flight', 'NGN', 0)`,
        [tenantId, tenantId],
      );
      const keys = { test: generateApiKey('test'), live: generateApiKey('live') };
      for (const [mode, apiKey] of Object.entries(keys)) {
        await em.execute(
          `insert into api_keys (id, tenant_id, mode, prefix, key_hash) values (gen_random_uuid(), ?, ?, ?, ?)`,
          [tenantId, mode, keyPrefix(apiKey), hashApiKey(apiKey)],
        );
      }
      // Endpoints record the mode of the key that registered them: one of each.
      const endpoints = { test: randomUUID(), live: randomUUID() };
      for (const [mode, id] of Object.entries(endpoints)) {
        await em.execute(
          `insert into webhook_endpoints (id, tenant_id, url, mode, events, secret_ciphertext, status)
           values (?, ?, ?, ?, '{*}', 'x', 'listening')`,
          [id, tenantId, `https://hooks.example.test/${mode}`, mode],
        );
      }
      expect(await migrate(orm)).toContain('0020-modes');

      const test = await resolveApiKey(orm.em.fork(), keys.test);
      const live = await resolveApiKey(orm.em.fork(), keys.live);
      if (!test.ok || !live.ok) throw new Error('a key no longer resolves');
      expect(test.key).toMatchObject({ tenantId, mode: 'test' });
      expect(live.key).toMatchObject({ mode: 'live', tenantName: 'before' });
      expect(live.key.tenantId).not.toBe(tenantId);
      const [liveRow] = await orm.em
        .fork()
        .execute<{ mode: string; owner_id: string }[]>('select mode, owner_id from tenants where id = ?', [
          live.key.tenantId,
        ]);
      expect(liveRow).toEqual({ mode: 'live', owner_id: tenantId });
      expect((await walletBalance(orm.em.fork(), live.key.tenantId)).availableMinor).toBe(0);
      // The live key's endpoint went with it: the tenant's production receiver gets no sandbox events.
      const moved = await orm.em
        .fork()
        .execute<{ id: string; tenant_id: string }[]>('select id, tenant_id from webhook_endpoints order by mode desc');
      expect(moved).toEqual([
        { id: endpoints.test, tenant_id: tenantId },
        { id: endpoints.live, tenant_id: live.key.tenantId },
      ]);
      // The database refuses a key whose mode is not its tenant row's.
      await expect(
        orm.em
          .fork()
          .execute(
            `insert into api_keys (id, tenant_id, mode, prefix, name, scopes) values (gen_random_uuid(), ?, 'live', 'sk_live_x', 'x', '{*}')`,
            [tenantId],
          ),
      ).rejects.toThrow(/api_keys_tenant_mode/);
    } finally {
      await legacy.drop();
    }
  });
});
