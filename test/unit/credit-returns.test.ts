// The rules of a credit and its returns (decisions §21): what it brought in, what is left of it,
// its status as the API shows it, and a held credit's return reference.
import { describe, expect, it } from 'vitest';
import {
  creditNetMinor,
  creditStatus,
  heldCreditReturnReference,
  returnableMinor,
} from '../../src/virtual-accounts/domain.ts';

describe('what is left of a credit to return', () => {
  it.each([
    // amount, fee, returned → left
    [1_000_000, 0, 0, 1_000_000],
    [1_000_000, 0, 400_000, 600_000],
    [1_000_000, 0, 1_000_000, 0],
    [1_000_000, 5_000, 0, 995_000],
    [1_000_000, 5_000, 995_000, 0],
    [1_000_000, 5_000, 995_001, 0],
  ])('a credit of %i with a fee of %i, %i returned: %i left', (amountMinor, feeMinor, returnedMinor, left) => {
    expect(returnableMinor({ amountMinor, feeMinor, returnedMinor })).toBe(left);
    expect(creditNetMinor({ amountMinor, feeMinor })).toBe(amountMinor - feeMinor);
  });
});

describe("a credit's status", () => {
  it.each([
    ['applied', 0, 'applied'],
    ['applied', 1, 'partially_returned'],
    ['applied', 9_999, 'partially_returned'],
    ['applied', 10_000, 'returned'],
    ['released', 0, 'applied'],
    ['released', 2_500, 'partially_returned'],
    ['held', 0, 'held'],
    ['held', 10_000, 'returned'],
  ] as const)('stored %s with %i returned of 10,000: %s', (stored, returnedMinor, status) => {
    expect(creditStatus({ stored, amountMinor: 10_000, feeMinor: 0, returnedMinor })).toBe(status);
  });

  it('counts what the credit brought in, not what the sender paid: returned once the fee-less part went back', () => {
    expect(creditStatus({ stored: 'applied', amountMinor: 10_000, feeMinor: 50, returnedMinor: 9_950 })).toBe(
      'returned',
    );
  });
});

describe("a held credit's return reference", () => {
  it('is a transfer reference of the credit, at most 64 of [A-Za-z0-9_]', () => {
    const reference = heldCreditReturnReference('0f1e2d3c-4b5a-4697-8877-66554433aabb', 'auto');
    expect(reference).toBe('ret_0f1e2d3c4b5a4697887766554433aabb_auto');
    expect(reference).toMatch(/^[A-Za-z0-9_-]{1,64}$/);
    expect(heldCreditReturnReference('0f1e2d3c-4b5a-4697-8877-66554433aabb', 'x'.repeat(80))).toHaveLength(64);
  });
});
