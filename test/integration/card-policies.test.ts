// A card's durable policy (decisions §11) on the real stack: JIT funding (PATCH), security settings
// and auto-reload (GET / PUT, replaced whole), validated field by field, scoped to the tenant, and
// `card.security_settings.updated` recorded once per change.
import type { FastifyInstance, LightMyRequestResponse } from 'fastify';
import { describe, expect, it } from 'vitest';
import { auth, expectFieldRefused, issueCard } from '../support/api.ts';
import { createFundedTenant } from '../support/app.ts';
import type { TestDatabase } from '../support/database.ts';
import { type GatewayStack, useGatewayStack } from '../support/stack.ts';

let stack: GatewayStack;
let db: TestDatabase;
let app: FastifyInstance;

useGatewayStack({ taskQueue: `card-policies-${process.pid}` }, (started) => {
  stack = started;
  ({ db, app } = stack);
});

const send = (method: 'GET' | 'PUT' | 'PATCH', apiKey: string, url: string, payload?: unknown) =>
  app.inject({ method, url, headers: auth(apiKey), ...(payload !== undefined ? { payload: payload as object } : {}) });

async function cardOf(apiKey: string): Promise<string> {
  const response = await issueCard(app, apiKey, 'cus_policy');
  expect(response.statusCode).toBe(201);
  return response.json().data.id as string;
}

const SETTINGS = {
  per_transaction_limit_minor: 500_000,
  daily_limit_minor: 2_000_000,
  channels: { pos: true, web: false, atm: true },
  blocked_merchant_categories: ['7995', '5933'],
};

/** The card's row as the database holds it, for before / after comparisons. */
async function cardRow(cardId: string) {
  const [row] = await db.orm.em.fork().execute('select * from cards where id = ?', [cardId]);
  return row;
}

async function settingsEvents(tenantId: string) {
  return db.orm.em
    .fork()
    .execute<{ payload: Record<string, unknown> }[]>(
      `select payload from events where tenant_id = ? and type = 'card.security_settings.updated' order by created_at`,
      [tenantId],
    );
}

describe('card policy', () => {
  it('starts with JIT funding off, no limits, every channel open and auto-reload off', async () => {
    const { apiKey } = await createFundedTenant(db.orm);
    const cardId = await cardOf(apiKey);
    expect((await send('GET', apiKey, `/api/v1/cards/${cardId}`)).json().data.jit_funding).toBe(false);
    const security = await send('GET', apiKey, `/api/v1/cards/${cardId}/security-settings`);
    expect(security.statusCode).toBe(200);
    expect(security.json().data).toEqual({
      per_transaction_limit_minor: null,
      daily_limit_minor: null,
      channels: { pos: true, web: true, atm: true },
      blocked_merchant_categories: [],
    });
    const reload = await send('GET', apiKey, `/api/v1/cards/${cardId}/auto-reload`);
    expect(reload.statusCode).toBe(200);
    expect(reload.json().data).toEqual({ enabled: false, threshold_minor: 0, amount_minor: null });
  });

  it('replaces the security settings whole, answers them, and records one event per change', async () => {
    const { apiKey, tenantId } = await createFundedTenant(db.orm);
    const cardId = await cardOf(apiKey);
    const put = await send('PUT', apiKey, `/api/v1/cards/${cardId}/security-settings`, SETTINGS);
    expect(put.statusCode).toBe(200);
    const stored = { ...SETTINGS, blocked_merchant_categories: ['5933', '7995'] };
    expect(put.json().data).toEqual(stored);
    expect((await send('GET', apiKey, `/api/v1/cards/${cardId}/security-settings`)).json().data).toEqual(stored);

    // The same settings again change nothing and record nothing.
    const again = await send('PUT', apiKey, `/api/v1/cards/${cardId}/security-settings`, {
      ...SETTINGS,
      blocked_merchant_categories: ['7995', '5933', '7995'],
    });
    expect(again.json().data).toEqual(stored);

    // A whole replacement: the limits lifted, every channel open, no category blocked.
    const open = {
      per_transaction_limit_minor: null,
      daily_limit_minor: null,
      channels: { pos: true, web: true, atm: true },
      blocked_merchant_categories: [],
    };
    expect((await send('PUT', apiKey, `/api/v1/cards/${cardId}/security-settings`, open)).json().data).toEqual(open);

    const events = await settingsEvents(tenantId);
    expect(events.map((event) => event.payload)).toEqual([
      {
        card_id: cardId,
        security_settings: stored,
        previous: { ...open, channels: { pos: true, web: true, atm: true } },
      },
      { card_id: cardId, security_settings: open, previous: stored },
    ]);
  });

  it('refuses bad settings with 400 naming the field, and changes nothing', async () => {
    const { apiKey } = await createFundedTenant(db.orm);
    const cardId = await cardOf(apiKey);
    const url = `/api/v1/cards/${cardId}/security-settings`;
    const before = await cardRow(cardId);
    const cases: [unknown, string][] = [
      [{ ...SETTINGS, per_transaction_limit_minor: 0 }, 'per_transaction_limit_minor'],
      [{ ...SETTINGS, daily_limit_minor: 10.5 }, 'daily_limit_minor'],
      [{ ...SETTINGS, daily_limit_minor: '1000' }, 'daily_limit_minor'],
      [{ ...SETTINGS, channels: { pos: true, web: 'no', atm: true } }, 'channels.web'],
      [{ ...SETTINGS, channels: undefined }, 'channels'],
      [{ ...SETTINGS, blocked_merchant_categories: ['12a4'] }, 'blocked_merchant_categories[0]'],
      [{ ...SETTINGS, blocked_merchant_categories: ['59330'] }, 'blocked_merchant_categories[0]'],
      [{ ...SETTINGS, surprise: true }, 'surprise'],
    ];
    for (const [body, field] of cases) {
      expectFieldRefused(await send('PUT', apiKey, url, body), field);
    }
    expect(await cardRow(cardId)).toEqual(before);
  });

  it('turns JIT funding on and off with PATCH, and refuses anything else', async () => {
    const { apiKey } = await createFundedTenant(db.orm);
    const cardId = await cardOf(apiKey);
    const on = await send('PATCH', apiKey, `/api/v1/cards/${cardId}`, { jit_funding: true });
    expect(on.statusCode).toBe(200);
    expect(on.json().data).toMatchObject({ id: cardId, jit_funding: true, status: 'active' });
    expect((await send('GET', apiKey, `/api/v1/cards/${cardId}`)).json().data.jit_funding).toBe(true);
    const before = await cardRow(cardId);
    expectFieldRefused(await send('PATCH', apiKey, `/api/v1/cards/${cardId}`, {}), 'jit_funding');
    expectFieldRefused(await send('PATCH', apiKey, `/api/v1/cards/${cardId}`, { jit_funding: 'yes' }), 'jit_funding');
    expectFieldRefused(
      await send('PATCH', apiKey, `/api/v1/cards/${cardId}`, { jit_funding: false, status: 'locked' }),
      'status',
    );
    expect(await cardRow(cardId)).toEqual(before);
    const off = await send('PATCH', apiKey, `/api/v1/cards/${cardId}`, { jit_funding: false });
    expect(off.json().data.jit_funding).toBe(false);
  });

  it('sets and reads auto-reload, refusing amounts outside the funding bounds', async () => {
    const { apiKey } = await createFundedTenant(db.orm);
    const cardId = await cardOf(apiKey);
    const url = `/api/v1/cards/${cardId}/auto-reload`;
    const settings = { enabled: true, threshold_minor: 100_000, amount_minor: 500_000 };
    const put = await send('PUT', apiKey, url, settings);
    expect(put.statusCode).toBe(200);
    expect(put.json().data).toEqual(settings);
    expect((await send('GET', apiKey, url)).json().data).toEqual(settings);
    const before = await cardRow(cardId);
    const cases: [unknown, string][] = [
      [{ ...settings, amount_minor: 99 }, 'amount_minor'],
      [{ ...settings, amount_minor: 1_000_000_001 }, 'amount_minor'],
      [{ ...settings, threshold_minor: -1 }, 'threshold_minor'],
      [{ ...settings, enabled: undefined }, 'enabled'],
      [{ ...settings, extra: 1 }, 'extra'],
    ];
    for (const [body, field] of cases) expectFieldRefused(await send('PUT', apiKey, url, body), field);
    expect(await cardRow(cardId)).toEqual(before);
  });

  it("answers 404 for another tenant's card or an unknown one, and leaves the card as it was", async () => {
    const a = await createFundedTenant(db.orm, 0, 'tenant a');
    const b = await createFundedTenant(db.orm, 0, 'tenant b');
    const cardId = await cardOf(a.apiKey);
    await send('PUT', a.apiKey, `/api/v1/cards/${cardId}/security-settings`, SETTINGS);
    const before = await cardRow(cardId);
    const attempts: [LightMyRequestResponse, string][] = [];
    for (const id of [cardId, '00000000-0000-4000-8000-000000000000', 'not-a-uuid']) {
      attempts.push(
        [await send('GET', b.apiKey, `/api/v1/cards/${id}/security-settings`), id],
        [await send('PUT', b.apiKey, `/api/v1/cards/${id}/security-settings`, SETTINGS), id],
        [await send('GET', b.apiKey, `/api/v1/cards/${id}/auto-reload`), id],
        [
          await send('PUT', b.apiKey, `/api/v1/cards/${id}/auto-reload`, {
            enabled: true,
            threshold_minor: 0,
            amount_minor: 100,
          }),
          id,
        ],
        [await send('PATCH', b.apiKey, `/api/v1/cards/${id}`, { jit_funding: true }), id],
      );
    }
    for (const [response, id] of attempts) {
      expect([response.statusCode, response.json().error.code, id]).toEqual([404, 'NOT_FOUND', id]);
    }
    expect(await cardRow(cardId)).toEqual(before);
  });
});
