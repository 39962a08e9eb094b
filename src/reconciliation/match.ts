// Matching one day of the bank's settlement statement against our books: pure, so that every rule
// is tested on its own. A bank line finds our transaction by reference, else by session id; each
// of ours is matched once. What the bank lists and we lack is `missing_ours`; what we settled that
// day and the bank lists on no day near it is `missing_at_bank`.
import type { SettlementItem } from '../connectors/capabilities.ts';

export const OUTCOMES = ['matched', 'missing_ours', 'missing_at_bank', 'amount_differs', 'status_differs'] as const;
export type Outcome = (typeof OUTCOMES)[number];

export type Kind = SettlementItem['kind'];

/** A transfer the bank has seen, or an inbound credit, as our books record it. */
export interface OurTransaction {
  kind: Kind;
  /** As the bank knows it: a transfer's id (our reference at the bank), a credit's transaction reference. */
  reference: string;
  sessionId: string | null;
  amountMinor: number;
  /** Our status: a transfer's (`completed`, `failed`, `processing`…), a credit's (`applied`, `refused`). */
  status: string;
  tenantId: string | null;
  transferId: string | null;
  /** The tenant's own reference for a transfer. */
  tenantReference: string | null;
  /** Whether it ended (a transfer) or arrived (a credit) on the day being reconciled. */
  onDay: boolean;
}

export interface ReconciledItem {
  outcome: Outcome;
  kind: Kind;
  reference: string;
  sessionId: string | null;
  tenantId: string | null;
  transferId: string | null;
  tenantReference: string | null;
  /** A credit's provider and the account it reached (a transfer's recipient account). */
  provider: string | null;
  accountNumber: string | null;
  bankAmountMinor: number | null;
  ourAmountMinor: number | null;
  bankStatus: SettlementItem['status'] | null;
  ourStatus: string | null;
}

/**
 * Whether our status says what the bank's says: a completed transfer is a successful one; a credit
 * is booked once applied, or held in suspense (decisions §21: a closed account's), or released.
 */
export function statusAgrees(kind: Kind, bank: SettlementItem['status'], ours: string): boolean {
  if (kind === 'inbound_credit') return bank === 'successful' && ['applied', 'held', 'released'].includes(ours);
  return (bank === 'successful' && ours === 'completed') || (bank === 'failed' && ours === 'failed');
}

const key = (kind: Kind, value: string) => `${kind}\u0000${value}`;

/**
 * Every line of the day's statement, and every transaction of ours that ended that day, with its
 * outcome. `elsewhere` holds the references and session ids the bank lists on the neighbouring
 * days: ours that ended near midnight may sit on the bank's statement of the day before or after.
 */
export function matchDay(
  statement: readonly SettlementItem[],
  ours: readonly OurTransaction[],
  elsewhere: ReadonlySet<string>,
): ReconciledItem[] {
  const byReference = new Map<string, OurTransaction>();
  const bySession = new Map<string, OurTransaction>();
  for (const transaction of ours) {
    byReference.set(key(transaction.kind, transaction.reference), transaction);
    if (transaction.sessionId) bySession.set(key(transaction.kind, transaction.sessionId), transaction);
  }
  const matched = new Set<OurTransaction>();
  const items: ReconciledItem[] = [];
  for (const line of statement) {
    const candidate =
      byReference.get(key(line.kind, line.reference)) ??
      (line.sessionId ? bySession.get(key(line.kind, line.sessionId)) : undefined);
    // A transaction of ours answers one line: the bank listing it twice is a line we lack.
    const found = candidate && !matched.has(candidate) ? candidate : undefined;
    if (found) matched.add(found);
    const outcome: Outcome = !found
      ? 'missing_ours'
      : found.amountMinor !== line.amountMinor
        ? 'amount_differs'
        : statusAgrees(line.kind, line.status, found.status)
          ? 'matched'
          : 'status_differs';
    items.push({
      outcome,
      kind: line.kind,
      reference: line.reference,
      sessionId: line.sessionId || found?.sessionId || null,
      tenantId: found?.tenantId ?? null,
      transferId: found?.transferId ?? null,
      tenantReference: found?.tenantReference ?? null,
      provider: line.provider,
      accountNumber: line.accountNumber,
      bankAmountMinor: line.amountMinor,
      ourAmountMinor: found?.amountMinor ?? null,
      bankStatus: line.status,
      ourStatus: found?.status ?? null,
    });
  }
  for (const transaction of ours) {
    if (!transaction.onDay || matched.has(transaction)) continue;
    const listedNearby =
      elsewhere.has(key(transaction.kind, transaction.reference)) ||
      (transaction.sessionId !== null && elsewhere.has(key(transaction.kind, transaction.sessionId)));
    if (listedNearby) continue;
    items.push({
      outcome: 'missing_at_bank',
      kind: transaction.kind,
      reference: transaction.reference,
      sessionId: transaction.sessionId,
      tenantId: transaction.tenantId,
      transferId: transaction.transferId,
      tenantReference: transaction.tenantReference,
      provider: null,
      accountNumber: null,
      bankAmountMinor: null,
      ourAmountMinor: transaction.amountMinor,
      bankStatus: null,
      ourStatus: transaction.status,
    });
  }
  return items;
}

/** The keys `matchDay` looks for in `elsewhere`: each line's reference and session id. */
export function keysOf(statement: readonly SettlementItem[]): Set<string> {
  const keys = new Set<string>();
  for (const line of statement) {
    keys.add(key(line.kind, line.reference));
    if (line.sessionId) keys.add(key(line.kind, line.sessionId));
  }
  return keys;
}

/** A UTC day's bounds: [start, end). */
export function dayBounds(date: string): { from: Date; to: Date } {
  const from = new Date(`${date}T00:00:00.000Z`);
  return { from, to: new Date(from.getTime() + 86_400_000) };
}

/** The UTC day `days` away from `date`. */
export function dayAfter(date: string, days: number): string {
  return new Date(dayBounds(date).from.getTime() + days * 86_400_000).toISOString().slice(0, 10);
}
