// Cards on a real Temporal server, PostgreSQL and the sandbox card processor: one entity workflow
// per card serialises lock, unlock and JIT funding; the ledger and the projection follow.
import { randomUUID } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { msToNumber } from '@temporalio/common/lib/time.js';
import { walletBalance } from '../../src/ledger/ledger.ts';
import { UNTIL_THE_PROCESSOR_TAKES_IT } from '../../workflows/activity-options.ts';
import {
  cardIssueWorkflowId,
  cardStateQuery,
  cardStatusQuery,
  cardWorkflowId,
} from '../../workflows/cards/definitions.ts';
import { sha256 } from '../../src/lib/canonical.ts';
import { auth, fieldPaths } from '../support/api.ts';
import { createFundedTenant } from '../support/app.ts';
import { eventually } from '../support/eventually.ts';
import { recordHistory } from '../support/histories.ts';
import { useGatewayStack } from '../support/stack.ts';

const TASK_QUEUE = `cards-${process.pid}`;

const stack = useGatewayStack({ taskQueue: TASK_QUEUE, app: { cardContinueAsNewAfter: 4 } });

async function newCard(apiKey: string, customerId = 'cus_card') {
  const response = await stack.app.inject({
    method: 'POST',
    url: '/api/v1/cards',
    headers: auth(apiKey),
    payload: { customer_id: customerId, metadata: { team: 'ops' } },
  });
  expect(response.statusCode).toBe(201);
  return response.json().data as { id: string; status: string; last4: string };
}

const post = (apiKey: string, url: string, payload?: object) =>
  stack.app.inject({ method: 'POST', url, headers: auth(apiKey), ...(payload ? { payload } : {}) });
const get = async (apiKey: string, url: string) =>
  (await stack.app.inject({ method: 'GET', url, headers: auth(apiKey) })).json().data;

async function settled(apiKey: string, cardId: string, count: number, timeoutMs?: number) {
  return eventually(async () => {
    const items = (await get(apiKey, `/api/v1/cards/${cardId}/funding/history?limit=100`)).items as {
      status: string;
    }[];
    return items.length >= count && items.every((item) => item.status !== 'pending') ? items : undefined;
  }, timeoutMs);
}

/**
 * How long a funding may take after a worker died with its processor load in flight: that attempt
 * is retried only once its start-to-close timeout has passed, then after a backoff of a few seconds
 * (the worker stops within the first attempts); the workflow task that follows may wait out the
 * dead worker's sticky queue (STICKY_MS, the SDK's default schedule-to-start); then the card's
 * credit is recorded.
 */
const STICKY_MS = 10_000;
const AFTER_A_LOST_LOAD_MS = msToNumber(UNTIL_THE_PROCESSOR_TAKES_IT.startToCloseTimeout) + STICKY_MS + 15_000;
const WITH_A_LOST_LOAD_MS = 30_000 + AFTER_A_LOST_LOAD_MS;

async function operationsDone(cardId: string) {
  return eventually(async () => {
    const [row] = await stack.db.orm.em
      .fork()
      .execute<{ n: string }[]>(`select count(*) as n from card_operations where card_id = ? and status = 'accepted'`, [
        cardId,
      ]);
    return Number(row!.n) === 0 ? true : undefined;
  });
}

async function ledgerEntries(cardId: string) {
  const [row] = await stack.db.orm.em
    .fork()
    .execute<{ n: string }[]>(
      `select count(*) as n from journal_entries e join card_fundings f on e.idempotency_key = 'card-funding:' || f.id where f.card_id = ?`,
      [cardId],
    );
  return Number(row!.n);
}

describe('cards', () => {
  it('issues a card, lists and reads it', async () => {
    const tenant = await createFundedTenant(stack.db.orm);
    const card = await newCard(tenant.apiKey, 'cus_list');
    expect(card).toMatchObject({
      customer_id: 'cus_list',
      status: 'active',
      currency: 'NGN',
      metadata: { team: 'ops' },
    });
    expect(card.last4).toMatch(/^\d{4}$/);
    expect(await get(tenant.apiKey, `/api/v1/cards/${card.id}`)).toEqual(card);
    const listed = await get(tenant.apiKey, '/api/v1/cards?customer_id=cus_list');
    expect(listed.items.map((c: { id: string }) => c.id)).toEqual([card.id]);
    expect(listed.pagination).toMatchObject({ total: 1, has_more: false });
    const bad = await post(tenant.apiKey, '/api/v1/cards', { currency: 'USD' });
    expect(bad.statusCode).toBe(400);
    expect(fieldPaths(bad).sort()).toEqual(['currency', 'customer_id']);
  });

  it('issues once per Idempotency-Key: 503 while the processor is down, then one card for every retry', async () => {
    const tenant = await createFundedTenant(stack.db.orm);
    const key = `issue-${randomUUID()}`;
    const issue = () =>
      stack.app.inject({
        method: 'POST',
        url: '/api/v1/cards',
        headers: { ...auth(tenant.apiKey), 'idempotency-key': key },
        payload: { customer_id: 'cus_issue' },
      });
    const cardsOfTenant = async () =>
      stack.db.orm.em.fork().execute<{ id: string }[]>('select id from cards where tenant_id = ?', [tenant.tenantId]);

    await stack.bank.control('/control/providers/cards/down');
    const refused = await issue();
    expect(refused.statusCode).toBe(503);
    expect(await cardsOfTenant()).toEqual([]);
    await stack.bank.control('/control/providers/cards/up');

    const created = await issue();
    expect(created.statusCode).toBe(201);
    const card = created.json().data as { id: string };
    const replayed = await issue();
    expect([replayed.statusCode, replayed.json().data.id]).toEqual([200, card.id]);
    // Even past the HTTP idempotency record (its 24 h gone), the key meets the same issue run.
    await stack.db.orm.em.fork().execute('delete from idempotency_keys where tenant_id = ?', [tenant.tenantId]);
    const again = await issue();
    expect([again.statusCode, again.json().data.id]).toEqual([201, card.id]);
    expect(await cardsOfTenant()).toEqual([{ id: card.id }]);
    const [events] = await stack.db.orm.em
      .fork()
      .execute<{ n: number }[]>(`select count(*)::int as n from events where tenant_id = ? and type = 'card.created'`, [
        tenant.tenantId,
      ]);
    expect(events!.n).toBe(1);
    recordHistory('card-issue', cardIssueWorkflowId(tenant.tenantId, `key:${sha256(key)}`));
  });

  it('locks and unlocks asynchronously, idempotently, with events', async () => {
    const tenant = await createFundedTenant(stack.db.orm);
    const card = await newCard(tenant.apiKey);
    const locked = await post(tenant.apiKey, `/api/v1/cards/${card.id}/lock`, {
      reason: 'suspicious',
      idempotency_key: 'lock-1',
    });
    expect(locked.statusCode).toBe(202);
    expect(locked.json().data).toEqual({
      card_id: card.id,
      operation_id: expect.any(String),
      action: 'lock',
      status: 'accepted',
    });
    const again = await post(tenant.apiKey, `/api/v1/cards/${card.id}/lock`, { idempotency_key: 'lock-1' });
    expect(again.json().data.operation_id).toBe(locked.json().data.operation_id);
    await eventually(async () =>
      (await get(tenant.apiKey, `/api/v1/cards/${card.id}`)).status === 'locked' ? true : undefined,
    );
    // Locking a locked card is accepted and changes nothing.
    expect((await post(tenant.apiKey, `/api/v1/cards/${card.id}/lock`)).statusCode).toBe(202);
    expect((await post(tenant.apiKey, `/api/v1/cards/${card.id}/unlock`)).statusCode).toBe(202);
    await eventually(async () =>
      (await get(tenant.apiKey, `/api/v1/cards/${card.id}`)).status === 'active' ? true : undefined,
    );
    await operationsDone(card.id);
    const statuses = await stack.db.orm.em
      .fork()
      .execute<{ action: string; status: string }[]>(
        'select action, status from card_operations where card_id = ? order by completed_at',
        [card.id],
      );
    expect(statuses).toEqual([
      { action: 'lock', status: 'applied' },
      { action: 'lock', status: 'unchanged' },
      { action: 'unlock', status: 'applied' },
    ]);
    const events = (await get(tenant.apiKey, '/api/v1/events?limit=100')).items.map((e: { type: string }) => e.type);
    expect(events.filter((type: string) => type === 'card.locked')).toHaveLength(1);
    expect(events.filter((type: string) => type === 'card.unlocked')).toHaveLength(1);
    // Operations arrive as signals since the card stopped taking one update per request.
    recordHistory('card-signalled-lock-unlock', cardWorkflowId(card.id));
  });

  it('funds from the wallet in one journal entry, and shows balance and history', async () => {
    const tenant = await createFundedTenant(stack.db.orm, 1_000_000);
    const card = await newCard(tenant.apiKey);
    const funded = await post(tenant.apiKey, `/api/v1/cards/${card.id}/jit-fund`, {
      amount_minor: 250_050,
      transaction_reference: 'txn-1',
      idempotency_key: 'fund-1',
    });
    expect(funded.statusCode).toBe(202);
    expect(funded.json().data).toMatchObject({ card_id: card.id, action: 'fund', status: 'accepted' });
    const [item] = await settled(tenant.apiKey, card.id, 1);
    expect(item).toMatchObject({
      amount_minor: 250_050,
      currency: 'NGN',
      status: 'succeeded',
      transaction_reference: 'txn-1',
      idempotency_key: 'fund-1',
      failure_reason: null,
    });
    expect(await get(tenant.apiKey, `/api/v1/cards/${card.id}/balance`)).toMatchObject({
      card_id: card.id,
      currency: 'NGN',
      available_minor: 250_050,
    });
    expect((await walletBalance(stack.db.orm.em.fork(), tenant.tenantId)).availableMinor).toBe(749_950);
    expect(await ledgerEntries(card.id)).toBe(1);
    recordHistory('card-lock-fund', cardWorkflowId(card.id));
  });

  it('funds directly (POST /fund) with the rules, idempotency, answer and events of jit-fund', async () => {
    const tenant = await createFundedTenant(stack.db.orm, 500_000);
    const card = await newCard(tenant.apiKey);
    const direct = await post(tenant.apiKey, `/api/v1/cards/${card.id}/fund`, {
      amount_minor: 120_000,
      transaction_reference: 'direct-1',
    });
    expect(direct.statusCode).toBe(202);
    expect(direct.json().data).toMatchObject({ card_id: card.id, action: 'fund', status: 'accepted' });
    // The same transaction reference by the other path is the same funding, not a second one.
    const again = await post(tenant.apiKey, `/api/v1/cards/${card.id}/jit-fund`, {
      amount_minor: 120_000,
      transaction_reference: 'direct-1',
    });
    expect(again.json().data.operation_id).toBe(direct.json().data.operation_id);
    // Out of bounds and over the wallet: refused as jit-fund refuses them.
    const tooSmall = await post(tenant.apiKey, `/api/v1/cards/${card.id}/fund`, { amount_minor: 99 });
    expect(tooSmall.statusCode).toBe(400);
    expect(tooSmall.json().error.details.fields.map((f: { path: string }) => f.path)).toEqual(['amount_minor']);
    await post(tenant.apiKey, `/api/v1/cards/${card.id}/fund`, { amount_minor: 380_001 });
    const items = await settled(tenant.apiKey, card.id, 2);
    expect(items.map((i: any) => [i.amount_minor, i.status, i.failure_reason])).toEqual([
      [380_001, 'failed', 'insufficient_balance'],
      [120_000, 'succeeded', null],
    ]);
    expect((await get(tenant.apiKey, `/api/v1/cards/${card.id}/balance`)).available_minor).toBe(120_000);
    expect((await walletBalance(stack.db.orm.em.fork(), tenant.tenantId)).availableMinor).toBe(380_000);
    expect(await ledgerEntries(card.id)).toBe(1);
    const types = (await get(tenant.apiKey, '/api/v1/events?limit=100')).items.map((e: { type: string }) => e.type);
    expect(types.filter((type: string) => type === 'card.funded')).toHaveLength(1);
    expect(types.filter((type: string) => type === 'card.funding_failed')).toHaveLength(1);
  });

  it('fails a funding on a locked card or a short wallet, moving nothing', async () => {
    const tenant = await createFundedTenant(stack.db.orm, 100_000);
    const card = await newCard(tenant.apiKey);
    await post(tenant.apiKey, `/api/v1/cards/${card.id}/jit-fund`, { amount_minor: 100_001 });
    await post(tenant.apiKey, `/api/v1/cards/${card.id}/lock`);
    await post(tenant.apiKey, `/api/v1/cards/${card.id}/jit-fund`, { amount_minor: 5_000 });
    const items = await settled(tenant.apiKey, card.id, 2);
    expect(items.map((i: any) => [i.amount_minor, i.status, i.failure_reason])).toEqual([
      [5_000, 'failed', 'card_locked'],
      [100_001, 'failed', 'insufficient_balance'],
    ]);
    expect((await get(tenant.apiKey, `/api/v1/cards/${card.id}/balance`)).available_minor).toBe(0);
    expect((await walletBalance(stack.db.orm.em.fork(), tenant.tenantId)).availableMinor).toBe(100_000);
    expect(await ledgerEntries(card.id)).toBe(0);
    const events = (await get(tenant.apiKey, '/api/v1/events?type=card.funding_failed')).items;
    expect(events).toHaveLength(2);
  });

  it('funds once for three concurrent requests with one idempotency key, or one transaction reference', async () => {
    const tenant = await createFundedTenant(stack.db.orm, 1_000_000);
    const card = await newCard(tenant.apiKey);
    const byKey = await Promise.all(
      Array.from({ length: 3 }, () =>
        post(tenant.apiKey, `/api/v1/cards/${card.id}/jit-fund`, { amount_minor: 10_000, idempotency_key: 'same-key' }),
      ),
    );
    const byReference = await Promise.all(
      Array.from({ length: 3 }, () =>
        post(tenant.apiKey, `/api/v1/cards/${card.id}/jit-fund`, {
          amount_minor: 20_000,
          transaction_reference: 'same-ref',
        }),
      ),
    );
    expect(byKey.map((r) => r.statusCode)).toEqual([202, 202, 202]);
    expect(new Set(byKey.map((r) => r.json().data.operation_id)).size).toBe(1);
    expect(new Set(byReference.map((r) => r.json().data.operation_id)).size).toBe(1);
    const items = await settled(tenant.apiKey, card.id, 2);
    expect(items).toHaveLength(2);
    expect((await get(tenant.apiKey, `/api/v1/cards/${card.id}/balance`)).available_minor).toBe(30_000);
    expect(await ledgerEntries(card.id)).toBe(2);
    expect((await walletBalance(stack.db.orm.em.fork(), tenant.tenantId)).availableMinor).toBe(970_000);
  });

  it('ends concurrent lock, unlock and fund calls in a state some serial order explains', async () => {
    const tenant = await createFundedTenant(stack.db.orm, 10_000_000);
    const card = await newCard(tenant.apiKey);
    const calls = Array.from({ length: 12 }, (_, i) => {
      if (i % 4 === 1) return post(tenant.apiKey, `/api/v1/cards/${card.id}/lock`);
      if (i % 4 === 3) return post(tenant.apiKey, `/api/v1/cards/${card.id}/unlock`);
      return post(tenant.apiKey, `/api/v1/cards/${card.id}/jit-fund`, { amount_minor: 1_000 * (i + 1) });
    });
    expect((await Promise.all(calls)).map((r) => r.statusCode)).toEqual(Array(12).fill(202));
    await operationsDone(card.id);
    // Walk the operations in the order the workflow applied them.
    const applied = await stack.db.orm.em.fork().execute<
      {
        action: string;
        status: string;
        amount_minor: string | null;
        funding_status: string | null;
        failure_reason: string | null;
      }[]
    >(
      `select o.action, o.status, f.amount_minor, f.status as funding_status, f.failure_reason
           from card_operations o left join card_fundings f on f.operation_id = o.id
          where o.card_id = ? order by o.completed_at, o.id`,
      [card.id],
    );
    let locked = false;
    let expected = 0;
    for (const op of applied) {
      if (op.action === 'lock' || op.action === 'unlock') {
        expect(op.status).toBe(locked === (op.action === 'lock') ? 'unchanged' : 'applied');
        locked = op.action === 'lock';
      } else {
        expect([op.funding_status, op.failure_reason]).toEqual(
          locked ? ['failed', 'card_locked'] : ['succeeded', null],
        );
        if (!locked) expected += Number(op.amount_minor);
      }
    }
    expect((await get(tenant.apiKey, `/api/v1/cards/${card.id}`)).status).toBe(locked ? 'locked' : 'active');
    const balance = (await get(tenant.apiKey, `/api/v1/cards/${card.id}/balance`)).available_minor;
    expect(balance).toBe(expected);
    const history = (await get(tenant.apiKey, `/api/v1/cards/${card.id}/funding/history`)).items as {
      status: string;
      amount_minor: number;
    }[];
    expect(history.filter((i) => i.status === 'succeeded').reduce((sum, i) => sum + i.amount_minor, 0)).toBe(balance);
  });

  it('continues as new under load without losing an operation that arrives meanwhile', async () => {
    const tenant = await createFundedTenant(stack.db.orm, 10_000_000);
    const card = await newCard(tenant.apiKey);
    const first = await post(tenant.apiKey, `/api/v1/cards/${card.id}/jit-fund`, { amount_minor: 100 });
    const handle = stack.client.workflow.getHandle(cardWorkflowId(card.id));
    const firstRun = (await handle.describe()).runId;
    const rest = await Promise.all(
      Array.from({ length: 10 }, (_, i) =>
        post(tenant.apiKey, `/api/v1/cards/${card.id}/jit-fund`, { amount_minor: 100 * (i + 2) }),
      ),
    );
    expect([first, ...rest].every((r) => r.statusCode === 202)).toBe(true);
    const items = await settled(tenant.apiKey, card.id, 11);
    expect(items.every((i: { status: string }) => i.status === 'succeeded')).toBe(true);
    expect((await get(tenant.apiKey, `/api/v1/cards/${card.id}/balance`)).available_minor).toBe(6_600);
    // With a threshold of 4 operations per run, 11 operations took at least two more runs.
    const runs = [];
    for await (const execution of stack.client.workflow.list({ query: `WorkflowId = '${cardWorkflowId(card.id)}'` }))
      runs.push(execution.runId);
    expect(runs.length).toBeGreaterThanOrEqual(3);
    expect((await handle.describe()).runId).not.toBe(firstRun);
    expect((await handle.query(cardStatusQuery)).queued).toBe(0);
    expect(await handle.query(cardStateQuery)).toEqual(await handle.query(cardStatusQuery));
    // The first run, which ends by continuing as new with operations still queued.
    recordHistory('card-continue-as-new', cardWorkflowId(card.id), firstRun);
  });

  it(
    'completes a funding once when the worker dies between the debit and the card credit',
    async () => {
      const tenant = await createFundedTenant(stack.db.orm, 1_000_000);
      const card = await newCard(tenant.apiKey);
      await stack.bank.control('/control/providers/cards/down');
      await post(tenant.apiKey, `/api/v1/cards/${card.id}/jit-fund`, {
        amount_minor: 40_000,
        idempotency_key: 'crash-1',
      });
      // The wallet is debited; loading the card at the processor keeps failing.
      await eventually(async () => ((await ledgerEntries(card.id)) === 1 ? true : undefined));
      await stack.stopWorker();
      await stack.bank.control('/control/providers/cards/up');
      expect((await get(tenant.apiKey, `/api/v1/cards/${card.id}/funding/history`)).items[0].status).toBe('pending');
      await stack.startWorker();
      const [item] = await settled(tenant.apiKey, card.id, 1, AFTER_A_LOST_LOAD_MS);
      expect(item?.status).toBe('succeeded');
      expect(await ledgerEntries(card.id)).toBe(1);
      const [atProcessor] = await stack.db.orm.em.fork().execute<{ n: string; total: string }[]>(
        `select count(*) as n, sum(amount_minor)::text as total from sandbox_bank.card_fundings f
           join sandbox_bank.cards c on c.card_reference = f.card_reference where c.reference = ?`,
        [card.id],
      );
      expect(atProcessor).toEqual({ n: '1', total: '40000' });
      expect((await get(tenant.apiKey, `/api/v1/cards/${card.id}/balance`)).available_minor).toBe(40_000);
    },
    WITH_A_LOST_LOAD_MS,
  );

  it('returns the money when the processor refuses a funding for good, and keeps applying later operations', async () => {
    const tenant = await createFundedTenant(stack.db.orm, 1_000_000);
    const card = await newCard(tenant.apiKey);
    const [original] = await stack.db.orm.em
      .fork()
      .execute<{ processor_reference: string }[]>('select processor_reference from cards where id = ?', [card.id]);
    // The processor no longer knows the card: it answers 404 to everything about it.
    await stack.db.orm.em
      .fork()
      .execute(`update cards set processor_reference = 'crd_unknown' where id = ?`, [card.id]);
    await post(tenant.apiKey, `/api/v1/cards/${card.id}/jit-fund`, { amount_minor: 10_000 });
    const [refused] = await settled(tenant.apiKey, card.id, 1);
    expect(refused).toMatchObject({ amount_minor: 10_000, status: 'failed', failure_reason: 'processor_refused' });
    expect((await walletBalance(stack.db.orm.em.fork(), tenant.tenantId)).availableMinor).toBe(1_000_000);
    expect((await get(tenant.apiKey, `/api/v1/cards/${card.id}/balance`)).available_minor).toBe(0);
    await post(tenant.apiKey, `/api/v1/cards/${card.id}/lock`);
    await operationsDone(card.id);
    const [lockOp] = await stack.db.orm.em
      .fork()
      .execute<{ status: string; reason: string }[]>(
        `select status, reason from card_operations where card_id = ? and action = 'lock'`,
        [card.id],
      );
    expect(lockOp).toEqual({ status: 'failed', reason: 'processor_refused' });

    await stack.db.orm.em
      .fork()
      .execute('update cards set processor_reference = ? where id = ?', [original!.processor_reference, card.id]);
    await post(tenant.apiKey, `/api/v1/cards/${card.id}/jit-fund`, { amount_minor: 20_000 });
    const items = await settled(tenant.apiKey, card.id, 2);
    expect(items[0]).toMatchObject({ amount_minor: 20_000, status: 'succeeded' });
    expect((await get(tenant.apiKey, `/api/v1/cards/${card.id}/balance`)).available_minor).toBe(20_000);
    expect((await walletBalance(stack.db.orm.em.fork(), tenant.tenantId)).availableMinor).toBe(980_000);
  });

  it('takes 50 concurrent fundings with distinct keys against a wallet that pays for 20: exactly 20 succeed', async () => {
    // 20 × 7,000 kobo = 140,000: the wallet pays for exactly twenty.
    const tenant = await createFundedTenant(stack.db.orm, 140_000);
    const card = await newCard(tenant.apiKey);
    const responses = await Promise.all(
      Array.from({ length: 50 }, (_, i) =>
        post(tenant.apiKey, `/api/v1/cards/${card.id}/jit-fund`, { amount_minor: 7_000, idempotency_key: `f-${i}` }),
      ),
    );
    // Accepted, every one: a card takes any number of concurrent operations (no in-flight limit).
    expect(responses.map((response) => response.statusCode)).toEqual(Array.from({ length: 50 }, () => 202));
    const items = await settled(tenant.apiKey, card.id, 50);
    expect(items.filter((item) => item.status === 'succeeded')).toHaveLength(20);
    expect(items.filter((item) => item.status === 'failed')).toHaveLength(30);
    expect((await get(tenant.apiKey, `/api/v1/cards/${card.id}/balance`)).available_minor).toBe(140_000);
    expect((await walletBalance(stack.db.orm.em.fork(), tenant.tenantId)).availableMinor).toBe(0);
    expect(await ledgerEntries(card.id)).toBe(20);
    // And the card still answers later operations.
    expect((await post(tenant.apiKey, `/api/v1/cards/${card.id}/lock`)).statusCode).toBe(202);
    await eventually(async () =>
      (await get(tenant.apiKey, `/api/v1/cards/${card.id}`)).status === 'locked' ? true : undefined,
    );
  });

  it("answers 404 NOT_FOUND for another tenant's or an unknown card", async () => {
    const owner = await createFundedTenant(stack.db.orm);
    const stranger = await createFundedTenant(stack.db.orm);
    const card = await newCard(owner.apiKey);
    for (const [key, id] of [
      [stranger.apiKey, card.id],
      [owner.apiKey, randomUUID()],
    ] as const) {
      for (const url of [`/api/v1/cards/${id}`, `/api/v1/cards/${id}/balance`, `/api/v1/cards/${id}/funding/history`]) {
        const response = await stack.app.inject({ method: 'GET', url, headers: auth(key) });
        expect({ url, status: response.statusCode }).toEqual({ url, status: 404 });
      }
      expect((await post(key, `/api/v1/cards/${id}/lock`)).statusCode).toBe(404);
      expect((await post(key, `/api/v1/cards/${id}/jit-fund`, { amount_minor: 100 })).statusCode).toBe(404);
    }
  });
  it('pages a card’s funding history newest first: 20 by default, at most 100, with totals', async () => {
    const tenant = await createFundedTenant(stack.db.orm, 4_500);
    const card = await newCard(tenant.apiKey);
    // 45 fundings of 100 kobo, sent one after another so that each is newer than the one before.
    for (let index = 0; index < 45; index += 1) {
      const funded = await post(tenant.apiKey, `/api/v1/cards/${card.id}/fund`, {
        amount_minor: 100,
        idempotency_key: `page-${String(index).padStart(2, '0')}`,
      });
      expect(funded.statusCode).toBe(202);
    }
    await settled(tenant.apiKey, card.id, 45);
    const history = async (query: string) => {
      const response = await stack.app.inject({
        method: 'GET',
        url: `/api/v1/cards/${card.id}/funding/history${query}`,
        headers: auth(tenant.apiKey),
      });
      expect(response.statusCode, response.body).toBe(200);
      return response.json().data as {
        items: { idempotency_key: string; amount_minor: number; status: string }[];
        pagination: Record<string, unknown>;
      };
    };
    const pages = [await history(''), await history('?page=2'), await history('?page=3')];
    expect(pages.map((page) => page.items.length)).toEqual([20, 20, 5]);
    expect(pages.map((page) => page.pagination)).toEqual([
      { page: 1, limit: 20, offset: 0, total: 45, pages: 3, has_more: true },
      { page: 2, limit: 20, offset: 20, total: 45, pages: 3, has_more: true },
      { page: 3, limit: 20, offset: 40, total: 45, pages: 3, has_more: false },
    ]);
    // Newest first across the pages, each funding once.
    expect(pages.flatMap((page) => page.items.map((item) => item.idempotency_key))).toEqual(
      Array.from({ length: 45 }, (_, index) => `page-${String(44 - index).padStart(2, '0')}`),
    );
    expect(pages.flatMap((page) => page.items).every((item) => item.status === 'succeeded')).toBe(true);
    const all = await history('?limit=100');
    expect(all.items).toHaveLength(45);
    expect(all.pagination).toEqual({ page: 1, limit: 100, offset: 0, total: 45, pages: 1, has_more: false });
    expect((await history('?offset=43&limit=10')).items.map((item) => item.idempotency_key)).toEqual([
      'page-01',
      'page-00',
    ]);
    expect((await history('?page=4')).items).toEqual([]);
    for (const query of ['?limit=101', '?limit=0', '?page=0', '?offset=-1', '?limit=abc', '?filters[status]=failed']) {
      const refused = await stack.app.inject({
        method: 'GET',
        url: `/api/v1/cards/${card.id}/funding/history${query}`,
        headers: auth(tenant.apiKey),
      });
      expect({ query, status: refused.statusCode }).toEqual({ query, status: 400 });
      expect(refused.json().error.code).toBe('VALIDATION_ERROR');
    }
    expect(
      fieldPaths(
        await stack.app.inject({
          method: 'GET',
          url: `/api/v1/cards/${card.id}/funding/history?limit=101`,
          headers: auth(tenant.apiKey),
        }),
      ),
    ).toEqual(['limit']);
    expect((await get(tenant.apiKey, `/api/v1/cards/${card.id}/balance`)).available_minor).toBe(4_500);
  });
});
