// The double-entry journal against a real PostgreSQL: no overdraft under concurrency, idempotent
// entries, and a database that refuses unbalanced or edited history on its own.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  InsufficientFundsError,
  LedgerConflictError,
  lockAccountsOf,
  postEntry,
  postingsTotal,
  systemAccountId,
  tenantAccountId,
  walletBalance,
} from '../../src/ledger/ledger.ts';
import { lockTenant } from '../../src/tenants/tenants.ts';
import { createFundedTenant } from '../support/app.ts';
import { eventually } from '../support/eventually.ts';
import { type TestDatabase, createTestDatabase } from '../support/database.ts';

let db: TestDatabase;

beforeAll(async () => {
  db = await createTestDatabase(60);
});
afterAll(async () => {
  await db?.drop();
});

async function debit(tenantId: string, key: string, amountMinor: number) {
  const em = db.orm.em.fork();
  return postEntry(em, {
    idempotencyKey: key,
    kind: 'test_debit',
    tenantId,
    postings: [
      { accountId: await tenantAccountId(em, tenantId, 'wallet'), amountMinor: -amountMinor },
      { accountId: await tenantAccountId(em, tenantId, 'in_flight'), amountMinor },
    ],
  });
}

/** Whether a session of this database waits on a lock (a row lock another transaction holds). */
async function someoneWaitsOnALock(): Promise<boolean> {
  const [row] = await db.orm.em
    .fork()
    .execute<{ waiting: string }[]>(
      `select count(*)::text as waiting from pg_stat_activity where datname = current_database() and wait_event_type = 'Lock'`,
    );
  return row?.waiting !== '0';
}

describe('ledger', () => {
  it('lets exactly 20 of 50 concurrent debits through a wallet that can pay for 20', async () => {
    const { tenantId } = await createFundedTenant(db.orm, 20 * 252_500);
    const results = await Promise.allSettled(
      Array.from({ length: 50 }, (_, i) => debit(tenantId, `concurrency:${tenantId}:${i}`, 252_500)),
    );
    const succeeded = results.filter((result) => result.status === 'fulfilled');
    const refused = results.filter((result) => result.status === 'rejected');
    expect(succeeded).toHaveLength(20);
    expect(refused).toHaveLength(30);
    for (const result of refused) expect(result.reason).toBeInstanceOf(InsufficientFundsError);

    const balance = await walletBalance(db.orm.em.fork(), tenantId);
    expect(balance.availableMinor).toBe(0);
    expect(balance.pendingMinor).toBe(5_050_000);
    expect(await postingsTotal(db.orm.em.fork())).toBe(0);
    const [row] = await db.orm.em
      .fork()
      .execute<{ count: string }[]>(
        `select count(*) from journal_entries where kind = 'test_debit' and tenant_id = ?`,
        [tenantId],
      );
    expect(Number(row?.count)).toBe(20);
  });

  it('reports the shortfall of a refused debit and moves nothing', async () => {
    const { tenantId } = await createFundedTenant(db.orm, 99_999);
    const error = await debit(tenantId, `short:${tenantId}`, 100_000).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(InsufficientFundsError);
    expect((error as InsufficientFundsError).code).toBe('insufficient_balance');
    expect((error as InsufficientFundsError).requiredMinor).toBe(100_000);
    expect((error as InsufficientFundsError).availableMinor).toBe(99_999);
    const balance = await walletBalance(db.orm.em.fork(), tenantId);
    expect(balance).toMatchObject({ availableMinor: 99_999, pendingMinor: 0 });
  });

  it('applies an entry once however often it is posted, also concurrently', async () => {
    const { tenantId } = await createFundedTenant(db.orm, 1_000_000);
    const key = `idempotent:${tenantId}`;
    const results = await Promise.all(Array.from({ length: 5 }, () => debit(tenantId, key, 250_000)));
    expect(results.filter((result) => result.created)).toHaveLength(1);
    expect(new Set(results.map((result) => result.entryId)).size).toBe(1);
    const balance = await walletBalance(db.orm.em.fork(), tenantId);
    expect(balance).toMatchObject({ availableMinor: 750_000, pendingMinor: 250_000 });
  });

  // Found by test/property/ledger-concurrency.test.ts: a debit whose conditional update ran while a
  // credit to the wallet was committing was refused with the balance read after it, e.g. "1,100
  // required, 1,493,759 available". Now it waits for the credit under the row lock and goes through.
  it('lets a debit wait for a credit committing on the same wallet, then apply it', async () => {
    const { tenantId } = await createFundedTenant(db.orm, 0);
    let release!: () => void;
    const held = new Promise<void>((resolve) => (release = resolve));
    let credited!: () => void;
    const applied = new Promise<void>((resolve) => (credited = resolve));
    const credit = db.orm.em.fork().transactional(async (tx) => {
      await postEntry(tx, {
        idempotencyKey: `credit-in-flight:${tenantId}`,
        kind: 'test_credit',
        tenantId,
        postings: [
          { accountId: await systemAccountId(tx, 'external_funding'), amountMinor: -10_000 },
          { accountId: await tenantAccountId(tx, tenantId, 'wallet'), amountMinor: 10_000 },
        ],
      });
      credited();
      await held;
    });
    await applied;
    let outcome: string | undefined;
    const debited = debit(tenantId, `after-credit:${tenantId}`, 1_100).then(
      (posted) => (outcome = `created ${posted.created}`),
      (error: unknown) => (outcome = String(error)),
    );
    // The debit is waiting on the wallet's row lock (or has already answered, which is the defect).
    await eventually(async () => outcome !== undefined || (await someoneWaitsOnALock()), 10_000, 20);
    release();
    await credit;
    await debited;
    expect(outcome).toBe('created true');
    expect(await walletBalance(db.orm.em.fork(), tenantId)).toMatchObject({
      availableMinor: 8_900,
      pendingMinor: 1_100,
    });
  });

  it('lets a settlement that holds its accounts write its entry beside a reservation that holds the tenant', async () => {
    const { tenantId } = await createFundedTenant(db.orm, 10_000);
    const em = db.orm.em.fork();
    const wallet = await tenantAccountId(em, tenantId, 'wallet');
    const inFlight = await tenantAccountId(em, tenantId, 'in_flight');
    const move = (key: string, amountMinor: number) => ({
      idempotencyKey: `${key}:${tenantId}`,
      kind: 'test_debit',
      tenantId,
      postings: [
        { accountId: wallet, amountMinor: -amountMinor },
        { accountId: inFlight, amountMinor },
      ],
    });
    let accountsHeld!: () => void;
    const held = new Promise<void>((resolve) => (accountsHeld = resolve));
    let goOn!: () => void;
    const proceed = new Promise<void>((resolve) => (goOn = resolve));
    // The settlement takes its accounts first (as a group's finish does), then writes its entry,
    // which names the tenant by foreign key.
    const settlement = db.orm.em.fork().transactional(async (tx) => {
      await lockAccountsOf(tx, [tenantId], ['wallet', 'in_flight'], []);
      accountsHeld();
      await proceed;
      await postEntry(tx, move('settle', 500));
    });
    await held;
    // The reservation takes the tenant's lock, then waits on those accounts.
    const reservation = db.orm.em.fork().transactional(async (tx) => {
      await lockTenant(tx, tenantId);
      await postEntry(tx, move('reserve', 1_000));
    });
    await eventually(someoneWaitsOnALock, 10_000, 20);
    goOn();
    const outcomes = await Promise.allSettled([settlement, reservation]);
    expect(outcomes.map((outcome) => (outcome.status === 'rejected' ? String(outcome.reason) : 'done'))).toEqual([
      'done',
      'done',
    ]);
    expect(await walletBalance(db.orm.em.fork(), tenantId)).toMatchObject({
      availableMinor: 8_500,
      pendingMinor: 1_500,
    });
  });

  it('refuses a repeated key with different postings', async () => {
    const { tenantId } = await createFundedTenant(db.orm, 1_000_000);
    await debit(tenantId, `conflict:${tenantId}`, 1_000);
    await expect(debit(tenantId, `conflict:${tenantId}`, 2_000)).rejects.toBeInstanceOf(LedgerConflictError);
    expect((await walletBalance(db.orm.em.fork(), tenantId)).availableMinor).toBe(999_000);
  });

  it('refuses an unbalanced entry before touching the database', async () => {
    const { tenantId } = await createFundedTenant(db.orm, 10_000);
    const em = db.orm.em.fork();
    await expect(
      postEntry(em, {
        idempotencyKey: `unbalanced:${tenantId}`,
        kind: 'test',
        tenantId,
        postings: [
          { accountId: await tenantAccountId(em, tenantId, 'wallet'), amountMinor: -10_000 },
          { accountId: await systemAccountId(em, 'fee_revenue'), amountMinor: 9_999 },
        ],
      }),
    ).rejects.toThrow(/sum to -1/);
  });

  it('has the database refuse an unbalanced entry written around the service, at its insert', async () => {
    const { tenantId } = await createFundedTenant(db.orm, 10_000);
    const em = db.orm.em.fork();
    const wallet = await tenantAccountId(em, tenantId, 'wallet');
    await expect(
      em.transactional(async (tx) => {
        await tx.execute(
          `insert into journal_entries (id, tenant_id, kind, idempotency_key) values (gen_random_uuid(), ?, 'rogue', ?)`,
          [tenantId, `rogue:${tenantId}`],
        );
        await tx.execute(
          `insert into postings (entry_id, account_id, amount_minor, balance_after_minor)
             select id, ?, 500, 0 from journal_entries where idempotency_key = ?`,
          [wallet, `rogue:${tenantId}`],
        );
      }),
    ).rejects.toThrow(/does not balance/);
    expect(await postingsTotal(db.orm.em.fork())).toBe(0);
  });

  it('has the database judge each entry by what one insert wrote: split over two inserts, or one posting added, it is refused', async () => {
    const { tenantId } = await createFundedTenant(db.orm, 10_000);
    const em = db.orm.em.fork();
    const wallet = await tenantAccountId(em, tenantId, 'wallet');
    const fees = await systemAccountId(em, 'fee_revenue');
    const insert = (tx: typeof em, key: string, lines: [string, number][]) =>
      tx.execute(
        `insert into postings (entry_id, account_id, amount_minor, balance_after_minor)
           select e.id, l.account, l.amount, 0 from journal_entries e,
                  unnest(?::uuid[], ?::bigint[]) as l (account, amount) where e.idempotency_key = ?`,
        [`{${lines.map(([account]) => account).join(',')}}`, `{${lines.map(([, amount]) => amount).join(',')}}`, key],
      );
    const entry = (tx: typeof em, key: string) =>
      tx.execute(
        `insert into journal_entries (id, tenant_id, kind, idempotency_key) values (gen_random_uuid(), ?, 'rogue', ?)`,
        [tenantId, key],
      );
    // Its two halves in two inserts: the first, alone unbalanced, is refused.
    await expect(
      em.transactional(async (tx) => {
        await entry(tx, `split:${tenantId}`);
        await insert(tx, `split:${tenantId}`, [[wallet, -700]]);
        await insert(tx, `split:${tenantId}`, [[fees, 700]]);
      }),
    ).rejects.toThrow(/journal entry .* does not balance \(sum -700, 1 postings\)/);
    // A balanced entry, then one posting more on it: refused; a balanced pair more on it is balanced still.
    await em.transactional(async (tx) => {
      await entry(tx, `grown:${tenantId}`);
      await insert(tx, `grown:${tenantId}`, [
        [wallet, -300],
        [fees, 300],
      ]);
    });
    await expect(insert(em, `grown:${tenantId}`, [[fees, 5]])).rejects.toThrow(
      /does not balance \(sum 5, 1 postings\)/,
    );
    await insert(em, `grown:${tenantId}`, [
      [wallet, -20],
      [fees, 20],
    ]);
    const lines = await em.execute<{ amount_minor: string }[]>(
      `select p.amount_minor::text from postings p join journal_entries e on e.id = p.entry_id
        where e.idempotency_key = ? order by p.id`,
      [`grown:${tenantId}`],
    );
    expect(lines.map((line) => Number(line.amount_minor))).toEqual([-300, 300, -20, 20]);
    const split = await em.execute(`select 1 from journal_entries where idempotency_key = ?`, [`split:${tenantId}`]);
    expect(split).toHaveLength(0);
  });

  it('keeps posted history append-only', async () => {
    const { tenantId } = await createFundedTenant(db.orm, 10_000);
    const em = db.orm.em.fork();
    await expect(
      em.execute('update postings set amount_minor = amount_minor * 2 where id = (select min(id) from postings)'),
    ).rejects.toThrow(/append-only/);
    await expect(em.execute('delete from journal_entries where tenant_id = ?', [tenantId])).rejects.toThrow(
      /append-only/,
    );
  });

  it('never lets a wallet row go negative, even written directly', async () => {
    const { tenantId } = await createFundedTenant(db.orm, 10_000);
    const em = db.orm.em.fork();
    await expect(
      em.execute(`update ledger_accounts set balance_minor = -1 where tenant_id = ? and code = 'wallet'`, [tenantId]),
    ).rejects.toThrow(/ledger_accounts_non_negative/);
  });
});
