// The rules of an inbound credit and its returns (decisions §21), pure: what a credit brought in,
// how much of it is left to return, and its status as the API shows it. The API, the activities
// and `ledger verify` agree on them because they all decide with this code.

/** A credit's status as the API shows it. */
export const CREDIT_STATUSES = ['applied', 'returned', 'partially_returned', 'held'] as const;
export type CreditStatus = (typeof CREDIT_STATUSES)[number];

/** How a credit is kept: in the wallet (`applied`; `released` by an operator after it was held) or in suspense (`held`). */
export type StoredCreditStatus = 'applied' | 'released' | 'held';

export interface CreditAmounts {
  /** What the sender paid. */
  amountMinor: number;
  /** What the provider kept of it. */
  feeMinor: number;
  /** What returns that have not failed hold of it. */
  returnedMinor: number;
}

/**
 * What the credit brought in, and so the most that can go back: what the sender paid less what the
 * provider kept (that never reached the platform, so no return can give it back).
 */
export function creditNetMinor(credit: Pick<CreditAmounts, 'amountMinor' | 'feeMinor'>): number {
  return credit.amountMinor - credit.feeMinor;
}

/** What is left of the credit to return. */
export function returnableMinor(credit: CreditAmounts): number {
  return Math.max(0, creditNetMinor(credit) - credit.returnedMinor);
}

/**
 * held: in suspense, nothing on its way back; returned: all of it gone back (or going: a return
 * not failed); partially_returned: some; applied: in the wallet, none returned.
 */
export function creditStatus(credit: CreditAmounts & { stored: StoredCreditStatus }): CreditStatus {
  if (credit.returnedMinor === 0) return credit.stored === 'held' ? 'held' : 'applied';
  return returnableMinor(credit) === 0 ? 'returned' : 'partially_returned';
}

/** The reference of a held credit's return (paid from suspense): `ret_<credit id, 32 hex>_<what>`, at most 64 characters. */
export function heldCreditReturnReference(creditId: string, what: string): string {
  return `ret_${creditId.replaceAll('-', '')}_${what}`.slice(0, 64);
}
