// The event catalog (decisions §15) on the real stack, for the card events (event-catalog.test.ts
// makes every other type): one card issued, funded and refused a funding, its security settings
// changed, purchases approved (one funded just in time from the wallet), declined, cleared and
// reversed, locked and unlocked, and auto-reloaded; each recorded payload checked with Ajv against
// the JSON Schema the catalog serves for its type.
import type { FastifyInstance } from 'fastify';
import { describe, expect, it } from 'vitest';
import { auth, issueCard } from '../support/api.ts';
import { createFundedTenant } from '../support/app.ts';
import { CARD_EVENT_TYPES, catalogMisfits, recordedEvents, typesMissing } from '../support/event-catalog.ts';
import { eventually } from '../support/eventually.ts';
import { type GatewayStack, useGatewayStack } from '../support/stack.ts';

const TASK_QUEUE = `event-catalog-cards-${process.pid}`;

let stack: GatewayStack;
let app: FastifyInstance;

useGatewayStack({ taskQueue: TASK_QUEUE }, (started) => {
  stack = started;
  ({ app } = started);
});

const call = (method: 'GET' | 'POST' | 'PUT' | 'PATCH', apiKey: string, url: string, payload?: object) =>
  app.inject({ method, url, headers: auth(apiKey), ...(payload ? { payload } : {}) });

describe("every card event recorded fits its type's catalog schema", () => {
  it('one card through every card event', async () => {
    const tenant = await createFundedTenant(stack.db.orm, 2_000_000, 'catalog cards');
    const key = tenant.apiKey;
    const issued = await issueCard(app, key, 'cus_catalog');
    expect(issued.statusCode).toBe(201);
    const card = `/api/v1/cards/${issued.json().data.id as string}`;
    /** Waits until the card has `count` fundings, none of them pending (any count when not given). */
    const fundings = async (count?: number) =>
      eventually(async () => {
        const items = (await call('GET', key, `${card}/funding/history?limit=100`)).json().data.items as {
          status: string;
        }[];
        return (count === undefined || items.length === count) && items.every((item) => item.status !== 'pending');
      });
    const status = (wanted: string) =>
      eventually(async () => (await call('GET', key, card)).json().data.status === wanted);
    const purchase = async (amountMinor: number, merchantCategory = '5411') => {
      const response = await call('POST', key, `/api/v1/sandbox${card.slice('/api/v1'.length)}/purchases`, {
        amount_minor: amountMinor,
        merchant_name: 'Shoprite Lekki',
        merchant_category: merchantCategory,
        channel: 'pos',
      });
      expect(response.statusCode, response.body).toBe(200);
      return response.json().data as { authorization_id: string; decision: string };
    };

    // Funded, then a funding the wallet cannot cover: card.funded, card.funding_failed.
    expect((await call('POST', key, `${card}/fund`, { amount_minor: 300_000 })).statusCode).toBe(202);
    await fundings(1);
    expect((await call('POST', key, `${card}/fund`, { amount_minor: 5_000_000 })).statusCode).toBe(202);
    await fundings(2);

    const settings = await call('PUT', key, `${card}/security-settings`, {
      per_transaction_limit_minor: 1_000_000,
      daily_limit_minor: null,
      channels: { pos: true, web: true, atm: false },
      blocked_merchant_categories: ['7995'],
    });
    expect(settings.statusCode).toBe(200);

    const cleared = await purchase(50_000);
    const reversed = await purchase(60_000);
    expect([cleared.decision, reversed.decision]).toEqual(['approved', 'approved']);
    expect((await purchase(10_000, '7995')).decision).toBe('declined');
    const authorization = (id: string) => `/api/v1/sandbox/card-authorizations/${id}`;
    expect(
      (await call('POST', key, `${authorization(cleared.authorization_id)}/clear`, { amount_minor: 50_000 }))
        .statusCode,
    ).toBe(202);
    expect((await call('POST', key, `${authorization(reversed.authorization_id)}/reverse`)).statusCode).toBe(202);

    expect((await call('POST', key, `${card}/lock`)).statusCode).toBe(202);
    await status('locked');
    expect((await call('POST', key, `${card}/unlock`)).statusCode).toBe(202);
    await status('active');

    // 250,000 on the card; a purchase of 60,000 takes it below 200,000: one auto-reload of 100,000.
    const reload = await call('PUT', key, `${card}/auto-reload`, {
      enabled: true,
      threshold_minor: 200_000,
      amount_minor: 100_000,
    });
    expect(reload.statusCode).toBe(200);
    expect((await purchase(60_000)).decision).toBe('approved');
    await eventually(async () => (await call('GET', key, `${card}/balance`)).json().data.available_minor === 290_000);
    // Just-in-time funding: the wallet pays what the card lacks, recorded in the decision's one statement.
    expect((await call('PATCH', key, card, { jit_funding: true })).statusCode).toBe(200);
    expect((await purchase(400_000)).decision).toBe('approved');

    await eventually(
      async () => typesMissing(await recordedEvents(stack.db.orm.em.fork()), CARD_EVENT_TYPES).length === 0,
    );
    // The JIT approval took the card below its threshold again: done once that reload is.
    await fundings();
    const events = await recordedEvents(stack.db.orm.em.fork());
    expect(catalogMisfits(events)).toEqual([]);
    // card.funded three ways: a tenant's funding, an auto-reload and a just-in-time funding.
    const funded = events
      .filter((event) => event.type === 'card.funded')
      .map((event) => event.payload as { transaction_reference: string | null; idempotency_key: string | null });
    expect(funded.some((payload) => payload.transaction_reference?.startsWith('authorization:'))).toBe(true);
    expect(funded.some((payload) => payload.idempotency_key?.startsWith('auto-reload:'))).toBe(true);
    expect(funded.length).toBeGreaterThanOrEqual(3);
  }, 120_000);
});
