// Virtual accounts and identity customers against the running pieces: the real app, PostgreSQL,
// Temporal, and the sandbox bank over HTTP (routing between its two providers, inbound credits
// through the signed callback path, a BVN that reaches the provider and is found nowhere else).
import { randomInt, randomUUID } from 'node:crypto';
import type { FastifyInstance, LightMyRequestResponse } from 'fastify';
import { describe, expect, it } from 'vitest';
import { sha256 } from '../../src/lib/canonical.ts';
import { bvnHash, bvnKeysFrom, sealBvn } from '../../src/identity/bvn.ts';
import { walletBalance } from '../../src/ledger/ledger.ts';
import { insertSealedBvn, sealedBvnBinding } from '../../src/virtual-accounts/store.ts';
import { auth, expectFieldRefused, fieldPaths } from '../support/api.ts';
import { TEST_BVN_SECRET, createFundedTenant } from '../support/app.ts';
import { creditCallback, inboundCreditOutcome, postSignedCallback } from '../support/callbacks.ts';
import { runAdmin } from '../support/cli.ts';
import { recordHistory } from '../support/histories.ts';
import { everyRow, expectFoundNowhere, expectIdempotencyRecordKeepsNoSecret, historyText } from '../support/secrecy.ts';
import {
  closeWorkflowId,
  createWorkflowId,
  inboundCreditWorkflowId,
} from '../../workflows/virtual-accounts/definitions.ts';
import type { TestDatabase } from '../support/database.ts';
import { eventually } from '../support/eventually.ts';
import type { TestSandboxBank } from '../support/sandbox-bank.ts';
import { type GatewayStack, useGatewayStack } from '../support/stack.ts';

const TASK_QUEUE = `virtual-accounts-${process.pid}`;

let stack: GatewayStack;
let db: TestDatabase;
let app: FastifyInstance;
let bank: TestSandboxBank;

useGatewayStack({ taskQueue: TASK_QUEUE }, (started) => {
  stack = started;
  ({ db, app, bank } = stack);
});

async function create(apiKey: string, body: Record<string, unknown>, headers: Record<string, string> = {}) {
  return app.inject({ method: 'POST', url: '/api/v1/virtual-accounts', headers: auth(apiKey, headers), payload: body });
}

async function list(apiKey: string, query: string) {
  return app.inject({ method: 'GET', url: `/api/v1/virtual-accounts${query}`, headers: auth(apiKey) });
}

/** A standard account of the tenant's, as most tests need one. */
async function newAccount(apiKey: string) {
  return (await create(apiKey, { customer_id: 'c', account_name: 'A B' })).json().data;
}

function getAccount(apiKey: string, id: string) {
  return app.inject({ method: 'GET', url: `/api/v1/virtual-accounts/${id}`, headers: auth(apiKey) });
}

/** The account as its tenant reads it. */
async function readAccount(apiKey: string, id: string) {
  return (await getAccount(apiKey, id)).json().data;
}

/** Asks to close the account, with the reason (kept for the provider) if the test gives one. */
function closeAccount(apiKey: string, id: string, payload?: object) {
  return app.inject({
    method: 'POST',
    url: `/api/v1/virtual-accounts/${id}/close`,
    headers: auth(apiKey),
    ...(payload ? { payload } : {}),
  });
}

/** Has the sandbox bank credit the account, through the gateway's sandbox route. */
function sandboxCredit(apiKey: string, id: string, payload: object) {
  return app.inject({
    method: 'POST',
    url: `/api/v1/sandbox/virtual-accounts/${id}/credits`,
    headers: auth(apiKey),
    payload,
  });
}

describe('POST /api/v1/virtual-accounts', () => {
  it('creates an active account with every field, routed to an available provider', async () => {
    const tenant = await createFundedTenant(db.orm);
    const response = await create(
      tenant.apiKey,
      { customer_id: 'cus_1', account_name: 'Ada Obi', metadata: { tier: 'gold' }, bank_code: '999' },
      { 'x-request-id': 'va-create-1' },
    );
    expect(response.statusCode).toBe(201);
    const { data, meta } = response.json();
    expect(meta.requestId).toBe('va-create-1');
    expect(Object.keys(data).sort()).toEqual(
      [
        'account_name',
        'account_number',
        'account_type',
        'bank_code',
        'bank_name',
        'created_at',
        'customer_id',
        'expires_at',
        'id',
        'metadata',
        'provider',
        'status',
        'tenant_id',
        'total_received_minor',
        'transaction_count',
        'updated_at',
      ].sort(),
    );
    expect(data).toMatchObject({
      tenant_id: tenant.tenantId,
      customer_id: 'cus_1',
      account_name: 'Ada Obi',
      provider: 'wema',
      bank_code: '035',
      bank_name: 'Wema Bank',
      status: 'active',
      account_type: 'standard',
      total_received_minor: 0,
      transaction_count: 0,
      metadata: { tier: 'gold' },
      expires_at: null,
    });
    expect(data.account_number).toMatch(/^\d{10}$/);
    const events = await app.inject({
      method: 'GET',
      url: '/api/v1/events?type=virtual_account.created',
      headers: auth(tenant.apiKey),
    });
    expect(events.json().data.items[0].data.id).toBe(data.id);
  });

  it('honours a provider override, a preferred bank, and falls back when a provider is down', async () => {
    const tenant = await createFundedTenant(db.orm);
    expect(
      (await create(tenant.apiKey, { customer_id: 'c', account_name: 'A B', provider: 'providus' })).json().data
        .provider,
    ).toBe('providus');
    expect(
      (await create(tenant.apiKey, { customer_id: 'c', account_name: 'A B', preferred_bank: '101' })).json().data
        .provider,
    ).toBe('providus');
    await bank.control('/control/providers/wema/down');
    try {
      const failedOver = await newAccount(tenant.apiKey);
      expect(failedOver.provider).toBe('providus');
      recordHistory('virtual-account-create-failover', createWorkflowId(tenant.tenantId, `new:${failedOver.id}`));
      await bank.control('/control/providers/providus/down');
      const none = await create(tenant.apiKey, { customer_id: 'c', account_name: 'A B' });
      expect(none.statusCode).toBe(422);
      expect(none.json().error.code).toBe('FAILED_PRECONDITION');
    } finally {
      await bank.control('/control/providers/wema/up');
      await bank.control('/control/providers/providus/up');
    }
    const foreign = await create(tenant.apiKey, {
      customer_id: 'c',
      account_name: 'A B',
      country: 'US',
      currency: 'USD',
    });
    expect(foreign.statusCode).toBe(422);
    expect(foreign.json().error.code).toBe('FAILED_PRECONDITION');
  });

  it('answers 400 VALIDATION_ERROR naming each bad field', async () => {
    const tenant = await createFundedTenant(db.orm);
    const cases: [Record<string, unknown>, string][] = [
      [{ account_name: 'A B' }, 'customer_id'],
      [{ customer_id: 'c' }, 'account_name'],
      [{ customer_id: 'c', account_name: 'A B', provider: 'acme-bank' }, 'provider'],
      [{ customer_id: 'c', account_name: 'A B', account_type: 'platinum' }, 'account_type'],
      [{ customer_id: 'c', account_name: 'A B', bvn: '123' }, 'bvn'],
      [{ customer_id: 'c', account_name: 'A B', metadata: 'x' }, 'metadata'],
    ];
    for (const [body, field] of cases) {
      const response = await create(tenant.apiKey, body);
      expectFieldRefused(response, field);
    }
  });

  it('returns the same account for a repeated request_id or Idempotency-Key, allocating nothing new', async () => {
    const tenant = await createFundedTenant(db.orm);
    const requestId = `req-${randomUUID()}`;
    const body = { customer_id: 'c', account_name: 'A B', request_id: requestId };
    const responses = await Promise.all([
      create(tenant.apiKey, body),
      create(tenant.apiKey, body),
      create(tenant.apiKey, body),
    ]);
    expect(responses.map((r) => r.statusCode).sort()).toEqual([200, 200, 201]);
    expect(new Set(responses.map((r) => r.json().data.id)).size).toBe(1);
    const [allocated] = await db.orm.em
      .fork()
      .execute<{ n: string }[]>('select count(*) as n from sandbox_bank.virtual_accounts where reference = ?', [
        `va:${tenant.tenantId}:${requestId}`,
      ]);
    expect(Number(allocated!.n)).toBe(1);

    const key = `idem-${randomUUID()}`;
    const first = await create(
      tenant.apiKey,
      { customer_id: 'c', account_name: 'Key Holder' },
      { 'idempotency-key': key },
    );
    const again = await create(
      tenant.apiKey,
      { customer_id: 'c', account_name: 'Key Holder' },
      { 'idempotency-key': key },
    );
    expect(first.statusCode).toBe(201);
    expect(again.json().data.id).toBe(first.json().data.id);
  });

  it('gives temporary accounts expires_at about 24 h ahead', async () => {
    const tenant = await createFundedTenant(db.orm);
    const response = await create(tenant.apiKey, { customer_id: 'c', account_name: 'A B', account_type: 'temporary' });
    expect(response.statusCode).toBe(201);
    const hours = (Date.parse(response.json().data.expires_at) - Date.now()) / 3_600_000;
    expect(hours).toBeGreaterThan(23.9);
    expect(hours).toBeLessThanOrEqual(24);
  });
});

/** An 11-digit BVN of its own for each test (none of the sandbox's magic ones). */
function ordinaryBvn(): string {
  return `6${String(randomInt(0, 1e9)).padStart(9, '0')}3`;
}

const bvnKeys = bvnKeysFrom(TEST_BVN_SECRET);

/** What the gateway kept of a create's BVN, by the create's account id. */
async function keptBvn(accountId: string) {
  const [row] = await db.orm.em
    .fork()
    .execute<{ tenant_id: string; bvn_hash: string; bvn_last4: string; sealed: boolean; erased: boolean }[]>(
      `select tenant_id, bvn_hash, bvn_last4, bvn_ciphertext is not null as sealed, erased_at is not null as erased
       from virtual_account_bvns where account_id = ?`,
      [accountId],
    );
  return row;
}

/** What the sandbox bank recorded of the allocation made under this reference. */
async function bankAccount(reference: string) {
  const [row] = await db.orm.em
    .fork()
    .execute<{ account_number: string; bvn_last4: string | null }[]>(
      'select account_number, bvn_last4 from sandbox_bank.virtual_accounts where reference = ?',
      [reference],
    );
  return row;
}

describe('a BVN sent with a create (#15 item 6)', () => {
  it('reaches the provider; the gateway keeps its keyed hash and last 4, its sealed copy erased once the account is recorded, and the workflow input only a flag', async () => {
    const tenant = await createFundedTenant(db.orm);
    const bvn = ordinaryBvn();
    const requestId = `bvn-${randomUUID()}`;
    // A copy an earlier create left sealed (its workflow never ran), past its hour: the next create erases it.
    const stale = randomUUID();
    await insertSealedBvn(db.orm.em.fork(), {
      accountId: stale,
      tenantId: tenant.tenantId,
      bvnHash: bvnHash(bvnKeys, '60000000003'),
      bvnLast4: '0003',
      sealedBvn: sealBvn(bvnKeys, sealedBvnBinding(stale), '60000000003'),
    });
    await db.orm.em
      .fork()
      .execute(`update virtual_account_bvns set created_at = now() - interval '61 minutes' where account_id = ?`, [
        stale,
      ]);

    // The create, with its BVN, under one request id (the repeat below is this again).
    const createWithBvn = () =>
      create(tenant.apiKey, { customer_id: 'c', account_name: 'Ada Obi', bvn, request_id: requestId });
    const response = await createWithBvn();
    expect(response.statusCode).toBe(201);
    const account = response.json().data;
    expect(response.body).not.toContain(bvn);
    expect(Object.keys(account)).not.toContain('bvn');

    // The provider got the BVN: the sandbox bank recorded the account with its last 4.
    const reference = `va:${tenant.tenantId}:${requestId}`;
    expect(await bankAccount(reference)).toEqual({ account_number: account.account_number, bvn_last4: bvn.slice(-4) });
    expect(await keptBvn(account.id)).toEqual({
      tenant_id: tenant.tenantId,
      bvn_hash: bvnHash(bvnKeys, bvn),
      bvn_last4: bvn.slice(-4),
      sealed: false,
      erased: true,
    });
    expect(await keptBvn(stale)).toMatchObject({ sealed: false, erased: true });

    const workflowId = createWorkflowId(tenant.tenantId, `request:${sha256(requestId)}`);
    const history = await historyText(stack.client, workflowId);
    expect(history).toContain('"sealedBvn":true');
    expect(history).toContain(`"sealedBvnOf":"${account.id}"`);
    expect(history).not.toContain(bvn);
    recordHistory('virtual-account-create-sealed-bvn', workflowId);

    // A repeat answers the same account and leaves no copy of its own behind.
    const again = await createWithBvn();
    expect(again.statusCode).toBe(200);
    expect(again.json().data.id).toBe(account.id);
    const [held] = await db.orm.em
      .fork()
      .execute<{ n: string }[]>('select count(*) as n from virtual_account_bvns where bvn_ciphertext is not null');
    expect(Number(held!.n)).toBe(0);
  });

  it('erases the sealed copy when no account is made (no provider up), and refuses a malformed BVN naming only the rule', async () => {
    const tenant = await createFundedTenant(db.orm);
    const bvn = ordinaryBvn();
    const key = `bvn-none-${randomUUID()}`;
    await bank.control('/control/providers/providus/down');
    let refused;
    try {
      refused = await create(
        tenant.apiKey,
        { customer_id: 'c', account_name: 'A B', provider: 'providus', bvn },
        { 'idempotency-key': key },
      );
    } finally {
      await bank.control('/control/providers/providus/up');
    }
    expect(refused.statusCode).toBe(422);
    expect(refused.json().error.code).toBe('FAILED_PRECONDITION');
    const workflowId = createWorkflowId(tenant.tenantId, `key:${sha256(key)}`);
    const history = await historyText(stack.client, workflowId);
    expect(history).toContain('eraseVirtualAccountBvn');
    expect(history).not.toContain(bvn);
    const [row] = await db.orm.em.fork().execute<{ sealed: boolean; erased: boolean; bvn_last4: string }[]>(
      `select bvn_ciphertext is not null as sealed, erased_at is not null as erased, bvn_last4
           from virtual_account_bvns where bvn_hash = ?`,
      [bvnHash(bvnKeys, bvn)],
    );
    expect(row).toEqual({ sealed: false, erased: true, bvn_last4: bvn.slice(-4) });
    recordHistory('virtual-account-create-sealed-bvn-no-provider', workflowId);

    for (const bad of [`${bvn}9`, bvn.slice(1), `${bvn.slice(0, 10)}a`]) {
      const response = await create(tenant.apiKey, { customer_id: 'c', account_name: 'A B', bvn: bad });
      expectFieldRefused(response, 'bvn');
      expect(response.body).not.toContain(bad);
    }
  });

  it('replays a repeat under the same Idempotency-Key, refuses another BVN under it, and the key’s record keeps no plain digest of the BVN', async () => {
    const tenant = await createFundedTenant(db.orm);
    const bvn = ordinaryBvn();
    const key = `bvn-key-${randomUUID()}`;
    const body = { customer_id: 'c', account_name: 'Key Holder', bvn };
    const first = await create(tenant.apiKey, body, { 'idempotency-key': key });
    expect(first.statusCode).toBe(201);
    const repeat = await create(tenant.apiKey, body, { 'idempotency-key': key });
    expect(repeat.statusCode).toBe(200);
    expect(repeat.headers['idempotent-replayed']).toBe('true');
    expect(repeat.json().data.id).toBe(first.json().data.id);
    const reused = await create(tenant.apiKey, { ...body, bvn: ordinaryBvn() }, { 'idempotency-key': key });
    expect(reused.statusCode).toBe(422);
    expect(reused.json().error.code).toBe('IDEMPOTENCY_KEY_REUSED');

    await expectIdempotencyRecordKeepsNoSecret(
      db.orm,
      key,
      { method: 'POST', path: '/api/v1/virtual-accounts', body },
      bvn,
    );
  });

  it('keeps the raw BVN out of every answer, database row, event, log line and the workflow history', async () => {
    const tenant = await createFundedTenant(db.orm);
    const bvn = ordinaryBvn();
    const answers: string[] = [];
    const keep = (response: LightMyRequestResponse) => {
      answers.push(response.body);
      return response;
    };
    // Refused first: bodies holding the BVN that an error or a log line could echo.
    expect(
      keep(await create(tenant.apiKey, { customer_id: 'c', account_name: 'A B', bvn: `${bvn}9` })).statusCode,
    ).toBe(400);
    expect(
      keep(await create(tenant.apiKey, { customer_id: 'c', account_name: 'A B', bvn: Number(bvn) })).statusCode,
    ).toBe(400);
    const key = `bvn-secret-${randomUUID()}`;
    const created = keep(
      await create(
        tenant.apiKey,
        { customer_id: 'cus-secret', account_name: 'Emeka Nwosu', bvn, account_type: 'temporary' },
        { 'idempotency-key': key },
      ),
    );
    expect(created.statusCode).toBe(201);
    const id = created.json().data.id as string;
    keep(
      await create(
        tenant.apiKey,
        { customer_id: 'cus-secret', account_name: 'Emeka Nwosu', bvn },
        { 'idempotency-key': key },
      ),
    );
    keep(await getAccount(tenant.apiKey, id));
    keep(await list(tenant.apiKey, '?customer_id=cus-secret'));
    const events = keep(
      await app.inject({ method: 'GET', url: '/api/v1/events?limit=100', headers: auth(tenant.apiKey) }),
    );
    expect(events.json().data.items.map((event: { data: { id: string } }) => event.data.id)).toContain(id);

    const rows = await everyRow(db.orm);
    const eventRows = await db.orm.em
      .fork()
      .execute<{ row: string }[]>(
        `select row_to_json(e)::text as row from events e where type = 'virtual_account.created' and tenant_id = ?`,
        [tenant.tenantId],
      );
    const history = await historyText(stack.client, createWorkflowId(tenant.tenantId, `key:${sha256(key)}`));
    // The search sees what the history does carry: the account's id and name.
    expect(history).toContain(id);
    expect(history).toContain('Emeka Nwosu');
    const logs = stack.gateway.logs.map((line) => JSON.stringify(line)).join('\n');
    expect(logs).toContain('/api/v1/virtual-accounts');
    expectFoundNowhere(
      {
        answers: answers.join('\n'),
        rows: rows.join('\n'),
        events: eventRows.map((row) => row.row).join('\n'),
        logs,
        history,
      },
      { 'the BVN': bvn },
    );
    // What is kept instead: its keyed hash and last 4.
    expect(rows.join('\n')).toContain(bvnHash(bvnKeys, bvn));
  });
});

describe('GET /api/v1/virtual-accounts', () => {
  it('paginates with page, limit and offset, sorts by every sort value, filters, and refuses wrappers', async () => {
    const tenant = await createFundedTenant(db.orm);
    const ids: string[] = [];
    for (let i = 0; i < 5; i += 1) {
      const response = await create(tenant.apiKey, {
        customer_id: i < 3 ? 'cus_a' : 'cus_b',
        account_name: `Holder ${i}`,
        ...(i === 4 ? { provider: 'providus' } : {}),
      });
      ids.push(response.json().data.id);
    }
    await db.orm.em
      .fork()
      .execute('update virtual_accounts set total_received_minor = ? where id = ?', [5_000, ids[1]]);
    await db.orm.em
      .fork()
      .execute('update virtual_accounts set total_received_minor = ? where id = ?', [9_000, ids[3]]);

    const page2 = (await list(tenant.apiKey, '?limit=2&page=2')).json().data;
    expect(page2.items.map((a: { id: string }) => a.id)).toEqual([ids[2], ids[1]]);
    expect(page2.pagination).toEqual({ page: 2, limit: 2, offset: 2, total: 5, pages: 3, has_more: true });
    const last = (await list(tenant.apiKey, '?limit=2&page=3')).json().data;
    expect(last.items.map((a: { id: string }) => a.id)).toEqual([ids[0]]);
    expect(last.pagination).toMatchObject({ page: 3, has_more: false });
    const offsetWins = (await list(tenant.apiKey, '?limit=2&page=3&offset=1')).json().data;
    expect(offsetWins.items.map((a: { id: string }) => a.id)).toEqual([ids[3], ids[2]]);
    expect(offsetWins.pagination).toMatchObject({ offset: 1, page: 1, has_more: true });
    const beyond = (await list(tenant.apiKey, '?offset=50')).json().data;
    expect(beyond).toEqual({
      items: [],
      pagination: { page: 3, limit: 20, offset: 50, total: 5, pages: 1, has_more: false },
    });

    const order = async (sort: string) =>
      (await list(tenant.apiKey, `?sort=${sort}`)).json().data.items.map((a: { id: string }) => a.id) as string[];
    expect(await order('-created_at')).toEqual([...ids].reverse());
    expect(await order('created_at')).toEqual(ids);
    const byNumber = (await list(tenant.apiKey, '?sort=account_number'))
      .json()
      .data.items.map((a: { account_number: string }) => a.account_number);
    expect(byNumber).toEqual([...byNumber].sort());
    expect(await order('-account_number')).toEqual((await order('account_number')).reverse());
    expect((await order('-total_received_minor')).slice(0, 2)).toEqual([ids[3], ids[1]]);
    expect((await order('total_received_minor')).slice(-2)).toEqual([ids[1], ids[3]]);
    expect(await order('-total_credits')).toEqual(await order('-total_received_minor'));
    expect(await order('total_credits')).toEqual(await order('total_received_minor'));

    expect((await list(tenant.apiKey, '?customer_id=cus_b')).json().data.pagination.total).toBe(2);
    expect((await list(tenant.apiKey, '?bank_code=101')).json().data.items.map((a: { id: string }) => a.id)).toEqual([
      ids[4],
    ]);
    expect(
      (await list(tenant.apiKey, '?bank_code=providus-bank')).json().data.items.map((a: { id: string }) => a.id),
    ).toEqual([ids[4]]);
    expect((await list(tenant.apiKey, '?status=active&account_type=standard')).json().data.pagination.total).toBe(5);

    for (const query of [
      '?filters=%7B%22status%22%3A%22active%22%7D',
      '?params[status]=active',
      '?limit=101',
      '?sort=balance',
    ]) {
      const refused = await list(tenant.apiKey, query);
      expect({ query, status: refused.statusCode }).toEqual({ query, status: 400 });
      expect(refused.json().error.code).toBe('VALIDATION_ERROR');
    }
  });
});

describe('closing, freezing and reading one account', () => {
  it('closes at the provider first: 503 while it is down (the account stays active), then closed once', async () => {
    const tenant = await createFundedTenant(db.orm);
    const account = await newAccount(tenant.apiKey);
    const close = () => closeAccount(tenant.apiKey, account.id, { reason: 'moving banks' });
    await bank.control(`/control/providers/${account.provider}/down`);
    try {
      const refused = await close();
      expect(refused.statusCode).toBe(503);
      expect(refused.json().error.code).toBe('UNAVAILABLE');
    } finally {
      await bank.control(`/control/providers/${account.provider}/up`);
    }
    const [before] = await db.orm.em
      .fork()
      .execute<{ status: string }[]>('select status from virtual_accounts where id = ?', [account.id]);
    expect(before!.status).toBe('active');
    const closed = await close();
    expect([closed.statusCode, closed.json().data.status]).toEqual([200, 'closed']);
    const [events] = await db.orm.em
      .fork()
      .execute<{ n: number }[]>(
        `select count(*)::int as n from events where type = 'virtual_account.closed' and payload->>'id' = ?`,
        [account.id],
      );
    expect(events!.n).toBe(1);
    recordHistory('virtual-account-close', closeWorkflowId(account.id));
  });

  it('closes from active and frozen, refuses from closed and expired, and never echoes the reason', async () => {
    const tenant = await createFundedTenant(db.orm);
    const active = await newAccount(tenant.apiKey);
    const closed = await closeAccount(tenant.apiKey, active.id, { reason: 'customer offboarded' });
    expect(closed.statusCode).toBe(200);
    expect(closed.json().data).toMatchObject({ id: active.id, status: 'closed' });
    expect(closed.json().data).not.toHaveProperty('closure_reason');
    expect(closed.json().data).not.toHaveProperty('closed_at');
    expect(closed.body).not.toContain('offboarded');
    const [atBank] = await db.orm.em
      .fork()
      .execute<{ status: string; close_reason: string }[]>(
        'select status, close_reason from sandbox_bank.virtual_accounts where account_number = ?',
        [active.account_number],
      );
    expect(atBank).toEqual({ status: 'closed', close_reason: 'customer offboarded' });

    const again = await closeAccount(tenant.apiKey, active.id);
    expect(again.statusCode).toBe(422);
    expect(again.json().error.code).toBe('FAILED_PRECONDITION');

    const toFreeze = await newAccount(tenant.apiKey);
    const frozen = await runAdmin({ DATABASE_URL: db.url }, 'virtual-account', 'freeze', '--id', toFreeze.id);
    expect(frozen.json.status).toBe('frozen');
    expect((await runAdmin({ DATABASE_URL: db.url }, 'virtual-account', 'freeze', '--id', toFreeze.id)).code).toBe(1);
    const closedFrozen = await closeAccount(tenant.apiKey, toFreeze.id);
    expect(closedFrozen.json().data.status).toBe('closed');

    const toThaw = await newAccount(tenant.apiKey);
    await runAdmin({ DATABASE_URL: db.url }, 'virtual-account', 'freeze', '--id', toThaw.id);
    expect(
      (await runAdmin({ DATABASE_URL: db.url }, 'virtual-account', 'unfreeze', '--id', toThaw.id)).json.status,
    ).toBe('active');

    const expiring = await newAccount(tenant.apiKey);
    await db.orm.em.fork().execute(`update virtual_accounts set status = 'expired' where id = ?`, [expiring.id]);
    const closeExpired = await closeAccount(tenant.apiKey, expiring.id);
    expect(closeExpired.statusCode).toBe(422);
  });

  it("answers 404 NOT_FOUND for an unknown or another tenant's account", async () => {
    const owner = await createFundedTenant(db.orm);
    const stranger = await createFundedTenant(db.orm);
    const account = await newAccount(owner.apiKey);
    expect((await getAccount(owner.apiKey, account.id)).statusCode).toBe(200);
    for (const [key, id] of [
      [stranger.apiKey, account.id],
      [owner.apiKey, randomUUID()],
      [owner.apiKey, 'nope'],
    ] as const) {
      const response = await closeAccount(key, id);
      expect(response.statusCode).toBe(404);
      expect(response.json().error.code).toBe('NOT_FOUND');
    }
  });
});

describe('inbound credits', () => {
  it('applies a sandbox credit once: totals, count, wallet and virtual_account.credited', async () => {
    const tenant = await createFundedTenant(db.orm, 1_000);
    const account = await newAccount(tenant.apiKey);
    const sent = await sandboxCredit(tenant.apiKey, account.id, {
      amount_minor: 750_050,
      sender_name: 'OKAFOR STORES',
      reference: `cr-${account.id}`,
    });
    expect(sent.statusCode).toBe(202);
    expect(sent.json().data).toMatchObject({
      virtual_account_id: account.id,
      amount_minor: 750_050,
      reference: `cr-${account.id}`,
      transaction_reference: expect.stringMatching(/^SBXCR[0-9A-F]{24}$/),
    });
    const credited = await eventually(async () => {
      const data = await readAccount(tenant.apiKey, account.id);
      return data.transaction_count === 1 ? data : undefined;
    });
    expect(credited.total_received_minor).toBe(750_050);
    expect((await walletBalance(db.orm.em.fork(), tenant.tenantId)).availableMinor).toBe(751_050);
    const event = (
      await app.inject({
        method: 'GET',
        url: '/api/v1/events?type=virtual_account.credited',
        headers: auth(tenant.apiKey),
      })
    ).json().data.items[0];
    expect(event.data).toMatchObject({
      id: account.id,
      total_received_minor: 750_050,
      credit: { amount_minor: 750_050, sender_name: 'OKAFOR STORES' },
    });
    // Sent again: the bank sends the same notification again (202), and it still counts once.
    const repeat = await sandboxCredit(tenant.apiKey, account.id, {
      amount_minor: 750_050,
      reference: `cr-${account.id}`,
    });
    expect(repeat.statusCode).toBe(202);
    expect(repeat.json().data.transaction_reference).toBe(sent.json().data.transaction_reference);
    const otherAmount = await sandboxCredit(tenant.apiKey, account.id, {
      amount_minor: 750_051,
      reference: `cr-${account.id}`,
    });
    expect(otherAmount.statusCode).toBe(409);
    expect(otherAmount.json().error.code).toBe('CONFLICT');
    await eventually(async () => {
      const [row] = await db.orm.em.fork().execute<{ delivered: string }[]>(
        `select count(*)::text as delivered from sandbox_bank.callbacks
            where payload->'data'->>'transaction_reference' = ? and delivered_at is not null`,
        [sent.json().data.transaction_reference],
      );
      return row?.delivered === '2' ? row : undefined;
    });
    const after = await readAccount(tenant.apiKey, account.id);
    expect([after.total_received_minor, after.transaction_count]).toEqual([750_050, 1]);
    expect((await walletBalance(db.orm.em.fork(), tenant.tenantId)).availableMinor).toBe(751_050);
  });

  it('scopes sandbox credit references to the tenant: two tenants, one reference, two credits', async () => {
    const reference = `shared-${randomUUID()}`;
    const tenants = [await createFundedTenant(db.orm), await createFundedTenant(db.orm)];
    const accounts: { id: string }[] = [];
    for (const [index, tenant] of tenants.entries()) {
      const account = await newAccount(tenant.apiKey);
      accounts.push(account);
      const sent = await sandboxCredit(tenant.apiKey, account.id, { amount_minor: 40_000 + index, reference });
      // Neither tenant learns that the other used the reference: both are accepted as new.
      expect(sent.statusCode).toBe(202);
    }
    for (const [index, tenant] of tenants.entries()) {
      const credited = await eventually(async () => {
        const data = await readAccount(tenant.apiKey, accounts[index]!.id);
        return data.transaction_count === 1 ? data : undefined;
      });
      expect(credited.total_received_minor).toBe(40_000 + index);
      expect((await walletBalance(db.orm.em.fork(), tenant.tenantId)).availableMinor).toBe(40_000 + index);
    }
  });

  it('bounds a sandbox credit to 1 … 100,000,000,000 kobo, naming amount_minor', async () => {
    const tenant = await createFundedTenant(db.orm);
    const account = await newAccount(tenant.apiKey);
    for (const amount of [0, 100_000_000_001]) {
      const response = await sandboxCredit(tenant.apiKey, account.id, { amount_minor: amount });
      expect(response.statusCode).toBe(400);
      expect(response.json().error.details.fields).toEqual([{ path: 'amount_minor', message: expect.any(String) }]);
    }
  });

  it('counts the same credit delivered three times, concurrently, once', async () => {
    const tenant = await createFundedTenant(db.orm);
    const account = await newAccount(tenant.apiKey);
    const reference = `triple-${account.id}`;
    const deliveries = Array.from({ length: 3 }, (_, i) =>
      postSignedCallback(app, creditCallback(`bank-event-${reference}-${i}`, account.account_number, reference)),
    );
    expect((await Promise.all(deliveries)).map((r) => r.statusCode)).toEqual([200, 200, 200]);
    await eventually(async () => {
      const data = await readAccount(tenant.apiKey, account.id);
      return data.transaction_count === 1 ? data : undefined;
    });
    // All three notifications have been dispatched, and the credit's workflow has finished.
    await eventually(async () => {
      const [row] = await db.orm.em
        .fork()
        .execute<{ n: string }[]>(
          'select count(*)::text as n from provider_callbacks where event_id like ? and dispatched_at is not null',
          [`bank-event-${reference}-%`],
        );
      return row?.n === '3' ? true : undefined;
    });
    await eventually(async () => {
      const described = await stack.client.workflow.getHandle(inboundCreditWorkflowId('wema', reference)).describe();
      return described.status.name === 'COMPLETED' ? true : undefined;
    });
    const data = await readAccount(tenant.apiKey, account.id);
    expect([data.total_received_minor, data.transaction_count]).toEqual([10_000, 1]);
    recordHistory('inbound-credit-applied', inboundCreditWorkflowId('wema', reference));
    expect((await walletBalance(db.orm.em.fork(), tenant.tenantId)).availableMinor).toBe(10_000);
  });

  it('holds a credit to a closed account from an unknown sender in suspense: the account and wallet count nothing (decisions §21)', async () => {
    const tenant = await createFundedTenant(db.orm);
    const account = await newAccount(tenant.apiKey);
    await closeAccount(tenant.apiKey, account.id);
    const sent = await sandboxCredit(tenant.apiKey, account.id, {
      amount_minor: 5_000,
      reference: `closed-${account.id}`,
    });
    expect(sent.statusCode).toBe(202);
    const held = await inboundCreditOutcome(db.orm, 'transaction_reference', sent.json().data.transaction_reference);
    expect(held).toEqual({ status: 'held', refusal_reason: 'the account is closed' });
    const data = await readAccount(tenant.apiKey, account.id);
    expect([data.total_received_minor, data.transaction_count]).toEqual([0, 0]);
    expect((await walletBalance(db.orm.em.fork(), tenant.tenantId)).availableMinor).toBe(0);
    const [suspense] = await db.orm.em
      .fork()
      .execute<{ balance_minor: string }[]>(
        `select balance_minor::text from ledger_accounts where tenant_id = ? and code = 'suspense'`,
        [tenant.tenantId],
      );
    expect(suspense?.balance_minor).toBe('5000');
  });

  it('keeps the sandbox credit route to sandbox keys', async () => {
    const live = await createFundedTenant(db.orm, 0, 'live', 'live');
    const response = await sandboxCredit(live.apiKey, randomUUID(), { amount_minor: 100 });
    expect(response.statusCode).toBe(403);
    expect(response.json().error.code).toBe('FORBIDDEN');
  });
});

describe('identity customers', () => {
  const customer = {
    external_reference: 'ext-1',
    first_name: 'Ngozi',
    last_name: 'Eze',
    email: 'ngozi@example.com',
    phone: '+2348012345678',
  };
  const post = (apiKey: string, body: Record<string, unknown>) =>
    app.inject({ method: 'POST', url: '/api/v1/identity/customers', headers: auth(apiKey), payload: body });

  it('answers 403 FORBIDDEN unless the tenant has the feature', async () => {
    const tenant = await createFundedTenant(db.orm);
    const response = await post(tenant.apiKey, customer);
    expect(response.statusCode).toBe(403);
    expect(response.json().error.code).toBe('FORBIDDEN');
  });

  it('creates once per external_reference, validates, and reads back', async () => {
    const tenant = await createFundedTenant(db.orm);
    await db.orm.em
      .fork()
      .execute(`update tenants set features = '{identity_customers}' where id = ?`, [tenant.tenantId]);
    const first = await post(tenant.apiKey, customer);
    expect(first.statusCode).toBe(201);
    expect(first.json().data).toMatchObject({ ...customer, country: 'NG', kyc_status: 'unverified', metadata: null });
    const again = await post(tenant.apiKey, customer);
    expect(again.statusCode).toBe(200);
    expect(again.json().data.id).toBe(first.json().data.id);
    const got = await app.inject({
      method: 'GET',
      url: `/api/v1/identity/customers/${first.json().data.id}`,
      headers: auth(tenant.apiKey),
    });
    expect(got.json().data).toEqual(first.json().data);

    for (const [override, field] of [
      [{ email: 'not-an-email' }, 'email'],
      [{ phone: '08012345678' }, 'phone'],
      [{ country: 'XX' }, 'country'],
      [{ first_name: undefined }, 'first_name'],
      [{ external_reference: undefined }, 'external_reference'],
    ] as const) {
      const response = await post(tenant.apiKey, { ...customer, external_reference: 'ext-2', ...override });
      expect({ field, status: response.statusCode }).toEqual({ field, status: 400 });
      expect(fieldPaths(response)).toContain(field);
    }
    const stranger = await createFundedTenant(db.orm);
    await db.orm.em
      .fork()
      .execute(`update tenants set features = '{identity_customers}' where id = ?`, [stranger.tenantId]);
    const foreign = await app.inject({
      method: 'GET',
      url: `/api/v1/identity/customers/${first.json().data.id}`,
      headers: auth(stranger.apiKey),
    });
    expect(foreign.statusCode).toBe(404);
  });
});
