import { describe, expect, it } from 'vitest';
import {
  type AccountRef,
  type Movement,
  cardAuthorizationClear,
  cardAuthorizationHold,
  cardAuthorizationRelease,
  cardFunding,
  cardFundingReverse,
  discrepancyCorrection,
  heldCreditRelease,
  inboundCredit,
  inboundCreditHeld,
  transferReserve,
  transferReversal,
  transferReverse,
  transferBatchItemRelease,
  transferBatchReserve,
  transferSettle,
  walletFunding,
} from '../../src/ledger/movements.ts';
import { InsufficientFundsError, UnknownAccountError, planEntriesOnLockedAccounts } from '../../src/ledger/ledger.ts';
import { FEE_TIERS } from '../support/fee-tiers.ts';

/** A movement's postings as `account → kobo`, e.g. {wallet: -301000, in_flight: 301000}. */
function byAccount(movement: Movement): Record<string, number> {
  const name = (account: AccountRef) =>
    'system' in account
      ? account.system
      : 'tenant' in account
        ? account.tenant
        : 'card' in account
          ? `card:${account.card}`
          : `card-hold:${account.cardHold}`;
  return Object.fromEntries(movement.postings.map((posting) => [name(posting.account), posting.amountMinor]));
}

const sum = (movement: Movement) => movement.postings.reduce((total, posting) => total + posting.amountMinor, 0);

const transfer = (amountMinor: number, feeMinor: number) => ({
  transferId: 't-1',
  reference: 'inv-42',
  amountMinor,
  feeMinor,
});

describe('transfer movements', () => {
  it.each(FEE_TIERS)('amount %i with fee %i: reserve, settle and reverse balance to zero', (amountMinor, feeMinor) => {
    const amounts = transfer(amountMinor, feeMinor);
    expect(byAccount(transferReserve(amounts))).toEqual({
      wallet: -(amountMinor + feeMinor),
      in_flight: amountMinor + feeMinor,
    });
    expect(byAccount(transferSettle(amounts))).toEqual({
      in_flight: -(amountMinor + feeMinor),
      bank_settlement: amountMinor,
      fee_revenue: feeMinor,
    });
    expect(byAccount(transferReverse(amounts, 'failed at the bank'))).toEqual({
      in_flight: -(amountMinor + feeMinor),
      wallet: amountMinor + feeMinor,
    });
    for (const movement of [transferReserve(amounts), transferSettle(amounts), transferReverse(amounts, 'x')]) {
      expect(sum(movement)).toBe(0);
    }
  });

  it('leaves out the fee posting of a fee-free transfer (the ledger refuses zero postings)', () => {
    expect(byAccount(transferSettle(transfer(300_000, 0)))).toEqual({ in_flight: -300_000, bank_settlement: 300_000 });
  });

  it('keys each movement by the transfer, so posting it again applies it once', () => {
    const amounts = transfer(1, 0);
    expect(
      [transferReserve(amounts), transferSettle(amounts), transferReverse(amounts, 'r')].map((m) => [
        m.idempotencyKey,
        m.kind,
      ]),
    ).toEqual([
      ['transfer:t-1:reserve', 'transfer_reserve'],
      ['transfer:t-1:settle', 'transfer_settle'],
      ['transfer:t-1:reverse', 'transfer_reverse'],
    ]);
    expect(transferReverse(amounts, 'no such account').description).toBe('reverse transfer inv-42: no such account');
  });
});

describe('a reversal after success (decisions §21)', () => {
  it.each([
    [300_000, 1_000, { bank_settlement: -300_000, fee_revenue: -1_000, wallet: 301_000 }],
    [1_234_567, 2_500, { bank_settlement: -1_234_567, fee_revenue: -2_500, wallet: 1_237_067 }],
    [500, 0, { bank_settlement: -500, wallet: 500 }],
  ] as const)(
    'amount %i, fee %i: the settlement undone, amount + fee back to the wallet',
    (amountMinor, feeMinor, expected) => {
      const movement = transferReversal(transfer(amountMinor, feeMinor));
      expect(byAccount(movement)).toEqual(expected);
      expect(sum(movement)).toBe(0);
      // Its own key and kind: never the failure's `reverse`, and the statement line a tenant reads.
      expect([movement.idempotencyKey, movement.kind]).toEqual(['transfer:t-1:reversal', 'transfer_reversal']);
    },
  );

  it('undoes exactly what the settlement did', () => {
    const amounts = transfer(5_000_001, 5_000);
    const settled = byAccount(transferSettle(amounts));
    const reversed = byAccount(transferReversal(amounts));
    expect(reversed.bank_settlement).toBe(-settled.bank_settlement!);
    expect(reversed.fee_revenue).toBe(-settled.fee_revenue!);
  });
});

describe('discrepancy corrections', () => {
  it.each([
    ['successful', 'failed', 300_000, 1_000, { wallet: -301_000, bank_settlement: 300_000, fee_revenue: 1_000 }],
    ['failed', 'completed', 1_234_567, 2_500, { wallet: 1_237_067, bank_settlement: -1_234_567, fee_revenue: -2_500 }],
    ['successful', 'failed', 500, 0, { wallet: -500, bank_settlement: 500 }],
  ] as const)('bank %s against books %s, amount %i, fee %i', (bank, ours, amountMinor, feeMinor, expected) => {
    const movement = discrepancyCorrection(transfer(amountMinor, feeMinor), { id: 'd-1', ours, bank });
    expect(byAccount(movement)).toEqual(expected);
    expect(sum(movement)).toBe(0);
    expect(movement.idempotencyKey).toBe('transfer:t-1:discrepancy:d-1');
  });
});

describe('inbound credits, card fundings and wallet funding', () => {
  it.each([1, 10_000, 100_000_000_000])('move %i kobo and balance to zero', (amountMinor) => {
    const credit = inboundCredit({
      provider: 'wema',
      transactionReference: 'bank-ref-1',
      accountNumber: '8100000019',
      senderName: 'Ada',
      amountMinor,
    });
    expect(byAccount(credit)).toEqual({ inbound_clearing: -amountMinor, wallet: amountMinor });
    expect(credit.idempotencyKey).toBe('inbound-credit:wema:bank-ref-1');

    const funding = { fundingId: 'f-1', cardId: 'c-1', amountMinor };
    expect(byAccount(cardFunding(funding))).toEqual({ wallet: -amountMinor, 'card:c-1': amountMinor });
    expect(byAccount(cardFundingReverse(funding))).toEqual({ 'card:c-1': -amountMinor, wallet: amountMinor });
    expect([cardFunding(funding).idempotencyKey, cardFundingReverse(funding).idempotencyKey]).toEqual([
      'card-funding:f-1',
      'card-funding:f-1:reverse',
    ]);

    const operator = walletFunding({ tenantId: 'tn-1', reference: 'top-up-1', amountMinor });
    expect(byAccount(operator)).toEqual({ external_funding: -amountMinor, wallet: amountMinor });
    expect(operator.idempotencyKey).toBe('wallet-funding:tn-1:top-up-1');

    for (const movement of [credit, cardFunding(funding), cardFundingReverse(funding), operator]) {
      expect(sum(movement)).toBe(0);
    }
  });
});

describe("an inbound credit's provider fee (decisions §18)", () => {
  const credit = (amountMinor: number, feeMinor?: number) =>
    inboundCredit({
      provider: 'paystack',
      transactionReference: 'dva_1',
      accountNumber: '9930000001',
      senderName: 'Ada',
      amountMinor,
      ...(feeMinor === undefined ? {} : { feeMinor }),
    });
  const postings = (movement: Movement) =>
    movement.postings.map((posting) => [
      'system' in posting.account ? posting.account.system : 'tenant' in posting.account ? posting.account.tenant : '?',
      posting.amountMinor,
    ]);

  it.each([
    // amount, fee: the wallet credited the amount then debited the fee; clearing gives up the rest.
    [300_000, 3_000, -297_000],
    [1_234_567, 12_346, -1_222_221],
    [5_000_000, 30_000, -4_970_000],
    [2, 1, -1],
  ])('%i kobo with a fee of %i: in one entry, the wallet +amount then −fee, clearing %i', (amount, fee, clearing) => {
    const movement = credit(amount, fee);
    expect(postings(movement)).toEqual([
      ['inbound_clearing', clearing],
      ['wallet', amount],
      ['wallet', -fee],
    ]);
    expect(sum(movement)).toBe(0);
    expect([movement.kind, movement.idempotencyKey]).toEqual(['inbound_credit', 'inbound-credit:paystack:dva_1']);
  });

  it('moves no fee posting for a fee of 0, or none given', () => {
    for (const movement of [credit(10_000, 0), credit(10_000)]) {
      expect(postings(movement)).toEqual([
        ['inbound_clearing', -10_000],
        ['wallet', 10_000],
      ]);
    }
  });

  it.each([
    [10_000, 10_000],
    [10_000, 10_001],
    [10_000, -1],
    [10_000, 0.5],
    [10_000, Number.NaN],
  ])('refuses a credit of %i with a fee of %d', (amount, fee) => {
    expect(() => credit(amount, fee)).toThrow(RangeError);
  });
});

describe('a credit to a closed account, held in suspense (decisions §21)', () => {
  const held = (amountMinor: number, feeMinor?: number) => ({
    provider: 'wema',
    transactionReference: 'SBXCR1',
    accountNumber: '8100000011',
    senderName: 'EMEKA NWOSU',
    amountMinor,
    ...(feeMinor === undefined ? {} : { feeMinor }),
  });

  it.each([
    [10_000, undefined, 10_000],
    [10_000, 0, 10_000],
    [1_000_000, 5_000, 995_000],
    [2, 1, 1],
  ])(
    'amount %i with a provider fee of %s: suspense holds %i, and a release moves exactly that to the wallet',
    (amount, fee, net) => {
      const booked = inboundCreditHeld(held(amount, fee));
      expect(byAccount(booked)).toEqual({ inbound_clearing: -net, suspense: net });
      expect(
        booked.postings.every((posting) => !('tenant' in posting.account && posting.account.tenant === 'wallet')),
      ).toBe(true);
      expect(byAccount(heldCreditRelease(held(amount, fee)))).toEqual({ suspense: -net, wallet: net });
      expect([sum(booked), sum(heldCreditRelease(held(amount, fee)))]).toEqual([0, 0]);
    },
  );

  it('is booked under the credit’s own key (once, one way or the other), its release under a key of its own', () => {
    expect(inboundCreditHeld(held(500)).idempotencyKey).toBe(inboundCredit({ ...held(500) }).idempotencyKey);
    expect(inboundCreditHeld(held(500)).idempotencyKey).toBe('inbound-credit:wema:SBXCR1');
    expect(heldCreditRelease(held(500)).idempotencyKey).toBe('inbound-credit-release:wema:SBXCR1');
    expect([inboundCreditHeld(held(500)).kind, heldCreditRelease(held(500)).kind]).toEqual([
      'inbound_credit_held',
      'inbound_credit_release',
    ]);
  });

  it('refuses nothing held: a credit of 0, or a fee as large as the credit', () => {
    expect(() => inboundCreditHeld(held(0))).toThrow(RangeError);
    expect(() => inboundCreditHeld(held(100, 100))).toThrow(RangeError);
    expect(() => heldCreditRelease(held(100, -1))).toThrow(RangeError);
  });

  it('reserves a held credit’s return from suspense, and a failure gives it back there', () => {
    const amounts = { ...transfer(995_000, 0), fundedFrom: 'suspense' as const };
    expect(byAccount(transferReserve(amounts))).toEqual({ suspense: -995_000, in_flight: 995_000 });
    expect(byAccount(transferReverse(amounts, 'failed at the bank'))).toEqual({
      in_flight: -995_000,
      suspense: 995_000,
    });
    expect(byAccount(transferSettle(amounts))).toEqual({ in_flight: -995_000, bank_settlement: 995_000 });
    // The same keys as any transfer's: `ledger verify` counts its reservation and its reversal alike.
    expect(transferReserve(amounts).idempotencyKey).toBe(transferReserve(transfer(995_000, 0)).idempotencyKey);
    expect(byAccount(transferReserve({ ...transfer(995_000, 1_000), fundedFrom: 'wallet' }))).toEqual({
      wallet: -996_000,
      in_flight: 996_000,
    });
  });
});

describe('card authorization movements', () => {
  const authorization = { authorizationId: 'auth-1', cardId: 'c-1', amountMinor: 250_000 };

  it('holds the amount, then clears part of it to the processor and returns the rest, or releases it all', () => {
    expect(byAccount(cardAuthorizationHold(authorization))).toEqual({
      'card:c-1': -250_000,
      'card-hold:c-1': 250_000,
    });
    expect(byAccount(cardAuthorizationClear({ ...authorization, clearedMinor: 200_001 }))).toEqual({
      'card-hold:c-1': -250_000,
      card_settlement: 200_001,
      'card:c-1': 49_999,
    });
    expect(byAccount(cardAuthorizationRelease(authorization))).toEqual({
      'card-hold:c-1': -250_000,
      'card:c-1': 250_000,
    });
  });

  it('leaves out the card posting of a full clearing, and keys each step by the card and the authorization', () => {
    const full = cardAuthorizationClear({ ...authorization, clearedMinor: 250_000 });
    expect(byAccount(full)).toEqual({ 'card-hold:c-1': -250_000, card_settlement: 250_000 });
    const movements = [cardAuthorizationHold(authorization), full, cardAuthorizationRelease(authorization)];
    expect(movements.map((movement) => movement.idempotencyKey)).toEqual([
      'card:c-1:authorization:auth-1:hold',
      'card:c-1:authorization:auth-1:clear',
      'card:c-1:authorization:auth-1:release',
    ]);
    for (const movement of movements) expect(sum(movement)).toBe(0);
    // Ids are the processor's per card: the same id on another card is another entry.
    const elsewhere = { ...authorization, cardId: 'c-2' };
    expect(
      [cardAuthorizationHold(elsewhere), cardAuthorizationRelease(elsewhere)].map(
        (movement) => movement.idempotencyKey,
      ),
    ).toEqual(['card:c-2:authorization:auth-1:hold', 'card:c-2:authorization:auth-1:release']);
  });
});

describe('amounts a movement refuses', () => {
  // Found by test/property/ledger-model.test.ts: walletFunding of -1 kobo was posted as a withdrawal.
  it.each([-1, -500_000, 0, 0.5, Number.NaN, 100_000_000_000_001])(
    '%d kobo: no movement runs backwards',
    (amountMinor) => {
      const funding = { fundingId: 'f-1', cardId: 'c-1', amountMinor };
      expect(() => walletFunding({ tenantId: 'tn-1', reference: 'r', amountMinor })).toThrow(RangeError);
      expect(() => cardFunding(funding)).toThrow(RangeError);
      expect(() => cardFundingReverse(funding)).toThrow(RangeError);
      expect(() =>
        inboundCredit({ provider: 'p', transactionReference: 't', accountNumber: 'a', senderName: 's', amountMinor }),
      ).toThrow(RangeError);
      for (const build of [
        transferReserve,
        transferSettle,
        (t: ReturnType<typeof transfer>) => transferReverse(t, 'r'),
      ]) {
        expect(() => build(transfer(amountMinor, 1_000))).toThrow(RangeError);
      }
      expect(() =>
        discrepancyCorrection(transfer(amountMinor, 0), { id: 'd', ours: 'failed', bank: 'successful' }),
      ).toThrow(RangeError);
      const held = { authorizationId: 'a-1', cardId: 'c-1', amountMinor };
      expect(() => cardAuthorizationHold(held)).toThrow(RangeError);
      expect(() => cardAuthorizationRelease(held)).toThrow(RangeError);
      expect(() => cardAuthorizationClear({ ...held, clearedMinor: 1 })).toThrow(RangeError);
      expect(() =>
        cardAuthorizationClear({
          authorizationId: 'a-1',
          cardId: 'c-1',
          amountMinor: 1_000,
          clearedMinor: amountMinor,
        }),
      ).toThrow(RangeError);
    },
  );

  it('clears at most the hold', () => {
    const hold = { authorizationId: 'a-1', cardId: 'c-1', amountMinor: 1_000 };
    expect(sum(cardAuthorizationClear({ ...hold, clearedMinor: 1_000 }))).toBe(0);
    expect(() => cardAuthorizationClear({ ...hold, clearedMinor: 1_001 })).toThrow(RangeError);
  });

  it('takes a fee of 0 but not a negative one', () => {
    expect(byAccount(transferReserve(transfer(100, 0)))).toEqual({ wallet: -100, in_flight: 100 });
    expect(() => transferReserve(transfer(100, -1))).toThrow(RangeError);
  });
});

describe('planEntriesOnLockedAccounts (a card decision: movements on accounts it holds locked)', () => {
  const card = 'c-1';
  const locked = (cardMinor: number, walletMinor: number, allowNegative = false) =>
    new Map([
      [`card:${card}`, { id: 'a-card', balanceMinor: cardMinor, allowNegative }],
      [`card-hold:${card}`, { id: 'a-hold', balanceMinor: 7_000, allowNegative }],
      ['wallet', { id: 'a-wallet', balanceMinor: walletMinor, allowNegative }],
    ]);

  it('works out a JIT funding then a hold: each posting its balance after, each account its net change', () => {
    const plan = planEntriesOnLockedAccounts(
      [
        cardFunding({ fundingId: 'f-1', cardId: card, amountMinor: 4_000 }),
        cardAuthorizationHold({ authorizationId: 'auth-1', cardId: card, amountMinor: 10_000 }),
      ],
      locked(6_000, 4_000),
    );
    expect(plan.entries.map((entry) => entry.idempotencyKey)).toEqual([
      'card-funding:f-1',
      `card:${card}:authorization:auth-1:hold`,
    ]);
    expect(
      plan.postings.map(({ accountId, amountMinor, balanceAfterMinor }) => [accountId, amountMinor, balanceAfterMinor]),
    ).toEqual([
      ['a-wallet', -4_000, 0],
      ['a-card', 4_000, 10_000],
      ['a-card', -10_000, 0],
      ['a-hold', 10_000, 17_000],
    ]);
    expect(plan.postings[0]!.entryId).toBe(plan.entries[0]!.id);
    expect(plan.postings[3]!.entryId).toBe(plan.entries[1]!.id);
    expect(plan.accounts).toEqual([
      { id: 'a-wallet', beforeMinor: 4_000, deltaMinor: -4_000 },
      { id: 'a-card', beforeMinor: 6_000, deltaMinor: -6_000 },
      { id: 'a-hold', beforeMinor: 7_000, deltaMinor: 10_000 },
    ]);
  });

  it('refuses, planning nothing, what would take an account below zero by a single kobo', () => {
    const hold = cardAuthorizationHold({ authorizationId: 'auth-2', cardId: card, amountMinor: 10_001 });
    expect(() => planEntriesOnLockedAccounts([hold], locked(10_000, 0))).toThrow(InsufficientFundsError);
    expect(planEntriesOnLockedAccounts([hold], locked(10_001, 0)).accounts[0]).toEqual({
      id: 'a-card',
      beforeMinor: 10_001,
      deltaMinor: -10_001,
    });
  });

  it("refuses with the ledger's error, code and shortfall, as postEntry does", () => {
    const hold = cardAuthorizationHold({ authorizationId: 'auth-2', cardId: card, amountMinor: 10_001 });
    expect(() => planEntriesOnLockedAccounts([hold], locked(10_000, 0))).toThrow(
      expect.objectContaining({
        code: 'insufficient_balance',
        accountId: 'a-card',
        requiredMinor: 10_001,
        availableMinor: 10_000,
      }),
    );
  });

  it('takes an account that may go negative below zero, as postEntry does', () => {
    const hold = cardAuthorizationHold({ authorizationId: 'auth-2', cardId: card, amountMinor: 10_001 });
    expect(planEntriesOnLockedAccounts([hold], locked(10_000, 0, true)).postings[0]).toMatchObject({
      accountId: 'a-card',
      amountMinor: -10_001,
      balanceAfterMinor: -1,
    });
  });

  it('refuses a movement on an account the caller does not hold, or on a system account', () => {
    const other = cardAuthorizationHold({ authorizationId: 'auth-3', cardId: 'c-2', amountMinor: 1 });
    expect(() => planEntriesOnLockedAccounts([other], locked(5, 0))).toThrow(UnknownAccountError);
    const clearing = cardAuthorizationClear({
      authorizationId: 'auth-1',
      cardId: card,
      amountMinor: 10,
      clearedMinor: 10,
    });
    expect(() => planEntriesOnLockedAccounts([clearing], locked(5, 0))).toThrow(UnknownAccountError);
  });
});

describe('transfer batch movements', () => {
  it('reserves an atomic batch in one entry, and releases a refused item once', () => {
    expect(transferBatchReserve({ batchId: 'b1', batchReference: 'pay-11', totalMinor: 1_104_500 })).toEqual({
      idempotencyKey: 'transfer-batch:b1:reserve',
      kind: 'transfer_batch_reserve',
      description: 'reserve transfer batch pay-11',
      postings: [
        { account: { tenant: 'wallet' }, amountMinor: -1_104_500 },
        { account: { tenant: 'in_flight' }, amountMinor: 1_104_500 },
      ],
    });
    const release = transferBatchItemRelease({
      batchId: 'b1',
      index: 3,
      reference: 'pay-11-3',
      amountMinor: 300_000,
      feeMinor: 1_000,
      reason: 'invalid_account',
    });
    expect(release.idempotencyKey).toBe('transfer-batch:b1:item:3:release');
    expect(release.postings).toEqual([
      { account: { tenant: 'in_flight' }, amountMinor: -301_000 },
      { account: { tenant: 'wallet' }, amountMinor: 301_000 },
    ]);
    expect(() => transferBatchReserve({ batchId: 'b1', batchReference: 'x', totalMinor: 0 })).toThrow(RangeError);
  });
});
