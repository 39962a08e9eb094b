// A list's page and its total come from one snapshot: with rows committing while pages are read,
// a page that holds every row matching its filter always has a total equal to its length (two
// statements each under its own snapshot showed a page of one row with a total of 0).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { pageOf } from '../../src/db/pages.ts';
import { Recipient, saveRecipient } from '../../src/recipients/store.ts';
import { createFundedTenant } from '../support/app.ts';
import { createTestDatabase, type TestDatabase } from '../support/database.ts';

let db: TestDatabase;
beforeAll(async () => {
  db = await createTestDatabase();
});
afterAll(async () => {
  await db?.drop();
});

describe('a page and its total', () => {
  it('agree while rows commit beside the reads', async () => {
    const { tenantId } = await createFundedTenant(db.orm);
    const ROWS = 150;
    let saved = 0;
    const writer = (async () => {
      for (let i = 0; i < ROWS; i += 1) {
        await saveRecipient(db.orm.em.fork(), {
          tenantId,
          bankCode: '058',
          bankName: 'Guaranty Trust Bank',
          accountNumber: String(3330000000 + i),
          accountName: `Account ${i}`,
          label: null,
          metadata: null,
        });
        saved += 1;
      }
    })();
    const pages: { rows: number; total: number }[] = [];
    while (saved < ROWS) {
      const read = await Promise.all(
        Array.from({ length: 4 }, () =>
          pageOf(
            db.orm.em.fork(),
            Recipient,
            { tenant_id: tenantId },
            { created_at: 'desc', id: 'desc' },
            {
              limit: ROWS + 1,
              offset: 0,
            },
          ),
        ),
      );
      pages.push(...read.map((page) => ({ rows: page.rows.length, total: page.total })));
    }
    await writer;
    expect(pages.length).toBeGreaterThan(ROWS);
    expect(pages.filter((page) => page.rows !== page.total)).toEqual([]);
    const last = await pageOf(
      db.orm.em.fork(),
      Recipient,
      { tenant_id: tenantId },
      { id: 'asc' },
      { limit: 10, offset: 0 },
    );
    expect({ rows: last.rows.length, total: last.total }).toEqual({ rows: 10, total: ROWS });
  });
});
