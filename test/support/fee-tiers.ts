// The transfer fee schedule (decisions §2) as the unit tests check it, in one place for the fee
// rule and the movements built from it.

/** [amount, fee] in kobo: each tier's edges, and the smallest and largest amounts. */
export const FEE_TIERS: [amountMinor: number, feeMinor: number][] = [
  [100, 1_000],
  [500_000, 1_000],
  [500_001, 2_500],
  [5_000_000, 2_500],
  [5_000_001, 5_000],
  [1_000_000_000, 5_000],
];
