// Late bank answers (decisions §12), as pure rules: which answers contradict the books, and the
// correcting movement that aligns the books with the bank.
import { describe, expect, it } from 'vitest';
import { discrepancyCorrection } from '../../src/ledger/movements.ts';
import { correctionPostings } from '../../src/transfers/discrepancies.ts';
import { contradictsBooks } from '../../workflows/transfer-definitions.ts';

describe('contradictsBooks', () => {
  it.each([
    ['completed', 'failed', true],
    ['failed', 'successful', true],
    ['completed', 'successful', false],
    ['failed', 'failed', false],
    ['pending', 'successful', false],
    ['pending', 'failed', false],
    ['processing', 'successful', false],
    ['processing', 'failed', false],
    ['refused', 'successful', false],
  ] as const)('ours %s, bank %s → %s', (ours, bank, contradicts) => {
    expect(contradictsBooks(ours, bank)).toBe(contradicts);
  });
});

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
