// When the transfer policy holds a batch whole (decisions §20): any item it would hold, or the
// items' total above above_minor; the single payout's holds (holdReasons) beside it.
import { describe, expect, it } from 'vitest';
import { DEFAULT_TRANSFER_POLICY, type TransferPolicy, holdReasons } from '../../src/transfers/approvals.ts';
import { holdsBatch } from '../../src/transfers/batches.ts';

const policy = (approval: Partial<TransferPolicy['approval']>): TransferPolicy => ({
  ...DEFAULT_TRANSFER_POLICY,
  approval: { ...DEFAULT_TRANSFER_POLICY.approval, ...approval },
});
const paid = (amountMinor: number, newRecipient = false) => ({ amountMinor, newRecipient });

describe('holdReasons', () => {
  it('holds nothing under the default policy, and says every reason that holds', () => {
    expect(holdReasons(DEFAULT_TRANSFER_POLICY, paid(10_000_000_000, true))).toEqual([]);
    expect(
      holdReasons(policy({ above_minor: 100, new_recipient: true, every_transfer: true }), paid(101, true)),
    ).toEqual(['every_transfer', 'above_minor', 'new_recipient']);
  });

  it('holds an amount above above_minor, not one equal to it', () => {
    expect(holdReasons(policy({ above_minor: 500_000 }), paid(500_000))).toEqual([]);
    expect(holdReasons(policy({ above_minor: 500_000 }), paid(500_001))).toEqual(['above_minor']);
    expect(holdReasons(policy({ above_minor: 0 }), paid(100))).toEqual(['above_minor']);
  });
});

describe('holdsBatch', () => {
  const cases: [string, TransferPolicy, ReturnType<typeof paid>[], boolean][] = [
    ['the default policy', DEFAULT_TRANSFER_POLICY, [paid(900_000_000, true)], false],
    ['every_transfer', policy({ every_transfer: true }), [paid(100)], true],
    ['no item to pay', policy({ every_transfer: true }), [], false],
    ['one item above above_minor', policy({ above_minor: 500_000 }), [paid(100), paid(500_001)], true],
    ['items and their total at above_minor', policy({ above_minor: 500_000 }), [paid(200_000), paid(300_000)], false],
    ['no item above, the total one kobo above', policy({ above_minor: 500_000 }), [paid(200_000), paid(300_001)], true],
    ['a new payee under new_recipient', policy({ new_recipient: true }), [paid(100), paid(100, true)], true],
    ['every payee paid before', policy({ new_recipient: true }), [paid(100), paid(900_000_000)], false],
    ['a new payee without new_recipient', policy({ above_minor: 1_000 }), [paid(100, true)], false],
  ];
  it.each(cases)('%s', (_name, given, items, held) => {
    expect(holdsBatch(given, items)).toBe(held);
  });
});
