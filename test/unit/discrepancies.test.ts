// Late bank answers (decisions §12), as pure rules: the correcting movement that aligns the books
// with the bank (which answers contradict the books: transfer-domain.test.ts).
import { describe, expect, it } from 'vitest';
import { discrepancyCorrection } from '../../src/ledger/movements.ts';
import { correctionPostings } from '../../src/transfers/discrepancies.ts';

describe('correctionPostings', () => {
  it.each([
    [
      'successful',
      300_000,
      1_000,
      [
        { account: 'wallet', amountMinor: -301_000 },
        { account: 'bank_settlement', amountMinor: 300_000 },
        { account: 'fee_revenue', amountMinor: 1_000 },
      ],
    ],
    [
      'failed',
      1_234_567,
      2_500,
      [
        { account: 'wallet', amountMinor: 1_237_067 },
        { account: 'bank_settlement', amountMinor: -1_234_567 },
        { account: 'fee_revenue', amountMinor: -2_500 },
      ],
    ],
    [
      'successful',
      500,
      0,
      [
        { account: 'wallet', amountMinor: -500 },
        { account: 'bank_settlement', amountMinor: 500 },
      ],
    ],
  ] as const)('bank %s, amount %i, fee %i', (bank, amount, fee, expected) => {
    const postings = correctionPostings(
      discrepancyCorrection(
        { transferId: 't-1', reference: 'inv-42', amountMinor: amount, feeMinor: fee },
        { id: 'd-1', ours: bank === 'successful' ? 'failed' : 'completed', bank },
      ),
    );
    expect(postings).toEqual(expected);
    expect(postings.reduce((sum, posting) => sum + posting.amountMinor, 0)).toBe(0);
  });
});
