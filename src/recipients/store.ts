// The only code that writes `recipients` (migration 0032): a tenant's saved bank accounts, once
// per bank and account in each key mode. When each was last paid is read from the transfers table.
import { randomUUID } from 'node:crypto';
import { type InferEntity, p } from '@mikro-orm/core';
import type { EntityManager } from '@mikro-orm/postgresql';
import { NEWEST_FIRST, createdAt, tableEntity, tenantOwned } from '../db/columns.ts';
import { type Page, type Window, pageOf } from '../db/pages.ts';
import { executeNumbered } from '../db/numbered-sql.ts';

export const Recipient = tableEntity('Recipient', 'recipients', {
  ...tenantOwned(),
  bank_code: p.string(),
  bank_name: p.string(),
  account_number: p.string(),
  account_name: p.string(),
  label: p.string().nullable(),
  metadata: p.json<Record<string, unknown>>().nullable(),
  ...createdAt(),
});
export type RecipientRow = InferEntity<typeof Recipient>;

export interface NewRecipient {
  tenantId: string;
  bankCode: string;
  bankName: string;
  accountNumber: string;
  accountName: string;
  label: string | null;
  metadata: Record<string, unknown> | null;
}

/** Saves the account unless the tenant has it already: `created` false then, with the one saved. */
export async function saveRecipient(
  em: EntityManager,
  recipient: NewRecipient,
): Promise<{ created: boolean; row: RecipientRow }> {
  const id = randomUUID();
  const inserted = await em
    .createQueryBuilder(Recipient)
    .insert({
      id,
      tenant_id: recipient.tenantId,
      bank_code: recipient.bankCode,
      bank_name: recipient.bankName,
      account_number: recipient.accountNumber,
      account_name: recipient.accountName,
      label: recipient.label,
      metadata: recipient.metadata,
    })
    .onConflict(['tenant_id', 'bank_code', 'account_number'])
    .ignore()
    .execute<{ affectedRows: number }>('run');
  const row = await em.findOneOrFail(
    Recipient,
    { tenant_id: recipient.tenantId, bank_code: recipient.bankCode, account_number: recipient.accountNumber },
    { refresh: true },
  );
  return { created: inserted.affectedRows > 0 && row.id === id, row };
}

/** The tenant's recipient with this bank and account; null when it has none. */
export async function recipientByAccount(em: EntityManager, tenantId: string, bankCode: string, accountNumber: string) {
  return em.findOne(Recipient, { tenant_id: tenantId, bank_code: bankCode, account_number: accountNumber });
}

/** The tenant's recipient with this id; null for another tenant's (or another mode's). */
export async function recipientById(em: EntityManager, tenantId: string, id: string) {
  return em.findOne(Recipient, { id, tenant_id: tenantId });
}

/** The tenant's recipients among these ids (uuids), in one query; another tenant's are left out. */
export async function recipientsByIds(em: EntityManager, tenantId: string, ids: readonly string[]) {
  if (ids.length === 0) return [];
  return em.find(Recipient, { id: { $in: [...ids] }, tenant_id: tenantId });
}

export async function listRecipients(em: EntityManager, tenantId: string, window: Window): Promise<Page<RecipientRow>> {
  return pageOf(em, Recipient, { tenant_id: tenantId }, NEWEST_FIRST, window);
}

/** Deletes the tenant's recipient; the row as it was, or null when there was none. */
export async function deleteRecipient(em: EntityManager, tenantId: string, id: string): Promise<RecipientRow | null> {
  const row = await recipientById(em, tenantId, id);
  if (!row) return null;
  const deleted = await em.nativeDelete(Recipient, { id, tenant_id: tenantId });
  return deleted > 0 ? row : null;
}

/**
 * When each account was last paid: the latest completion of a transfer of the tenant's to it (made
 * to a saved recipient or not), by `bank_code:account_number`; absent when none has completed.
 */
export async function lastPaidAt(
  em: EntityManager,
  tenantId: string,
  accounts: readonly { bank_code: string; account_number: string }[],
): Promise<Map<string, Date>> {
  if (accounts.length === 0) return new Map();
  const pairs = accounts.map(() => '(?, ?)').join(', ');
  const rows = await em.execute<{ bank_code: string; account_number: string; last_paid_at: Date }[]>(
    `select recipient_bank_code as bank_code, recipient_account as account_number, max(completed_at) as last_paid_at
       from transfers
      where tenant_id = ? and status = 'completed' and (recipient_bank_code, recipient_account) in (${pairs})
      group by recipient_bank_code, recipient_account`,
    [tenantId, ...accounts.flatMap((account) => [account.bank_code, account.account_number])],
  );
  return new Map(rows.map((row) => [`${row.bank_code}:${row.account_number}`, new Date(row.last_paid_at)]));
}

/** Which of the accounts (bank code and account number, index-aligned) are saved recipients of the tenant's mode. */
export async function savedAccounts(
  em: EntityManager,
  tenantId: string,
  bankCodes: readonly string[],
  accounts: readonly string[],
): Promise<{ bank_code: string; account_number: string }[]> {
  if (bankCodes.length === 0) return [];
  // Numbered parameters: the ORM's `?` would spread an array into a list, and unnest needs it whole.
  return executeNumbered(
    em,
    `select distinct r.bank_code, r.account_number
       from recipients r
       join unnest($1::text[], $2::text[]) as p(bank_code, account)
         on r.bank_code = p.bank_code and r.account_number = p.account
      where r.tenant_id = $3`,
    [bankCodes, accounts, tenantId],
  );
}
