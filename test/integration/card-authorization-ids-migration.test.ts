// Migration 0021 on a database that the code before it wrote: card authorizations keyed by their
// id alone, journal entries and events under `card-authorization:<id>:…`, voids without a card.
// After it, every row is there, each existing id stays valid for its card (a repeat gets its
// stored decision, its clearing applies once), the same id on another card is a new
// authorization, and `ledger verify` recognises the old keys beside the new ones.
import { randomBytes, randomUUID } from 'node:crypto';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { settleAuthorization } from '../../src/cards/authorizations.ts';
import { decideAuthorization } from '../../src/cards/decision.ts';
import { type MikroORM, migrate } from '../../src/orm.ts';
import { readThrough, verifyLedger } from '../../src/ledger/verify.ts';
import { type TestDatabase, createTestDatabase } from '../support/database.ts';

/** The last migration before 0021 that this test's rows are written for. */
const BEFORE = '0019-virtual-account-bvns';

let db: TestDatabase;
let orm: MikroORM;

const tenant = randomUUID();
const cards = { one: randomUUID(), two: randomUUID() };
const references = {
  one: `crd_legacy_${randomBytes(4).toString('hex')}`,
  two: `crd_legacy_${randomBytes(4).toString('hex')}`,
};

/** What the code before 0021 wrote, written here as it wrote it (schema of 0019, one transaction). */
async function writeLegacyRows(client: pg.Client): Promise<void> {
  const accounts = new Map<string, string>();
  const open = async (code: string, owner: string | null = tenant) => {
    const id = randomUUID();
    await client.query(
      `insert into ledger_accounts (id, tenant_id, code, currency, allow_negative) values ($1, $2, $3, 'NGN', false)`,
      [id, owner, code],
    );
    accounts.set(code, id);
  };
  const system = async (code: string) => {
    const { rows } = await client.query<{ id: string }>(
      'select id from ledger_accounts where tenant_id is null and code = $1',
      [code],
    );
    accounts.set(code, rows[0]!.id);
  };
  const entry = async (key: string, kind: string, postings: [string, number][]) => {
    const id = randomUUID();
    await client.query(
      'insert into journal_entries (id, tenant_id, kind, idempotency_key, description) values ($1, $2, $3, $4, $5)',
      [id, tenant, kind, key, kind],
    );
    for (const [code, amount] of postings) {
      const { rows } = await client.query<{ balance_minor: string }>(
        'update ledger_accounts set balance_minor = balance_minor + $2 where id = $1 returning balance_minor',
        [accounts.get(code), amount],
      );
      await client.query(
        'insert into postings (entry_id, account_id, amount_minor, balance_after_minor) values ($1, $2, $3, $4)',
        [id, accounts.get(code), amount, rows[0]!.balance_minor],
      );
    }
  };
  const authorization = async (
    card: string,
    id: string,
    amount: number,
    state: { decision: 'approved' | 'declined'; status: string; reason?: string; cleared?: number },
  ) => {
    await client.query(
      `insert into card_authorizations (id, tenant_id, card_id, amount_minor, currency, merchant_name, merchant_category,
         channel, decision, reason, status, cleared_minor)
       values ($1, $2, $3, $4, 'NGN', 'Shoprite Lekki', '5411', 'pos', $5, $6, $7, $8)`,
      [id, tenant, card, amount, state.decision, state.reason ?? null, state.status, state.cleared ?? 0],
    );
    await client.query(`insert into events (id, tenant_id, type, source_key, payload) values ($1, $2, $3, $4, $5)`, [
      randomUUID(),
      tenant,
      `card.authorization.${state.decision}`,
      `card-authorization:${id}:decided`,
      { id },
    ]);
    if (state.decision === 'approved') {
      await entry(`card-authorization:${id}:hold`, 'card_authorization_hold', [
        [`card:${card}`, -amount],
        [`card-hold:${card}`, amount],
      ]);
    }
    if (state.status === 'cleared') {
      await entry(`card-authorization:${id}:clear`, 'card_authorization_clear', [
        [`card-hold:${card}`, -amount],
        ['card_settlement', state.cleared!],
        [`card:${card}`, amount - state.cleared!],
      ]);
    }
  };

  await client.query('begin');
  await client.query(`insert into tenants (id, name) values ($1, 'legacy tenant')`, [tenant]);
  await open('wallet');
  await open('in_flight');
  await system('external_funding');
  await system('card_settlement');
  await entry(`wallet-funding:${tenant}:legacy`, 'wallet_funding', [
    ['external_funding', -200_000],
    ['wallet', 200_000],
  ]);
  for (const [key, card] of Object.entries(cards)) {
    await client.query(
      `insert into cards (id, tenant_id, customer_id, status, last4, processor_reference) values ($1, $2, 'cus_legacy', 'active', '4242', $3)`,
      [card, tenant, references[key as keyof typeof references]],
    );
    await open(`card:${card}`);
    await open(`card-hold:${card}`);
    const operation = randomUUID();
    const funding = randomUUID();
    const amount = card === cards.one ? 100_000 : 50_000;
    await client.query(
      `insert into card_operations (id, card_id, action, status, idempotency_key, completed_at) values ($1, $2, 'fund', 'applied', $3, now())`,
      [operation, card, `key:legacy-${card}`],
    );
    await client.query(
      `insert into card_fundings (id, card_id, operation_id, amount_minor, currency, status, idempotency_key, completed_at)
       values ($1, $2, $3, $4, 'NGN', 'succeeded', $5, now())`,
      [funding, card, operation, amount, `legacy-${card}`],
    );
    await entry(`card-funding:${funding}`, 'card_funding', [
      ['wallet', -amount],
      [`card:${card}`, amount],
    ]);
  }
  await authorization(cards.one, 'auth_legacy_pending', 30_000, { decision: 'approved', status: 'pending' });
  await authorization(cards.one, 'auth_legacy_cleared', 20_000, {
    decision: 'approved',
    status: 'cleared',
    cleared: 15_000,
  });
  await authorization(cards.one, 'auth_legacy_declined', 500_000, {
    decision: 'declined',
    status: 'declined',
    reason: 'insufficient_funds',
  });
  await authorization(cards.two, 'auth_legacy_two', 10_000, { decision: 'approved', status: 'pending' });
  // Voids: one whose authorization was decided (on card two), one whose never was.
  await client.query(`insert into card_authorization_voids (id) values ('auth_legacy_two'), ('auth_legacy_void')`);
  await client.query('commit');
}

async function holdOf(card: string): Promise<number> {
  const [row] = await orm.em
    .fork()
    .execute<{ balance_minor: string }[]>(`select balance_minor from ledger_accounts where code = ?`, [
      `card-hold:${card}`,
    ]);
  return Number(row!.balance_minor);
}

const request = (cardReference: string, authorizationId: string, amountMinor: number) => ({
  authorizationId,
  cardReference,
  amountMinor,
  currency: 'NGN',
  merchantName: 'Shoprite Lekki',
  merchantCategory: '5411',
  channel: 'pos' as const,
  modes: ['test'] as const,
});

beforeAll(async () => {
  db = await createTestDatabase(5, { migrateTo: BEFORE });
  orm = db.orm;
  const client = new pg.Client({ connectionString: db.url });
  await client.connect();
  try {
    await writeLegacyRows(client);
  } finally {
    await client.end();
  }
});

afterAll(async () => {
  await db?.drop();
});

describe('migration 0021: card authorization ids per card', () => {
  it('keeps every row, each id valid for its card, and the old journal keys beside the new', async () => {
    const before = await orm.em
      .fork()
      .execute<Record<string, unknown>[]>('select * from card_authorizations order by card_id, id');
    expect(before).toHaveLength(4);
    expect(await migrate(orm)).toContain('0021-card-authorizations-per-card');

    const after = await orm.em
      .fork()
      .execute<Record<string, unknown>[]>('select * from card_authorizations order by card_id, id');
    expect(after).toEqual(before);
    const [key] = await orm.em.fork().execute<{ definition: string }[]>(
      `select pg_get_constraintdef(oid) as definition from pg_constraint
        where conrelid = 'card_authorizations'::regclass and contype = 'p'`,
    );
    expect(key!.definition).toBe('PRIMARY KEY (card_id, id)');
    const voids = await orm.em
      .fork()
      .execute<{ id: string; card_id: string | null }[]>(
        'select id, card_id from card_authorization_voids order by id',
      );
    expect(voids).toEqual([
      { id: 'auth_legacy_two', card_id: cards.two },
      { id: 'auth_legacy_void', card_id: null },
    ]);
    // The books as the old code left them pass every check, old keys recognised.
    let report = await verifyLedger(readThrough(orm.em.fork()));
    expect(report.checks.filter((check) => !check.ok)).toEqual([]);
    expect(report.checks.map((check) => check.name)).toContain('authorizations_match_journal');

    // A repeat of an existing id on its card gets the stored decision, and holds nothing more.
    expect((await decideAuthorization(orm, request(references.one, 'auth_legacy_pending', 30_000))).decision).toEqual({
      authorization_id: 'auth_legacy_pending',
      decision: 'approved',
      reason: null,
    });
    expect((await decideAuthorization(orm, request(references.one, 'auth_legacy_declined', 500_000))).decision).toEqual(
      { authorization_id: 'auth_legacy_declined', decision: 'declined', reason: 'insufficient_funds' },
    );
    expect(await holdOf(cards.one)).toBe(30_000);
    // The same id on the other card is an authorization of its own.
    expect((await decideAuthorization(orm, request(references.two, 'auth_legacy_pending', 5_000))).decision).toEqual({
      authorization_id: 'auth_legacy_pending',
      decision: 'approved',
      reason: null,
    });
    expect(await holdOf(cards.two)).toBe(15_000);
    // A void recorded before the migration named no card: it still voids its id, as it did.
    expect((await decideAuthorization(orm, request(references.one, 'auth_legacy_void', 1_000))).decision).toEqual({
      authorization_id: 'auth_legacy_void',
      decision: 'declined',
      reason: 'timeout',
    });

    // The processor clears the old pending one, naming its card: applied once, under the new key.
    const clear = { kind: 'clear' as const, authorizationId: 'auth_legacy_pending', amountMinor: 25_000 };
    expect(await settleAuthorization(orm.em.fork(), { ...clear, cardReference: references.one })).toBe(
      'cleared: auth_legacy_pending',
    );
    expect(await settleAuthorization(orm.em.fork(), { ...clear, cardReference: references.one })).toBe(
      'refused: authorization auth_legacy_pending is cleared',
    );
    expect(await holdOf(cards.one)).toBe(0);
    expect(await holdOf(cards.two)).toBe(15_000);
    // A message without card_reference (queued before the processor named cards) applies when the
    // id is on one card only, and is refused when it is on several.
    expect(await settleAuthorization(orm.em.fork(), { kind: 'reverse', authorizationId: 'auth_legacy_two' })).toBe(
      'reversed: auth_legacy_two',
    );
    expect(await settleAuthorization(orm.em.fork(), { kind: 'reverse', authorizationId: 'auth_legacy_pending' })).toBe(
      'refused: authorization auth_legacy_pending is on 2 cards and the message names none',
    );
    expect(await holdOf(cards.two)).toBe(5_000);

    const keys = await orm.em
      .fork()
      .execute<{ idempotency_key: string }[]>(
        `select idempotency_key from journal_entries where kind like 'card_authorization_%' order by created_at, idempotency_key`,
      );
    expect(keys.map((row) => row.idempotency_key)).toEqual([
      'card-authorization:auth_legacy_cleared:clear',
      'card-authorization:auth_legacy_cleared:hold',
      'card-authorization:auth_legacy_pending:hold',
      'card-authorization:auth_legacy_two:hold',
      `card:${cards.two}:authorization:auth_legacy_pending:hold`,
      `card:${cards.one}:authorization:auth_legacy_pending:clear`,
      `card:${cards.two}:authorization:auth_legacy_two:release`,
    ]);
    report = await verifyLedger(readThrough(orm.em.fork()));
    expect(report.checks.filter((check) => !check.ok)).toEqual([]);

    // The check is no formality: an approved, reversed authorization with no journal behind it on
    // its card (the old-form keys of the same id on the other card do not count) is named.
    await orm.em.fork().execute(
      `insert into card_authorizations (id, tenant_id, card_id, amount_minor, currency, merchant_name, merchant_category,
         channel, decision, status)
       values ('auth_legacy_cleared', ?, ?, 20000, 'NGN', 'Forged', '5411', 'pos', 'approved', 'reversed')`,
      [tenant, cards.two],
    );
    report = await verifyLedger(readThrough(orm.em.fork()));
    expect(report.checks.filter((check) => !check.ok).map((check) => [check.name, check.examples])).toEqual([
      [
        'authorizations_match_journal',
        [
          expect.objectContaining({
            card_id: cards.two,
            authorization_id: 'auth_legacy_cleared',
            holds: 0,
            releases: 0,
          }),
        ],
      ],
    ]);
  });
});
