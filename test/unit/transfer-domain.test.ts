// The transfer domain's rules (src/transfers/domain.ts), table-driven: fees, the daily limit, the
// statuses in each vocabulary, contradicting answers, the request fingerprint and the failures.
import { createHash } from 'node:crypto';
import { ApplicationFailure } from '@temporalio/common';
import { describe, expect, it } from 'vitest';
import {
  CREATE_REFUSALS,
  REFUSALS,
  TRANSFER_STATUSES,
  type TransferStatus,
  batchItemReference,
  batchItemStatus,
  contradictsBooks,
  decideItems,
  failureDetails,
  internalStatuses,
  isCreateRefusal,
  isFinal,
  passedOnRefusal,
  publicStatus,
  sameAccountName,
  screenItem,
  transferFailure,
  transferFee,
  withinDailyLimit,
} from '../../src/transfers/domain.ts';
import {
  batchFingerprint,
  referenceFromIdempotencyKey,
  transferFingerprint,
} from '../../src/transfers/fingerprints.ts';
import { canonicalJson } from '../../src/lib/canonical.ts';
import { FEE_TIERS } from '../support/fee-tiers.ts';

describe('transferFee', () => {
  it.each(FEE_TIERS)('%i kobo → %i kobo', (amount, fee) => {
    expect(transferFee(amount)).toBe(fee);
  });
});

describe('withinDailyLimit', () => {
  it.each([
    // limit, used today, amount, passes
    [1_000_000, 0, 1_000_000, true],
    [1_000_000, 0, 1_000_001, false],
    [1_000_000, 999_999, 1, true],
    [1_000_000, 999_999, 2, false],
    [1_000_000, 1_000_000, 100, false],
    [0, 0, 100, false],
    [500_000_000_000, 499_000_000_000, 1_000_000_000, true],
  ])('limit %i, %i used: %i passes → %s', (limitMinor, usedMinor, amountMinor, passes) => {
    expect(withinDailyLimit({ limitMinor, usedMinor, amountMinor })).toBe(passes);
  });
});

describe('transfer statuses', () => {
  it.each([
    // create vocabulary, get/list vocabulary, final
    ['pending', 'pending', false],
    ['processing', 'pending', false],
    ['completed', 'successful', true],
    ['failed', 'failed', true],
  ] as const)('%s reads as %s on get and list (final: %s)', (internal, shown, final) => {
    expect(publicStatus(internal)).toBe(shown);
    expect(isFinal(internal)).toBe(final);
    expect(internalStatuses(shown)).toContain(internal);
  });

  it.each([
    ['pending', ['pending', 'processing']],
    ['successful', ['completed']],
    ['failed', ['failed']],
  ] as const)('a %s filter stands for %j', (shown, internal) => {
    expect(internalStatuses(shown)).toEqual(internal);
  });

  it('names every status the projection stores', () => {
    expect(TRANSFER_STATUSES).toEqual(['pending', 'processing', 'completed', 'failed']);
  });
});

describe('contradictsBooks', () => {
  // Our status (or our refusal) → whether each final answer of the bank contradicts it.
  const contradicted: Record<TransferStatus | 'refused', Record<'successful' | 'failed', boolean>> = {
    pending: { successful: false, failed: false },
    processing: { successful: false, failed: false },
    completed: { successful: false, failed: true },
    failed: { successful: true, failed: false },
    refused: { successful: false, failed: false },
  };
  const cases = Object.entries(contradicted).flatMap(([ours, answers]) =>
    Object.entries(answers).map(([bank, contradicts]) => [ours, bank, contradicts]),
  ) as [TransferStatus | 'refused', 'successful' | 'failed', boolean][];

  it.each(cases)('ours %s, bank %s → %s', (ours, bank, contradicts) => {
    expect(contradictsBooks(ours, bank)).toBe(contradicts);
  });
});

describe('transferFingerprint', () => {
  const request = {
    amount_minor: 1_500_000,
    recipient_account: '0123456789',
    recipient_bank_code: '058',
    narration: 'invoice 42',
    metadata: { order: 'A-1', lines: [1, 2] },
  };

  it('is the SHA-256 of the canonical body stored on transfers made before it moved here', () => {
    // Rows written before keep their hashes: a repeat of their reference must still match.
    const stored = createHash('sha256')
      .update(canonicalJson({ ...request, currency: 'NGN' }))
      .digest('hex');
    expect(transferFingerprint(request)).toBe(stored);
  });

  it('ignores key order and the reference', () => {
    const reordered = {
      reference: 'inv-42',
      metadata: { lines: [1, 2], order: 'A-1' },
      narration: request.narration,
      recipient_bank_code: request.recipient_bank_code,
      recipient_account: request.recipient_account,
      amount_minor: request.amount_minor,
    };
    expect(transferFingerprint(reordered)).toBe(transferFingerprint(request));
  });

  it.each([
    ['amount_minor', 1_500_001],
    ['recipient_account', '0123456788'],
    ['recipient_bank_code', '044'],
    ['narration', 'invoice 43'],
    ['metadata', { order: 'A-2', lines: [1, 2] }],
  ] as const)('changes with %s', (field, value) => {
    expect(transferFingerprint({ ...request, [field]: value })).not.toBe(transferFingerprint(request));
  });
});

describe('transferFingerprint of a saved recipient’s transfer (decisions §20)', () => {
  const byId = {
    amount_minor: 1_500_000,
    recipient_id: '6f1c2b1e-8d3a-4c5e-9f00-123456789abc',
    narration: 'invoice 42',
    metadata: {},
  };

  it('is the body as given: its recipient_id, and no account', () => {
    const expected = createHash('sha256')
      .update(canonicalJson({ ...byId, currency: 'NGN' }))
      .digest('hex');
    expect(transferFingerprint(byId)).toBe(expected);
  });

  it('changes with the recipient_id, and differs from the same account named by its number', () => {
    expect(transferFingerprint({ ...byId, recipient_id: '6f1c2b1e-8d3a-4c5e-9f00-123456789abd' })).not.toBe(
      transferFingerprint(byId),
    );
    const { recipient_id: _id, ...rest } = byId;
    expect(transferFingerprint({ ...rest, recipient_account: '0123456789', recipient_bank_code: '058' })).not.toBe(
      transferFingerprint(byId),
    );
  });

  it('fingerprints a batch item by its recipient_id too', () => {
    const base = batchFingerprint({ atomic: false, metadata: {}, transfers: [byId] });
    expect(batchFingerprint({ atomic: false, metadata: {}, transfers: [{ ...byId }] })).toBe(base);
    expect(
      batchFingerprint({
        atomic: false,
        metadata: {},
        transfers: [{ ...byId, recipient_id: '6f1c2b1e-8d3a-4c5e-9f00-123456789abd' }],
      }),
    ).not.toBe(base);
  });
});

describe('sameAccountName', () => {
  it.each([
    ['ADA OBI', 'ADA OBI', true],
    ['Ada Obi', 'ADA OBI', true],
    ['  ada   obi ', 'ADA\tOBI', true],
    ['ADA OBI', 'ADA OBIE', false],
    ['ADA OBI', 'OBI ADA', false],
    ['ADAOBI', 'ADA OBI', false],
  ])('%j and %j: %s', (saved, current, same) => {
    expect(sameAccountName(saved, current)).toBe(same);
  });
});

describe('referenceFromIdempotencyKey', () => {
  it('derives one reference per tenant and key: idem_ and 40 hex digits', () => {
    const reference = referenceFromIdempotencyKey('tenant-a', 'key-1');
    expect(reference).toMatch(/^idem_[0-9a-f]{40}$/);
    expect(referenceFromIdempotencyKey('tenant-a', 'key-1')).toBe(reference);
    expect(referenceFromIdempotencyKey('tenant-b', 'key-1')).not.toBe(reference);
    expect(referenceFromIdempotencyKey('tenant-a', 'key-2')).not.toBe(reference);
  });
});

describe('transfer failures', () => {
  it.each([
    ['insufficient_balance', { required: 1_502_500, available: 1_000_000 }],
    ['limit_exceeded', { limit: 500_000_000, used: 499_000_000 }],
    ['duplicate_reference', { transfer_id: null }],
    ['bank_rejected', { outcome: 'rejected', providerCode: '57' }],
  ] as const)('%s is non-retryable and carries its details', (type, details) => {
    const failure = transferFailure(type, 'refused', details as never);
    expect(failure).toBeInstanceOf(ApplicationFailure);
    expect(failure.type).toBe(type);
    expect(failure.nonRetryable).toBe(true);
    expect(failureDetails(failure, type)).toEqual(details);
    expect(failureDetails(failure, 'invalid_account')).toBeUndefined();
  });

  it('invalid_account carries a saved recipient’s two names when it has them (decisions §20)', () => {
    const details = { saved_name: 'ADA OBI', current_name: 'ADA OKAFOR' };
    const failure = transferFailure('invalid_account', 'renamed', details);
    expect(failureDetails(failure, 'invalid_account')).toEqual(details);
    expect(passedOnRefusal(failure)!.details).toEqual([details]);
  });

  it('carries no details where the failure has none, and keeps its cause', () => {
    const cause = new Error('socket hang up');
    const failure = transferFailure('invalid_account', 'no such account', undefined, cause);
    expect(failure.details).toEqual([]);
    expect(failure.cause).toBe(cause);
  });

  it('refusals are the API error codes a create may answer, with unavailable beside them', () => {
    expect([...REFUSALS]).toEqual([
      'insufficient_balance',
      'invalid_account',
      'limit_exceeded',
      'duplicate_reference',
      'failed_precondition',
    ]);
    expect([...CREATE_REFUSALS]).toEqual([...REFUSALS, 'unavailable']);
    expect(isCreateRefusal('unavailable')).toBe(true);
    expect(isCreateRefusal('bank_rejected')).toBe(false);
    expect(isCreateRefusal(undefined)).toBe(false);
  });

  it('passes a refusal on without its causes, and nothing else', () => {
    const refusal = transferFailure(
      'insufficient_balance',
      'wallet balance 1000 is below the 2100 kobo required (amount plus fee)',
      { required: 2_100, available: 1_000 },
      new Error('from the ledger'),
    );
    const passed = passedOnRefusal(refusal)!;
    expect(passed.type).toBe('insufficient_balance');
    expect(passed.message).toBe(refusal.message);
    expect(passed.details).toEqual([{ required: 2_100, available: 1_000 }]);
    expect(passed.cause).toBeUndefined();
    expect(passedOnRefusal(transferFailure('reservation_abandoned', 'late'))).toBeUndefined();
    expect(passedOnRefusal(new Error('insufficient_balance'))).toBeUndefined();
  });
});

describe('batches (decisions §14)', () => {
  it.each([
    // Each case: items (amount, fee), the start, and each item's decision in index order.
    [
      'all fit',
      [
        [100_000, 1_000],
        [200_000, 1_000],
      ],
      { availableMinor: 302_000, usedMinor: 0, limitMinor: 1_000_000 },
      ['accepted', 'accepted'],
    ],
    [
      'the balance runs out; a smaller item after it still passes',
      [
        [100_000, 1_000],
        [300_000, 1_000],
        [50_000, 1_000],
      ],
      { availableMinor: 200_000, usedMinor: 0, limitMinor: 10_000_000 },
      ['accepted', 'insufficient_balance', 'accepted'],
    ],
    [
      'the limit first, as a single create checks it; fees do not count towards it',
      [
        [600_000, 2_500],
        [400_001, 1_000],
        [400_000, 1_000],
      ],
      { availableMinor: 10_000_000, usedMinor: 0, limitMinor: 1_000_000 },
      ['accepted', 'limit_exceeded', 'accepted'],
    ],
    [
      'today already used',
      [[1, 1_000]],
      { availableMinor: 10_000_000, usedMinor: 1_000_000, limitMinor: 1_000_000 },
      ['limit_exceeded'],
    ],
    [
      'exactly the balance',
      [[99_000, 1_000]],
      { availableMinor: 100_000, usedMinor: 0, limitMinor: 1_000_000 },
      ['accepted'],
    ],
  ] as const)('decideItems: %s', (_, items, start, expected) => {
    const { decisions, availableMinor, usedMinor } = decideItems(
      items.map(([amountMinor, feeMinor]) => ({ amountMinor, feeMinor })),
      start,
    );
    expect(decisions).toEqual(expected);
    const taken = items.filter((_, i) => decisions[i] === 'accepted');
    expect(availableMinor).toBe(start.availableMinor - taken.reduce((sum, [a, f]) => sum + a + f, 0));
    expect(usedMinor).toBe(start.usedMinor + taken.reduce((sum, [a]) => sum + a, 0));
  });

  const start = { availableMinor: 300_000, usedMinor: 0, limitMinor: 1_000_000 };
  it.each([
    ['nothing ahead, and it fits', [], [200_000, 1_000], start, 'enquire'],
    ['nothing ahead, and the wallet cannot cover it', [], [299_500, 1_000], start, 'insufficient_balance'],
    ['exactly the wallet', [], [299_000, 1_000], start, 'enquire'],
    ['named items ahead took the wallet', [[200_000, 1_000, false]], [99_500, 1_000], start, 'insufficient_balance'],
    [
      'named items ahead took the limit',
      [[200_000, 1_000, false]],
      [50_000, 1_000],
      { ...start, limitMinor: 240_000 },
      'limit_exceeded',
    ],
    [
      'it fits even if every item asking ahead is accepted',
      [[100_000, 1_000, true]],
      [150_000, 1_000],
      start,
      'enquire',
    ],
    // The item ahead may turn out an unknown account, and then this one fits: its answer is awaited.
    ['it fits only if an item asking ahead is refused', [[200_000, 1_000, true]], [150_000, 1_000], start, 'wait'],
    [
      'an item ahead that does not fit takes nothing',
      [
        [100_000, 1_000, false],
        [250_000, 1_000, false],
      ],
      [150_000, 1_000],
      start,
      'enquire',
    ],
    ['today already used', [], [1, 1_000], { ...start, usedMinor: 1_000_000 }, 'limit_exceeded'],
  ] as const)('screenItem: %s', (_, before, [amountMinor, feeMinor], start, expected) => {
    expect(
      screenItem(
        before.map(([a, f, asking]) => ({ amountMinor: a, feeMinor: f, asking })),
        { amountMinor, feeMinor },
        start,
      ),
    ).toBe(expected);
  });

  it('derives an item reference from the batch and its index', () => {
    expect(batchItemReference('payroll-11', 0)).toBe('payroll-11-0');
    expect(batchItemReference('payroll-11', 999)).toBe('payroll-11-999');
  });

  it('fingerprints a batch by everything but its reference, defaults applied', () => {
    const item = {
      amount_minor: 100,
      recipient_account: '0123456789',
      recipient_bank_code: '058',
      narration: 'n',
      metadata: {},
    };
    const base = batchFingerprint({ atomic: false, metadata: {}, transfers: [item] });
    expect(batchFingerprint({ atomic: false, metadata: {}, transfers: [{ ...item }] })).toBe(base);
    expect(batchFingerprint({ atomic: true, metadata: {}, transfers: [item] })).not.toBe(base);
    expect(batchFingerprint({ atomic: false, metadata: { a: 1 }, transfers: [item] })).not.toBe(base);
    expect(batchFingerprint({ atomic: false, metadata: {}, transfers: [{ ...item, reference: 'r' }] })).not.toBe(base);
    expect(batchFingerprint({ atomic: false, metadata: {}, transfers: [item, item] })).not.toBe(base);
  });

  it.each([
    ['queued', null, 'pending'],
    ['refused', null, 'refused'],
    ['accepted', 'pending', 'pending'],
    ['accepted', 'processing', 'pending'],
    ['accepted', 'completed', 'successful'],
    ['accepted', 'failed', 'failed'],
  ] as const)('an item %s with its transfer %s reads %s', (item, transfer, status) => {
    expect(batchItemStatus(item, transfer)).toBe(status);
  });
});
