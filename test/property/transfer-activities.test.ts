// The transfer activities the workflow runs (reserveFunds, settleTransfer, reverseTransfer), called
// directly on the real PostgreSQL, property-based and concurrent: random reservations race for one
// wallet and one daily limit, then the bank's answers race to finish them, sometimes a settlement
// and a reversal of the same transfer at once. Afterwards: every reservation was applied or refused
// for the reason its numbers give (limit_exceeded: used + amount above the limit; insufficient
// balance: available below amount + fee), the amounts taken stay within both, each transfer ends
// settled or reversed exactly once, and the books equal the model to the kobo.
import { randomUUID } from 'node:crypto';
import { ApplicationFailure } from '@temporalio/common';
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTransferActivities } from '../../activities/transfers/transfers.ts';
import { postMovement } from '../../src/ledger/ledger.ts';
import { walletFunding } from '../../src/ledger/movements.ts';
import { readThrough, verifyLedger } from '../../src/ledger/verify.ts';
import type { Providers } from '../../src/connectors/registry.ts';
import { MIN_TRANSFER_MINOR, transferFee } from '../../src/transfers/domain.ts';
import type { TransferRequest } from '../../workflows/transfers/definitions.ts';
import { type TestDatabase, createTestDatabase } from '../support/database.ts';
import { TenantPool, emptyState, expectBooks, readBooks, referenceFee } from '../support/ledger-model.ts';
import { budget, runSeed } from '../support/long-run.ts';

type Fate = 'settle' | 'reverse' | 'both' | 'none';

const amount = fc.oneof(
  fc.integer({ min: MIN_TRANSFER_MINOR, max: 1_200_000 }),
  fc.constantFrom(100, 500_000, 500_001, 1_000_000),
);
const caseArb = fc.record({
  funding: fc.oneof(fc.integer({ min: 0, max: 4_000_000 }), fc.constantFrom(0, 1_100, 501_000, 502_500)),
  limit: fc.oneof(
    { weight: 4, arbitrary: fc.integer({ min: 0, max: 8_000_000 }) },
    { weight: 1, arbitrary: fc.constantFrom(0, 100, 500_000, 500_001) },
  ),
  transfers: fc.array(fc.record({ amount, fate: fc.constantFrom<Fate>('settle', 'reverse', 'both', 'none') }), {
    minLength: 1,
    maxLength: 8,
  }),
});

let db: TestDatabase;
let tenants: TenantPool;
let activities: ReturnType<typeof createTransferActivities>;
const tally = { reserved: 0, limitExceeded: 0, insufficient: 0, settled: 0, reversed: 0, raced: 0 };

beforeAll(async () => {
  db = await createTestDatabase(30);
  tenants = new TenantPool(db.orm, 0);
  // Neither reservation nor settlement nor reversal talks to a bank.
  activities = createTransferActivities({ orm: db.orm, providers: {} as Providers });
});
afterAll(async () => {
  if (db) {
    // transfers_match_journal among them: each transfer reserved once, then settled or reversed once.
    const report = await verifyLedger(readThrough(db.orm.em.fork()));
    expect(report.checks.filter((check) => !check.ok)).toEqual([]);
    console.log(`[transfer-activities] ${JSON.stringify(tally)}`);
    await db.drop();
  }
});

function request(tenantId: string, reference: string, amountMinor: number): TransferRequest {
  return {
    tenantId,
    reference,
    requestHash: reference,
    amountMinor,
    feeMinor: transferFee(amountMinor),
    currency: 'NGN',
    recipientAccount: '0123456789',
    recipientBankCode: '058',
    recipientBankName: 'Guaranty Trust Bank',
    narration: 'property',
    metadata: {},
    mode: 'test',
  };
}

/** The failure's type and its first details object, or null when the activity succeeded. */
async function refusalOf<T>(work: Promise<T>): Promise<{ type: string; details: Record<string, number> } | null> {
  try {
    await work;
    return null;
  } catch (error) {
    if (!(error instanceof ApplicationFailure)) throw error;
    return { type: String(error.type), details: (error.details?.[0] ?? {}) as Record<string, number> };
  }
}

describe('transfer activities under concurrency', () => {
  const runs = Number(process.env.PROP_BATCHES ?? budget(150, 3_000));
  it(
    `reserve within the wallet and the daily limit, and finish each transfer once, in ${runs} races`,
    { timeout: 0 },
    async () => {
      const seed = runSeed('transfer-activities');
      await fc.assert(
        fc.asyncProperty(caseArb, async ({ funding, limit, transfers }) => {
          const { tenantId } = await tenants.next();
          const model = emptyState([]);
          await db.orm.em
            .fork()
            .execute('update tenants set daily_transfer_limit_minor = ? where id = ?', [limit, tenantId]);
          if (funding > 0) {
            await postMovement(
              db.orm.em.fork(),
              tenantId,
              walletFunding({ tenantId, reference: 'start', amountMinor: funding }),
            );
            model.accounts.wallet! += funding;
            model.systemFlows.external_funding -= funding;
            model.entries += 1;
            model.postings += 2;
          }

          // Every reservation at once.
          const planned = transfers.map((transfer, i) => ({ ...transfer, id: randomUUID(), reference: `p${i}` }));
          const refusals = await Promise.all(
            planned.map((transfer) =>
              refusalOf(
                activities.reserveFunds({
                  transferId: transfer.id,
                  request: request(tenantId, transfer.reference, transfer.amount),
                  recipientName: 'ADA OBI',
                  nameEnquirySessionId: 'session',
                  connector: 'sandbox',
                }),
              ),
            ),
          );
          let used = 0;
          let taken = 0;
          const reserved = planned.filter((_, i) => refusals[i] === null);
          for (const transfer of reserved) {
            used += transfer.amount;
            taken += transfer.amount + referenceFee(transfer.amount);
          }
          expect(used, 'amounts reserved stay within the daily limit').toBeLessThanOrEqual(limit);
          expect(taken, 'amount + fee reserved stays within the wallet').toBeLessThanOrEqual(funding);
          planned.forEach((transfer, i) => {
            const refusal = refusals[i];
            if (!refusal) return;
            const total = transfer.amount + referenceFee(transfer.amount);
            if (refusal.type === 'limit_exceeded') {
              tally.limitExceeded += 1;
              expect(refusal.details.limit).toBe(limit);
              expect(refusal.details.used! + transfer.amount).toBeGreaterThan(limit);
              expect(refusal.details.used).toBeLessThanOrEqual(used);
            } else {
              expect(refusal.type).toBe('insufficient_balance');
              tally.insufficient += 1;
              expect(refusal.details.required).toBe(total);
              expect(refusal.details.available).toBeLessThan(total);
              expect(refusal.details.available).toBeGreaterThanOrEqual(funding - taken);
            }
          });
          tally.reserved += reserved.length;
          model.accounts.wallet! -= taken;
          model.accounts.in_flight! += taken;
          model.entries += reserved.length;
          model.postings += 2 * reserved.length;

          // The bank's answers, all at once; `both` sends a success and a failure for one transfer.
          const finishing = reserved.flatMap((transfer) => {
            const settle = () =>
              activities.settleTransfer({
                transferId: transfer.id,
                outcome: { status: 'successful', sessionId: 's', providerCode: '00', source: 'callback' },
              });
            const reverse = () => activities.reverseTransfer({ transferId: transfer.id, reason: 'bank said no' });
            if (transfer.fate === 'settle') return [settle()];
            if (transfer.fate === 'reverse') return [reverse()];
            if (transfer.fate === 'both') return [settle(), reverse()];
            return [];
          });
          await Promise.all(finishing);
          const rows = await db.orm.em
            .fork()
            .execute<{ id: string; status: string }[]>('select id, status from transfers where tenant_id = ?', [
              tenantId,
            ]);
          const status = new Map(rows.map((row) => [row.id, row.status]));
          expect(rows).toHaveLength(reserved.length);
          for (const transfer of reserved) {
            const total = transfer.amount + referenceFee(transfer.amount);
            const final = status.get(transfer.id);
            if (transfer.fate === 'none') expect(final).toBe('pending');
            if (transfer.fate === 'settle') expect(final).toBe('completed');
            if (transfer.fate === 'reverse') expect(final).toBe('failed');
            if (transfer.fate === 'both') {
              tally.raced += 1;
              expect(['completed', 'failed']).toContain(final);
            }
            if (final === 'completed') {
              tally.settled += 1;
              model.accounts.in_flight! -= total;
              model.systemFlows.bank_settlement += transfer.amount;
              model.systemFlows.fee_revenue += referenceFee(transfer.amount);
              model.entries += 1;
              model.postings += 3;
            } else if (final === 'failed') {
              tally.reversed += 1;
              model.accounts.in_flight! -= total;
              model.accounts.wallet! += total;
              model.entries += 1;
              model.postings += 2;
            }
          }
          expectBooks(
            await readBooks(db.orm.em.fork(), tenantId),
            model,
            JSON.stringify({ funding, limit, transfers }),
          );
        }),
        { seed, numRuns: runs },
      );
    },
  );
});
