// Reading one tenant account's history from the journal: its postings in a time range, newest
// first, each with the balance it left (written with the posting, under the account's row lock, so
// the running balance is exact whatever else moved at the same time), and an account's balance as
// it was at a moment (the sum of its postings up to then). Wallet statements are built on these.
import type { EntityManager } from '@mikro-orm/postgresql';
import type { Window } from '../db/pages.ts';
import type { Currency } from '../lib/money.ts';
import type { TenantAccountCode } from './accounts.ts';

export interface AccountPosting {
  /** The posting's own id: increasing in the order the account's balance moved. */
  id: string;
  entryId: string;
  kind: string;
  /** The entry's business key (`transfer:<id>:reserve`…): what the movement was about. */
  idempotencyKey: string;
  amountMinor: number;
  balanceAfterMinor: number;
  createdAt: Date;
}

export interface TimeRange {
  /** Inclusive. */
  from: Date;
  /** Exclusive. */
  to: Date;
}

/**
 * The postings of the tenant's `code` account whose entries were made in `range`, newest first
 * (latest balance first), a window of them and how many there are in all.
 */
export async function accountPostings(
  em: EntityManager,
  tenantId: string,
  code: TenantAccountCode,
  range: TimeRange,
  window: Window,
  currency: Currency = 'NGN',
): Promise<{ rows: AccountPosting[]; total: number }> {
  const account = `(select id from ledger_accounts where tenant_id = ? and code = ? and currency = ?)`;
  const bounds = [tenantId, code, currency, range.from.toISOString(), range.to.toISOString()];
  const [rows, [count]] = await Promise.all([
    em.execute<
      {
        id: string;
        entry_id: string;
        kind: string;
        idempotency_key: string;
        amount_minor: string;
        balance_after_minor: string;
        created_at: Date;
      }[]
    >(
      `select p.id::text, p.entry_id, e.kind, e.idempotency_key, p.amount_minor::text,
              p.balance_after_minor::text, p.created_at
         from postings p join journal_entries e on e.id = p.entry_id
        where p.account_id = ${account} and p.created_at >= ? and p.created_at < ?
        order by p.id desc limit ? offset ?`,
      [...bounds, window.limit, window.offset],
    ),
    em.execute<{ total: string }[]>(
      `select count(*)::text as total from postings p
        where p.account_id = ${account} and p.created_at >= ? and p.created_at < ?`,
      bounds,
    ),
  ]);
  return {
    rows: rows.map((row) => ({
      id: row.id,
      entryId: row.entry_id,
      kind: row.kind,
      idempotencyKey: row.idempotency_key,
      amountMinor: Number(row.amount_minor),
      balanceAfterMinor: Number(row.balance_after_minor),
      createdAt: new Date(row.created_at),
    })),
    total: Number(count!.total),
  };
}

/**
 * The balances of the tenant's accounts as they were at `at`: the sum of each one's postings made
 * until then (0 for an account with none), and when the latest of them was made.
 */
export async function balancesAt(
  em: EntityManager,
  tenantId: string,
  codes: readonly TenantAccountCode[],
  at: Date,
  currency: Currency = 'NGN',
): Promise<{ balances: Map<TenantAccountCode, number>; lastMovedAt: Date | null }> {
  const rows = await em.execute<{ code: TenantAccountCode; balance_minor: string; last_at: Date | null }[]>(
    `select a.code, coalesce(sum(p.amount_minor), 0)::text as balance_minor, max(p.created_at) as last_at
       from ledger_accounts a left join postings p on p.account_id = a.id and p.created_at <= ?
      where a.tenant_id = ? and a.currency = ? and a.code in (${codes.map(() => '?').join(', ')})
      group by a.code`,
    [at.toISOString(), tenantId, currency, ...codes],
  );
  const balances = new Map(codes.map((code) => [code, 0]));
  let lastMovedAt: Date | null = null;
  for (const row of rows) {
    balances.set(row.code, Number(row.balance_minor));
    if (row.last_at && (!lastMovedAt || new Date(row.last_at) > lastMovedAt)) lastMovedAt = new Date(row.last_at);
  }
  return { balances, lastMovedAt };
}
