// The ledger's two writers give the same books. The card decision posts its movements on accounts
// it already holds locked (lockTenantAccounts → planEntriesOnLockedAccounts → postPlanSteps, run
// as one statement by src/db/write-statement.ts); every other movement goes through
// postMovement/postEntry. For the same movements on the same balances, each in its own database,
// both must write the same postings (account, amount, balance after; entry kind, key and
// description) and leave the same balances, to the kobo, and refuse the same shortfall alike: the
// same error type and code, the same amounts, and nothing moved.
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { executeNumbered, inPooledTransaction } from '../../src/db/numbered-sql.ts';
import { writePart } from '../../src/db/write-statement.ts';
import {
  InsufficientFundsError,
  type LockedAccount,
  cardAccountCode,
  cardHoldAccountCode,
  lockTenantAccounts,
  openCardAccount,
  planEntriesOnLockedAccounts,
  postMovement,
  postPlanSteps,
} from '../../src/ledger/ledger.ts';
import { type Movement, cardAuthorizationHold, cardFunding } from '../../src/ledger/movements.ts';
import { createFundedTenant } from '../support/app.ts';
import { type TestDatabase, createTestDatabase } from '../support/database.ts';

let viaPostEntry: TestDatabase;
let viaPlan: TestDatabase;

beforeAll(async () => {
  [viaPostEntry, viaPlan] = await Promise.all([createTestDatabase(5), createTestDatabase(5)]);
});
afterAll(async () => {
  await Promise.all([viaPostEntry?.drop(), viaPlan?.drop()]);
});

const cardCodes = (cardId: string) => [cardAccountCode(cardId), cardHoldAccountCode(cardId)];

/** A movement batch posted through postMovement, in one transaction (a refusal keeps none of it). */
async function postWithPostEntry(db: TestDatabase, tenantId: string, _cardId: string, movements: Movement[]) {
  await db.orm.em.fork().transactional(async (tx) => {
    for (const movement of movements) await postMovement(tx, tenantId, movement);
  });
}

/**
 * The same batch as the card decision posts it: accounts locked, planned, written in one statement
 * sent with the commit.
 * `tamper` changes what the plan is worked out on (a plan the statement itself must refuse).
 */
async function postWithPlan(
  db: TestDatabase,
  tenantId: string,
  cardId: string,
  movements: Movement[],
  tamper: (locked: Map<string, LockedAccount>) => void = () => {},
) {
  await inPooledTransaction(db.orm, async (client, _em, _opened, commitWith) => {
    const locked = await lockTenantAccounts(client, {
      tenantId,
      currency: 'NGN',
      codes: [...cardCodes(cardId), 'wallet'],
    });
    tamper(locked);
    // Sent with the commit, as the decision sends it: a count PostgreSQL refuses stops the commit.
    await commitWith([
      writePart(
        'ledger-parity-write',
        'parity',
        postPlanSteps(tenantId, planEntriesOnLockedAccounts(movements, locked)),
      ),
    ]);
  });
}

const writers = [
  { name: 'postEntry', db: () => viaPostEntry, post: postWithPostEntry },
  { name: 'plan', db: () => viaPlan, post: postWithPlan },
];

/** The card's entries (every field but ids and times) and the tenant's balances, by account code. */
async function books(db: TestDatabase, tenantId: string) {
  const em = db.orm.em.fork();
  const postings = await em.execute<
    { kind: string; key: string; description: string; account: string; amount: string; balance_after: string }[]
  >(
    `select e.kind, e.idempotency_key as key, e.description, a.code as account,
            p.amount_minor::text as amount, p.balance_after_minor::text as balance_after
       from postings p join journal_entries e on e.id = p.entry_id join ledger_accounts a on a.id = p.account_id
      where e.tenant_id = ? and e.kind like 'card%'
      order by e.idempotency_key collate "C", a.code collate "C"`,
    [tenantId],
  );
  const balances = await em.execute<{ code: string; balance: string }[]>(
    `select code, balance_minor::text as balance from ledger_accounts where tenant_id = ? order by code collate "C"`,
    [tenantId],
  );
  return { postings, balances: Object.fromEntries(balances.map((row) => [row.code, Number(row.balance)])) };
}

/** A refusal as both writers must give it: type, code, amounts, and the account by its code. */
async function refusalOf(db: TestDatabase, error: unknown) {
  if (!(error instanceof InsufficientFundsError)) throw error;
  const [account] = await db.orm.em
    .fork()
    .execute<{ code: string }[]>('select code from ledger_accounts where id = ?', [error.accountId]);
  return {
    type: error.constructor.name,
    code: error.code,
    account: account!.code,
    requiredMinor: error.requiredMinor,
    availableMinor: error.availableMinor,
  };
}

/** A tenant with `walletMinor` in its wallet, and the card's accounts opened as production opens them. */
async function tenantWithCard(db: TestDatabase, walletMinor: number, cardId: string): Promise<string> {
  const { tenantId } = await createFundedTenant(db.orm, walletMinor);
  await db.orm.em.fork().transactional((tx) => openCardAccount(tx, tenantId, cardId));
  // The hold account as the card's first authorization opens it.
  await inPooledTransaction(db.orm, (client) =>
    lockTenantAccounts(client, {
      tenantId,
      currency: 'NGN',
      codes: cardCodes(cardId),
      openMissing: [cardHoldAccountCode(cardId)],
    }),
  );
  return tenantId;
}

/**
 * The same tenant (funded with `walletMinor`) and card on each writer's database, then each batch of
 * `batches` posted by that writer: its books and its refusals (null for a batch posted). `batches`
 * is called once per writer, with the card and `id`, which gives both writers the same id for a name.
 */
async function onBothWriters(
  walletMinor: number,
  batches: (cardId: string, id: (name: string) => string) => Movement[][],
) {
  const cardId = randomUUID();
  const ids = new Map<string, string>();
  const id = (name: string) => ids.get(name) ?? ids.set(name, randomUUID()).get(name)!;
  const outcomes: Record<string, Awaited<ReturnType<typeof books>> & { refusals: unknown[] }> = {};
  for (const writer of writers) {
    const db = writer.db();
    const tenantId = await tenantWithCard(db, walletMinor, cardId);
    const refusals: unknown[] = [];
    for (const batch of batches(cardId, id)) {
      refusals.push(
        await writer.post(db, tenantId, cardId, batch).then(
          () => null,
          (error: unknown) => refusalOf(db, error),
        ),
      );
    }
    outcomes[writer.name] = { ...(await books(db, tenantId)), refusals };
  }
  expect(outcomes.plan).toEqual(outcomes.postEntry);
  return { cardId, id, ...outcomes.postEntry! };
}

/** A refusal as both writers must give it for a posting of `requiredMinor` on an account holding `availableMinor`. */
const shortfall = (account: string, requiredMinor: number, availableMinor: number) => ({
  type: 'InsufficientFundsError',
  code: 'insufficient_balance',
  account,
  requiredMinor,
  availableMinor,
});

/** The tenant's balances by account code: no transfer ever moves `in_flight` here. */
const balancesOf = (cardId: string, minor: { card: number; hold: number; wallet: number }) => ({
  [`card:${cardId}`]: minor.card,
  [`card-hold:${cardId}`]: minor.hold,
  in_flight: 0,
  wallet: minor.wallet,
});

const funding = (cardId: string, fundingId: string, amountMinor: number) =>
  cardFunding({ fundingId, cardId, amountMinor });
const hold = (cardId: string, authorizationId: string, amountMinor: number) =>
  cardAuthorizationHold({ authorizationId, cardId, amountMinor });

describe('the locked-account plan writer and postEntry', () => {
  it('write the same postings and balances for a card funding', async () => {
    const { cardId, postings, balances, refusals, id } = await onBothWriters(10_000, (card, id) => [
      [funding(card, id('funding'), 4_000)],
    ]);
    const fundingId = id('funding');
    expect(refusals).toEqual([null]);
    const entry = {
      kind: 'card_funding',
      key: `card-funding:${fundingId}`,
      description: `JIT funding of card ${cardId}`,
    };
    expect(postings).toEqual([
      { ...entry, account: `card:${cardId}`, amount: '4000', balance_after: '4000' },
      { ...entry, account: 'wallet', amount: '-4000', balance_after: '6000' },
    ]);
    expect(balances).toEqual(balancesOf(cardId, { card: 4_000, hold: 0, wallet: 6_000 }));
  });

  it('write the same postings and balances for an authorization hold', async () => {
    const { cardId, postings, balances, refusals } = await onBothWriters(10_000, (card, id) => [
      [funding(card, id('setup'), 5_000)],
      [hold(card, 'auth_parity_hold', 3_000)],
    ]);
    expect(refusals).toEqual([null, null]);
    const entry = {
      kind: 'card_authorization_hold',
      key: `card:${cardId}:authorization:auth_parity_hold:hold`,
      description: 'hold for authorization auth_parity_hold',
    };
    expect(postings.filter((posting) => posting.kind === 'card_authorization_hold')).toEqual([
      { ...entry, account: `card-hold:${cardId}`, amount: '3000', balance_after: '3000' },
      { ...entry, account: `card:${cardId}`, amount: '-3000', balance_after: '2000' },
    ]);
    expect(balances).toEqual(balancesOf(cardId, { card: 2_000, hold: 3_000, wallet: 5_000 }));
  });

  it('write the same postings and balances for a JIT funding and a hold in one plan, as a decision does', async () => {
    const { cardId, postings, balances, refusals, id } = await onBothWriters(10_000, (card, id) => [
      [funding(card, id('setup'), 1_000)],
      [funding(card, id('jit'), 2_500), hold(card, 'auth_parity_jit', 3_500)],
    ]);
    const jitId = id('jit');
    expect(refusals).toEqual([null, null]);
    expect(
      postings
        .filter((posting) => posting.key.includes(jitId) || posting.key.includes('auth_parity_jit'))
        .map(({ key, account, amount, balance_after }) => [key, account, amount, balance_after]),
    ).toEqual([
      [`card-funding:${jitId}`, `card:${cardId}`, '2500', '3500'],
      [`card-funding:${jitId}`, 'wallet', '-2500', '6500'],
      [`card:${cardId}:authorization:auth_parity_jit:hold`, `card-hold:${cardId}`, '3500', '3500'],
      [`card:${cardId}:authorization:auth_parity_jit:hold`, `card:${cardId}`, '-3500', '0'],
    ]);
    expect(balances).toEqual(balancesOf(cardId, { card: 0, hold: 3_500, wallet: 6_500 }));
  });

  it('refuse a hold one kobo beyond the card alike, and move nothing', async () => {
    const { cardId, postings, balances, refusals } = await onBothWriters(10_000, (card, id) => [
      [funding(card, id('setup'), 1_000)],
      [hold(card, 'auth_parity_short', 1_001)],
    ]);
    expect(refusals).toEqual([null, shortfall(`card:${cardId}`, 1_001, 1_000)]);
    expect(postings.map((posting) => posting.kind)).toEqual(['card_funding', 'card_funding']);
    expect(balances).toEqual(balancesOf(cardId, { card: 1_000, hold: 0, wallet: 9_000 }));
  });

  it('refuse alike a plan whose second movement falls short after its first, and keep neither', async () => {
    const { cardId, postings, balances, refusals } = await onBothWriters(10_000, (card, id) => [
      [funding(card, id('funding'), 2_000), hold(card, 'auth_parity_mix', 2_001)],
    ]);
    expect(refusals).toEqual([shortfall(`card:${cardId}`, 2_001, 2_000)]);
    expect(postings).toEqual([]);
    expect(balances).toEqual(balancesOf(cardId, { card: 0, hold: 0, wallet: 10_000 }));
  });

  it('refuse alike a JIT funding beyond the wallet', async () => {
    const { balances, refusals, cardId } = await onBothWriters(2_000, (card, id) => [
      [funding(card, id('funding'), 2_001), hold(card, 'auth_parity_wallet', 2_001)],
    ]);
    expect(refusals).toEqual([shortfall('wallet', 2_001, 2_000)]);
    expect(balances).toEqual(balancesOf(cardId, { card: 0, hold: 0, wallet: 2_000 }));
  });
});

describe('a numbered statement through the ORM (how the events insert and account opening serve ORM callers)', () => {
  it('hands PostgreSQL every value as given, arrays of awkward text and JSON included', async () => {
    const texts = ['plain', 'a "quoted" word', 'back\\slash', "it's", 'comma, brace {x}', 'NULL', 'naira ₦', null];
    const payload = { merchant: 'Mama "Put" \\ Kitchen', note: "it's {a,b}", amount: 12_345 };
    const [row] = await executeNumbered<{ texts: (string | null)[]; payloads: unknown[]; again: string }[]>(
      viaPlan.orm.em.fork(),
      'select $1::text[] as texts, $2::jsonb[] as payloads, $3::text as again, $3::text as "twice"',
      [texts, [JSON.stringify(payload)], 'x'],
    );
    expect(row).toEqual({ texts, payloads: [payload], again: 'x', twice: 'x' });
  });
});

describe("the plan writer's statement", () => {
  async function cardWithBalance(cardMinor: number) {
    const cardId = randomUUID();
    const tenantId = await tenantWithCard(viaPlan, 10_000, cardId);
    await postWithPlan(viaPlan, tenantId, cardId, [funding(cardId, randomUUID(), cardMinor)]);
    return { tenantId, cardId };
  }

  it('moves no account whose balance is not the one the plan was worked out on, and keeps nothing', async () => {
    const { tenantId, cardId } = await cardWithBalance(1_000);
    const before = await books(viaPlan, tenantId);
    const stale = postWithPlan(viaPlan, tenantId, cardId, [hold(cardId, 'auth_stale', 500)], (locked) => {
      locked.get(cardAccountCode(cardId))!.balanceMinor = 1_500;
    });
    await expect(stale).rejects.toThrow('parity: wrote 1 moved, expected 2');
    expect(await books(viaPlan, tenantId)).toEqual(before);
  });

  it("refuses by postEntry's own guard an account going below zero that a plan said may", async () => {
    const { tenantId, cardId } = await cardWithBalance(1_000);
    const before = await books(viaPlan, tenantId);
    const overdraw = postWithPlan(viaPlan, tenantId, cardId, [hold(cardId, 'auth_guard', 1_001)], (locked) => {
      locked.get(cardAccountCode(cardId))!.allowNegative = true;
    });
    await expect(overdraw).rejects.toThrow('parity: wrote 1 moved, expected 2');
    expect(await books(viaPlan, tenantId)).toEqual(before);
    expect(before.balances[cardAccountCode(cardId)]).toBe(1_000);
  });
});
