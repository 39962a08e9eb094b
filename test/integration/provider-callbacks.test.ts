// Provider callbacks under load and across crashes: the record is committed before the dispatch,
// nothing (no transaction, no row lock) is held while the dispatch runs, a failed or interrupted
// dispatch is done again when the provider retries, and 20 concurrent deliveries of one credit
// apply it once. Two setups: a bare app on its own database, where any open transaction would be
// the route's, and the full stack (sandbox bank, worker) for real inbound credits. And as an
// attacker meets the route (decisions §16): provider names that are not the deployment's,
// oversized bodies, and refused signatures on the unauthenticated budget.
import { randomUUID } from 'node:crypto';
import type { LightMyRequestResponse } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { walletBalance } from '../../src/ledger/ledger.ts';
import { CallbackDispatcher } from '../../src/provider-callbacks/dispatcher.ts';
import { inboundCreditWorkflowId } from '../../workflows/virtual-accounts/definitions.ts';
import { auth } from '../support/api.ts';
import { type TestApp, createFundedTenant, createTestApp } from '../support/app.ts';
import { callbackHeaders, creditCallback, postSignedCallback } from '../support/callbacks.ts';
import { type TestDatabase, createTestDatabase } from '../support/database.ts';
import { eventually } from '../support/eventually.ts';
import { roomInWindow } from '../support/rate-limits.ts';
import { type GatewayStack, startGatewayStack } from '../support/stack.ts';

const TASK_QUEUE = `provider-callbacks-${process.pid}`;
/** RATE_LIMIT_UNAUTHENTICATED_PER_MINUTE of the full stack. */
const UNSIGNED_BUDGET = 5;

let bareDb: TestDatabase;
let bare: TestApp;
let stack: GatewayStack;

/** Test handlers on the bare app: what they were called with, and a dispatch a test can hold. */
const calls: string[] = [];
let hold: { entered: () => void; released: Promise<void> } | undefined;
let failuresLeft = 0;

beforeAll(async () => {
  bareDb = await createTestDatabase();
  const dispatcher = new CallbackDispatcher()
    .on('test.held', async (callback) => {
      calls.push(callback.eventId);
      const current = hold!;
      current.entered();
      await current.released;
      return 'held, then released';
    })
    .on('test.flaky', async (callback) => {
      calls.push(callback.eventId);
      if (failuresLeft > 0) {
        failuresLeft -= 1;
        throw new Error('workflow service unavailable');
      }
      return 'applied';
    });
  bare = await createTestApp(bareDb.orm, { dispatcher, taskQueue: TASK_QUEUE });
  // A small budget for requests without a valid key, so that refused callbacks use it up quickly.
  stack = await startGatewayStack({
    taskQueue: TASK_QUEUE,
    app: { rateLimitUnauthenticatedPerMinute: UNSIGNED_BUDGET },
  });
});
afterAll(async () => {
  await bare?.close();
  await bareDb?.drop();
  await stack?.close();
});

/** A `test.flaky` callback under a fresh event id (`<label>-<uuid>`), and how to send it to the bare app. */
function flakyCallback(label: string) {
  const body = { id: `${label}-${randomUUID()}`, type: 'test.flaky', data: {} };
  return { eventId: body.id, body, send: () => postSignedCallback(bare.app, body) };
}

/**
 * A `flakyCallback` whose record is as a delivery leaves it when its process dies between the
 * record's commit and the dispatch: undispatched, and claimed for `claimLeft` more (a PostgreSQL interval).
 */
async function flakyCallbackLeftBehind(label: string, claimLeft: string) {
  const callback = flakyCallback(label);
  const { body } = callback;
  await bareDb.orm.em.fork().execute(
    `insert into provider_callbacks (id, provider, event_id, type, payload, dispatch_claimed_until)
     values (?, 'sandbox', ?, ?, ?, now() + ?::interval)`,
    [randomUUID(), body.id, body.type, JSON.stringify(body), claimLeft],
  );
  return callback;
}

/** A 503 that asks the provider to send the callback again later, saying why. */
function expectRetryLater(response: LightMyRequestResponse, message: string) {
  expect(response.statusCode).toBe(503);
  expect(response.json().error).toMatchObject({ code: 'UNAVAILABLE', message });
}

/** How many times the dispatcher ran for the event. */
const dispatches = (eventId: string) => calls.filter((call) => call === eventId).length;

/** A 200 that took the callback: `accepted` (recorded now) or `duplicate` (recorded before). */
function expectTaken(response: LightMyRequestResponse, status: 'accepted' | 'duplicate') {
  expect([response.statusCode, response.json().data.status]).toEqual([200, status]);
}

/** The `test.flaky` callback's record says it was applied, after the dispatcher ran `dispatchCount` times. */
async function expectApplied(eventId: string, dispatchCount: number) {
  expect(dispatches(eventId)).toBe(dispatchCount);
  expect(await record(bareDb, eventId)).toEqual([
    { dispatched: true, dispatch_result: 'applied', claimed: false, type: 'test.flaky' },
  ]);
}

async function record(db: TestDatabase, eventId: string) {
  const rows = await db.orm.em
    .fork()
    .execute<{ dispatched: boolean; dispatch_result: string | null; claimed: boolean; type: string }[]>(
      `select dispatched_at is not null as dispatched, dispatch_result, coalesce(dispatch_claimed_until > now(), false) as claimed, type
       from provider_callbacks where provider = 'sandbox' and event_id = ?`,
      [eventId],
    );
  return rows;
}

/**
 * Sessions of the bare database that hold a transaction open between statements, and the locks on
 * provider_callbacks that such sessions hold. (A statement in flight, such as a repeat delivery's
 * claim, is its own short transaction and is not counted; nor is autovacuum.)
 */
async function heldOnBareDatabase() {
  const [row] = await bareDb.orm.em.fork().execute<{ idle_in_transaction: number; locks: number }[]>(
    `with idle as (
       select pid from pg_stat_activity
        where datname = current_database() and backend_type = 'client backend'
          and state like 'idle in transaction%')
     select (select count(*)::int from idle) as idle_in_transaction,
            (select count(*)::int from pg_locks
              where relation = 'provider_callbacks'::regclass and pid in (select pid from idle)) as locks`,
  );
  return row!;
}

describe('while a dispatch runs', () => {
  it('has committed the record and holds no transaction or row lock; a repeat waits for it and answers duplicate', async () => {
    const eventId = `held-${randomUUID()}`;
    let entered!: () => void;
    const inside = new Promise<void>((resolve) => (entered = resolve));
    let release!: () => void;
    hold = { entered, released: new Promise<void>((resolve) => (release = resolve)) };
    const first = postSignedCallback(bare.app, { id: eventId, type: 'test.held', data: {} });
    await inside;

    const repeat = postSignedCallback(bare.app, { id: eventId, type: 'test.held', data: {} });
    const samples = [];
    for (let i = 0; i < 8; i += 1) {
      samples.push(await heldOnBareDatabase());
      await new Promise((resolve) => setTimeout(resolve, 40));
    }
    expect(samples).toEqual(Array.from({ length: 8 }, () => ({ idle_in_transaction: 0, locks: 0 })));
    // Committed before the dispatch, and claimed by it.
    expect(await record(bareDb, eventId)).toEqual([
      { dispatched: false, dispatch_result: null, claimed: true, type: 'test.held' },
    ]);

    release();
    const [firstAnswer, repeatAnswer] = await Promise.all([first, repeat]);
    expect([firstAnswer.statusCode, firstAnswer.json().data]).toEqual([200, { event_id: eventId, status: 'accepted' }]);
    expect([repeatAnswer.statusCode, repeatAnswer.json().data]).toEqual([
      200,
      { event_id: eventId, status: 'duplicate' },
    ]);
    expect(calls.filter((call) => call === eventId)).toHaveLength(1);
    expect(await record(bareDb, eventId)).toEqual([
      { dispatched: true, dispatch_result: 'held, then released', claimed: false, type: 'test.held' },
    ]);
  });
});

describe('a dispatch that does not happen', () => {
  it('answers 503 when the dispatch fails, keeps the record undispatched, and dispatches it on the retry', async () => {
    const { eventId, send } = flakyCallback('flaky');
    failuresLeft = 1;
    expectRetryLater(await send(), 'callback recorded but not yet applied; retry later');
    // Recorded, not dispatched, and not claimed: the retry need not wait.
    expect(await record(bareDb, eventId)).toEqual([
      { dispatched: false, dispatch_result: null, claimed: false, type: 'test.flaky' },
    ]);

    expectTaken(await send(), 'accepted');
    expectTaken(await send(), 'duplicate');
    await expectApplied(eventId, 2);
  });

  it('dispatches a record left by a delivery that died before dispatching, once its claim runs out', async () => {
    const { eventId, send } = await flakyCallbackLeftBehind('orphan', '1 second');
    expectTaken(await send(), 'accepted');
    await expectApplied(eventId, 1);
  });

  it('answers 503 to a repeat while another delivery still holds the dispatch, and dispatches nothing', async () => {
    const { eventId, send } = await flakyCallbackLeftBehind('busy', '1 hour');
    expectRetryLater(await send(), 'callback is being applied; retry later');
    expect(dispatches(eventId)).toBe(0);
  });
});

describe('inbound credits on the full stack', () => {
  async function accountWithCredit(reference: string) {
    const tenant = await createFundedTenant(stack.db.orm);
    const account = (
      await stack.app.inject({
        method: 'POST',
        url: '/api/v1/virtual-accounts',
        headers: auth(tenant.apiKey),
        payload: { customer_id: 'c', account_name: 'A B' },
      })
    ).json().data;
    const callback = creditCallback(`bank-event-${reference}`, account.account_number, reference);
    const totals = async () => {
      const data = (
        await stack.app.inject({
          method: 'GET',
          url: `/api/v1/virtual-accounts/${account.id}`,
          headers: auth(tenant.apiKey),
        })
      ).json().data;
      return [
        data.total_received_minor,
        data.transaction_count,
        (await walletBalance(stack.db.orm.em.fork(), tenant.tenantId)).availableMinor,
      ];
    };
    return { tenant, account, callback, totals };
  }

  it('applies 20 concurrent deliveries of one signed callback once: one accepted, 19 duplicates, one credit', async () => {
    const reference = `twenty-${randomUUID()}`;
    const { callback, totals } = await accountWithCredit(reference);
    const answers = await Promise.all(Array.from({ length: 20 }, () => postSignedCallback(stack.app, callback)));
    expect(answers.map((answer) => answer.statusCode)).toEqual(Array.from({ length: 20 }, () => 200));
    const statuses = answers.map((answer) => answer.json().data.status as string);
    expect(statuses.filter((status) => status === 'accepted')).toHaveLength(1);
    expect(statuses.filter((status) => status === 'duplicate')).toHaveLength(19);

    const workflowId = inboundCreditWorkflowId('wema', reference);
    expect(await record(stack.db, callback.id)).toEqual([
      {
        dispatched: true,
        dispatch_result: `started ${workflowId}`,
        claimed: false,
        type: 'virtual_account.credit',
      },
    ]);
    // The one credit workflow has finished: nothing more can be applied after this.
    await stack.client.workflow.getHandle(workflowId).result();
    expect(await totals()).toEqual([10_000, 1, 10_000]);
    expect((await stack.client.workflow.count(`WorkflowId = '${workflowId}'`)).count).toBe(1);
  });

  it('dispatches again a callback whose dispatch ran but was not recorded, and the workflow still credits once', async () => {
    const reference = `unrecorded-${randomUUID()}`;
    const { callback, totals } = await accountWithCredit(reference);
    expect((await postSignedCallback(stack.app, callback)).json().data.status).toBe('accepted');
    await eventually(async () => (await totals())[1] === 1);
    // As a crash right after the Temporal call, before `dispatched_at` was written, leaves the record.
    await stack.db.orm.em
      .fork()
      .execute(`update provider_callbacks set dispatched_at = null, dispatch_result = null where event_id = ?`, [
        callback.id,
      ]);

    const retried = await postSignedCallback(stack.app, callback);
    expectTaken(retried, 'accepted');
    const workflowId = inboundCreditWorkflowId('wema', reference);
    expect((await record(stack.db, callback.id))[0]?.dispatch_result).toBe(`already applying ${workflowId}`);
    await stack.client.workflow.getHandle(workflowId).result();
    expect(await totals()).toEqual([10_000, 1, 10_000]);
    expect((await stack.client.workflow.count(`WorkflowId = '${workflowId}'`)).count).toBe(1);
  });
});

describe('as an attacker meets the callback route', () => {
  /** A callback posted from `address`, signed with `secret` (the deployment's by default) unless `signature` is given. */
  function post(address: string, provider: string, raw: string, options: { secret?: string; signature?: string } = {}) {
    return stack.app.inject({
      method: 'POST',
      url: `/provider-callbacks/${provider}`,
      remoteAddress: address,
      headers: {
        ...callbackHeaders(
          (JSON.parse(raw) as { id: string }).id,
          raw,
          options.secret ? { secret: options.secret } : {},
        ),
        ...(options.signature ? { 'webhook-signature': options.signature } : {}),
      },
      payload: raw,
    });
  }
  const storedCallbacks = async (eventId: string) =>
    (await stack.db.orm.em.fork().execute('select 1 from provider_callbacks where event_id = ?', [eventId])).length;

  it.each(['constructor', '__proto__', 'toString', 'hasOwnProperty', 'valueOf', 'wema', 'sandbox2', 'sandbox-bank'])(
    'answers 404 NOT_FOUND for provider %s, signed or not, storing nothing',
    async (provider) => {
      const eventId = `probe-${randomUUID()}`;
      const raw = JSON.stringify({ id: eventId, type: 'virtual_account.credit', data: {} });
      // A distinct address per name: the refusals count on each address's own budget.
      const address = `198.51.100.${10 + provider.length}`;
      const answer = await post(address, provider, raw);
      expect(answer.statusCode).toBe(404);
      expect(answer.json()).toMatchObject({
        error: { code: 'NOT_FOUND', message: expect.stringContaining(`provider ${provider}`) },
        meta: { path: `/provider-callbacks/${provider}`, method: 'POST', requestId: expect.any(String) },
      });
      expect(await storedCallbacks(eventId)).toBe(0);
    },
  );

  it('takes bodies up to 64 KiB and answers 413 PAYLOAD_TOO_LARGE above, storing nothing', async () => {
    const body = (eventId: string, size: number) => {
      const skeleton = JSON.stringify({ id: eventId, type: 'test.padding', data: { padding: '' } });
      return JSON.stringify({
        id: eventId,
        type: 'test.padding',
        data: { padding: 'x'.repeat(size - skeleton.length) },
      });
    };
    const fits = `fits-${randomUUID()}`;
    const atLimit = body(fits, 64 * 1024);
    expect(Buffer.byteLength(atLimit)).toBe(65_536);
    const accepted = await post('198.51.100.40', 'sandbox', atLimit);
    expectTaken(accepted, 'accepted');
    expect(await storedCallbacks(fits)).toBe(1);

    const over = `over-${randomUUID()}`;
    const tooLarge = body(over, 64 * 1024 + 1);
    const refused = await post('198.51.100.40', 'sandbox', tooLarge);
    expect(refused.statusCode).toBe(413);
    expect(refused.json()).toMatchObject({
      error: { code: 'PAYLOAD_TOO_LARGE', message: "request body is larger than this route's limit of 65536 bytes" },
      meta: { path: '/provider-callbacks/sandbox', requestId: expect.any(String) },
    });
    expect(await storedCallbacks(over)).toBe(0);
    // A megabyte, as the route took before: the same answer, nothing parsed or stored.
    const huge = await post('198.51.100.40', 'sandbox', body(`huge-${randomUUID()}`, 1_000_000));
    expect(huge.statusCode).toBe(413);
  });

  it('counts refused signatures on the unauthenticated budget of the address, 429 with Retry-After once used up', async () => {
    const attacker = '203.0.113.66';
    // Budgets are fixed windows on the database's clock: this count starts where it cannot straddle two.
    await roomInWindow(stack.db.orm, 5_000);
    const raw = JSON.stringify({ id: `forged-${randomUUID()}`, type: 'virtual_account.credited', data: {} });
    const forgeries = [
      { secret: 'change-me-sandbox-callback-secret' },
      { signature: 'nonsense' },
      { signature: `v1,${Buffer.alloc(32).toString('base64')}` },
      { secret: 'guess-number-four-xxxxxxxxxxxxxxxxx' },
      { secret: 'guess-number-five-xxxxxxxxxxxxxxxxx' },
    ];
    expect(forgeries).toHaveLength(UNSIGNED_BUDGET);
    for (const forgery of forgeries) {
      const answer = await post(attacker, 'sandbox', raw, forgery);
      expect(answer.statusCode).toBe(401);
      expect(answer.json().error.code).toBe('UNAUTHORIZED');
    }
    const throttled = await post(attacker, 'sandbox', raw, { secret: 'guess-number-six-xxxxxxxxxxxxxxxxxx' });
    expect(throttled.statusCode).toBe(429);
    expect(throttled.json()).toMatchObject({
      error: { code: 'RATE_LIMITED', message: expect.stringContaining('without a valid API key from this address') },
    });
    expect(Number(throttled.headers['retry-after'])).toBeGreaterThan(0);
    // The same budget as requests without a valid key: that address's key guessing is throttled too.
    const guess = await stack.app.inject({ method: 'GET', url: '/api/v1/wallet', remoteAddress: attacker });
    expect(guess.statusCode).toBe(429);
    expect(guess.headers['retry-after']).toBeDefined();
    expect(await storedCallbacks(JSON.parse(raw).id)).toBe(0);
  });

  it('keeps correctly signed callbacks off that budget: a processor is never throttled by its own traffic', async () => {
    const processor = '192.0.2.77';
    await roomInWindow(stack.db.orm, 10_000);
    for (let index = 0; index < UNSIGNED_BUDGET * 4; index += 1) {
      const eventId = `valid-${index}-${randomUUID()}`;
      const answer = await post(processor, 'sandbox', JSON.stringify({ id: eventId, type: 'test.ok', data: {} }));
      expect([index, answer.statusCode]).toEqual([index, 200]);
    }
    // Its budget for refusals is still whole: the first refusal is a 401, not a 429.
    const raw = JSON.stringify({ id: `bad-${randomUUID()}`, type: 'test.ok', data: {} });
    expect((await post(processor, 'sandbox', raw, { secret: 'not-the-secret-xxxxxxxxxxxxxxxxxxxxx' })).statusCode).toBe(
      401,
    );
    // And an address that has used up its refusals still gets its correctly signed callbacks through.
    const shared = '192.0.2.78';
    for (let index = 0; index <= UNSIGNED_BUDGET; index += 1) {
      await post(shared, 'sandbox', raw, { secret: 'not-the-secret-xxxxxxxxxxxxxxxxxxxxx' });
    }
    expect((await post(shared, 'sandbox', raw, { signature: 'x' })).statusCode).toBe(429);
    const signed = await post(
      shared,
      'sandbox',
      JSON.stringify({ id: `after-${randomUUID()}`, type: 'test.ok', data: {} }),
    );
    expectTaken(signed, 'accepted');
  });
});
