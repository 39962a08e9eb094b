// Duplicates settled in PostgreSQL before any handler runs (decisions §4): 500 concurrent
// identical POSTs — by transfer reference, or by Idempotency-Key alone on transfers, JIT funding,
// lock and virtual-account create — make one of each, move money once, and answer 201/200/202 with
// the same resource or 409 while the first is still running; never a 5xx. Replays answer 200 with
// `idempotent-replayed`; a key whose first request died is taken over after its lease.
// Every request is a tenant's, made over HTTP with the typed client (src/client/): with the
// Idempotency-Key a test gives, or, for the creates keyed by their body (a transfer's reference),
// with none (`idempotencyKey: false`).
import { randomUUID } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { type GatewayResult, createGatewayClient } from '../../src/client/index.ts';
import { postMovement, walletBalance } from '../../src/ledger/ledger.ts';
import { walletFunding } from '../../src/ledger/movements.ts';
import { auth, transferBody } from '../support/api.ts';
import { createFundedTenant, createTestApp } from '../support/app.ts';
import type { TestDatabase } from '../support/database.ts';
import { eventually } from '../support/eventually.ts';
import { useGatewayStack } from '../support/stack.ts';

const TASK_QUEUE = `idempotency-${process.pid}`;
const CONCURRENCY = 500;

let db: TestDatabase;
let gatewayUrl: string;

useGatewayStack({ taskQueue: TASK_QUEUE, bank: { completionDelayMs: 100 } }, (started) => {
  ({ db, gatewayUrl } = started);
});

/** The tenant's client, adding a fresh Idempotency-Key to each POST that has none. */
const clientOf = (apiKey: string) => createGatewayClient({ baseUrl: gatewayUrl, apiKey });

/** The tenant's client sending no Idempotency-Key of its own: a create's reference keys it. */
const keylessClientOf = (apiKey: string) => createGatewayClient({ baseUrl: gatewayUrl, apiKey, idempotencyKey: false });

/** Any answer: its status, the resource or operation it names, and the error. */
type Answer = GatewayResult<{ data: Record<string, unknown> }>;

function burst(count: number, send: () => Promise<Answer>) {
  return Promise.all(Array.from({ length: count }, send));
}

const keyed = (key: string) => ({ 'Idempotency-Key': key });

/** A card of the tenant's, for the operations a burst repeats. */
async function newCardId(apiKey: string): Promise<string> {
  const { data } = await clientOf(apiKey).POST('/api/v1/cards', { body: { customer_id: 'c' } });
  return data!.data.id;
}

/** Rows of a count query (`select count(*)::text as n …`), as its text. */
async function count(sql: string, params: unknown[]): Promise<string | undefined> {
  const [row] = await db.orm.em.fork().execute<{ n: string }[]>(sql, params);
  return row?.n;
}

/** An answer's HTTP status; none (a network failure) is NaN, which no expected status equals. */
const statusOf = (answer: Answer) => answer.response?.status ?? Number.NaN;

/** Status → count, e.g. {201: 1, 200: 480, 409: 19}. */
function tally(answers: Answer[]): Record<number, number> {
  const counts: Record<number, number> = {};
  for (const answer of answers) counts[statusOf(answer)] = (counts[statusOf(answer)] ?? 0) + 1;
  return counts;
}

function expectOneResource(answers: Answer[], firstStatus: number, repeatStatus: number) {
  const counts = tally(answers);
  expect(
    Object.keys(counts)
      .map(Number)
      .filter((status) => ![firstStatus, repeatStatus, 409].includes(status)),
  ).toEqual([]);
  if (firstStatus !== repeatStatus) expect(counts[firstStatus]).toBe(1);
  const ids = new Set(answers.filter((answer) => statusOf(answer) < 300).map((answer) => answer.data!.data.id));
  expect(ids.size).toBe(1);
  for (const conflict of answers.filter((answer) => statusOf(answer) === 409)) {
    expect(conflict.error!.code).toMatch(/^idempotency_key_in_use$|^IDEMPOTENCY_KEY_IN_USE$/);
  }
  return [...ids][0] as string;
}

/** A card operation accepted once: every answer 202 (or 409 while the first still ran), all naming one `idField`. */
function expectOneOperation(answers: Answer[], idField: 'funding_id' | 'operation_id') {
  const counts = tally(answers);
  expect(
    Object.keys(counts)
      .map(Number)
      .filter((status) => ![202, 409].includes(status)),
  ).toEqual([]);
  expect(new Set(answers.filter((a) => statusOf(a) === 202).map((a) => a.data!.data[idField])).size).toBe(1);
}

describe(`${CONCURRENCY} concurrent identical POSTs`, () => {
  const transfer = (reference?: string) => transferBody('burst', reference ? { reference } : {});

  it('by transfer reference: one transfer, one reservation, one debit', async () => {
    const tenant = await createFundedTenant(db.orm, 1_000_000);
    const client = keylessClientOf(tenant.apiKey);
    const payload = transfer(`burst-${randomUUID()}`);
    const responses = await burst(CONCURRENCY, () => client.POST('/api/v1/transfers', { body: payload }));
    const id = expectOneResource(responses, 201, 200);
    const wallet = await walletBalance(db.orm.em.fork(), tenant.tenantId);
    // 100,000 + the 1,000 fee left the wallet once (reserved, or settled already).
    expect(wallet.availableMinor).toBe(899_000);
    expect(await count('select count(*)::text as n from transfers where tenant_id = ?', [tenant.tenantId])).toBe('1');
    // The reference was claimed in PostgreSQL: one key row, holding the first answer.
    const claims = await db.orm.em
      .fork()
      .execute<{ state: string; response_status: number }[]>(
        'select state, response_status from idempotency_keys where tenant_id = ?',
        [tenant.tenantId],
      );
    expect(claims).toEqual([{ state: 'completed', response_status: 201 }]);
    await eventually(async () => {
      const got = await client.GET('/api/v1/transfers/{id}', { params: { path: { id } } });
      return got.data?.data.status === 'successful' ? got : undefined;
    });
  });

  it('by transfer reference, refused: every request gets the one refusal, and the reference stays free', async () => {
    const tenant = await createFundedTenant(db.orm, 50_000);
    const client = keylessClientOf(tenant.apiKey);
    const payload = transfer(`refused-${randomUUID()}`);
    const send = () => client.POST('/api/v1/transfers', { body: payload });
    const responses = await burst(CONCURRENCY, send);
    const counts = tally(responses);
    // 422 insufficient_balance for each (409 only for one still waiting when its deadline came).
    expect(Object.keys(counts).filter((status) => status !== '422' && status !== '409')).toEqual([]);
    expect(counts[422]).toBeGreaterThan(0);
    for (const refused of responses.filter((response) => statusOf(response) === 422)) {
      expect(refused.error).toMatchObject({ code: 'insufficient_balance', details: { required: 101_000 } });
    }
    const wallet = await walletBalance(db.orm.em.fork(), tenant.tenantId);
    expect([wallet.availableMinor, wallet.pendingMinor]).toEqual([50_000, 0]);

    // Funded, the same request with the same reference now creates the transfer.
    await postMovement(
      db.orm.em.fork(),
      tenant.tenantId,
      walletFunding({ tenantId: tenant.tenantId, reference: 'top-up', amountMinor: 100_000 }),
    );
    const created = await send();
    expect(created.response?.status).toBe(201);
    expect(created.data?.data).toMatchObject({
      reference: payload.reference,
      amount_minor: 100_000,
      fee_minor: 1_000,
    });
    const after = await walletBalance(db.orm.em.fork(), tenant.tenantId);
    expect(after.availableMinor).toBe(49_000);
  });

  it('by Idempotency-Key alone on transfers: one transfer, and a replay answers 200 with the first body', async () => {
    const tenant = await createFundedTenant(db.orm, 1_000_000);
    const key = `key-${randomUUID()}`;
    const client = clientOf(tenant.apiKey);
    const send = () => client.POST('/api/v1/transfers', { body: transfer(), headers: keyed(key) });
    const responses = await burst(CONCURRENCY, send);
    const id = expectOneResource(responses, 201, 200);
    const wallet = await walletBalance(db.orm.em.fork(), tenant.tenantId);
    expect(wallet.availableMinor).toBe(899_000);
    const first = responses.find((response) => statusOf(response) === 201)!;
    const replay = await send();
    expect(replay.response?.status).toBe(200);
    expect(replay.response?.headers.get('idempotent-replayed')).toBe('true');
    expect(replay.data).toEqual(first.data);
    expect(replay.data?.data.id).toBe(id);
  });

  it('by Idempotency-Key alone on jit-fund: one funding, the card and the wallet exact', async () => {
    const tenant = await createFundedTenant(db.orm, 100_000);
    const cardId = await newCardId(tenant.apiKey);
    const key = `fund-${randomUUID()}`;
    const client = clientOf(tenant.apiKey);
    const card = { params: { path: { card_id: cardId } } };
    const responses = await burst(CONCURRENCY, () =>
      client.POST('/api/v1/cards/{card_id}/jit-fund', { ...card, body: { amount_minor: 7_000 }, headers: keyed(key) }),
    );
    expectOneOperation(responses, 'funding_id');
    await eventually(async () => {
      const balance = await client.GET('/api/v1/cards/{card_id}/balance', card);
      return balance.data?.data.available_minor === 7_000 ? balance : undefined;
    });
    const history = await client.GET('/api/v1/cards/{card_id}/funding/history', card);
    expect(history.data?.data.items).toHaveLength(1);
    expect(history.data?.data.items[0]).toMatchObject({ amount_minor: 7_000, idempotency_key: key });
    expect((await walletBalance(db.orm.em.fork(), tenant.tenantId)).availableMinor).toBe(93_000);
  });

  it('by Idempotency-Key alone on lock: one operation', async () => {
    const tenant = await createFundedTenant(db.orm);
    const cardId = await newCardId(tenant.apiKey);
    const key = `lock-${randomUUID()}`;
    const client = clientOf(tenant.apiKey);
    const card = { params: { path: { card_id: cardId } } };
    // The lock's body is all optional: an empty one.
    const responses = await burst(CONCURRENCY, () =>
      client.POST('/api/v1/cards/{card_id}/lock', { ...card, body: {}, headers: keyed(key) }),
    );
    expectOneOperation(responses, 'operation_id');
    expect(
      await count(`select count(*)::text as n from card_operations where card_id = ? and action = 'lock'`, [cardId]),
    ).toBe('1');
    await eventually(async () => {
      const got = await client.GET('/api/v1/cards/{card_id}', card);
      return got.data?.data.status === 'locked' ? got : undefined;
    });
  });

  it('by Idempotency-Key alone on virtual-account create: one account, allocated once', async () => {
    const tenant = await createFundedTenant(db.orm);
    const key = `va-${randomUUID()}`;
    const client = clientOf(tenant.apiKey);
    const body = { customer_id: 'c', account_name: 'Key Holder' };
    const responses = await burst(CONCURRENCY, () =>
      client.POST('/api/v1/virtual-accounts', { body, headers: keyed(key) }),
    );
    expectOneResource(responses, 201, 200);
    expect(await count('select count(*)::text as n from virtual_accounts where tenant_id = ?', [tenant.tenantId])).toBe(
      '1',
    );
  });
});

describe('the key itself', () => {
  const path = '/api/v1/virtual-accounts';

  /**
   * A fresh tenant's key (`<label>-<uuid>`) claimed for the create of an account named `accountName`
   * as a request left it when its process was killed: still processing, with its lease running out
   * `leaseLeft` from now (a PostgreSQL interval). Sends that create again with the key, or another body.
   */
  async function claimLeftBehind(label: string, accountName: string, leaseLeft: string) {
    const { canonicalJson, sha256 } = await import('../../src/lib/canonical.ts');
    const tenant = await createFundedTenant(db.orm);
    const key = `${label}-${randomUUID()}`;
    const payload = { customer_id: 'c', account_name: accountName };
    await db.orm.em.fork().execute(
      `insert into idempotency_keys (tenant_id, key, method, path, request_hash, state, expires_at, locked_until)
       values (?, ?, 'POST', ?, ?, 'processing', now() + interval '1 day', now() + ?::interval)`,
      [tenant.tenantId, key, path, sha256(`POST ${path}\n${canonicalJson(payload)}`), leaseLeft],
    );
    const client = clientOf(tenant.apiKey);
    return { payload, send: (body = payload) => client.POST(path, { body, headers: keyed(key) }) };
  }

  it('refuses the same key with another body (422), and takes over a key whose first request died', async () => {
    // Its lease has run out.
    const { payload, send } = await claimLeftBehind('died', 'After A Crash', '-1 second');
    const retried = await send();
    expect(retried.response?.status).toBe(201);
    const other = await send({ ...payload, account_name: 'Someone Else' });
    expect(other.response?.status).toBe(422);
    expect(other.error?.code).toBe('IDEMPOTENCY_KEY_REUSED');
  });

  it('answers 409 IDEMPOTENCY_KEY_IN_USE while a live claim is still running past the wait', async () => {
    const { send } = await claimLeftBehind('busy', 'Busy', '1 hour');
    const busy = await send();
    expect(busy.response?.status).toBe(409);
    expect(busy.error?.code).toBe('IDEMPOTENCY_KEY_IN_USE');
  }, 30_000);
});

describe('concurrent distinct transfers against a daily limit that fits exactly one', () => {
  it('lets exactly one pass; the others get limit_exceeded and reserve nothing', async () => {
    const tenant = await createFundedTenant(db.orm, 5_000_000);
    await db.orm.em
      .fork()
      .execute('update tenants set daily_transfer_limit_minor = 150000 where id = ?', [tenant.tenantId]);
    const client = clientOf(tenant.apiKey);
    const responses = await Promise.all(
      Array.from({ length: 20 }, (_, i) =>
        client.POST('/api/v1/transfers', {
          body: transferBody('limit race', { reference: `limit-${i}-${randomUUID()}` }),
        }),
      ),
    );
    expect(tally(responses)).toEqual({ 201: 1, 422: 19 });
    for (const refused of responses.filter((response) => statusOf(response) === 422)) {
      expect(refused.error).toMatchObject({
        code: 'limit_exceeded',
        details: { limit: 150_000, used: 100_000 },
      });
    }
    // One transfer of 100,000 + the 1,000 fee left the wallet, nothing else.
    expect((await walletBalance(db.orm.em.fork(), tenant.tenantId)).availableMinor).toBe(4_899_000);
    expect(await count('select count(*)::text as n from transfers where tenant_id = ?', [tenant.tenantId])).toBe('1');
  });
});

describe('a request the deadline answers while its handler runs on', () => {
  it('keeps its key until the handler finishes; a retry then gets the handler’s own answer, the work done once', async () => {
    let runs = 0;
    let release!: () => void;
    const gate = new Promise<void>((resolve) => (release = resolve));
    // A route of this test's own, which the client's generated types do not have: sent with inject.
    const slow = await createTestApp(db.orm, {
      taskQueue: TASK_QUEUE,
      dependencyTimeoutMs: 400,
      routeScopes: { 'POST /api/v1/test-slow-creates': 'transfers:write' },
      // A create whose dependency stalls past the deadline and then succeeds.
      extend: (extended) =>
        extended.post('/api/v1/test-slow-creates', async (_request, reply) => {
          runs += 1;
          const id = randomUUID();
          await gate;
          return reply.status(201).send({ success: true, data: { id } });
        }),
    });
    try {
      const tenant = await createFundedTenant(db.orm, 0);
      const send = () =>
        slow.app.inject({
          method: 'POST',
          url: '/api/v1/test-slow-creates',
          headers: auth(tenant.apiKey, { 'idempotency-key': 'slow-create' }),
          payload: {},
        });
      const first = await send();
      expect(first.statusCode).toBe(503);
      expect(first.headers['retry-after']).toBe('2');
      // The handler still runs: a retry waits for it and is told so, and does not run it again.
      const during = await send();
      expect(during.statusCode).toBe(409);
      expect(runs).toBe(1);

      release();
      const replay = await eventually(async () => {
        const again = await send();
        return again.statusCode === 200 ? again : undefined;
      });
      expect(replay.headers['idempotent-replayed']).toBe('true');
      const id = replay.json().data.id as string;
      expect(id).toMatch(/^[0-9a-f-]{36}$/);
      expect((await send()).json().data.id).toBe(id);
      expect(runs).toBe(1);
    } finally {
      await slow.close();
    }
  });
});
