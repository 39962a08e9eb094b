// Transfer money rules (decisions §4), pure and unit-tested.

export const MIN_TRANSFER_MINOR = 100; // ₦1
export const MAX_TRANSFER_MINOR = 1_000_000_000; // ₦10,000,000

/** ₦10 up to ₦5,000; ₦25 up to ₦50,000; ₦50 above. */
export function transferFee(amountMinor: number): number {
  if (amountMinor <= 500_000) return 1_000;
  if (amountMinor <= 5_000_000) return 2_500;
  return 5_000;
}

/**
 * The daily limit: a transfer passes when the amounts of today's transfers (Africa/Lagos day, not
 * failed) plus its own stay within the tenant's limit. Fees do not count towards it.
 */
export function withinDailyLimit(input: { limitMinor: number; usedMinor: number; amountMinor: number }): boolean {
  return input.usedMinor + input.amountMinor <= input.limitMinor;
}
