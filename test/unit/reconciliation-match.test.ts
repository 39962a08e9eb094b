// The matching rules of daily reconciliation (src/reconciliation/match.ts), one by one.
import { describe, expect, it } from 'vitest';
import type { SettlementItem } from '../../src/connectors/capabilities.ts';
import { type OurTransaction, dayAfter, dayBounds, keysOf, matchDay } from '../../src/reconciliation/match.ts';

const line = (fields: Partial<SettlementItem> & Pick<SettlementItem, 'reference'>): SettlementItem => ({
  kind: 'transfer',
  sessionId: `s-${fields.reference}`,
  amountMinor: 100_000,
  status: 'successful',
  provider: null,
  accountNumber: '0123456789',
  valueTime: '2026-11-23T10:00:00.000Z',
  ...fields,
});

const ours = (fields: Partial<OurTransaction> & Pick<OurTransaction, 'reference'>): OurTransaction => ({
  kind: 'transfer',
  sessionId: `s-${fields.reference}`,
  amountMinor: 100_000,
  status: 'completed',
  tenantId: 'tenant-a',
  transferId: fields.reference,
  tenantReference: `ref-${fields.reference}`,
  onDay: true,
  ...fields,
});

const outcomes = (items: ReturnType<typeof matchDay>) => items.map((item) => `${item.reference}:${item.outcome}`);

describe('matchDay', () => {
  it('matches a settled transfer and a failed one, to the kobo and by status', () => {
    const items = matchDay(
      [line({ reference: 't1' }), line({ reference: 't2', status: 'failed', amountMinor: 5_050 })],
      [ours({ reference: 't1' }), ours({ reference: 't2', status: 'failed', amountMinor: 5_050 })],
      new Set(),
    );
    expect(outcomes(items)).toEqual(['t1:matched', 't2:matched']);
    expect(items[0]).toMatchObject({ bankAmountMinor: 100_000, ourAmountMinor: 100_000, tenantReference: 'ref-t1' });
  });

  it('finds an amount one kobo apart, and a status the bank contradicts', () => {
    const items = matchDay(
      [line({ reference: 't1', amountMinor: 100_001 }), line({ reference: 't2', status: 'failed' })],
      [ours({ reference: 't1' }), ours({ reference: 't2' })],
      new Set(),
    );
    expect(outcomes(items)).toEqual(['t1:amount_differs', 't2:status_differs']);
    expect(items[0]).toMatchObject({ bankAmountMinor: 100_001, ourAmountMinor: 100_000 });
    expect(items[1]).toMatchObject({ bankStatus: 'failed', ourStatus: 'completed' });
  });

  it('says which side lacks a transaction', () => {
    const items = matchDay([line({ reference: 'bank-only' })], [ours({ reference: 'ours-only' })], new Set());
    expect(outcomes(items)).toEqual(['bank-only:missing_ours', 'ours-only:missing_at_bank']);
    expect(items[0]).toMatchObject({ tenantId: null, ourAmountMinor: null, bankAmountMinor: 100_000 });
    expect(items[1]).toMatchObject({ tenantId: 'tenant-a', bankAmountMinor: null, ourAmountMinor: 100_000 });
  });

  it('falls back to the session id when the references differ', () => {
    const items = matchDay([line({ reference: 'BANKREF', sessionId: 's-t1' })], [ours({ reference: 't1' })], new Set());
    expect(outcomes(items)).toEqual(['BANKREF:matched']);
    expect(items[0]!.transferId).toBe('t1');
  });

  it('never matches a transfer to a credit with the same reference', () => {
    const items = matchDay(
      [line({ reference: 'x', kind: 'inbound_credit', sessionId: 's-x' })],
      [ours({ reference: 'x' })],
      new Set(),
    );
    expect(outcomes(items)).toEqual(['x:missing_ours', 'x:missing_at_bank']);
  });

  it('matches one of ours to one line: a line listed twice is a line we lack', () => {
    const items = matchDay(
      [line({ reference: 't1' }), line({ reference: 't1' })],
      [ours({ reference: 't1' })],
      new Set(),
    );
    expect(outcomes(items)).toEqual(['t1:matched', 't1:missing_ours']);
  });

  it('excuses ours that the bank lists on the neighbouring day, and only those', () => {
    const elsewhere = keysOf([line({ reference: 'late' }), line({ reference: 'other', sessionId: 's-early' })]);
    const items = matchDay(
      [],
      [ours({ reference: 'late' }), ours({ reference: 'early' }), ours({ reference: 'lost' })],
      elsewhere,
    );
    expect(outcomes(items)).toEqual(['lost:missing_at_bank']);
  });

  it('reports ours from another day only when the statement lists them', () => {
    const items = matchDay(
      [line({ reference: 't1' })],
      [ours({ reference: 't1', onDay: false }), ours({ reference: 't2', onDay: false })],
      new Set(),
    );
    expect(outcomes(items)).toEqual(['t1:matched']);
  });

  it('treats a credit as ours once applied: a refused one is a status the bank does not share', () => {
    const credit = { kind: 'inbound_credit' as const, tenantReference: null, transferId: null };
    const items = matchDay(
      [line({ reference: 'c1', kind: 'inbound_credit' }), line({ reference: 'c2', kind: 'inbound_credit' })],
      [
        ours({ reference: 'c1', status: 'applied', ...credit }),
        ours({ reference: 'c2', status: 'refused', ...credit }),
      ],
      new Set(),
    );
    expect(outcomes(items)).toEqual(['c1:matched', 'c2:status_differs']);
  });
});

describe('UTC days', () => {
  it('bounds a day and steps across months and leap days', () => {
    expect(dayBounds('2028-02-28')).toEqual({
      from: new Date('2028-02-28T00:00:00.000Z'),
      to: new Date('2028-02-29T00:00:00.000Z'),
    });
    expect(dayAfter('2028-02-28', 1)).toBe('2028-02-29');
    expect(dayAfter('2026-12-31', 1)).toBe('2027-01-01');
    expect(dayAfter('2026-03-01', -1)).toBe('2026-02-28');
  });
});
