// Money is an integer number of minor units (kobo for NGN), never a float.
export const CURRENCIES = ['NGN'] as const;
export type Currency = (typeof CURRENCIES)[number];

/** Largest amount the ledger accepts in one posting: ₦1 trillion, far below 2^53 kobo. */
export const MAX_POSTING_MINOR = 100_000_000_000_000;

export function assertMinorUnits(value: number, what = 'amount'): void {
  if (!Number.isSafeInteger(value) || value < 0 || value > MAX_POSTING_MINOR) {
    throw new RangeError(`${what} must be a whole number of kobo between 0 and ${MAX_POSTING_MINOR}, got ${value}`);
  }
}

/** Card funding (JIT, direct, auto-reload) per request, decisions §9: ₦1 to ₦10,000,000. */
export const MIN_CARD_FUNDING_MINOR = 100;
export const MAX_CARD_FUNDING_MINOR = 1_000_000_000;

/** Any other amount a request may move (e.g. a sandbox inbound credit), decisions §9: ₦1,000,000,000. */
export const MAX_MOVEMENT_MINOR = 100_000_000_000;
