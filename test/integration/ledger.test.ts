// The double-entry journal against a real PostgreSQL: no overdraft under concurrency, idempotent
// entries, and a database that refuses unbalanced or edited history on its own.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  InsufficientFundsError,
  LedgerConflictError,
  postEntry,
  postingsTotal,
  systemAccountId,
  tenantAccountId,
  walletBalance,
} from '../../src/ledger/ledger.ts';
import { createFundedTenant } from '../support/app.ts';
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

  it('has the database refuse an unbalanced entry written around the service, at commit', async () => {
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
