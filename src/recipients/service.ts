// Saved recipients (decisions §20): a tenant's bank accounts, saved after one name enquiry under
// the name the bank gave, once per bank and account in each key mode (the same account again
// answers the one saved, with no enquiry); listed newest first, read and deleted by id. Another
// tenant's recipient, or another mode's, is not found.
import type { EntityManager, MikroORM } from '@mikro-orm/postgresql';
import { lookUpAccount, supportedBank } from '../banks/resolve.ts';
import type { NameEnquirySlots } from '../connectors/name-enquiry-slots.ts';
import type { Providers } from '../connectors/registry.ts';
import { ApiError } from '../http/errors.ts';
import { isUuid } from '../http/ids.ts';
import { type Window, paginationView } from '../http/pagination.ts';
import type { ResolvedKey } from '../http/auth.ts';
import type { CreateRecipientBody, RecipientView } from './schemas.ts';
import {
  type RecipientRow,
  deleteRecipient,
  lastPaidAt,
  listRecipients,
  recipientByAccount,
  recipientById,
  recipientsByIds,
  saveRecipient,
  savedAccounts,
} from './store.ts';
import { recipientView } from './views.ts';

export interface RecipientServiceDeps {
  orm: MikroORM;
  providers: Providers;
  slots: NameEnquirySlots;
}

export class RecipientService {
  private readonly deps: RecipientServiceDeps;

  constructor(deps: RecipientServiceDeps) {
    this.deps = deps;
  }

  /** 201 with the recipient saved now, or 200 with the one this bank and account already are. */
  async create(key: ResolvedKey, body: CreateRecipientBody): Promise<{ status: 200 | 201; recipient: RecipientView }> {
    const em = this.deps.orm.em.fork();
    const saved = await recipientByAccount(em, key.tenantId, body.bank_code, body.account_number);
    if (saved) return { status: 200, recipient: (await this.views(key, [saved]))[0]! };
    const bank = await supportedBank(this.deps.providers, key.mode, body.bank_code);
    const resolution = await lookUpAccount(this.deps, key.tenantId, key.mode, bank, body.account_number);
    if (!resolution.found) throw new ApiError('account_not_found', resolution.message);
    const { created, row } = await saveRecipient(em, {
      tenantId: key.tenantId,
      bankCode: body.bank_code,
      bankName: bank.name,
      accountNumber: body.account_number,
      accountName: resolution.account.account_name,
      label: body.label ?? null,
      metadata: body.metadata ?? null,
    });
    return { status: created ? 201 : 200, recipient: (await this.views(key, [row]))[0]! };
  }

  async get(key: ResolvedKey, id: string): Promise<RecipientView> {
    const row = isUuid(id) ? await recipientById(this.deps.orm.em.fork(), key.tenantId, id) : null;
    if (!row) throw ApiError.notFound(`recipient ${id}`);
    return (await this.views(key, [row]))[0]!;
  }

  async list(key: ResolvedKey, window: Window) {
    const page = await listRecipients(this.deps.orm.em.fork(), key.tenantId, window);
    return { items: await this.views(key, page.rows), pagination: paginationView(window, page.total) };
  }

  /** The recipient as it was; transfers already made to it keep their own copy of the account. */
  async delete(key: ResolvedKey, id: string): Promise<RecipientView> {
    const row = isUuid(id) ? await deleteRecipient(this.deps.orm.em.fork(), key.tenantId, id) : null;
    if (!row) throw ApiError.notFound(`recipient ${id}`);
    return (await this.views(key, [row]))[0]!;
  }

  private async views(key: ResolvedKey, rows: readonly RecipientRow[]): Promise<RecipientView[]> {
    const paid = await lastPaidAt(this.deps.orm.em.fork(), key.tenantId, rows);
    return rows.map((row) => recipientView(row, paid.get(`${row.bank_code}:${row.account_number}`)));
  }
}

/** A saved recipient as a transfer to it needs it (decisions §20): its account, and the name it was saved under. */
export interface SavedRecipient {
  id: string;
  bankCode: string;
  accountNumber: string;
  accountName: string;
}

/**
 * The tenant's saved recipients among `ids`, by id, read in one query: what transfers (single or a
 * batch's items) naming `recipient_id` are paid to. An id that is not a uuid, or names no recipient
 * of this tenant (another tenant's, the other mode's, or one deleted), is absent from the map.
 */
export async function savedRecipients(
  em: EntityManager,
  tenantId: string,
  ids: readonly string[],
): Promise<Map<string, SavedRecipient>> {
  const asked = [...new Set(ids)].filter(isUuid);
  const rows = await recipientsByIds(em, tenantId, asked);
  const byId = new Map(rows.map((row) => [row.id.toLowerCase(), row]));
  const found = new Map<string, SavedRecipient>();
  for (const id of asked) {
    const row = byId.get(id.toLowerCase());
    if (row) {
      found.set(id, {
        id: row.id,
        bankCode: row.bank_code,
        accountNumber: row.account_number,
        accountName: row.account_name,
      });
    }
  }
  return found;
}

/**
 * The accounts among `payees` that are saved recipients of this tenant's mode, as `bank/account`
 * (a transfer policy's `saved_recipients_only`, decisions §20): an account is allowed however the
 * transfer names it, by recipient_id or by its number.
 */
export async function savedPayees(
  em: EntityManager,
  tenantId: string,
  payees: readonly { bankCode: string; account: string }[],
): Promise<Set<string>> {
  const rows = await savedAccounts(
    em,
    tenantId,
    payees.map((payee) => payee.bankCode),
    payees.map((payee) => payee.account),
  );
  return new Set(rows.map((row) => `${row.bank_code}/${row.account_number}`));
}
