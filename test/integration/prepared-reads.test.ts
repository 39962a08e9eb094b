// The API's prepared reads (src/db/prepared.ts) give plain rows, not managed entities: every value
// must be what the ORM's own findOne gives for the same row, type for type (numbers for bigint
// kobo, Dates for timestamps, parsed JSON, nulls), whatever columns are set.
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Transfer, readByReference, readTransfer } from '../../src/transfers/store.ts';
import { createFundedTenant } from '../support/app.ts';
import { type TestDatabase, createTestDatabase } from '../support/database.ts';

let db: TestDatabase;
beforeAll(async () => {
  db = await createTestDatabase();
});
afterAll(async () => {
  await db?.drop();
});

/** A transfer row written through the ORM, with `extra` on top of the required columns. */
async function insertTransfer(tenantId: string, extra: Record<string, unknown>): Promise<string> {
  const em = db.orm.em.fork();
  const id = randomUUID();
  em.create(Transfer, {
    id,
    tenant_id: tenantId,
    reference: `prepared-${id}`,
    request_hash: 'hash',
    amount_minor: 1_000_000_000,
    fee_minor: 2_650,
    currency: 'NGN',
    recipient_account: '0123456789',
    recipient_bank_code: '058',
    recipient_bank: 'GTBank',
    recipient_name: 'ADA OBI',
    narration: 'rent',
    metadata: { invoice: 'INV-1', lines: [1, 2], nested: { ok: true } },
    status: 'pending',
    ...extra,
  } as never);
  await em.flush();
  return id;
}

describe('prepared transfer reads', () => {
  it('give the values findOne gives, for a row with its optional columns null and one with them set', async () => {
    const tenant = await createFundedTenant(db.orm, 0, 'prepared reads');
    const bare = await insertTransfer(tenant.tenantId, {});
    const full = await insertTransfer(tenant.tenantId, {
      status: 'failed',
      failure_reason: 'reversed',
      session_id: '000013230101000000000001',
      connector: 'sandbox',
      completed_at: new Date('2026-01-02T03:04:05.678Z'),
      reversed_at: new Date('2026-01-03T00:00:00.001Z'),
      approval_status: 'approved',
      approval_expires_at: new Date('2026-01-01T10:00:00.000Z'),
      approval_decided_by: { type: 'api_key', id: randomUUID(), name: 'approver' },
      approval_decided_at: new Date('2026-01-01T09:30:00.000Z'),
      created_by_key_id: randomUUID(),
      stuck_since: new Date('2026-01-02T00:00:00.000Z'),
    });
    for (const id of [bare, full]) {
      const orm = await db.orm.em.fork().findOneOrFail(Transfer, { id });
      const expected = { ...orm };
      const byId = await readTransfer(db.orm, id, tenant.tenantId);
      expect(byId).toStrictEqual(expected);
      expect(await readTransfer(db.orm, id)).toStrictEqual(expected);
      expect(await readByReference(db.orm, tenant.tenantId, expected.reference)).toStrictEqual(expected);
      expect(typeof byId!.amount_minor).toBe('number');
      expect(byId!.amount_minor).toBe(1_000_000_000);
      expect(byId!.created_at).toBeInstanceOf(Date);
    }
    // Another tenant's transfer is not found by the tenant's read.
    expect(await readTransfer(db.orm, bare, randomUUID())).toBeNull();
  });
});
