// The ledger as the property suites see it: a tenant's accounts read back in one statement, and a
// model of what they must hold, written here by hand (never derived from the movement functions it
// checks). `test/property/ledger-model.test.ts` drives the real ledger (postMovement and the
// movement functions the activities post) and this model with the same random commands.
import { randomUUID } from 'node:crypto';
import type { EntityManager } from '@mikro-orm/postgresql';
import { expect } from 'vitest';
import { openCardAccount, openTenantAccounts } from '../../src/ledger/ledger.ts';
import type { MikroORM } from '../../src/orm.ts';

export const SYSTEM_ACCOUNTS = ['external_funding', 'bank_settlement', 'fee_revenue', 'inbound_clearing'] as const;
export type SystemAccount = (typeof SYSTEM_ACCOUNTS)[number];

/** The reference fee schedule (decisions §4), in BigInt so that no rounding can hide in it. */
export function referenceFee(amountMinor: number): number {
  const amount = BigInt(amountMinor);
  if (amount <= 5_000n * 100n) return 10 * 100;
  if (amount <= 50_000n * 100n) return 25 * 100;
  return 50 * 100;
}

/**
 * What the books must hold for one tenant: its accounts by code (`wallet`, `in_flight`,
 * `card:<id>`), what its entries moved into or out of each system account, and how many entries
 * and postings it has.
 */
export interface LedgerState {
  accounts: Record<string, number>;
  systemFlows: Record<SystemAccount, number>;
  entries: number;
  postings: number;
}

export function emptyState(cardIds: string[]): LedgerState {
  const accounts: Record<string, number> = { wallet: 0, in_flight: 0 };
  for (const card of cardIds) accounts[`card:${card}`] = 0;
  return {
    accounts,
    systemFlows: { external_funding: 0, bank_settlement: 0, fee_revenue: 0, inbound_clearing: 0 },
    entries: 0,
    postings: 0,
  };
}

export function cloneState(state: LedgerState): LedgerState {
  return {
    accounts: { ...state.accounts },
    systemFlows: { ...state.systemFlows },
    entries: state.entries,
    postings: state.postings,
  };
}

/** One tenant's books as PostgreSQL holds them, with every invariant breach found on the way. */
export interface BooksSnapshot extends LedgerState {
  /** Each breach named: an unbalanced entry, a balance that is not its postings, a negative account. */
  breaches: string[];
}

interface SnapshotRow {
  entries: number;
  postings: number;
  total: string;
  unbalanced: string[] | null;
  accounts: { code: string; balance: string; postings: string; allow_negative: boolean }[];
  system_flows: Record<string, string> | null;
  negative_system: string[] | null;
}

/**
 * One tenant's books in one statement. Postings are found through the tenant's entries by
 * `= any(array(…))`, which keeps the planner on postings_entry_idx: a join let it scan every
 * posting, and each check grew with the run.
 */
export const BOOKS_SQL = `with entries as (select id from journal_entries where tenant_id = ?),
          lines as (select entry_id, account_id, amount_minor from postings
                     where entry_id = any (array(select id from journal_entries where tenant_id = ?))),
          own as (select a.id, a.code, a.balance_minor, a.allow_negative from ledger_accounts a where a.tenant_id = ?)
     select (select count(*) from entries)::int as entries,
            (select count(*) from lines)::int as postings,
            (select coalesce(sum(amount_minor), 0) from lines)::text as total,
            (select array_agg(entry_id::text) from (select entry_id from lines group by entry_id
                                                     having sum(amount_minor) <> 0) u) as unbalanced,
            (select json_agg(json_build_object(
                      'code', o.code, 'balance', o.balance_minor::text, 'allow_negative', o.allow_negative,
                      'postings', (select coalesce(sum(p.amount_minor), 0) from postings p where p.account_id = o.id)::text))
               from own o) as accounts,
            (select json_object_agg(a.code, f.total::text)
               from (select account_id, sum(amount_minor) as total from lines group by account_id) f
               join ledger_accounts a on a.id = f.account_id where a.tenant_id is null) as system_flows,
            (select array_agg(code) from ledger_accounts
              where tenant_id is null and not allow_negative and balance_minor < 0) as negative_system`;

/**
 * Reads one tenant's books in one statement, indexed by tenant, so that the check costs the same
 * after 50,000 sequences as after one: its entries and postings, every entry balanced, the sum of
 * its postings, each of its accounts with the sum of its postings, the flows into system accounts,
 * and any system account that may not go negative and is below zero.
 */
export async function readBooks(em: EntityManager, tenantId: string): Promise<BooksSnapshot> {
  const [row] = await em.execute<SnapshotRow[]>(BOOKS_SQL, [tenantId, tenantId, tenantId]);
  const breaches: string[] = [];
  const snapshot = row!;
  if (snapshot.total !== '0') breaches.push(`the tenant's postings sum to ${snapshot.total}, not 0`);
  for (const entry of snapshot.unbalanced ?? []) breaches.push(`entry ${entry} does not balance`);
  for (const code of snapshot.negative_system ?? []) breaches.push(`system account ${code} is negative`);
  const accounts: Record<string, number> = {};
  for (const account of snapshot.accounts) {
    const balance = Number(account.balance);
    accounts[account.code] = balance;
    if (account.balance !== account.postings) {
      breaches.push(`${account.code} holds ${account.balance} but its postings sum to ${account.postings}`);
    }
    if (balance < 0 && !account.allow_negative) breaches.push(`${account.code} is negative: ${balance}`);
  }
  const systemFlows = { external_funding: 0, bank_settlement: 0, fee_revenue: 0, inbound_clearing: 0 };
  for (const [code, total] of Object.entries(snapshot.system_flows ?? {})) {
    systemFlows[code as SystemAccount] = Number(total);
  }
  return { accounts, systemFlows, entries: snapshot.entries, postings: snapshot.postings, breaches };
}

/** The books hold exactly what the model says, and break no invariant. */
export function expectBooks(snapshot: BooksSnapshot, model: LedgerState, context: string): void {
  expect(snapshot.breaches, context).toEqual([]);
  const { breaches: _breaches, ...state } = snapshot;
  expect(state, context).toEqual(model);
}

/**
 * Fresh tenants for the property runs, made a few hundred at a time in one transaction (a tenant
 * each cost a transaction of its own and more than a quarter of a sequence's time): each one's row,
 * its wallet and in-flight accounts opened by openTenantAccounts and its card accounts by
 * openCardAccount, exactly as production opens them, all at zero. API keys are left out: the
 * ledger never reads them.
 */
export class TenantPool {
  private ready: { tenantId: string; cardIds: string[] }[] = [];
  private readonly orm: MikroORM;
  private readonly cards: number;
  private readonly batch: number;

  constructor(orm: MikroORM, cards: number, batch = 200) {
    this.orm = orm;
    this.cards = cards;
    this.batch = batch;
  }

  async next(): Promise<{ tenantId: string; cardIds: string[] }> {
    if (this.ready.length === 0) await this.fill();
    return this.ready.pop()!;
  }

  private async fill(): Promise<void> {
    const made = Array.from({ length: this.batch }, () => ({
      tenantId: randomUUID(),
      cardIds: Array.from({ length: this.cards }, () => randomUUID()),
    }));
    await this.orm.em.fork().transactional(async (tx) => {
      await tx.execute(
        `insert into tenants (id, owner_id, name) select id::uuid, id::uuid, 'property' from unnest(string_to_array(?, ',')) as id`,
        [made.map((tenant) => tenant.tenantId).join(',')],
      );
      for (const { tenantId, cardIds } of made) {
        await openTenantAccounts(tx, tenantId);
        for (const cardId of cardIds) await openCardAccount(tx, tenantId, cardId);
      }
    });
    this.ready.push(...made);
  }
}
