// `gateway trigger <event-type>` (sandbox keys): makes, through the API as any integration would,
// the objects whose life produces that event, using the sandbox's magic values (docs/sandbox.md):
// a transfer to 1111111111 fails, a purchase on a card with no money is declined, and so on. The
// event then reaches the tenant's endpoints and streams like any other: it is real, not a sample
// (for a sample delivered to one endpoint, POST /api/v1/webhook-endpoints/{id}/test).
import { randomUUID } from 'node:crypto';
import { type GatewayClient, type GatewayResult, unwrap } from '../index.ts';

type Step = (client: GatewayClient) => Promise<Record<string, unknown>>;

const tag = () => `trigger-${randomUUID().slice(0, 8)}`;

function transfer(account: string): Step {
  return async (client) => {
    const reference = tag();
    const created = unwrap(
      await client.POST('/api/v1/transfers', {
        body: {
          amount_minor: 10_000,
          recipient_account: account,
          recipient_bank_code: '058',
          narration: 'gateway trigger',
          reference,
        },
      }),
    );
    return { transfer_id: created.data.id, reference };
  };
}

async function virtualAccount(client: GatewayClient) {
  const account = unwrap(
    await client.POST('/api/v1/virtual-accounts', { body: { customer_id: tag(), account_name: 'Trigger Customer' } }),
  );
  return account.data;
}

async function card(client: GatewayClient) {
  return unwrap(await client.POST('/api/v1/cards', { body: { customer_id: tag() } })).data;
}

/** Waits (up to 20 s) until `check` says the change an event stands for has happened. */
async function until<T>(what: string, check: () => Promise<T | undefined>): Promise<T> {
  const deadline = Date.now() + 20_000;
  for (;;) {
    const value = await check();
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error(`${what} did not happen within 20 s`);
    await new Promise((resolve) => setTimeout(resolve, 250));
  }
}

async function lockedCard(client: GatewayClient) {
  const issued = await card(client);
  unwrap(await client.POST('/api/v1/cards/{card_id}/lock', { params: { path: { card_id: issued.id } }, body: {} }));
  await until('the lock', async () => {
    const now = unwrap(await client.GET('/api/v1/cards/{card_id}', { params: { path: { card_id: issued.id } } }));
    return now.data.status === 'locked' ? true : undefined;
  });
  return issued;
}

/** A card with ₦500 on it, the funding applied. */
async function fundedCard(client: GatewayClient) {
  const issued = await card(client);
  unwrap(
    await client.POST('/api/v1/cards/{card_id}/fund', {
      params: { path: { card_id: issued.id } },
      body: { amount_minor: 50_000 },
    }),
  );
  await until('the funding', async () => {
    const balance = unwrap(
      await client.GET('/api/v1/cards/{card_id}/balance', { params: { path: { card_id: issued.id } } }),
    );
    return balance.data.available_minor >= 50_000 ? true : undefined;
  });
  return issued;
}

async function purchase(client: GatewayClient, cardId: string, amountMinor: number) {
  return unwrap(
    await client.POST('/api/v1/sandbox/cards/{card_id}/purchases', {
      params: { path: { card_id: cardId } },
      body: { amount_minor: amountMinor, merchant_name: 'TRIGGER STORES', merchant_category: '5411', channel: 'pos' },
    }),
  ).data;
}

async function customer(client: GatewayClient) {
  return unwrap(
    await client.POST('/api/v1/identity/customers', {
      body: { external_reference: tag(), first_name: 'Ada', last_name: 'Obi' },
    }),
  ).data;
}

function bvnVerification(bvn: string): Step {
  return async (client) => {
    const created = await customer(client);
    const result: GatewayResult<unknown> = await client.POST('/api/v1/identity/customers/{id}/bvn-verification', {
      params: { path: { id: created.id } },
      body: { bvn },
    });
    unwrap(result);
    return { customer_id: created.id };
  };
}

/** Every event type `trigger` can make happen, and how. */
export const TRIGGERS: Record<string, Step> = {
  'transfer.created': transfer('0123456789'),
  'transfer.settled': transfer('0123456789'),
  'transfer.failed': transfer('1111111111'),
  // Paid out, then reversed by the sandbox bank about 2 s later (decisions §21).
  'transfer.reversed': transfer('5555555555'),
  'transfer_batch.completed': async (client) => {
    const batchReference = tag();
    const created = unwrap(
      await client.POST('/api/v1/transfers/bulk', {
        body: {
          batch_reference: batchReference,
          transfers: [0, 1].map((i) => ({
            amount_minor: 10_000 + i,
            recipient_account: '0123456789',
            recipient_bank_code: '058',
            narration: 'gateway trigger',
          })),
        },
      }),
    );
    return { batch_id: created.data.id, batch_reference: batchReference };
  },
  'virtual_account.created': async (client) => ({ virtual_account_id: (await virtualAccount(client)).id }),
  'virtual_account.credited': async (client) => {
    const account = await virtualAccount(client);
    unwrap(
      await client.POST('/api/v1/sandbox/virtual-accounts/{id}/credits', {
        params: { path: { id: account.id } },
        body: { amount_minor: 10_000, sender_name: 'TRIGGER SENDER' },
      }),
    );
    return { virtual_account_id: account.id };
  },
  'virtual_account.closed': async (client) => {
    const account = await virtualAccount(client);
    unwrap(
      await client.POST('/api/v1/virtual-accounts/{id}/close', { params: { path: { id: account.id } }, body: {} }),
    );
    return { virtual_account_id: account.id };
  },
  'card.created': async (client) => ({ card_id: (await card(client)).id }),
  'card.locked': async (client) => ({ card_id: (await lockedCard(client)).id }),
  'card.unlocked': async (client) => {
    const locked = await lockedCard(client);
    unwrap(await client.POST('/api/v1/cards/{card_id}/unlock', { params: { path: { card_id: locked.id } } }));
    return { card_id: locked.id };
  },
  'card.funded': async (client) => ({ card_id: (await fundedCard(client)).id }),
  'card.authorization.approved': async (client) => {
    const funded = await fundedCard(client);
    return { card_id: funded.id, ...(await purchase(client, funded.id, 10_000)) };
  },
  'card.authorization.declined': async (client) => {
    const empty = await card(client);
    return { card_id: empty.id, ...(await purchase(client, empty.id, 10_000)) };
  },
  'identity.customer.created': async (client) => ({ customer_id: (await customer(client)).id }),
  'identity.customer.verified': bvnVerification('22222222222'),
  'identity.customer.verification_failed': bvnVerification('00000000000'),
};
