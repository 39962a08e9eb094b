// The double-entry journal, and the only code that writes `journal_entries`, `postings` and
// `ledger_accounts`. Every movement of money is one journal entry whose postings sum to zero,
// written in one transaction with the balance updates it causes. A debit is a conditional update
// (`keepsBalance`: the row is only changed if it stays >= 0 for accounts that may not go negative),
// so concurrent debits can never overdraw a wallet. Entries are keyed by a business idempotency
// key: posting the same entry twice applies it once.
//
// Two writers, one set of rules: `postEntry` posts an entry on its own (its accounts locked first,
// in one statement); `planEntriesOnLockedAccounts` + `postPlanSteps` post movements on accounts the caller
// already holds locked (`lockTenantAccounts`), as steps of the caller's one write statement
// (src/db/write-statement.ts; the card decision). Both write entries and postings by the same
// inserts and move balances under the same guard, and they give the same postings and balances
// and refuse the same shortfalls (test/integration/ledger-plan-parity.test.ts).
import { randomUUID } from 'node:crypto';
import { TransactionPropagation } from '@mikro-orm/core';
import type { EntityManager } from '@mikro-orm/postgresql';
import { type NamedStatement, type SqlClient, type SqlValue, executeNumbered, prepared } from '../db/numbered-sql.ts';
import { type WriteStep, composeWrite } from '../db/write-statement.ts';
import { type Currency, assertMinorUnits } from '../lib/money.ts';
import type { SystemAccountCode, TenantAccountCode } from './accounts.ts';
import type { AccountRef, Movement } from './movements.ts';

/** The accounts every tenant mode is opened with (its suspense account comes with its first held credit). */
export const TENANT_ACCOUNTS: readonly TenantAccountCode[] = ['wallet', 'in_flight'];

export interface PostingInput {
  accountId: string;
  /** Signed kobo: positive adds to the account's balance, negative takes from it. */
  amountMinor: number;
}

export interface JournalEntryInput {
  /** Business key of the movement, e.g. `transfer:<id>:reserve`. Never random. */
  idempotencyKey: string;
  kind: string;
  tenantId: string | null;
  description?: string;
  metadata?: Record<string, unknown>;
  postings: PostingInput[];
}

export interface PostedEntry {
  entryId: string;
  /** False when an entry with this idempotency key already existed (nothing was applied). */
  created: boolean;
  /** Balance of each touched account after this entry (only when created). */
  balances: Map<string, number>;
}

/**
 * An account that may not go negative would. Its code is the transfer API's word for it; a card
 * authorization declined for want of funds says `insufficient_funds` (decisions §11), its own word.
 */
export class InsufficientFundsError extends Error {
  readonly code = 'insufficient_balance';
  readonly accountId: string;
  readonly requiredMinor: number;
  readonly availableMinor: number;
  constructor(accountId: string, requiredMinor: number, availableMinor: number) {
    super(`account ${accountId} holds ${availableMinor}, ${requiredMinor} required`);
    this.name = 'InsufficientFundsError';
    this.accountId = accountId;
    this.requiredMinor = requiredMinor;
    this.availableMinor = availableMinor;
  }
}

export class LedgerConflictError extends Error {
  readonly code = 'ledger_conflict';
  constructor(message: string) {
    super(message);
    this.name = 'LedgerConflictError';
  }
}

export class UnknownAccountError extends Error {
  readonly code = 'unknown_account';
  constructor(message: string) {
    super(message);
    this.name = 'UnknownAccountError';
  }
}

function validateEntry(input: JournalEntryInput): void {
  if (!input.idempotencyKey) throw new LedgerConflictError('a journal entry needs an idempotency key');
  if (input.postings.length < 2) throw new LedgerConflictError('a journal entry needs at least two postings');
  let sum = 0n;
  for (const posting of input.postings) {
    if (posting.amountMinor === 0) throw new LedgerConflictError('a posting cannot be zero');
    assertMinorUnits(Math.abs(posting.amountMinor), 'posting amount');
    sum += BigInt(posting.amountMinor);
  }
  if (sum !== 0n) throw new LedgerConflictError(`postings of ${input.idempotencyKey} sum to ${sum}, not zero`);
}

/**
 * The conditional debit, as SQL: the `ledger_accounts` row under `account` may take `amount` when it
 * may go negative or stays at or above zero. Every write that moves a balance uses this predicate.
 */
const keepsBalance = (account: string, amount: string) =>
  `(${account}.allow_negative or ${account}.balance_minor + ${amount} >= 0)`;

/** The same rule in code, for a balance the caller holds locked: refuse before writing, with a typed error. */
function staysWithinBalance(allowNegative: boolean, afterMinor: number | bigint): boolean {
  return allowNegative || afterMinor >= 0;
}

/** Same accounts and amounts, in any order. */
function samePostings(a: PostingInput[], b: PostingInput[]): boolean {
  const key = (p: PostingInput) => `${p.accountId}:${p.amountMinor}`;
  const left = a.map(key).sort();
  const right = b.map(key).sort();
  return left.length === right.length && left.every((value, i) => value === right[i]);
}

/** Journal entries of one tenant ($1), each unless its key is already posted: the ids of those written. */
const INSERT_ENTRIES = `insert into journal_entries (id, tenant_id, kind, idempotency_key, description, metadata)
    select e.id, $1, e.kind, e.key, e.description, e.metadata
      from unnest($2::uuid[], $3::text[], $4::text[], $5::text[], $6::jsonb[]) as e (id, kind, key, description, metadata)
    on conflict (idempotency_key) do nothing returning id`;

function entriesValues(
  tenantId: string | null,
  entries: readonly {
    id: string;
    kind: string;
    idempotencyKey: string;
    description: string | null;
    metadata: Record<string, unknown> | null;
  }[],
) {
  return [
    tenantId,
    entries.map((entry) => entry.id),
    entries.map((entry) => entry.kind),
    entries.map((entry) => entry.idempotencyKey),
    entries.map((entry) => entry.description),
    entries.map((entry) => (entry.metadata ? JSON.stringify(entry.metadata) : null)),
  ];
}

/** Postings, each with its account's balance after it; only if `onlyIf` holds, when given. */
const insertPostings = (
  onlyIf?: string,
) => `insert into postings (entry_id, account_id, amount_minor, balance_after_minor)
    select * from unnest($1::uuid[], $2::uuid[], $3::bigint[], $4::bigint[])${onlyIf ? ` where ${onlyIf}` : ''} returning 1`;

/** A posting row as written: its balance after exactly (a string for a bigint the number would round). */
type PostingRow = Omit<PlannedEntries['postings'][number], 'balanceAfterMinor'> & {
  balanceAfterMinor: number | string;
};

function postingsValues(postings: readonly PostingRow[]) {
  return [
    postings.map((posting) => posting.entryId),
    postings.map((posting) => posting.accountId),
    postings.map((posting) => posting.amountMinor),
    postings.map((posting) => posting.balanceAfterMinor),
  ];
}

/** An account as a posting found it, locked. */
interface AccountLocked {
  /** Exact: a system account's balance may pass 2^53 kobo, where a number loses the kobo. */
  balanceMinor: bigint;
  allowNegative: boolean;
}

/** The accounts an entry's lock statement answered, by id (LOCK_ACCOUNTS_BY_ID, LOCK_MOVEMENT_ACCOUNTS). */
function lockedById(
  rows: readonly { id: string; balance_minor: string; allow_negative: boolean }[],
): Map<string, AccountLocked> {
  return new Map(
    rows.map((row) => [row.id, { balanceMinor: BigInt(row.balance_minor), allowNegative: row.allow_negative }]),
  );
}

/** Accounts by id, locked in id order (the one order every writer takes them in). */
const LOCK_ACCOUNTS_BY_ID = `select id, balance_minor::text as balance_minor, allow_negative from ledger_accounts
   where id = any($1::uuid[]) order by id for update`;

/**
 * Posts one journal entry in its own transaction, or in the caller's when `em` is already inside
 * one (joined, no savepoint: nothing is written before every check has passed, so a refusal leaves
 * the caller's transaction as it was). Idempotent on `idempotencyKey`: a repeat with the same
 * postings is a no-op that reports `created: false`; a repeat with different postings is a
 * LedgerConflictError.
 *
 * Two statements whatever the number of postings: the accounts locked in id order (latest
 * committed balances); then one write of the entry unless its key is posted, and only then of every
 * balance it moves and every posting.
 */
export async function postEntry(em: EntityManager, input: JournalEntryInput): Promise<PostedEntry> {
  validateEntry(input);
  return em.transactional(
    async (tx) => {
      const ids = [...new Set(input.postings.map((posting) => posting.accountId))];
      const rows = await executeNumbered<{ id: string; balance_minor: string; allow_negative: boolean }[]>(
        tx,
        LOCK_ACCOUNTS_BY_ID,
        [ids],
      );
      const locked = lockedById(rows);
      const unknown = ids.find((id) => !locked.has(id));
      if (unknown) throw new UnknownAccountError(`ledger account ${unknown} does not exist`);
      return writeEntry(tx, input, locked);
    },
    { propagation: TransactionPropagation.REQUIRED },
  );
}

/**
 * Writes an entry on accounts the caller holds locked: its postings in account-id order, each with
 * its account's balance after it, refused (InsufficientFundsError, nothing written) when an account
 * that may not go negative would — unless the entry's key is already posted, which is a repeat.
 */
async function writeEntry(
  tx: EntityManager,
  input: JournalEntryInput,
  locked: ReadonlyMap<string, AccountLocked>,
): Promise<PostedEntry> {
  const entryId = randomUUID();
  const ordered = [...input.postings].sort((a, b) => a.accountId.localeCompare(b.accountId));
  const balances = new Map<string, bigint>();
  const postings: PostingRow[] = [];
  let shortfall: InsufficientFundsError | undefined;
  for (const posting of ordered) {
    const account = locked.get(posting.accountId)!;
    const before = balances.get(posting.accountId) ?? account.balanceMinor;
    const after = before + BigInt(posting.amountMinor);
    if (!staysWithinBalance(account.allowNegative, after)) {
      shortfall = new InsufficientFundsError(posting.accountId, -posting.amountMinor, Number(before));
      break;
    }
    balances.set(posting.accountId, after);
    postings.push({
      entryId,
      accountId: posting.accountId,
      amountMinor: posting.amountMinor,
      balanceAfterMinor: after.toString(),
    });
  }
  const entry = {
    id: entryId,
    kind: input.kind,
    idempotencyKey: input.idempotencyKey,
    description: input.description ?? null,
    metadata: input.metadata ?? null,
  };
  const moved = [...balances.entries()].map(([id, after]) => ({
    id,
    beforeMinor: locked.get(id)!.balanceMinor.toString(),
    deltaMinor: (after - locked.get(id)!.balanceMinor).toString(),
  }));
  // One statement: the entry unless its key is posted, and only then its balances and postings.
  let written: Record<string, number> | undefined;
  if (!shortfall) {
    const { text, values } = composeWrite([
      { name: 'entries', text: INSERT_ENTRIES, values: entriesValues(input.tenantId, [entry]), rows: 1 },
      ...balanceSteps({ postings, accounts: moved }, 'exists (select 1 from entries)'),
    ]);
    [written] = await executeNumbered<Record<string, number>[]>(tx, text, values);
  }
  if (!written?.entries) {
    const existing = await tx.execute<{ entry_id: string; account_id: string; amount_minor: string }[]>(
      `select p.entry_id, p.account_id, p.amount_minor from postings p
         join journal_entries e on e.id = p.entry_id where e.idempotency_key = ?`,
      [input.idempotencyKey],
    );
    if (existing.length === 0 && shortfall) throw shortfall;
    const previous = existing.map((row) => ({ accountId: row.account_id, amountMinor: Number(row.amount_minor) }));
    if (!samePostings(previous, input.postings)) {
      throw new LedgerConflictError(`journal entry ${input.idempotencyKey} was already posted with other postings`);
    }
    return { entryId: existing[0]!.entry_id, created: false, balances: new Map() };
  }
  if (written.moved !== moved.length || written.posted !== postings.length) {
    // The caller's transaction rolls back on this throw, and keeps nothing of the statement.
    throw new LedgerConflictError(
      `posting ${input.idempotencyKey} moved ${written.moved} of ${moved.length} accounts and wrote ${written.posted} of ${postings.length} postings`,
    );
  }
  return {
    entryId,
    created: true,
    balances: new Map([...balances].map(([id, after]) => [id, Number(after)])),
  };
}

/** Opens the tenant's accounts (inside the caller's transaction). */
export async function openTenantAccounts(
  em: EntityManager,
  tenantId: string,
  currency: Currency = 'NGN',
): Promise<void> {
  for (const code of TENANT_ACCOUNTS) await openTenantAccount(em, tenantId, code, currency);
}

export async function tenantAccountId(
  em: EntityManager,
  tenantId: string,
  code: TenantAccountCode,
  currency: Currency = 'NGN',
): Promise<string> {
  return accountIdOf(em, tenantId, { tenant: code }, currency);
}

export async function systemAccountId(
  em: EntityManager,
  code: SystemAccountCode,
  currency: Currency = 'NGN',
): Promise<string> {
  const [row] = await em.execute<{ id: string }[]>(
    'select id from ledger_accounts where tenant_id is null and code = ? and currency = ?',
    [code, currency],
  );
  if (!row) throw new UnknownAccountError(`no system account ${code} in ${currency}`);
  return row.id;
}

/** The code of a card's own account (a tenant account per card). */
export function cardAccountCode(cardId: string): string {
  return `card:${cardId}`;
}

/** The code of a card's hold account: the sum of its pending authorizations' holds. */
export function cardHoldAccountCode(cardId: string): string {
  return `card-hold:${cardId}`;
}

/** Opens one of a tenant's accounts ($2, code $3, currency $4) if it has none of that code yet. */
const OPEN_ACCOUNT = `insert into ledger_accounts (id, tenant_id, code, currency, allow_negative)
  values ($1, $2, $3, $4, false) on conflict on constraint ledger_accounts_owner_code do nothing`;

/** Opens one of a tenant's accounts if it has none of that code yet (inside the caller's transaction). */
async function openTenantAccount(em: EntityManager, tenantId: string, code: string, currency: Currency) {
  await executeNumbered(em, OPEN_ACCOUNT, [randomUUID(), tenantId, code, currency]);
}

/** Opens the tenant's suspense account if it has none yet (inside the caller's transaction, before it holds a credit). */
export function openSuspenseAccount(em: EntityManager, tenantId: string, currency: Currency = 'NGN') {
  return openTenantAccount(em, tenantId, 'suspense', currency);
}

/** Opens a card's account (inside the caller's transaction, with the card's row). */
export function openCardAccount(em: EntityManager, tenantId: string, cardId: string, currency: Currency = 'NGN') {
  return openTenantAccount(em, tenantId, cardAccountCode(cardId), currency);
}

/** A card's own balance (or, by its code, its hold account's); null before the account is open. */
export async function cardBalance(
  em: EntityManager,
  tenantId: string,
  cardId: string,
  currency: Currency = 'NGN',
  code: string = cardAccountCode(cardId),
): Promise<{ balanceMinor: number; updatedAt: Date } | null> {
  const [row] = await em.execute<{ balance_minor: string; updated_at: Date }[]>(
    'select balance_minor, updated_at from ledger_accounts where tenant_id = ? and code = ? and currency = ?',
    [tenantId, code, currency],
  );
  return row ? { balanceMinor: Number(row.balance_minor), updatedAt: new Date(row.updated_at) } : null;
}

/** The code of a tenant's account a posting names (`wallet`, `card:<id>`, `card-hold:<id>`…). */
export function tenantAccountCodeOf(account: Exclude<AccountRef, { system: SystemAccountCode }>): string {
  return 'tenant' in account
    ? account.tenant
    : 'card' in account
      ? cardAccountCode(account.card)
      : cardHoldAccountCode(account.cardHold);
}

/** The id of the account a movement's posting names, for a tenant. */
export async function accountIdOf(
  em: EntityManager,
  tenantId: string,
  account: AccountRef,
  currency: Currency = 'NGN',
): Promise<string> {
  if ('system' in account) return systemAccountId(em, account.system, currency);
  const code = tenantAccountCodeOf(account);
  const [row] = await em.execute<{ id: string }[]>(
    'select id from ledger_accounts where tenant_id = ? and code = ? and currency = ?',
    [tenantId, code, currency],
  );
  if (!row) throw new UnknownAccountError(`tenant ${tenantId} has no ${code} account in ${currency}`);
  return row.id;
}

/** A tenant's accounts of these codes and the system accounts of those, locked in id order: each with its code. */
const LOCK_MOVEMENT_ACCOUNTS = `select id, code, tenant_id is null as system, balance_minor::text as balance_minor, allow_negative
   from ledger_accounts
  where currency = $1 and ((tenant_id = $2 and code = any($3::text[])) or (tenant_id is null and code = any($4::text[])))
  order by id for update`;

/**
 * Posts a movement (./movements.ts) for a tenant as one journal entry (postEntry's rules and
 * transaction), its accounts resolved by code and locked in the same statement.
 */
export async function postMovement(
  em: EntityManager,
  tenantId: string,
  movement: Movement,
  options: { metadata?: Record<string, unknown>; currency?: Currency } = {},
): Promise<PostedEntry> {
  const currency = options.currency ?? 'NGN';
  const tenantCodes = new Set<string>();
  const systemCodes = new Set<string>();
  for (const posting of movement.postings) {
    if ('system' in posting.account) systemCodes.add(posting.account.system);
    else tenantCodes.add(tenantAccountCodeOf(posting.account));
  }
  return em.transactional(
    async (tx) => {
      const rows = await executeNumbered<
        { id: string; code: string; system: boolean; balance_minor: string; allow_negative: boolean }[]
      >(tx, LOCK_MOVEMENT_ACCOUNTS, [currency, tenantId, [...tenantCodes], [...systemCodes]]);
      const idOf = (system: boolean, code: string) =>
        rows.find((row) => row.system === system && row.code === code)?.id;
      const postings = movement.postings.map((posting) => {
        const system = 'system' in posting.account;
        const code = 'system' in posting.account ? posting.account.system : tenantAccountCodeOf(posting.account);
        const accountId = idOf(system, code);
        if (!accountId) {
          throw new UnknownAccountError(
            system
              ? `no system account ${code} in ${currency}`
              : `tenant ${tenantId} has no ${code} account in ${currency}`,
          );
        }
        return { accountId, amountMinor: posting.amountMinor };
      });
      const input: JournalEntryInput = {
        idempotencyKey: movement.idempotencyKey,
        kind: movement.kind,
        tenantId,
        description: movement.description,
        ...(options.metadata ? { metadata: options.metadata } : {}),
        postings,
      };
      validateEntry(input);
      return writeEntry(tx, input, lockedById(rows));
    },
    { propagation: TransactionPropagation.REQUIRED },
  );
}

export interface WalletBalance {
  currency: Currency;
  availableMinor: number;
  pendingMinor: number;
  updatedAt: Date;
}

/** The tenant wallet: available = wallet account, pending = funds reserved for transfers in flight. */
export async function walletBalance(
  em: EntityManager,
  tenantId: string,
  currency: Currency = 'NGN',
): Promise<WalletBalance> {
  const rows = await em.execute<{ code: string; balance_minor: string; updated_at: Date }[]>(
    `select code, balance_minor, updated_at from ledger_accounts
      where tenant_id = ? and currency = ? and code in ('wallet', 'in_flight')`,
    [tenantId, currency],
  );
  const wallet = rows.find((row) => row.code === 'wallet');
  const inFlight = rows.find((row) => row.code === 'in_flight');
  if (!wallet || !inFlight) throw new UnknownAccountError(`tenant ${tenantId} has no ${currency} wallet`);
  return {
    currency,
    availableMinor: Number(wallet.balance_minor),
    pendingMinor: Number(inFlight.balance_minor),
    updatedAt: new Date(Math.max(new Date(wallet.updated_at).getTime(), new Date(inFlight.updated_at).getTime())),
  };
}

/** Sum of every posting ever made: zero in a sound ledger. */
export interface JournalEntryView {
  entry_id: string;
  kind: string;
  created_at: string;
  /** A tenant's account by its code (`wallet`, `in_flight`, `card:…`), a system account as `system:…`. */
  postings: { account: string; amount_minor: number }[];
}

/** The entries whose idempotency key starts with `keyPrefix` (`transfer:<id>:`), oldest first, with their postings. */
export async function journalOf(em: EntityManager, keyPrefix: string): Promise<JournalEntryView[]> {
  const rows = await em.execute<
    {
      entry_id: string;
      kind: string;
      created_at: Date;
      account: string;
      tenant_id: string | null;
      amount_minor: string;
    }[]
  >(
    `select e.id as entry_id, e.kind, e.created_at, a.code as account, a.tenant_id, p.amount_minor::text
       from journal_entries e join postings p on p.entry_id = e.id join ledger_accounts a on a.id = p.account_id
      where e.idempotency_key like ? order by e.created_at, e.id, p.id`,
    [`${keyPrefix.replace(/[%_\\]/g, '\\$&')}%`],
  );
  const entries = new Map<string, JournalEntryView>();
  for (const row of rows) {
    const entry = entries.get(row.entry_id) ?? {
      entry_id: row.entry_id,
      kind: row.kind,
      created_at: new Date(row.created_at).toISOString(),
      postings: [],
    };
    entry.postings.push({
      account: row.tenant_id ? row.account : `system:${row.account}`,
      amount_minor: Number(row.amount_minor),
    });
    entries.set(row.entry_id, entry);
  }
  return [...entries.values()];
}

export async function postingsTotal(em: EntityManager): Promise<number> {
  const [row] = await em.execute<{ total: string }[]>(
    'select coalesce(sum(amount_minor), 0)::text as total from postings',
  );
  return Number(row!.total);
}

/**
 * Every account that entries of these tenants may touch, locked in id order in one statement: the
 * tenants' accounts of `codes` and the system accounts of `systems`. A transaction that posts
 * several entries takes them up front, so that it takes its locks in the one order a single entry
 * takes its own (postEntry), and two such transactions never wait on each other in a circle.
 */
export async function lockAccountsOf(
  em: EntityManager,
  tenantIds: readonly string[],
  codes: readonly string[],
  systems: readonly SystemAccountCode[],
  currency: Currency = 'NGN',
): Promise<void> {
  await em.execute(
    `select id from ledger_accounts
      where currency = ? and ((tenant_id = any(?::uuid[]) and code = any(?::text[]))
                              or (tenant_id is null and code = any(?::text[])))
      order by id for update`,
    [currency, `{${tenantIds.join(',')}}`, `{${codes.join(',')}}`, `{${systems.join(',')}}`],
  );
}

/** A tenant account the caller holds locked (`for update`), with its balance as locked. */
export interface LockedAccount {
  id: string;
  balanceMinor: number;
  allowNegative: boolean;
}

/**
 * A tenant's accounts, locked in id order (as every posting locks them): `which` is the rest of the
 * select after its columns (the table, and whatever names the tenant, currency and codes).
 */
const lockAccounts = (which: string) =>
  `select a.id, a.code, a.balance_minor::text as balance_minor, a.allow_negative ${which} order by a.id for update of a`;

/** The tenant's accounts of these codes, locked. */
const LOCK_ACCOUNTS = lockAccounts(
  'from ledger_accounts a where a.tenant_id = $1 and a.currency = $2 and a.code = any($3::text[])',
);

/** A locking select, with the milliseconds from the statement's start until each row was locked. */
const timedLock = (locking: string) => `with locked as materialized (${locking})
  select locked.*, 1000 * extract(epoch from clock_timestamp() - statement_timestamp())::float8 as locked_after_ms
    from locked`;

/** LOCK_ACCOUNTS, timed. */
const LOCK_ACCOUNTS_TIMED = timedLock(LOCK_ACCOUNTS);

/**
 * LOCK_ACCOUNTS_TIMED for the accounts a statement of the caller's names (`named`: one row of
 * `tenant_id`, `currency` and `codes text[]`, on its own $1, $2…), as a named statement
 * (src/db/numbered-sql.ts) that can go in the same round trip as the caller's own lock: the card
 * decision finds its card's accounts by the card, which it has locked just before. No row from
 * `named`, no account locked. What it answers is read with `lockedAccountsFrom`.
 */
export function lockAccountsNamedBy(name: string, named: string, values: readonly SqlValue[]): NamedStatement {
  return {
    name,
    text: timedLock(
      lockAccounts(`from ledger_accounts a, (${named}) named
     where a.tenant_id = named.tenant_id and a.currency = named.currency and a.code = any(named.codes)`),
    ),
    values,
  };
}

/** What LOCK_ACCOUNTS_TIMED (or `lockAccountsNamedBy`) answered: the accounts by code, as locked. */
export function lockedAccountsFrom(rows: readonly Record<string, unknown>[]): Map<string, LockedAccount> {
  return new Map<string, LockedAccount>(
    rows.map((row) => [
      row.code as string,
      { id: row.id as string, balanceMinor: Number(row.balance_minor), allowNegative: row.allow_negative as boolean },
    ]),
  );
}

/** Which of a tenant's accounts to lock, by code. */
export interface AccountsToLock {
  tenantId: string;
  currency: Currency;
  codes: readonly string[];
}

/** The locked rows by code; a code of `which` with no row is an UnknownAccountError. */
function lockedByCode(rows: Record<string, unknown>[], which: AccountsToLock): Map<string, LockedAccount> {
  const locked = lockedAccountsFrom(rows);
  for (const code of which.codes) {
    if (!locked.has(code)) {
      throw new UnknownAccountError(`tenant ${which.tenantId} has no ${code} account in ${which.currency}`);
    }
  }
  return locked;
}

/**
 * Locks the tenant's accounts of `codes` on the caller's connection, inside its transaction, as
 * named prepared statements (the card decision's hot path): one round trip, and two more (open,
 * lock again) the first time an account of `openMissing` is not there yet. The accounts by code,
 * for planEntriesOnLockedAccounts.
 */
export async function lockTenantAccounts(
  client: SqlClient,
  which: AccountsToLock & { openMissing?: readonly string[] },
): Promise<Map<string, LockedAccount>> {
  return (await lockTenantAccountsTimed(client, which)).accounts;
}

/**
 * The same rows, locked from the materialized CTE below so that the outer select reads the clock
 * only after its row is locked: `lockedAfterMs` is the time PostgreSQL spent from the statement's
 * start until the last row was locked (lock waits, plus well under a millisecond of work), summed
 * over both locks when an account had to be opened. The card decision reports it
 * (`gateway_card_decision_lock_wait_seconds`).
 */
export async function lockTenantAccountsTimed(
  client: SqlClient,
  which: AccountsToLock & { openMissing?: readonly string[] },
): Promise<{ accounts: Map<string, LockedAccount>; lockedAfterMs: number }> {
  let lockedAfterMs = 0;
  const lock = async () => {
    const result = await prepared(client, 'ledger-lock-accounts', LOCK_ACCOUNTS_TIMED, [
      which.tenantId,
      which.currency,
      which.codes,
    ]);
    lockedAfterMs += Math.max(0, ...result.rows.map((row) => Number(row.locked_after_ms)));
    return result;
  };
  let { rows } = await lock();
  const missing = (which.openMissing ?? []).filter((code) => !rows.some((row) => row.code === code));
  if (missing.length > 0) {
    for (const code of missing) {
      await prepared(client, 'ledger-open-account', OPEN_ACCOUNT, [randomUUID(), which.tenantId, code, which.currency]);
    }
    ({ rows } = await lock());
  }
  return { accounts: lockedByCode(rows, which), lockedAfterMs };
}

/** The same lock in the caller's ORM transaction (an activity's). */
export async function lockTenantAccountsIn(
  em: EntityManager,
  which: AccountsToLock,
): Promise<Map<string, LockedAccount>> {
  return lockedByCode(await executeNumbered(em, LOCK_ACCOUNTS, [which.tenantId, which.currency, which.codes]), which);
}

/** Journal entries worked out against locked accounts: rows to write, and each account's net change. */
export interface PlannedEntries {
  entries: { id: string; idempotencyKey: string; kind: string; description: string }[];
  postings: { entryId: string; accountId: string; amountMinor: number; balanceAfterMinor: number }[];
  /** Per account: its balance as locked, and what the entries add to it in all. */
  accounts: { id: string; beforeMinor: number; deltaMinor: number }[];
}

/**
 * Works out movements, in order, on tenant accounts the caller already holds locked (by code, as
 * `tenantAccountCodeOf` names them), for postPlanSteps to write: the same rules as postEntry
 * (balanced, non-zero, whole kobo; no account that may not go negative below zero, checked after
 * each posting, a shortfall the same InsufficientFundsError and nothing planned), and each
 * posting's balance after it.
 */
export function planEntriesOnLockedAccounts(
  movements: readonly Movement[],
  locked: ReadonlyMap<string, LockedAccount>,
): PlannedEntries {
  const balances = new Map<string, { account: LockedAccount; balance: number }>();
  const plan: PlannedEntries = { entries: [], postings: [], accounts: [] };
  for (const movement of movements) {
    const entryId = randomUUID();
    const postings = movement.postings.map((posting) => {
      if ('system' in posting.account) throw new UnknownAccountError(`${movement.kind} posts to a system account`);
      const code = tenantAccountCodeOf(posting.account);
      const account = locked.get(code);
      if (!account) throw new UnknownAccountError(`no locked account ${code} for ${movement.idempotencyKey}`);
      return { account, amountMinor: posting.amountMinor };
    });
    validateEntry({
      idempotencyKey: movement.idempotencyKey,
      kind: movement.kind,
      tenantId: null,
      postings: postings.map((posting) => ({ accountId: posting.account.id, amountMinor: posting.amountMinor })),
    });
    plan.entries.push({
      id: entryId,
      idempotencyKey: movement.idempotencyKey,
      kind: movement.kind,
      description: movement.description,
    });
    for (const posting of postings) {
      const state = balances.get(posting.account.id) ?? {
        account: posting.account,
        balance: posting.account.balanceMinor,
      };
      const after = state.balance + posting.amountMinor;
      if (!staysWithinBalance(posting.account.allowNegative, after)) {
        throw new InsufficientFundsError(posting.account.id, -posting.amountMinor, state.balance);
      }
      state.balance = after;
      balances.set(posting.account.id, state);
      plan.postings.push({
        entryId,
        accountId: posting.account.id,
        amountMinor: posting.amountMinor,
        balanceAfterMinor: after,
      });
    }
  }
  for (const { account, balance } of balances.values()) {
    plan.accounts.push({
      id: account.id,
      beforeMinor: account.balanceMinor,
      deltaMinor: balance - account.balanceMinor,
    });
  }
  return plan;
}

/**
 * The plan's writes, as steps of the caller's one statement (src/db/write-statement.ts): its
 * entries, each account's net change, its postings. An account changes only where its balance is
 * still the one locked and the change keeps it within `keepsBalance` (the rule postEntry debits
 * by); anything else writes fewer rows than planned, and the write throws. So does an entry whose
 * key is already posted: unlike postEntry, this is no idempotent repeat — the caller posts a plan
 * once (the card decision: once per authorization, under its lock).
 */
export function postPlanSteps(tenantId: string, plan: PlannedEntries): WriteStep[] {
  return [
    {
      name: 'entries',
      text: INSERT_ENTRIES,
      values: entriesValues(
        tenantId,
        plan.entries.map((entry) => ({ ...entry, metadata: null })),
      ),
      rows: plan.entries.length,
    },
    ...balanceSteps(plan),
  ];
}

/**
 * A plan's balance changes and postings, as two steps: each account's net change, then its
 * postings; each only if `onlyIf` (an SQL condition on the steps before them) holds, when given.
 */
function balanceSteps(
  plan: {
    accounts: readonly { id: string; beforeMinor: number | string; deltaMinor: number | string }[];
    postings: readonly PostingRow[];
  },
  onlyIf?: string,
): WriteStep[] {
  return [
    {
      name: 'moved',
      text: `update ledger_accounts a set balance_minor = a.balance_minor + m.delta, updated_at = now()
      from unnest($1::uuid[], $2::bigint[], $3::bigint[]) as m (id, before, delta)
     where ${onlyIf ? `${onlyIf} and ` : ''}a.id = m.id and a.balance_minor = m.before and ${keepsBalance('a', 'm.delta')} returning 1`,
      values: [
        plan.accounts.map((account) => account.id),
        plan.accounts.map((account) => account.beforeMinor),
        plan.accounts.map((account) => account.deltaMinor),
      ],
      rows: plan.accounts.length,
    },
    { name: 'posted', text: insertPostings(onlyIf), values: postingsValues(plan.postings), rows: plan.postings.length },
  ];
}

/**
 * Posts a plan (planEntriesOnLockedAccounts) in the caller's ORM transaction, on accounts it holds
 * locked (lockTenantAccountsIn): the same three steps as postPlanSteps, each one statement whatever
 * the number of entries (a batch's reservations), each checked for the rows it must write.
 */
export async function postPlannedEntries(em: EntityManager, tenantId: string, plan: PlannedEntries): Promise<void> {
  if (plan.entries.length === 0) return;
  for (const step of postPlanSteps(tenantId, plan)) {
    const written = await executeNumbered(em, step.text, step.values);
    if (written.length !== step.rows) {
      throw new LedgerConflictError(`posting a plan wrote ${written.length} ${step.name}, expected ${step.rows}`);
    }
  }
}
