// The only code that touches the virtual-account tables: `virtual_accounts`, `inbound_credits` and
// `virtual_account_bvns`.
// Rows come typed from the MikroORM entities below, amounts as numbers (kobo). Properties are named
// as their columns, so a row reads the same in SQL, in code and in logs. Every status change is a
// conditional update (from the statuses it may leave), so racing closers, expiries and freezes
// change an account once.
import { randomUUID } from 'node:crypto';
import { type InferEntity, LockMode, type QueryOrderMap, p, raw } from '@mikro-orm/core';
import type { EntityManager } from '@mikro-orm/postgresql';
import { NEWEST_FIRST, createdAt, tableEntity, tenantOwned, timestamps } from '../db/columns.ts';
import { type Page, type Window, pageOf } from '../db/pages.ts';

export const VIRTUAL_ACCOUNT_STATUSES = ['active', 'frozen', 'closed', 'expired'] as const;
export type VirtualAccountStatus = (typeof VIRTUAL_ACCOUNT_STATUSES)[number];

export const VirtualAccount = tableEntity('VirtualAccount', 'virtual_accounts', {
  ...tenantOwned(),
  /**
   * The tenant, whichever of its modes owns the account (tenant_id is the mode's id: decisions §16):
   * what the API shows as `tenant_id`. Read with the row, never written.
   */
  owner_tenant_id: p
    .uuid()
    .formula((columns) => `(select t.owner_id from tenants t where t.id = ${columns.tenant_id})`)
    .persist(false),
  customer_id: p.string(),
  account_number: p.string(),
  account_name: p.string(),
  bank_code: p.string(),
  bank_name: p.string(),
  provider: p.string(),
  provider_reference: p.string(),
  status: p.enum(VIRTUAL_ACCOUNT_STATUSES),
  account_type: p.string(),
  total_received_minor: p.bigint('number').default(0),
  transaction_count: p.integer().default(0),
  metadata: p.json<Record<string, unknown>>().nullable(),
  request_id: p.string().nullable(),
  expires_at: p.datetime().nullable(),
  closure_reason: p.string().nullable(),
  closed_at: p.datetime().nullable(),
  ...timestamps(),
});
export type VirtualAccountRow = InferEntity<typeof VirtualAccount>;

export const InboundCreditRecord = tableEntity('InboundCreditRecord', 'inbound_credits', {
  id: p.uuid().primary(),
  provider: p.string(),
  transaction_reference: p.string(),
  virtual_account_id: p.uuid().nullable(),
  amount_minor: p.bigint('number'),
  /** What the provider kept of `amount_minor` (migration 0030): the wallet is credited the rest. */
  fee_minor: p.bigint('number').default(0),
  sender_name: p.string().nullable(),
  /** The sender's account and bank, when the provider gives them (migration 0038): where a return goes. */
  sender_account_number: p.string().nullable(),
  sender_bank_code: p.string().nullable(),
  /**
   * applied: in the wallet; held: in the tenant mode's suspense account (the account was closed or
   * expired, decisions §21); released: held, then put in the wallet by an operator; refused:
   * counted nowhere (no such account, a provider or sender of another mode, or a closed account
   * before migration 0038).
   */
  status: p.enum(['applied', 'refused', 'held', 'released'] as const),
  refusal_reason: p.string().nullable(),
  /** The bank's session id (credits recorded before migration 0013 have none). */
  session_id: p.string().nullable(),
  ...createdAt(),
  released_at: p.datetime().nullable(),
});
export type InboundCreditRow = InferEntity<typeof InboundCreditRecord>;

/** The statuses of the credits an account lists: every one it received and kept, held ones too. */
const LISTED_CREDITS = ['applied', 'held', 'released'] as const;

/**
 * A BVN sent with a create, keyed by the create's account id (the workflow input's `accountId`):
 * its keyed hash and last 4 for good, and the sealed copy the allocation reads until it is erased.
 */
export const VirtualAccountBvn = tableEntity('VirtualAccountBvn', 'virtual_account_bvns', {
  account_id: p.uuid().primary(),
  tenant_id: p.uuid(),
  /** Hex HMAC-SHA256 of the BVN under the server's key (src/identity/bvn.ts). */
  bvn_hash: p.string(),
  bvn_last4: p.string(),
  /** The sealed BVN (bound to account_id); null once erased. */
  bvn_ciphertext: p.string().nullable(),
  ...createdAt(),
  erased_at: p.datetime().nullable(),
});

/** What a create's sealed BVN is bound to (AES-GCM associated data): it opens for this account id only. */
export function sealedBvnBinding(accountId: string): string {
  return `virtual-account:${accountId}`;
}

/** How long a sealed copy may outlive its create at most: allocation is tried within seconds. */
export const SEALED_BVN_MAX_AGE_MINUTES = 60;

export const virtualAccountEntities = [VirtualAccount, InboundCreditRecord, VirtualAccountBvn];

/** The list's sort keys (interface §2.2), each with the id as a tiebreak so pages never overlap. */
export const SORTS: Record<string, QueryOrderMap<VirtualAccountRow>> = {
  created_at: { created_at: 'asc', id: 'asc' },
  '-created_at': NEWEST_FIRST,
  account_number: { account_number: 'asc', id: 'asc' },
  '-account_number': { account_number: 'desc', id: 'desc' },
  total_received_minor: { total_received_minor: 'asc', id: 'asc' },
  '-total_received_minor': { total_received_minor: 'desc', id: 'desc' },
  // Legacy aliases, still accepted.
  total_credits: { total_received_minor: 'asc', id: 'asc' },
  '-total_credits': { total_received_minor: 'desc', id: 'desc' },
};

export async function findAccount(
  em: EntityManager,
  id: string,
  options: { tenantId?: string } = {},
): Promise<VirtualAccountRow | null> {
  return em.findOne(
    VirtualAccount,
    { id, ...(options.tenantId ? { tenant_id: options.tenantId } : {}) },
    { refresh: true },
  );
}

export async function findByRequestId(em: EntityManager, tenantId: string, requestId: string) {
  return em.findOne(VirtualAccount, { tenant_id: tenantId, request_id: requestId });
}

export async function listAccounts(
  em: EntityManager,
  tenantId: string,
  filters: { customer_id?: string; status?: string; account_type?: string; bank_code?: string },
  sort: string,
  window: Window,
): Promise<Page<VirtualAccountRow>> {
  const where: Record<string, unknown> = { tenant_id: tenantId };
  for (const column of ['customer_id', 'status', 'account_type', 'bank_code'] as const) {
    if (filters[column] !== undefined) where[column] = filters[column];
  }
  return pageOf(em, VirtualAccount, where, SORTS[sort]!, window);
}

/** One page of an account's credits (applied, held or released), newest first (the account is the caller's tenant's). */
export async function listAccountCredits(
  em: EntityManager,
  accountId: string,
  window: Window,
): Promise<Page<InboundCreditRow>> {
  return pageOf(
    em,
    InboundCreditRecord,
    { virtual_account_id: accountId, status: { $in: [...LISTED_CREDITS] } },
    { created_at: 'desc', id: 'desc' },
    window,
  );
}

/** One of the account's listed credits (never a refused one); null when it has no such credit. */
export async function findAccountCredit(
  em: EntityManager,
  accountId: string,
  creditId: string,
): Promise<InboundCreditRow | null> {
  return em.findOne(
    InboundCreditRecord,
    { id: creditId, virtual_account_id: accountId, status: { $in: [...LISTED_CREDITS] } },
    { refresh: true },
  );
}

/**
 * A credit with the tenant (mode) and number of the account it reached; with `lock`, locked for the
 * caller's transaction (a return's reservation and an operator's release decide on it one at a time).
 */
export async function findCredit(
  em: EntityManager,
  creditId: string,
  options: { lock?: boolean } = {},
): Promise<(InboundCreditRow & { tenant_id: string; account_number: string }) | null> {
  const credit = await em.findOne(
    InboundCreditRecord,
    { id: creditId },
    { ...(options.lock ? { lockMode: LockMode.PESSIMISTIC_WRITE } : {}), refresh: true },
  );
  if (!credit?.virtual_account_id) return null;
  const account = await findAccount(em, credit.virtual_account_id);
  return account ? { ...credit, tenant_id: account.tenant_id, account_number: account.account_number } : null;
}

/** The credit, locked for the caller's transaction (see findCredit). */
export function lockCredit(em: EntityManager, creditId: string) {
  return findCredit(em, creditId, { lock: true });
}

/** A held credit, as operators list it: with its account's tenant (mode) and number. */
export type HeldCreditRow = InboundCreditRow & { tenant_id: string; account_number: string; account_status: string };

/** Credits held in suspense (not released), oldest first: what `admin credits held` lists. */
export async function heldCredits(em: EntityManager, limit: number): Promise<HeldCreditRow[]> {
  const credits = await em.find(
    InboundCreditRecord,
    { status: 'held' },
    { orderBy: { created_at: 'asc', id: 'asc' }, limit },
  );
  const accountIds = [...new Set(credits.flatMap((credit) => credit.virtual_account_id ?? []))];
  const accounts = accountIds.length
    ? await em.find(
        VirtualAccount,
        { id: { $in: accountIds } },
        { fields: ['id', 'tenant_id', 'account_number', 'status'] },
      )
    : [];
  const byId = new Map(accounts.map((account) => [account.id, account]));
  return credits.flatMap((credit) => {
    const account = credit.virtual_account_id ? byId.get(credit.virtual_account_id) : undefined;
    return account
      ? [
          {
            ...credit,
            tenant_id: account.tenant_id,
            account_number: account.account_number,
            account_status: account.status,
          },
        ]
      : [];
  });
}

/** A held credit released to the wallet: held → released, once (false when it was not held). */
export async function markReleased(em: EntityManager, creditId: string): Promise<boolean> {
  const changed = await em.nativeUpdate(
    InboundCreditRecord,
    { id: creditId, status: 'held' },
    { status: 'released', released_at: raw('now()') },
  );
  return changed > 0;
}

/**
 * The account's row, unless one with its id or its (tenant, request_id) exists already: true when
 * this call inserted it.
 */
export async function insertAccount(
  em: EntityManager,
  account: Omit<
    VirtualAccountRow,
    | 'owner_tenant_id'
    | 'total_received_minor'
    | 'transaction_count'
    | 'closure_reason'
    | 'closed_at'
    | 'created_at'
    | 'updated_at'
  >,
): Promise<boolean> {
  const inserted = await em
    .createQueryBuilder(VirtualAccount)
    .insert(account)
    .onConflict()
    .ignore()
    .execute<{ affectedRows: number }>('run');
  return inserted.affectedRows > 0;
}

/** The account recorded under this id, else the one that holds the request_id. */
export async function findRecorded(em: EntityManager, id: string, tenantId: string, requestId: string | null) {
  const found = await em.find(VirtualAccount, {
    $or: [{ id }, ...(requestId === null ? [] : [{ tenant_id: tenantId, request_id: requestId }])],
  });
  return found.find((row) => row.id === id) ?? found[0] ?? null;
}

/**
 * Moves an account from one of `from` to `to` (closing records when and why); null if it was in
 * none of them. `tenantId` scopes the change to one tenant's account.
 */
export async function changeStatus(
  em: EntityManager,
  id: string,
  change: { from: VirtualAccountStatus[]; to: VirtualAccountStatus; tenantId?: string; closureReason?: string | null },
): Promise<VirtualAccountRow | null> {
  const changed = await em.nativeUpdate(
    VirtualAccount,
    { id, status: { $in: change.from }, ...(change.tenantId ? { tenant_id: change.tenantId } : {}) },
    {
      status: change.to,
      updated_at: raw('now()'),
      ...(change.to === 'closed' ? { closure_reason: change.closureReason ?? null, closed_at: raw('now()') } : {}),
    },
  );
  return changed > 0 ? findAccount(em, id) : null;
}

/** The account a credit is for, locked for the caller's transaction (credits apply one at a time). */
export async function lockAccountByNumber(em: EntityManager, provider: string, accountNumber: string) {
  return em.findOne(
    VirtualAccount,
    { provider, account_number: accountNumber },
    { lockMode: LockMode.PESSIMISTIC_WRITE, refresh: true },
  );
}

/** The provider's own id of an account it allocated (Paystack closes by it), if we recorded one. */
export async function providerReferenceOf(
  em: EntityManager,
  provider: string,
  accountNumber: string,
): Promise<string | undefined> {
  const row = await em.findOne(
    VirtualAccount,
    { provider, account_number: accountNumber },
    { fields: ['provider_reference'] },
  );
  return row?.provider_reference || undefined;
}

/**
 * The credit, applied, held or refused, once per provider transaction reference: its id, or null
 * if it was already recorded.
 */
export async function recordCredit(
  em: EntityManager,
  credit: Omit<InboundCreditRow, 'id' | 'created_at' | 'released_at'>,
): Promise<string | null> {
  const id = randomUUID();
  const inserted = await em
    .createQueryBuilder(InboundCreditRecord)
    .insert({ id, ...credit })
    .onConflict(['provider', 'transaction_reference'])
    .ignore()
    .execute<{ affectedRows: number }>('run');
  return inserted.affectedRows > 0 ? id : null;
}

/** The credit recorded under this provider transaction reference. */
export async function creditByReference(
  em: EntityManager,
  provider: string,
  transactionReference: string,
): Promise<InboundCreditRow | null> {
  return em.findOne(InboundCreditRecord, { provider, transaction_reference: transactionReference }, { refresh: true });
}

/** An inbound credit with the tenant of the account it reached (null when no account was found). */
export type CreditWithTenant = InboundCreditRow & { tenant_id: string | null };

async function withTenants(em: EntityManager, credits: InboundCreditRow[]): Promise<CreditWithTenant[]> {
  const accountIds = [...new Set(credits.flatMap((credit) => credit.virtual_account_id ?? []))];
  const accounts = accountIds.length
    ? await em.find(VirtualAccount, { id: { $in: accountIds } }, { fields: ['id', 'tenant_id'] })
    : [];
  const tenantOf = new Map(accounts.map((account) => [account.id, account.tenant_id]));
  return credits.map((credit) => ({
    ...credit,
    tenant_id: credit.virtual_account_id ? (tenantOf.get(credit.virtual_account_id) ?? null) : null,
  }));
}

/**
 * Credits through `providers` (one connector's virtual-account providers) recorded in [from, to),
 * applied or refused, for reconciliation against that connector's record of the day.
 */
export async function creditsReceivedBetween(
  em: EntityManager,
  providers: readonly string[],
  from: Date,
  to: Date,
): Promise<CreditWithTenant[]> {
  if (!providers.length) return [];
  return withTenants(
    em,
    await em.find(
      InboundCreditRecord,
      { provider: { $in: [...providers] }, created_at: { $gte: from, $lt: to } },
      { orderBy: { created_at: 'asc', id: 'asc' } },
    ),
  );
}

/** Credits through `providers` by the bank's transaction reference or session id, whatever their day. */
export async function creditsByReferenceOrSession(
  em: EntityManager,
  providers: readonly string[],
  references: readonly string[],
  sessionIds: readonly string[],
): Promise<CreditWithTenant[]> {
  if (!providers.length || (!references.length && !sessionIds.length)) return [];
  return withTenants(
    em,
    await em.find(InboundCreditRecord, {
      provider: { $in: [...providers] },
      $or: [{ transaction_reference: { $in: [...references] } }, { session_id: { $in: [...sessionIds] } }],
    }),
  );
}

/** The tenants owning accounts, keyed `provider:account_number` (accounts not found are left out). */
export async function tenantsOfAccounts(
  em: EntityManager,
  accounts: readonly { provider: string; accountNumber: string }[],
): Promise<Map<string, string>> {
  if (!accounts.length) return new Map();
  const rows = await em.find(
    VirtualAccount,
    { $or: accounts.map((account) => ({ provider: account.provider, account_number: account.accountNumber })) },
    { fields: ['provider', 'account_number', 'tenant_id'] },
  );
  return new Map(rows.map((row) => [`${row.provider}:${row.account_number}`, row.tenant_id]));
}

/** Adds a credit to the account's totals. */
export async function addToTotals(em: EntityManager, id: string, amountMinor: number): Promise<VirtualAccountRow> {
  await em.nativeUpdate(
    VirtualAccount,
    { id },
    {
      total_received_minor: raw('total_received_minor + ?', [amountMinor]),
      transaction_count: raw('transaction_count + 1'),
      updated_at: raw('now()'),
    },
  );
  return (await findAccount(em, id))!;
}

/** Keeps a create's BVN: hash, last 4 and the sealed copy its allocation will read. */
export async function insertSealedBvn(
  em: EntityManager,
  row: { accountId: string; tenantId: string; bvnHash: string; bvnLast4: string; sealedBvn: string },
): Promise<void> {
  await em.insert(VirtualAccountBvn, {
    account_id: row.accountId,
    tenant_id: row.tenantId,
    bvn_hash: row.bvnHash,
    bvn_last4: row.bvnLast4,
    bvn_ciphertext: row.sealedBvn,
    erased_at: null,
  });
}

/** The sealed copy of the create's BVN; null once erased (or never sealed). */
export async function sealedBvnOf(em: EntityManager, accountId: string): Promise<string | null> {
  const row = await em.findOne(VirtualAccountBvn, { account_id: accountId }, { refresh: true });
  return row?.bvn_ciphertext ?? null;
}

/** Erases the create's sealed copy (the hash and last 4 stay); a copy already erased is left as it is. */
export async function eraseSealedBvn(em: EntityManager, accountId: string): Promise<void> {
  await em.nativeUpdate(
    VirtualAccountBvn,
    { account_id: accountId, bvn_ciphertext: { $ne: null } },
    { bvn_ciphertext: null, erased_at: raw('now()') },
  );
}

/** Erases copies older than SEALED_BVN_MAX_AGE_MINUTES: those of creates whose workflow never ended them. */
export async function eraseStaleSealedBvns(em: EntityManager): Promise<number> {
  return em.nativeUpdate(
    VirtualAccountBvn,
    {
      bvn_ciphertext: { $ne: null },
      created_at: { $lt: raw(`now() - interval '${SEALED_BVN_MAX_AGE_MINUTES} minutes'`) },
    },
    { bvn_ciphertext: null, erased_at: raw('now()') },
  );
}
