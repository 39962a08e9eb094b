// The money rules against small reference implementations written here in BigInt (decisions §4
// and §9), over random amounts and every boundary: the fee tiers and their edges, the daily limit,
// the request bounds of each amount field, the ledger's own bound on a posting, and the postings
// each transfer movement makes from an amount and its fee. Pure: no database.
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { FundCardBody, AutoReloadSettings } from '../../src/cards/schemas.ts';
import { MAX_POSTING_MINOR, assertMinorUnits } from '../../src/lib/money.ts';
import { type Movement, transferReserve, transferReverse, transferSettle } from '../../src/ledger/movements.ts';
import { MAX_TRANSFER_MINOR, MIN_TRANSFER_MINOR, transferFee, withinDailyLimit } from '../../src/transfers/domain.ts';
import { CreateTransferBody } from '../../src/transfers/schemas.ts';
import { SandboxCreditBody } from '../../src/virtual-accounts/schemas.ts';
import { referenceFee } from '../support/ledger-model.ts';
import { budget, runSeed } from '../support/long-run.ts';

const runs = budget(5_000, 200_000);

/** Amounts near every edge that matters, and anywhere else. */
const EDGES = [
  0,
  1,
  99,
  100,
  101,
  499_999,
  500_000,
  500_001,
  4_999_999,
  5_000_000,
  5_000_001,
  999_999_999,
  1_000_000_000,
  1_000_000_001,
  99_999_999_999,
  100_000_000_000,
  100_000_000_001,
  MAX_POSTING_MINOR - 1,
  MAX_POSTING_MINOR,
  MAX_POSTING_MINOR + 1,
  2 ** 31,
  2 ** 32,
  Number.MAX_SAFE_INTEGER - 1,
  Number.MAX_SAFE_INTEGER,
];
const safeAmount = fc.oneof(
  fc.constantFrom(...EDGES),
  fc.integer({ min: 0, max: 10_000_000 }),
  fc.integer({ min: 0, max: Number.MAX_SAFE_INTEGER }),
  fc
    .constantFrom(...EDGES)
    .chain((edge) =>
      fc.integer({ min: -3, max: 3 }).map((d) => Math.min(Number.MAX_SAFE_INTEGER, Math.max(0, edge + d))),
    ),
);
/** Anything JSON could carry as a number, and a few things it could not. */
const anyNumber = fc.oneof(
  safeAmount,
  safeAmount.map((n) => -n),
  fc.double(),
  fc.constantFrom(
    -0,
    0.5,
    99.999,
    100.0000001,
    1e9 + 0.5,
    2 ** 53,
    2 ** 53 + 2,
    -(2 ** 53),
    Number.MIN_SAFE_INTEGER,
    Number.POSITIVE_INFINITY,
    Number.NEGATIVE_INFINITY,
    Number.NaN,
  ),
);
const transferAmount = fc.oneof(
  fc.constantFrom(...EDGES.filter((a) => a >= MIN_TRANSFER_MINOR && a <= MAX_TRANSFER_MINOR)),
  fc.integer({ min: MIN_TRANSFER_MINOR, max: MAX_TRANSFER_MINOR }),
);

/** Whether a number is a whole number of kobo within [min, max], decided in BigInt. */
function inBounds(value: number, min: bigint, max: bigint): boolean {
  if (!Number.isInteger(value)) return false;
  const n = BigInt(value);
  return n >= min && n <= max;
}

const sumOf = (movement: Movement) => movement.postings.reduce((total, p) => total + BigInt(p.amountMinor), 0n);
const posting = (movement: Movement, name: string) =>
  movement.postings
    .filter((p) => ('system' in p.account ? p.account.system : 'tenant' in p.account ? p.account.tenant : '') === name)
    .reduce((total, p) => total + BigInt(p.amountMinor), 0n);

describe('transfer fees', () => {
  it('charge exactly the reference fee for every amount a transfer may have, tier edges included', () => {
    fc.assert(
      fc.property(transferAmount, (amount) => {
        expect(transferFee(amount)).toBe(referenceFee(amount));
      }),
      { seed: runSeed('money-rules:fee'), numRuns: runs },
    );
  });

  it('never fall as the amount grows, and take one of the three tiers', () => {
    fc.assert(
      fc.property(transferAmount, transferAmount, (a, b) => {
        const [low, high] = a <= b ? [a, b] : [b, a];
        expect(transferFee(low)).toBeLessThanOrEqual(transferFee(high));
        expect([1_000, 2_500, 5_000]).toContain(transferFee(a));
      }),
      { seed: runSeed('money-rules:fee-monotone'), numRuns: runs },
    );
  });

  it('reserve amount + fee, settle it as amount to the bank and fee to revenue, or return it whole', () => {
    fc.assert(
      fc.property(transferAmount, (amount) => {
        const fee = BigInt(referenceFee(amount));
        const amounts = { transferId: 't', reference: 'r', amountMinor: amount, feeMinor: transferFee(amount) };
        const total = BigInt(amount) + fee;
        const reserve = transferReserve(amounts);
        const settle = transferSettle(amounts);
        const reverse = transferReverse(amounts, 'x');
        for (const movement of [reserve, settle, reverse]) expect(sumOf(movement)).toBe(0n);
        expect([posting(reserve, 'wallet'), posting(reserve, 'in_flight')]).toEqual([-total, total]);
        expect([
          posting(settle, 'in_flight'),
          posting(settle, 'bank_settlement'),
          posting(settle, 'fee_revenue'),
        ]).toEqual([-total, BigInt(amount), fee]);
        expect([posting(reverse, 'in_flight'), posting(reverse, 'wallet')]).toEqual([-total, total]);
      }),
      { seed: runSeed('money-rules:movements'), numRuns: runs },
    );
  });
});

describe('the daily limit', () => {
  it('passes a transfer exactly when today’s amounts plus its own stay within the limit, up to MAX_SAFE_INTEGER', () => {
    fc.assert(
      fc.property(safeAmount, safeAmount, safeAmount, (limitMinor, usedMinor, amountMinor) => {
        const reference = BigInt(usedMinor) + BigInt(amountMinor) <= BigInt(limitMinor);
        expect(withinDailyLimit({ limitMinor, usedMinor, amountMinor })).toBe(reference);
      }),
      { seed: runSeed('money-rules:limit'), numRuns: runs },
    );
  });

  it('is exact at its edge: the last kobo of the limit passes, one more does not', () => {
    fc.assert(
      fc.property(safeAmount, safeAmount, (limitMinor, usedMinor) => {
        fc.pre(usedMinor < limitMinor);
        const room = limitMinor - usedMinor;
        expect(withinDailyLimit({ limitMinor, usedMinor, amountMinor: room })).toBe(true);
        expect(withinDailyLimit({ limitMinor, usedMinor, amountMinor: room + 1 })).toBe(false);
      }),
      { seed: runSeed('money-rules:limit-edge'), numRuns: runs },
    );
  });
});

describe('amount bounds (decisions §4, §9)', () => {
  const fields: [string, (value: number) => boolean, bigint, bigint][] = [
    ['transfer amount_minor', (v) => CreateTransferBody.shape.amount_minor.safeParse(v).success, 100n, 1_000_000_000n],
    ['card funding amount_minor', (v) => FundCardBody.shape.amount_minor.safeParse(v).success, 100n, 1_000_000_000n],
    [
      'auto-reload amount_minor',
      (v) => AutoReloadSettings.shape.amount_minor.safeParse(v).success,
      100n,
      1_000_000_000n,
    ],
    [
      'auto-reload threshold_minor',
      (v) => AutoReloadSettings.shape.threshold_minor.safeParse(v).success,
      0n,
      1_000_000_000n,
    ],
    [
      'sandbox credit amount_minor',
      (v) => SandboxCreditBody.shape.amount_minor.safeParse(v).success,
      1n,
      100_000_000_000n,
    ],
    [
      'a ledger posting',
      (v) => {
        try {
          assertMinorUnits(v);
          return true;
        } catch {
          return false;
        }
      },
      0n,
      BigInt(MAX_POSTING_MINOR),
    ],
  ];
  it.each(fields)('%s takes exactly the whole numbers of kobo in its bounds', (name, accepts, min, max) => {
    fc.assert(
      fc.property(anyNumber, (value) => {
        expect(accepts(value), `${name}: ${value}`).toBe(inBounds(value, min, max));
      }),
      { seed: runSeed(`money-rules:${name}`), numRuns: runs },
    );
  });
});
