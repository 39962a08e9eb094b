// Card authorizations on the real stack (decisions §11): the sandbox card processor asks the
// gateway about each purchase over the signed provider-callback path and waits at most 2 s; the
// gateway decides in one PostgreSQL transaction under the card's row lock, holds the amount, funds
// the card just in time from the wallet, triggers auto-reload through the card's workflow, and
// applies the processor's clearing or reversal once. Amounts to the kobo.
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { FastifyInstance, LightMyRequestResponse } from 'fastify';
import { describe, expect, it } from 'vitest';
import { auth, expectFieldRefused, issueCard, newSigningSecret, registerEndpoint } from '../support/api.ts';
import { createFundedTenant } from '../support/app.ts';
import { postSignedCallback } from '../support/callbacks.ts';
import type { TestDatabase } from '../support/database.ts';
import { eventually } from '../support/eventually.ts';
import { listenForEvents } from '../support/event-notifications.ts';
import { startSandboxBank } from '../support/sandbox-bank.ts';
import { decideAuthorization } from '../../src/cards/decision.ts';
import { CardOperationSweep, HAND_OVER_GRACE_MS } from '../../src/cards/sweep.ts';
import { insertFunding, recordOperation } from '../../src/cards/store.ts';
import { postMovement } from '../../src/ledger/ledger.ts';
import { cardAuthorizationRelease } from '../../src/ledger/movements.ts';
import { type GatewayStack, useGatewayStack } from '../support/stack.ts';

let stack: GatewayStack;
let db: TestDatabase;
let app: FastifyInstance;

const TASK_QUEUE = `card-authorizations-${process.pid}`;

useGatewayStack({ taskQueue: TASK_QUEUE }, (started) => {
  stack = started;
  ({ db, app } = stack);
});

const call = async (method: 'GET' | 'POST' | 'PUT' | 'PATCH', apiKey: string, url: string, payload?: unknown) =>
  app.inject({ method, url, headers: auth(apiKey), ...(payload !== undefined ? { payload: payload as object } : {}) });

// A decision's first round trip, as pg_stat_activity shows its start (src/cards/decision.ts): `begin`,
// then the authorization's lock with the events kept quiet; its card and accounts follow in it.
const DECISION_OPENING = `'begin;%gateway.quiet_events%'`;
const PURCHASE = { merchant_name: 'Shoprite Lekki', merchant_category: '5411', channel: 'pos' } as const;

async function purchase(apiKey: string, cardId: string, amountMinor: number, extra: Record<string, unknown> = {}) {
  const response = await call('POST', apiKey, `/api/v1/sandbox/cards/${cardId}/purchases`, {
    ...PURCHASE,
    amount_minor: amountMinor,
    ...extra,
  });
  expect(response.statusCode, response.body).toBe(200);
  return response.json().data as { authorization_id: string; decision: string; reason: string | null };
}

/** The processor clears (`amount_minor`) or reverses an authorization, through the sandbox route the tenant calls. */
const processorAction = (apiKey: string, authorizationId: string, action: 'clear' | 'reverse', payload?: object) =>
  call('POST', apiKey, `/api/v1/sandbox/card-authorizations/${authorizationId}/${action}`, payload);

async function balance(apiKey: string, cardId: string) {
  const body = (await call('GET', apiKey, `/api/v1/cards/${cardId}/balance`)).json().data;
  return { available: body.available_minor as number, held: body.held_minor as number };
}

async function wallet(apiKey: string): Promise<number> {
  return (await call('GET', apiKey, '/api/v1/wallet')).json().data.available_minor as number;
}

async function authorizations(apiKey: string, cardId: string) {
  return (await call('GET', apiKey, `/api/v1/cards/${cardId}/authorizations?limit=100`)).json().data.items as {
    id: string;
    amount_minor: number;
    decision: string;
    reason: string | null;
    status: string;
    cleared_minor: number;
    jit_funded_minor: number;
  }[];
}

async function eventTypes(tenantId: string): Promise<string[]> {
  const rows = await db.orm.em
    .fork()
    .execute<{ type: string }[]>(
      `select type from events where tenant_id = ? and type like 'card.%' order by created_at, id`,
      [tenantId],
    );
  return rows.map((row) => row.type);
}

/** A tenant with `walletMinor` in the wallet and a card holding `cardMinor` (funded through its workflow). */
async function cardWith(walletMinor: number, cardMinor: number) {
  const tenant = await createFundedTenant(db.orm, walletMinor + cardMinor);
  const issued = await issueCard(app, tenant.apiKey, 'cus_auth');
  expect(issued.statusCode).toBe(201);
  const cardId = issued.json().data.id as string;
  if (cardMinor > 0) {
    const funded = await call('POST', tenant.apiKey, `/api/v1/cards/${cardId}/fund`, { amount_minor: cardMinor });
    expect(funded.statusCode).toBe(202);
    // Done when the funding is (its event recorded), not when the money moved: the debit comes first.
    await eventually(async () => {
      const history = (await call('GET', tenant.apiKey, `/api/v1/cards/${cardId}/funding/history`)).json().data
        .items as { status: string }[];
      return history[0]?.status === 'succeeded';
    });
    expect(await balance(tenant.apiKey, cardId)).toEqual({ available: cardMinor, held: 0 });
  }
  const [row] = await db.orm.em
    .fork()
    .execute<{ processor_reference: string }[]>('select processor_reference from cards where id = ?', [cardId]);
  return { ...tenant, cardId, cardReference: row!.processor_reference };
}

/** The processor's reversal of an authorization, signed, as its callback reaches the gateway. */
function reversalCallback(eventId: string, authorizationId: string, cardReference: string) {
  return postSignedCallback(app, {
    id: eventId,
    type: 'card.authorization.reversed',
    data: { authorization_id: authorizationId, card_reference: cardReference },
  });
}

/** The processor's authorization request, signed, straight to the gateway's provider-callback route. */
function authorizationRequest(cardReference: string, authorizationId: string, amountMinor: number) {
  return postSignedCallback(app, {
    id: `${cardReference}:${authorizationId}:ask`,
    type: 'card.authorization.request',
    data: {
      authorization_id: authorizationId,
      card_reference: cardReference,
      amount_minor: amountMinor,
      currency: 'NGN',
      ...PURCHASE,
    },
  });
}

/** The gateway's whole answer to the processor's request: this authorization, this decision, this reason. */
function expectAnswer(
  response: LightMyRequestResponse,
  authorizationId: string,
  decision: string,
  reason: string | null,
) {
  expect(response.json().data.authorization).toEqual({ authorization_id: authorizationId, decision, reason });
}

async function settlementBalance(): Promise<number> {
  const [row] = await db.orm.em
    .fork()
    .execute<{ balance_minor: string }[]>(
      `select balance_minor from ledger_accounts where tenant_id is null and code = 'card_settlement'`,
    );
  return Number(row!.balance_minor);
}

describe('card authorizations', () => {
  it('approves a covered purchase with a hold, then applies a partial clearing and a reversal once each', async () => {
    const tenant = await cardWith(0, 500_000);
    const settledBefore = await settlementBalance();

    const first = await purchase(tenant.apiKey, tenant.cardId, 200_000);
    expect(first).toMatchObject({ decision: 'approved', reason: null });
    const second = await purchase(tenant.apiKey, tenant.cardId, 120_000, { channel: 'web' });
    expect(second.decision).toBe('approved');
    expect(await balance(tenant.apiKey, tenant.cardId)).toEqual({ available: 180_000, held: 320_000 });

    // The processor captures 150,000 of the first hold and reverses the second.
    const clear = await processorAction(tenant.apiKey, first.authorization_id, 'clear', { amount_minor: 150_000 });
    expect(clear.statusCode).toBe(202);
    expect(clear.json().data).toEqual({
      authorization_id: first.authorization_id,
      card_id: tenant.cardId,
      action: 'clear',
      amount_minor: 150_000,
      status: 'sent',
    });
    const reverse = await processorAction(tenant.apiKey, second.authorization_id, 'reverse');
    expect(reverse.statusCode).toBe(202);
    await eventually(async () => {
      const items = await authorizations(tenant.apiKey, tenant.cardId);
      return items.every((item) => item.status !== 'pending') && items;
    });
    // The same clearing and reversal sent again by the processor (its retries) change nothing.
    await stack.bank.control(`/control/card-authorizations/${first.authorization_id}/clear`, { amount_minor: 150_000 });
    await stack.bank.control(`/control/card-authorizations/${second.authorization_id}/reverse`);
    await eventually(async () => {
      const [row] = await db.orm.em.fork().execute<{ n: string }[]>(
        `select count(*) as n from provider_callbacks where type like 'card.authorization.%' and dispatched_at is not null
             and payload::text like ?`,
        [`%${first.authorization_id}%`],
      );
      return Number(row!.n) === 2;
    });

    const items = await authorizations(tenant.apiKey, tenant.cardId);
    expect(
      items.map(({ id, amount_minor, decision, reason, status, cleared_minor }) => ({
        id,
        amount_minor,
        decision,
        reason,
        status,
        cleared_minor,
      })),
    ).toEqual([
      {
        id: second.authorization_id,
        amount_minor: 120_000,
        decision: 'approved',
        reason: null,
        status: 'reversed',
        cleared_minor: 0,
      },
      {
        id: first.authorization_id,
        amount_minor: 200_000,
        decision: 'approved',
        reason: null,
        status: 'cleared',
        cleared_minor: 150_000,
      },
    ]);
    // 500,000 − 150,000 captured; nothing held; the processor's settlement account got exactly 150,000.
    expect(await balance(tenant.apiKey, tenant.cardId)).toEqual({ available: 350_000, held: 0 });
    expect((await settlementBalance()) - settledBefore).toBe(150_000);
    // The processor's outbox sends the clearing and the reversal in either order.
    const types = await eventTypes(tenant.tenantId);
    expect(types.slice(0, 4)).toEqual([
      'card.created',
      'card.funded',
      'card.authorization.approved',
      'card.authorization.approved',
    ]);
    expect(types.slice(4).sort()).toEqual(['card.authorization.cleared', 'card.authorization.reversed']);
  });

  it('declines for each reason in the decided order, and a declined purchase moves nothing', async () => {
    const tenant = await cardWith(1_000_000, 300_000);
    const settings = (overrides: Record<string, unknown>) =>
      call('PUT', tenant.apiKey, `/api/v1/cards/${tenant.cardId}/security-settings`, {
        per_transaction_limit_minor: 100_000,
        daily_limit_minor: 150_000,
        channels: { pos: true, web: true, atm: false },
        blocked_merchant_categories: ['7995'],
        ...overrides,
      });
    expect((await settings({})).statusCode).toBe(200);

    // A purchase that fails every check gets the first reason of the order: lock.
    await call('POST', tenant.apiKey, `/api/v1/cards/${tenant.cardId}/lock`);
    await eventually(
      async () => (await call('GET', tenant.apiKey, `/api/v1/cards/${tenant.cardId}`)).json().data.status === 'locked',
    );
    const allWrong = { channel: 'atm', merchant_category: '7995' };
    expect((await purchase(tenant.apiKey, tenant.cardId, 400_000, allWrong)).reason).toBe('card_locked');
    await call('POST', tenant.apiKey, `/api/v1/cards/${tenant.cardId}/unlock`);
    await eventually(
      async () => (await call('GET', tenant.apiKey, `/api/v1/cards/${tenant.cardId}`)).json().data.status === 'active',
    );

    expect((await purchase(tenant.apiKey, tenant.cardId, 400_000, allWrong)).reason).toBe('channel_blocked');
    expect((await purchase(tenant.apiKey, tenant.cardId, 400_000, { merchant_category: '7995' })).reason).toBe(
      'merchant_category_blocked',
    );
    // Per-transaction limit 100,000: 100,001 is over it, 100,000 is not.
    expect((await purchase(tenant.apiKey, tenant.cardId, 100_001)).reason).toBe('limit_exceeded');
    expect((await purchase(tenant.apiKey, tenant.cardId, 100_000)).decision).toBe('approved');
    // Daily limit 150,000: 100,000 approved today, so 50,001 more is over it and 50,000 is not.
    expect((await purchase(tenant.apiKey, tenant.cardId, 50_001)).reason).toBe('limit_exceeded');
    expect((await purchase(tenant.apiKey, tenant.cardId, 50_000)).decision).toBe('approved');
    // Limits lifted: the card holds 150,000 more, JIT is off, so 150,001 is short and 150,000 is not.
    expect((await settings({ per_transaction_limit_minor: null, daily_limit_minor: null })).statusCode).toBe(200);
    expect((await purchase(tenant.apiKey, tenant.cardId, 150_001)).reason).toBe('insufficient_funds');
    expect((await purchase(tenant.apiKey, tenant.cardId, 150_000)).decision).toBe('approved');

    expect(await balance(tenant.apiKey, tenant.cardId)).toEqual({ available: 0, held: 300_000 });
    expect(await wallet(tenant.apiKey)).toBe(1_000_000);
    const items = await authorizations(tenant.apiKey, tenant.cardId);
    expect(items.map((item) => [item.amount_minor, item.status, item.reason])).toEqual([
      [150_000, 'pending', null],
      [150_001, 'declined', 'insufficient_funds'],
      [50_000, 'pending', null],
      [50_001, 'declined', 'limit_exceeded'],
      [100_000, 'pending', null],
      [100_001, 'declined', 'limit_exceeded'],
      [400_000, 'declined', 'merchant_category_blocked'],
      [400_000, 'declined', 'channel_blocked'],
      [400_000, 'declined', 'card_locked'],
    ]);
    // A reversal gives the daily allowance back: with a daily limit of 300,000 and 300,000 approved
    // today, reversing 50,000 leaves room for 50,000 more, not 50,001.
    await settings({ per_transaction_limit_minor: null, daily_limit_minor: 300_000 });
    await processorAction(tenant.apiKey, items[2]!.id, 'reverse');
    await eventually(async () => (await balance(tenant.apiKey, tenant.cardId)).held === 250_000);
    expect((await purchase(tenant.apiKey, tenant.cardId, 50_001)).reason).toBe('limit_exceeded');
    expect((await purchase(tenant.apiKey, tenant.cardId, 50_000)).decision).toBe('approved');
    expect(await balance(tenant.apiKey, tenant.cardId)).toEqual({ available: 0, held: 300_000 });
    const declined = (await eventTypes(tenant.tenantId)).filter((type) => type === 'card.authorization.declined');
    expect(declined).toHaveLength(7);
  });

  it('counts in today’s total a reversal that committed while the decision waited for the card’s accounts', async () => {
    const tenant = await cardWith(0, 300_000);
    const limited = await call('PUT', tenant.apiKey, `/api/v1/cards/${tenant.cardId}/security-settings`, {
      per_transaction_limit_minor: null,
      daily_limit_minor: 300_000,
      channels: { pos: true, web: true, atm: true },
      blocked_merchant_categories: [],
    });
    expect(limited.statusCode).toBe(200);
    const first = await purchase(tenant.apiKey, tenant.cardId, 200_000);
    expect(first.decision).toBe('approved');
    let decided: ReturnType<typeof decideAuthorization> | undefined;
    // The processor's reversal of the first, applied as settleAuthorization applies it, held open
    // until the next decision is waiting for the accounts it has locked; then committed.
    await db.orm.em.fork().transactional(async (tx) => {
      await postMovement(
        tx,
        tenant.tenantId,
        cardAuthorizationRelease({
          authorizationId: first.authorization_id,
          cardId: tenant.cardId,
          amountMinor: 200_000,
        }),
        { currency: 'NGN' },
      );
      await tx.execute(`update card_authorizations set status = 'reversed', updated_at = now() where id = ?`, [
        first.authorization_id,
      ]);
      decided = decideAuthorization(db.orm, {
        authorizationId: 'auth_after_reversal',
        cardReference: tenant.cardReference,
        amountMinor: 150_000,
        currency: 'NGN',
        merchantName: 'Shoprite Lekki',
        merchantCategory: '5411',
        channel: 'pos',
        modes: ['test'],
      });
      await eventually(async () => {
        const [waiting] = await db.orm.em.fork().execute<{ n: string }[]>(
          `select count(*) as n from pg_stat_activity
            where datname = current_database() and wait_event_type = 'Lock' and query like ${DECISION_OPENING}`,
        );
        return Number(waiting!.n) === 1;
      });
    });
    // 150,000 with nothing else spent today: approved. Counting the reversed 200,000 as still held
    // (the total read with the lock's snapshot, from before the reversal committed) declined it.
    expect((await decided!).decision).toEqual({
      authorization_id: 'auth_after_reversal',
      decision: 'approved',
      reason: null,
    });
    expect(await balance(tenant.apiKey, tenant.cardId)).toEqual({ available: 150_000, held: 150_000 });
  });

  it('funds the shortfall from the wallet just in time when the card has JIT funding', async () => {
    const tenant = await cardWith(100_000, 30_000);
    const short = await purchase(tenant.apiKey, tenant.cardId, 100_000);
    expect(short).toMatchObject({ decision: 'declined', reason: 'insufficient_funds' });

    const patched = await call('PATCH', tenant.apiKey, `/api/v1/cards/${tenant.cardId}`, { jit_funding: true });
    expect(patched.json().data.jit_funding).toBe(true);
    const jit = await purchase(tenant.apiKey, tenant.cardId, 100_000);
    expect(jit).toMatchObject({ decision: 'approved', reason: null });
    // 70,000 came from the wallet; the card spent all it had.
    expect(await wallet(tenant.apiKey)).toBe(30_000);
    expect(await balance(tenant.apiKey, tenant.cardId)).toEqual({ available: 0, held: 100_000 });
    const [listed] = await authorizations(tenant.apiKey, tenant.cardId);
    expect(listed).toMatchObject({ id: jit.authorization_id, jit_funded_minor: 70_000, status: 'pending' });
    const history = (await call('GET', tenant.apiKey, `/api/v1/cards/${tenant.cardId}/funding/history`)).json().data
      .items as { amount_minor: number; status: string; transaction_reference: string | null }[];
    expect(history[0]).toMatchObject({
      amount_minor: 70_000,
      status: 'succeeded',
      transaction_reference: `authorization:${jit.authorization_id}`,
    });
    // The wallet covers 30,000 more, not 30,001.
    expect((await purchase(tenant.apiKey, tenant.cardId, 30_001)).reason).toBe('insufficient_funds');
    expect((await purchase(tenant.apiKey, tenant.cardId, 30_000)).decision).toBe('approved');
    expect(await wallet(tenant.apiKey)).toBe(0);
  });

  it('auto-reloads through the card workflow once per drop below the threshold', async () => {
    const tenant = await cardWith(1_000_000, 100_000);
    const put = await call('PUT', tenant.apiKey, `/api/v1/cards/${tenant.cardId}/auto-reload`, {
      enabled: true,
      threshold_minor: 50_000,
      amount_minor: 200_000,
    });
    expect(put.statusCode).toBe(200);

    // 100,000 → 50,000: not below the threshold.
    expect((await purchase(tenant.apiKey, tenant.cardId, 50_000)).decision).toBe('approved');
    // 50,000 → 49,999: below it, one reload of 200,000.
    expect((await purchase(tenant.apiKey, tenant.cardId, 1)).decision).toBe('approved');
    await eventually(async () => (await balance(tenant.apiKey, tenant.cardId)).available === 249_999);
    // Above the threshold again; spending down to 40,000 drops below it a second time: one more reload.
    expect((await purchase(tenant.apiKey, tenant.cardId, 209_999)).decision).toBe('approved');
    await eventually(async () => (await balance(tenant.apiKey, tenant.cardId)).available === 240_000);
    // 240,000 → 239,999 stays above the threshold: nothing more.
    expect((await purchase(tenant.apiKey, tenant.cardId, 1)).decision).toBe('approved');

    expect(await balance(tenant.apiKey, tenant.cardId)).toEqual({ available: 239_999, held: 260_001 });
    expect(await wallet(tenant.apiKey)).toBe(600_000);
    // The money moves at the debit; the funding (and its events) are done once the processor has loaded the card.
    const reloads = await eventually(async () => {
      const rows = await db.orm.em
        .fork()
        .execute<{ amount_minor: string; status: string }[]>(
          `select amount_minor, status from card_fundings where card_id = ? and source = 'auto_reload' order by created_at`,
          [tenant.cardId],
        );
      return rows.length === 2 && rows.every((row) => row.status !== 'pending') && rows;
    });
    expect(reloads.map((row) => [Number(row.amount_minor), row.status])).toEqual([
      [200_000, 'succeeded'],
      [200_000, 'succeeded'],
    ]);
    const types = await eventTypes(tenant.tenantId);
    expect(types.filter((type) => type === 'card.auto_reloaded')).toHaveLength(2);
    const [event] = await db.orm.em
      .fork()
      .execute<{ payload: { card_id: string; threshold_minor: number; funding: { amount_minor: number } } }[]>(
        `select payload from events where tenant_id = ? and type = 'card.auto_reloaded' limit 1`,
        [tenant.tenantId],
      );
    expect(event!.payload).toMatchObject({
      card_id: tenant.cardId,
      threshold_minor: 50_000,
      funding: { amount_minor: 200_000 },
    });
  });

  it('hands an auto-reload funding whose hand-over was lost to the card workflow once, through the sweep', async () => {
    const tenant = await cardWith(1_000_000, 100_000);
    await call('PUT', tenant.apiKey, `/api/v1/cards/${tenant.cardId}/auto-reload`, {
      enabled: true,
      threshold_minor: 50_000,
      amount_minor: 300_000,
    });
    // Decided as the API decides, but the process "dies" before the hand-over: nothing is signalled.
    const outcome = await decideAuthorization(db.orm, {
      authorizationId: 'auth_lost_hand_over',
      cardReference: tenant.cardReference,
      amountMinor: 60_000,
      currency: 'NGN',
      merchantName: 'Shoprite Lekki',
      merchantCategory: '5411',
      channel: 'pos',
      modes: ['test'],
    });
    expect(outcome.decision.decision).toBe('approved');
    const fundingId = outcome.autoReload!.funding.id;
    const sweep = new CardOperationSweep({ orm: db.orm, client: stack.client, taskQueue: TASK_QUEUE, log: () => {} });
    // Within the grace period the API's own hand-over may still be on its way: left alone.
    expect(await sweep.pass()).toBe(0);
    await db.orm.em.fork().execute(
      `update card_operations set created_at = now() - ? * interval '1 millisecond'
          where id = (select operation_id from card_fundings where id = ?)`,
      [HAND_OVER_GRACE_MS + 1_000, fundingId],
    );
    expect(await sweep.pass()).toBe(1);
    // Handed over already: the next pass leaves it to its workflow.
    expect(await sweep.pass()).toBe(0);
    await eventually(async () => (await balance(tenant.apiKey, tenant.cardId)).available === 340_000);
    expect(await wallet(tenant.apiKey)).toBe(700_000);
    expect(await sweep.pass()).toBe(0);
  });

  it('decides without waking the fan-out by notification, its events left to the fan-out’s poll', async () => {
    const tenant = await cardWith(0, 100_000);
    // An endpoint listening for them: events owed to nobody are written fanned out and never notify.
    const registered = await registerEndpoint(app, tenant.apiKey, {
      url: 'http://127.0.0.1:9/cards',
      events: ['*'],
      signing_secret: newSigningSecret(),
    });
    expect(registered.statusCode).toBe(201);
    const listener = await listenForEvents(db.url);
    const { notified } = listener;
    try {
      const approved = await purchase(tenant.apiKey, tenant.cardId, 10_000);
      expect((await purchase(tenant.apiKey, tenant.cardId, 200_000)).reason).toBe('insufficient_funds');
      // A notification is delivered at commit: caught up after both answers, it would have come.
      await listener.caughtUp();
      expect(notified).toEqual([]);
      // The processor's reversal is no decision: its event notifies as every other one does.
      await processorAction(tenant.apiKey, approved.authorization_id, 'reverse');
      await eventually(() => notified.length > 0);
      const [decided] = await db.orm.em
        .fork()
        .execute<{ fanned_out_at: Date | null }[]>(
          `select fanned_out_at from events where type = 'card.authorization.approved' and payload->>'id' = ?`,
          [approved.authorization_id],
        );
      expect(decided).toBeDefined();
    } finally {
      await listener.end();
    }
  });

  it('hands a lock and a funding whose hand-over was lost (the client never retried) to the card workflow, through the sweep', async () => {
    const tenant = await cardWith(500_000, 0);
    const em = db.orm.em.fork();
    // Recorded as the API records them, then the signal "fails": nothing reaches the workflow.
    const lock = await recordOperation(em, {
      cardId: tenant.cardId,
      action: 'lock',
      idempotencyKey: null,
      reason: null,
    });
    const funding = await insertFunding(em, { cardId: tenant.cardId, amountMinor: 120_000, currency: 'NGN' });
    // The lock a second older than the funding: the sweep hands them over in the order they were recorded.
    const age = (id: string, ms: number) =>
      em.execute(`update card_operations set created_at = now() - ? * interval '1 millisecond' where id = ?`, [ms, id]);
    await age(lock, HAND_OVER_GRACE_MS + 2_000);
    await age(funding.operation_id, HAND_OVER_GRACE_MS + 1_000);
    const sweep = new CardOperationSweep({ orm: db.orm, client: stack.client, taskQueue: TASK_QUEUE, log: () => {} });
    expect(await sweep.pass()).toBe(2);
    await eventually(async () => {
      const operations = await db.orm.em
        .fork()
        .execute<{ status: string }[]>('select status from card_operations where id in (?, ?)', [
          lock,
          funding.operation_id,
        ]);
      return operations.every((operation) => operation.status !== 'accepted');
    });
    // Applied in the order handed over: the lock first, so the funding on a locked card fails and moves nothing.
    expect((await call('GET', tenant.apiKey, `/api/v1/cards/${tenant.cardId}`)).json().data.status).toBe('locked');
    const history = (await call('GET', tenant.apiKey, `/api/v1/cards/${tenant.cardId}/funding/history`)).json().data
      .items;
    expect(history).toMatchObject([{ id: funding.id, status: 'failed', failure_reason: 'card_locked' }]);
    expect(await wallet(tenant.apiKey)).toBe(500_000);
    expect(await sweep.pass()).toBe(0);
  });

  it('times its lock waits in PostgreSQL: a wait for the card another transaction holds, and into the API metrics', async () => {
    const tenant = await cardWith(0, 100_000);
    const request = {
      cardReference: tenant.cardReference,
      amountMinor: 10_000,
      currency: 'NGN',
      merchantName: 'Shoprite Lekki',
      merchantCategory: '5411',
      channel: 'pos',
      modes: ['test'],
    } as const;
    const count = async () => {
      const text = await app.metrics.scrape();
      return Number(/^gateway_card_decision_lock_wait_seconds_count (\d+)/m.exec(text)?.[1] ?? 0);
    };
    const before = await count();
    expect((await purchase(tenant.apiKey, tenant.cardId, 10_000)).decision).toBe('approved');
    expect(await count()).toBe(before + 1);

    // The card's row held by another transaction until the decision has waited on it for 300 ms at
    // least: its lock wait is at least that (a bound the order of events guarantees, not a speed).
    // Its round trip's text is long, and pg_stat_activity keeps only its start.
    let decided: ReturnType<typeof decideAuthorization> | undefined;
    await db.orm.em.fork().transactional(async (tx) => {
      await tx.execute('select 1 from cards where id = ? for update', [tenant.cardId]);
      decided = decideAuthorization(db.orm, { ...request, authorizationId: 'auth_waits_for_card' });
      await eventually(async () => {
        const [waiting] = await db.orm.em.fork().execute<{ n: string }[]>(
          `select count(*) as n from pg_stat_activity
            where datname = current_database() and wait_event_type = 'Lock' and query like ${DECISION_OPENING}`,
        );
        return Number(waiting!.n) === 1;
      });
      await new Promise((resolve) => setTimeout(resolve, 300));
    });
    const outcome = await decided!;
    expect(outcome.decision).toEqual({ authorization_id: 'auth_waits_for_card', decision: 'approved', reason: null });
    expect(outcome.timing.lockWaitMs).toBeGreaterThanOrEqual(300);
    expect(outcome.timing.transactionMs).toBeGreaterThanOrEqual(outcome.timing.lockWaitMs);
    expect(await balance(tenant.apiKey, tenant.cardId)).toEqual({ available: 80_000, held: 20_000 });
  });

  it('answers a repeated authorization (same id) with the same decision and one hold', async () => {
    const tenant = await cardWith(0, 100_000);
    const first = await purchase(tenant.apiKey, tenant.cardId, 60_000, { authorization_id: 'auth_repeat_1' });
    expect(first).toEqual({ authorization_id: 'auth_repeat_1', decision: 'approved', reason: null });
    const repeats = await Promise.all(
      Array.from({ length: 5 }, () => authorizationRequest(tenant.cardReference, 'auth_repeat_1', 60_000)),
    );
    for (const repeat of repeats) {
      expect(repeat.statusCode).toBe(200);
      expectAnswer(repeat, 'auth_repeat_1', 'approved', null);
    }
    expect(await purchase(tenant.apiKey, tenant.cardId, 60_000, { authorization_id: 'auth_repeat_1' })).toEqual(first);
    expect(await balance(tenant.apiKey, tenant.cardId)).toEqual({ available: 40_000, held: 60_000 });
    expect(await authorizations(tenant.apiKey, tenant.cardId)).toHaveLength(1);
  });

  it('records and refuses a clearing of an unknown, released or over-held authorization, moving nothing', async () => {
    const tenant = await cardWith(0, 100_000);
    const approved = await purchase(tenant.apiKey, tenant.cardId, 40_000);
    const settledBefore = await settlementBalance();
    const send = (eventId: string, type: string, data: Record<string, unknown>) =>
      postSignedCallback(app, { id: eventId, type, data });

    expect(
      (
        await send('clr-unknown', 'card.authorization.cleared', {
          authorization_id: 'auth_nobody',
          amount_minor: 5_000,
        })
      ).statusCode,
    ).toBe(200);
    expect(
      (
        await send('clr-over', 'card.authorization.cleared', {
          authorization_id: approved.authorization_id,
          amount_minor: 40_001,
        })
      ).statusCode,
    ).toBe(200);
    expect(
      (await send('rev-1', 'card.authorization.reversed', { authorization_id: approved.authorization_id })).statusCode,
    ).toBe(200);
    expect(
      (
        await send('clr-late', 'card.authorization.cleared', {
          authorization_id: approved.authorization_id,
          amount_minor: 40_000,
        })
      ).statusCode,
    ).toBe(200);
    expect(
      (await send('rev-2', 'card.authorization.reversed', { authorization_id: approved.authorization_id })).statusCode,
    ).toBe(200);

    const results = await db.orm.em
      .fork()
      .execute<{ event_id: string; dispatch_result: string }[]>(
        `select event_id, dispatch_result from provider_callbacks where event_id in ('clr-unknown', 'clr-over', 'rev-1', 'clr-late', 'rev-2')`,
      );
    expect(Object.fromEntries(results.map((row) => [row.event_id, row.dispatch_result]))).toEqual({
      'clr-unknown': 'refused: no authorization auth_nobody',
      'clr-over': 'refused: clearing of 40001 for a hold of 40000',
      'rev-1': `reversed: ${approved.authorization_id}`,
      'clr-late': `refused: authorization ${approved.authorization_id} is reversed`,
      'rev-2': `refused: authorization ${approved.authorization_id} is reversed`,
    });
    expect(await balance(tenant.apiKey, tenant.cardId)).toEqual({ available: 100_000, held: 0 });
    expect(await settlementBalance()).toBe(settledBefore);
  });

  it('decides 200 concurrent authorizations on one card whose balance and JIT allowance cover exactly 50', async () => {
    // 30 purchases of 10,000 from the card, 20 more funded just in time from the wallet.
    const tenant = await cardWith(200_000, 300_000);
    await call('PATCH', tenant.apiKey, `/api/v1/cards/${tenant.cardId}`, { jit_funding: true });
    const answers = await Promise.all(
      Array.from({ length: 200 }, (_, index) =>
        authorizationRequest(tenant.cardReference, `auth_race_${index}`, 10_000),
      ),
    );
    expect(answers.map((answer) => answer.statusCode)).toEqual(Array(200).fill(200));
    const decisions = answers.map(
      (answer) => answer.json().data.authorization as { decision: string; reason: string | null },
    );
    expect(decisions.filter((decision) => decision.decision === 'approved')).toHaveLength(50);
    expect(decisions.filter((decision) => decision.reason === 'insufficient_funds')).toHaveLength(150);

    expect(await balance(tenant.apiKey, tenant.cardId)).toEqual({ available: 0, held: 500_000 });
    expect(await wallet(tenant.apiKey)).toBe(0);
    const [counts] = await db.orm.em
      .fork()
      .execute<{ held: string; approved: string; jit: string; jit_fundings: string }[]>(
        `select (select coalesce(sum(amount_minor), 0) from card_authorizations where card_id = ? and status = 'pending') as held,
              (select count(*) from card_authorizations where card_id = ? and decision = 'approved') as approved,
              (select coalesce(sum(jit_funded_minor), 0) from card_authorizations where card_id = ?) as jit,
              (select count(*) from card_fundings where card_id = ? and source = 'jit' and amount_minor = 10000) as jit_fundings`,
        [tenant.cardId, tenant.cardId, tenant.cardId, tenant.cardId],
      );
    expect(counts).toEqual({ held: '500000', approved: '50', jit: '200000', jit_fundings: '20' });
  });

  it('declines on the processor timeout when the answer is lost after the hold, and the reversal releases it', async () => {
    const tenant = await cardWith(0, 100_000);
    // Between the processor and the gateway: passes the request on (the gateway decides and holds),
    // then drops the answer, as a gateway that died before answering.
    const gatewayUrl = `http://127.0.0.1:${(app.server.address() as AddressInfo).port}`;
    const swallowed: string[] = [];
    const blackHole: Server = createServer((request, response) => {
      const chunks: Buffer[] = [];
      request.on('data', (chunk: Buffer) => chunks.push(chunk));
      request.on('end', () => {
        void fetch(`${gatewayUrl}${request.url}`, {
          method: 'POST',
          headers: request.headers as Record<string, string>,
          body: Buffer.concat(chunks),
        }).then(async (answer) => {
          swallowed.push(await answer.text());
          response.destroy();
        });
      });
    });
    await new Promise<void>((resolve) => blackHole.listen(0, '127.0.0.1', resolve));
    const processor = await startSandboxBank({
      databaseUrl: db.url,
      gatewayUrl,
      authorizationUrl: `http://127.0.0.1:${(blackHole.address() as AddressInfo).port}/provider-callbacks/sandbox`,
    });
    try {
      const answer = await processor.control(`/control/cards/${tenant.cardReference}/purchases`, {
        ...PURCHASE,
        amount_minor: 70_000,
        authorization_id: 'auth_lost_answer',
      });
      expect(answer.body).toEqual({ authorization_id: 'auth_lost_answer', decision: 'declined', reason: 'timeout' });
      // The gateway had approved and held it; the processor's reversal advice releases the hold.
      expect(JSON.parse(swallowed[0]!).data.authorization).toMatchObject({ decision: 'approved' });
      await eventually(async () => (await authorizations(tenant.apiKey, tenant.cardId))[0]?.status === 'reversed');
      expect(await balance(tenant.apiKey, tenant.cardId)).toEqual({ available: 100_000, held: 0 });
      // The processor's retry of the timed-out purchase keeps its timeout.
      const retry = await processor.control(`/control/cards/${tenant.cardReference}/purchases`, {
        ...PURCHASE,
        amount_minor: 70_000,
        authorization_id: 'auth_lost_answer',
      });
      expect(retry.body).toEqual({ authorization_id: 'auth_lost_answer', decision: 'declined', reason: 'timeout' });
    } finally {
      await processor.close();
      await new Promise((resolve) => blackHole.close(resolve));
    }
  });

  it('declines an authorization whose reversal arrived before it was decided, holding nothing', async () => {
    const tenant = await cardWith(0, 100_000);
    const early = await reversalCallback('rev-early', 'auth_reversed_first', tenant.cardReference);
    expect(early.statusCode).toBe(200);
    const late = await authorizationRequest(tenant.cardReference, 'auth_reversed_first', 10_000);
    expectAnswer(late, 'auth_reversed_first', 'declined', 'timeout');
    expect(await balance(tenant.apiKey, tenant.cardId)).toEqual({ available: 100_000, held: 0 });
  });

  it('lets an operator find holds the processor left and release one, audited, as its reversal would', async () => {
    const tenant = await cardWith(0, 100_000);
    const held = await purchase(tenant.apiKey, tenant.cardId, 25_000);
    const listed = await stack.admin('cards', 'holds', '--older-than', '0s');
    expect(listed.code).toBe(0);
    expect(listed.json.items.map((item: { id: string }) => item.id)).toContain(held.authorization_id);
    const mine = listed.json.items.find((item: { id: string }) => item.id === held.authorization_id);
    expect(mine).toMatchObject({ amount_minor: 25_000, status: 'pending', tenant_id: tenant.tenantId });
    expect((await stack.admin('cards', 'release-hold', '--authorization', held.authorization_id)).code).toBe(2);
    const released = await stack.admin(
      'cards',
      'release-hold',
      '--authorization',
      held.authorization_id,
      '--note',
      'processor lost it',
    );
    expect(released.code).toBe(0);
    expect(released.json).toMatchObject({ released_minor: 25_000, authorization: { status: 'reversed' } });
    expect(await balance(tenant.apiKey, tenant.cardId)).toEqual({ available: 100_000, held: 0 });
    const again = await stack.admin('cards', 'release-hold', '--authorization', held.authorization_id, '--note', 'x');
    expect(again.code).toBe(1);
    expect(again.stderr).toContain('is reversed; nothing is held');
    const unknown = await stack.admin('cards', 'release-hold', '--authorization', 'auth_nowhere', '--note', 'x');
    expect(unknown.code).toBe(1);
    // An unknown id is refused, not voided: the processor may still ask about it.
    const [voids] = await db.orm.em
      .fork()
      .execute<{ n: string }[]>(`select count(*) as n from card_authorization_voids where id = 'auth_nowhere'`);
    expect(voids!.n).toBe('0');
    const audit = await db.orm.em
      .fork()
      .execute<{ outcome: string }[]>(
        `select outcome from admin_audit where command = 'cards release-hold' order by at, id`,
      );
    expect(audit.map((row) => row.outcome)).toEqual(['refused', 'succeeded', 'failed', 'failed']);
    expect((await eventTypes(tenant.tenantId)).at(-1)).toBe('card.authorization.reversed');
  });

  it('refuses bad purchases naming the field, other tenants’ cards and authorizations, and live keys', async () => {
    const tenant = await cardWith(0, 10_000);
    const other = await createFundedTenant(db.orm, 0, 'other tenant');
    const url = `/api/v1/sandbox/cards/${tenant.cardId}/purchases`;
    const cases: [Record<string, unknown>, string][] = [
      [{ ...PURCHASE, amount_minor: 0 }, 'amount_minor'],
      [{ ...PURCHASE, amount_minor: 10.5 }, 'amount_minor'],
      [{ ...PURCHASE, amount_minor: '100' }, 'amount_minor'],
      [{ ...PURCHASE, amount_minor: 100, merchant_category: '54110' }, 'merchant_category'],
      [{ ...PURCHASE, amount_minor: 100, channel: 'phone' }, 'channel'],
      [{ ...PURCHASE, amount_minor: 100, merchant_name: '' }, 'merchant_name'],
      [{ ...PURCHASE, amount_minor: 100, authorization_id: '../../etc' }, 'authorization_id'],
      [{ ...PURCHASE, amount_minor: 100, surprise: 1 }, 'surprise'],
    ];
    for (const [body, field] of cases) expectFieldRefused(await call('POST', tenant.apiKey, url, body), field);
    expect(await authorizations(tenant.apiKey, tenant.cardId)).toEqual([]);

    const approved = await purchase(tenant.apiKey, tenant.cardId, 5_000);
    expect((await call('POST', other.apiKey, url, { ...PURCHASE, amount_minor: 100 })).statusCode).toBe(404);
    expect((await call('GET', other.apiKey, `/api/v1/cards/${tenant.cardId}/authorizations`)).statusCode).toBe(404);
    const foreignClear = await processorAction(other.apiKey, approved.authorization_id, 'clear', {
      amount_minor: 5_000,
    });
    expect(foreignClear.statusCode).toBe(404);
    const live = await createFundedTenant(db.orm, 0, 'live tenant', 'live');
    expect((await call('POST', live.apiKey, url, { ...PURCHASE, amount_minor: 100 })).statusCode).toBe(403);
    expect(await balance(tenant.apiKey, tenant.cardId)).toEqual({ available: 5_000, held: 5_000 });
  });
  it('decides the same authorization_id on two tenants’ cards each on its own card, and settles each alone', async () => {
    const first = await cardWith(0, 100_000);
    const second = await cardWith(0, 80_000);
    // Tenant 1 uses two ids first; tenant 2's processor then sends the same two.
    expect(await purchase(first.apiKey, first.cardId, 60_000, { authorization_id: 'auth_shared_a' })).toEqual({
      authorization_id: 'auth_shared_a',
      decision: 'approved',
      reason: null,
    });
    expect(await purchase(first.apiKey, first.cardId, 30_000, { authorization_id: 'auth_shared_b' })).toEqual({
      authorization_id: 'auth_shared_b',
      decision: 'approved',
      reason: null,
    });
    expect(await balance(first.apiKey, first.cardId)).toEqual({ available: 10_000, held: 90_000 });

    // On tenant 2's card, `auth_shared_a` is a purchase of its own: decided there, and held there.
    const sharedA = await authorizationRequest(second.cardReference, 'auth_shared_a', 70_000);
    expect(sharedA.statusCode).toBe(200);
    expectAnswer(sharedA, 'auth_shared_a', 'approved', null);
    expect(await balance(second.apiKey, second.cardId)).toEqual({ available: 10_000, held: 70_000 });
    // `auth_shared_b` for more than tenant 2's card has: declined as any fresh id would be, not
    // tenant 1's stored approval. The answer is the one a fresh id gets, field for field.
    const sharedB = await authorizationRequest(second.cardReference, 'auth_shared_b', 20_000);
    const fresh = await authorizationRequest(second.cardReference, 'auth_never_used_elsewhere', 20_000);
    const shape = (response: Awaited<typeof sharedB>, id: string) => {
      const body = response.json();
      return {
        status: response.statusCode,
        keys: Object.keys(body).sort(),
        data: { ...body.data, event_id: '…', authorization: { ...body.data.authorization, authorization_id: id } },
      };
    };
    expect(shape(sharedB, 'x')).toEqual(shape(fresh, 'x'));
    expectAnswer(sharedB, 'auth_shared_b', 'declined', 'insufficient_funds');

    // A repeat on the same card still gets that card's stored decision, and holds nothing more.
    for (const [tenant, id, amount] of [
      [first, 'auth_shared_a', 60_000],
      [second, 'auth_shared_a', 70_000],
      [second, 'auth_shared_b', 20_000],
    ] as const) {
      const repeat = await authorizationRequest(tenant.cardReference, id, amount);
      expect(repeat.json().data.authorization.decision).toBe(
        tenant === second && id === 'auth_shared_b' ? 'declined' : 'approved',
      );
    }
    expect(await balance(first.apiKey, first.cardId)).toEqual({ available: 10_000, held: 90_000 });
    expect(await balance(second.apiKey, second.cardId)).toEqual({ available: 10_000, held: 70_000 });
    // Each tenant lists its own, with its own amounts.
    const listed = async (tenant: typeof first) =>
      (await authorizations(tenant.apiKey, tenant.cardId)).map((item) => [item.id, item.amount_minor, item.status]);
    expect(await listed(first)).toEqual([
      ['auth_shared_b', 30_000, 'pending'],
      ['auth_shared_a', 60_000, 'pending'],
    ]);
    expect(await listed(second)).toEqual([
      ['auth_never_used_elsewhere', 20_000, 'declined'],
      ['auth_shared_b', 20_000, 'declined'],
      ['auth_shared_a', 70_000, 'pending'],
    ]);

    // Tenant 1 clears its `auth_shared_a` for 50,000; tenant 2's stays held, whole.
    const settledBefore = await settlementBalance();
    const clear = await processorAction(first.apiKey, 'auth_shared_a', 'clear', { amount_minor: 50_000 });
    expect(clear.statusCode).toBe(202);
    await eventually(async () => (await balance(first.apiKey, first.cardId)).held === 30_000);
    expect(await balance(first.apiKey, first.cardId)).toEqual({ available: 20_000, held: 30_000 });
    expect(await balance(second.apiKey, second.cardId)).toEqual({ available: 10_000, held: 70_000 });
    expect((await settlementBalance()) - settledBefore).toBe(50_000);
    // Tenant 2 reverses its own; tenant 1's cleared one is untouched.
    expect((await processorAction(second.apiKey, 'auth_shared_a', 'reverse')).statusCode).toBe(202);
    await eventually(async () => (await balance(second.apiKey, second.cardId)).held === 0);
    expect(await balance(second.apiKey, second.cardId)).toEqual({ available: 80_000, held: 0 });
    expect(await listed(first)).toEqual([
      ['auth_shared_b', 30_000, 'pending'],
      ['auth_shared_a', 60_000, 'cleared'],
    ]);
    expect(
      (await authorizations(first.apiKey, first.cardId)).find((item) => item.id === 'auth_shared_a'),
    ).toMatchObject({ cleared_minor: 50_000 });
    expect((await listed(second))[2]).toEqual(['auth_shared_a', 70_000, 'reversed']);
    // The processor's repeat of tenant 1's clearing, named by card: refused, moves nothing.
    const repeated = await stack.bank.control('/control/card-authorizations/auth_shared_a/clear', {
      amount_minor: 50_000,
      card_reference: first.cardReference,
    });
    expect(repeated.status).toBe(202);
    await eventually(async () => {
      const [row] = await db.orm.em
        .fork()
        .execute<{ dispatch_result: string | null }[]>(
          `select dispatch_result from provider_callbacks where event_id = ?`,
          [repeated.body.event_id],
        );
      return row?.dispatch_result ?? undefined;
    }).then((result) => expect(result).toBe('refused: authorization auth_shared_a is cleared'));
    expect((await settlementBalance()) - settledBefore).toBe(50_000);
    // Events are per card too: one decision event per (card, id).
    const decided = await db.orm.em.fork().execute<{ tenant_id: string; source_key: string }[]>(
      `select tenant_id, source_key from events where type like 'card.authorization.%' and payload->>'id' = 'auth_shared_a'
          order by created_at, id`,
    );
    expect(decided.map((row) => [row.tenant_id, row.source_key])).toEqual([
      [first.tenantId, `card:${first.cardId}:authorization:auth_shared_a:decided`],
      [second.tenantId, `card:${second.cardId}:authorization:auth_shared_a:decided`],
      [first.tenantId, `card:${first.cardId}:authorization:auth_shared_a:cleared`],
      [second.tenantId, `card:${second.cardId}:authorization:auth_shared_a:reversed`],
    ]);
  });

  it('keeps a void (a reversal before the decision) on its own card', async () => {
    const first = await cardWith(0, 100_000);
    const second = await cardWith(0, 100_000);
    const early = await reversalCallback('rev-early-per-card', 'auth_void_shared', first.cardReference);
    expect(early.statusCode).toBe(200);
    // Another card's purchase under the same id is no purchase the processor gave up on.
    const other = await authorizationRequest(second.cardReference, 'auth_void_shared', 10_000);
    expectAnswer(other, 'auth_void_shared', 'approved', null);
    const voided = await authorizationRequest(first.cardReference, 'auth_void_shared', 10_000);
    expectAnswer(voided, 'auth_void_shared', 'declined', 'timeout');
    expect(await balance(first.apiKey, first.cardId)).toEqual({ available: 100_000, held: 0 });
    expect(await balance(second.apiKey, second.cardId)).toEqual({ available: 90_000, held: 10_000 });
    // A reversal naming a card the gateway does not have voids nothing anywhere.
    await reversalCallback('rev-unknown-card', 'auth_void_nowhere', 'crd_nobody');
    const [voids] = await db.orm.em
      .fork()
      .execute<{ n: string }[]>(`select count(*) as n from card_authorization_voids where id = 'auth_void_nowhere'`);
    expect(voids!.n).toBe('0');
    expect(
      (await authorizationRequest(first.cardReference, 'auth_void_nowhere', 1_000)).json().data.authorization,
    ).toMatchObject({ decision: 'approved' });
  });

  it('asks for card_id when a tenant clears or reverses an id two of its cards share', async () => {
    const tenant = await cardWith(40_000, 50_000);
    const issued = await issueCard(app, tenant.apiKey, 'cus_auth_2');
    const secondCard = issued.json().data.id as string;
    await call('POST', tenant.apiKey, `/api/v1/cards/${secondCard}/fund`, { amount_minor: 40_000 });
    await eventually(async () => (await balance(tenant.apiKey, secondCard)).available === 40_000);
    expect((await purchase(tenant.apiKey, tenant.cardId, 25_000, { authorization_id: 'auth_twice' })).decision).toBe(
      'approved',
    );
    expect((await purchase(tenant.apiKey, secondCard, 15_000, { authorization_id: 'auth_twice' })).decision).toBe(
      'approved',
    );
    expect(await balance(tenant.apiKey, tenant.cardId)).toEqual({ available: 25_000, held: 25_000 });
    expect(await balance(tenant.apiKey, secondCard)).toEqual({ available: 25_000, held: 15_000 });

    // The processor's own control route cannot guess the card of an id that two cards have.
    expect(await stack.bank.control('/control/card-authorizations/auth_twice/reverse')).toEqual({
      status: 409,
      body: { code: 'conflict', message: 'authorization auth_twice is on several cards: name one with card_reference' },
    });
    const url = '/api/v1/sandbox/card-authorizations/auth_twice';
    const ambiguous = await call('POST', tenant.apiKey, `${url}/clear`, { amount_minor: 10_000 });
    expectFieldRefused(ambiguous, 'card_id');
    expect(ambiguous.json().error.details.fields[0].message).toContain('2 of your cards');
    expectFieldRefused(await call('POST', tenant.apiKey, `${url}/reverse`), 'card_id');
    expectFieldRefused(await call('POST', tenant.apiKey, `${url}/reverse`, { card_id: 'x', surprise: 1 }), 'surprise');
    // A card of another tenant, or one without that id, is 404 like an unknown authorization.
    const other = await cardWith(0, 0);
    for (const cardId of [other.cardId, '00000000-0000-4000-8000-000000000000', 'not-a-uuid']) {
      expect((await call('POST', tenant.apiKey, `${url}/reverse`, { card_id: cardId })).statusCode).toBe(404);
    }
    expect((await call('POST', other.apiKey, `${url}/reverse`, { card_id: other.cardId })).statusCode).toBe(404);
    expect((await call('POST', other.apiKey, `${url}/reverse`)).statusCode).toBe(404);

    const cleared = await call('POST', tenant.apiKey, `${url}/clear`, { amount_minor: 10_000, card_id: secondCard });
    expect(cleared.statusCode).toBe(202);
    expect(cleared.json().data).toEqual({
      authorization_id: 'auth_twice',
      card_id: secondCard,
      action: 'clear',
      amount_minor: 10_000,
      status: 'sent',
    });
    await eventually(async () => (await balance(tenant.apiKey, secondCard)).held === 0);
    expect(await balance(tenant.apiKey, secondCard)).toEqual({ available: 30_000, held: 0 });
    expect(await balance(tenant.apiKey, tenant.cardId)).toEqual({ available: 25_000, held: 25_000 });
    const reversed = await call('POST', tenant.apiKey, `${url}/reverse`, { card_id: tenant.cardId });
    expect(reversed.statusCode).toBe(202);
    await eventually(async () => (await balance(tenant.apiKey, tenant.cardId)).held === 0);
    expect(await balance(tenant.apiKey, tenant.cardId)).toEqual({ available: 50_000, held: 0 });
    expect(await balance(tenant.apiKey, secondCard)).toEqual({ available: 30_000, held: 0 });
  });

  it('lets an operator release a hold whose id two cards share, naming the card', async () => {
    const first = await cardWith(0, 10_000);
    const second = await cardWith(0, 10_000);
    await purchase(first.apiKey, first.cardId, 4_000, { authorization_id: 'auth_ops_shared' });
    await purchase(second.apiKey, second.cardId, 3_000, { authorization_id: 'auth_ops_shared' });
    const ambiguous = await stack.admin('cards', 'release-hold', '--authorization', 'auth_ops_shared', '--note', 'x');
    expect(ambiguous.code).toBe(2);
    expect(ambiguous.stderr).toContain('--card');
    const released = await stack.admin(
      'cards',
      'release-hold',
      '--authorization',
      'auth_ops_shared',
      '--card',
      second.cardId,
      '--note',
      'processor lost it',
    );
    expect(released.code).toBe(0);
    expect(released.json).toMatchObject({
      released_minor: 3_000,
      authorization: { id: 'auth_ops_shared', card_id: second.cardId, status: 'reversed' },
    });
    expect(await balance(second.apiKey, second.cardId)).toEqual({ available: 10_000, held: 0 });
    expect(await balance(first.apiKey, first.cardId)).toEqual({ available: 6_000, held: 4_000 });
  });

  it('ends a refused load whose money a purchase already holds with an alert, and the card’s queue goes on', async () => {
    const tenant = await cardWith(500_000, 0);
    // The processor cannot take the load for now (the gateway retries it), while the money is
    // already on the card in the books: a purchase holds 200,000 of it.
    await stack.bank.control(`/control/cards/${tenant.cardReference}/loads`, { answer: 'unavailable' });
    const funded = await call('POST', tenant.apiKey, `/api/v1/cards/${tenant.cardId}/fund`, { amount_minor: 300_000 });
    expect(funded.statusCode).toBe(202);
    const fundingId = funded.json().data.funding_id as string;
    await eventually(async () => (await balance(tenant.apiKey, tenant.cardId)).available === 300_000);
    expect((await purchase(tenant.apiKey, tenant.cardId, 200_000)).decision).toBe('approved');
    expect(await balance(tenant.apiKey, tenant.cardId)).toEqual({ available: 100_000, held: 200_000 });
    // Then it refuses the load for good. Only 100,000 of the funding is still on the card.
    await stack.bank.control(`/control/cards/${tenant.cardReference}/loads`, { answer: 'refuse' });
    expect((await call('POST', tenant.apiKey, `/api/v1/cards/${tenant.cardId}/lock`)).statusCode).toBe(202);
    // The lock behind it applies: the queue was not frozen by a reversal that can never succeed.
    await eventually(
      async () => (await call('GET', tenant.apiKey, `/api/v1/cards/${tenant.cardId}`)).json().data.status === 'locked',
      60_000,
    );
    const history = (await call('GET', tenant.apiKey, `/api/v1/cards/${tenant.cardId}/funding/history`)).json().data
      .items;
    expect(history).toMatchObject([
      { id: fundingId, amount_minor: 300_000, status: 'failed', failure_reason: 'processor_refused' },
    ]);
    // What the card still held of it went back to the wallet; what the purchase holds stays held.
    expect(await wallet(tenant.apiKey)).toBe(300_000);
    expect(await balance(tenant.apiKey, tenant.cardId)).toEqual({ available: 0, held: 200_000 });
    const alerts = await stack.admin('cards', 'alerts');
    expect(alerts.code).toBe(0);
    const alert = alerts.json.items.find((item: { funding_id: string }) => item.funding_id === fundingId);
    expect(alert).toEqual({
      kind: 'refused_load_spent',
      tenant_id: tenant.tenantId,
      card_id: tenant.cardId,
      funding_id: fundingId,
      amount_minor: 300_000,
      returned_minor: 100_000,
      unrecovered_minor: 200_000,
      failure_reason: 'processor_refused',
      // Where that money is now: held by the purchase.
      card_available_minor: 0,
      card_held_minor: 200_000,
      created_at: expect.any(String),
      completed_at: expect.any(String),
    });
    expect(alerts.json).toMatchObject({ count: expect.any(Number), unrecovered_minor: expect.any(Number) });
    const types = await eventTypes(tenant.tenantId);
    expect(types.filter((type) => type === 'card.funding_failed')).toHaveLength(1);
    expect(types.filter((type) => type === 'card.funded')).toHaveLength(0);
    // The purchase still settles from its hold: the books stay whole (checked after each test).
    const [held] = await authorizations(tenant.apiKey, tenant.cardId);
    await processorAction(tenant.apiKey, held!.id, 'clear', { amount_minor: 200_000 });
    await eventually(async () => (await balance(tenant.apiKey, tenant.cardId)).held === 0);
    expect(await balance(tenant.apiKey, tenant.cardId)).toEqual({ available: 0, held: 0 });
    // The alert stays, and says where the money is now: cleared to the processor, neither held nor on the card.
    const after = (await stack.admin('cards', 'alerts')).json.items.find(
      (item: { funding_id: string }) => item.funding_id === fundingId,
    );
    expect(after).toMatchObject({ unrecovered_minor: 200_000, card_available_minor: 0, card_held_minor: 0 });
    // A later load on the card, accepted again, works as ever.
    await stack.bank.control(`/control/cards/${tenant.cardReference}/loads`, { answer: 'accept' });
    await call('POST', tenant.apiKey, `/api/v1/cards/${tenant.cardId}/unlock`);
    await call('POST', tenant.apiKey, `/api/v1/cards/${tenant.cardId}/fund`, { amount_minor: 50_000 });
    await eventually(async () => (await balance(tenant.apiKey, tenant.cardId)).available === 50_000);
    expect(await wallet(tenant.apiKey)).toBe(250_000);
  });

  it('pages a card’s authorizations newest first, 20 by default and at most 100', async () => {
    const tenant = await cardWith(0, 100_000);
    for (let index = 0; index < 25; index += 1) {
      await authorizationRequest(tenant.cardReference, `auth_page_${String(index).padStart(2, '0')}`, 1_000);
    }
    const page = async (query: string) =>
      (await call('GET', tenant.apiKey, `/api/v1/cards/${tenant.cardId}/authorizations${query}`)).json().data as {
        items: { id: string }[];
        pagination: Record<string, unknown>;
      };
    const first = await page('');
    expect(first.items).toHaveLength(20);
    expect(first.pagination).toEqual({ page: 1, limit: 20, offset: 0, total: 25, pages: 2, has_more: true });
    const second = await page('?page=2');
    expect(second.pagination).toEqual({ page: 2, limit: 20, offset: 20, total: 25, pages: 2, has_more: false });
    expect([...first.items, ...second.items].map((item) => item.id)).toEqual(
      Array.from({ length: 25 }, (_, index) => `auth_page_${String(24 - index).padStart(2, '0')}`),
    );
    expect((await page('?offset=24&limit=5')).items.map((item) => item.id)).toEqual(['auth_page_00']);
    expectFieldRefused(
      await call('GET', tenant.apiKey, `/api/v1/cards/${tenant.cardId}/authorizations?limit=101`),
      'limit',
    );
    expectFieldRefused(
      await call('GET', tenant.apiKey, `/api/v1/cards/${tenant.cardId}/authorizations?filters[status]=pending`),
      'filters[status]',
    );
  });
});
