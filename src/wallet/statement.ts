// Wallet statements (decisions §15): one item per movement of the available balance, newest first,
// each with the balance it left, what it was (the journal entry's kind), the tenant's reference and
// the resource it belongs to; and the wallet as it was at a past moment. Everything comes from the
// journal (src/ledger/statement.ts); the references are read from the rows the entries' keys name.
// A range is at most 366 days; a date without a time is that whole day in Lagos (decisions §4's day).
import type { EntityManager } from '@mikro-orm/postgresql';
import { z } from 'zod';
import type { StatementCsvItem } from '../client/statement-csv.ts';
import { executeNumbered } from '../db/numbered-sql.ts';
import type { Window } from '../db/pages.ts';
import { ApiError } from '../http/errors.ts';
import { paginationView } from '../http/pagination.ts';
import { accountPostings, balancesAt, type AccountPosting, type TimeRange } from '../ledger/statement.ts';
import { batchItemReference } from '../transfers/domain.ts';

/** The longest range one statement covers. */
export const MAX_STATEMENT_DAYS = 366;
/** The range when `from` is not given: the 30 days before `to`. */
export const DEFAULT_STATEMENT_DAYS = 30;
const DAY_MS = 86_400_000;
const LAGOS_OFFSET = '+01:00';

const DATE_ONLY = /^\d{4}-\d{2}-\d{2}$/;

/**
 * A moment in the query string: an ISO 8601 date-time with its offset (`Z` or `+01:00`), or a date
 * alone, which means 00:00 that day in Lagos (for `to`: the end of that day).
 */
export const StatementMoment = z
  .string()
  .max(40, 'must be an ISO 8601 date-time (2026-11-27T09:30:00Z) or a date (2026-11-27)')
  .refine((value) => DATE_ONLY.test(value) || z.iso.datetime({ offset: true }).safeParse(value).success, {
    error: 'must be an ISO 8601 date-time with its offset (2026-11-27T09:30:00Z) or a date (2026-11-27)',
  })
  .refine((value) => !Number.isNaN(momentOf(value, 'start').getTime()), { error: 'is not a real date' });

function momentOf(value: string, side: 'start' | 'end'): Date {
  if (!DATE_ONLY.test(value)) return new Date(value);
  const start = new Date(`${value}T00:00:00${LAGOS_OFFSET}`);
  // The calendar must agree (2026-02-30 is not a date, whatever Date makes of it).
  if (Number.isNaN(start.getTime()) || new Date(start.getTime() + 3_600_000).toISOString().slice(0, 10) !== value) {
    return new Date(Number.NaN);
  }
  return side === 'start' ? start : new Date(start.getTime() + DAY_MS);
}

/** The moment `at` names: a date alone means the end of that day in Lagos (its closing balance). */
export function momentAt(value: string): Date {
  return momentOf(value, 'end');
}

/** The range a statement query asks for, checked: `to` after `from`, at most 366 days apart. */
export function statementRange(query: { from?: string | undefined; to?: string | undefined }, now = new Date()) {
  const to = query.to === undefined ? now : momentOf(query.to, 'end');
  const from =
    query.from === undefined ? new Date(to.getTime() - DEFAULT_STATEMENT_DAYS * DAY_MS) : momentOf(query.from, 'start');
  if (to.getTime() <= from.getTime()) {
    throw ApiError.validation([{ path: 'to', message: `must be after from (${from.toISOString()})` }]);
  }
  if (to.getTime() - from.getTime() > MAX_STATEMENT_DAYS * DAY_MS) {
    throw ApiError.validation([
      {
        path: 'to',
        message: `must be at most ${MAX_STATEMENT_DAYS} days after from (${from.toISOString()}): ask for a longer period in parts`,
      },
    ]);
  }
  return { from, to } satisfies TimeRange;
}

/** One item, as the API lists it and the CSV writer of the client (which the operator CLI uses too) takes it. */
export type StatementItem = StatementCsvItem;

/** What an entry's business key says it was about (src/ledger/movements.ts writes the keys). */
type Subject =
  | { type: 'transfer'; id: string }
  | { type: 'transfer_batch'; id: string; index?: number }
  | { type: 'inbound_credit'; provider: string; transactionReference: string }
  | { type: 'card_funding'; id: string }
  | { type: 'wallet_funding'; reference: string };

const UUID = '[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}';
const KEYS: [RegExp, (match: RegExpExecArray) => Subject][] = [
  [new RegExp(`^transfer:(${UUID}):`), (m) => ({ type: 'transfer', id: m[1]! })],
  [new RegExp(`^transfer-batch:(${UUID}):reserve$`), (m) => ({ type: 'transfer_batch', id: m[1]! })],
  [
    new RegExp(`^transfer-batch:(${UUID}):item:(\\d+):release$`),
    (m) => ({ type: 'transfer_batch', id: m[1]!, index: Number(m[2]) }),
  ],
  [/^inbound-credit:([^:]+):(.+)$/, (m) => ({ type: 'inbound_credit', provider: m[1]!, transactionReference: m[2]! })],
  // A held credit an operator released to the wallet (decisions §21): the credit's own line.
  [
    /^inbound-credit-release:([^:]+):(.+)$/,
    (m) => ({ type: 'inbound_credit', provider: m[1]!, transactionReference: m[2]! }),
  ],
  [new RegExp(`^card-funding:(${UUID})(:reverse)?$`), (m) => ({ type: 'card_funding', id: m[1]! })],
  [new RegExp(`^wallet-funding:${UUID}:(.+)$`), (m) => ({ type: 'wallet_funding', reference: m[1]! })],
];

export function subjectOf(idempotencyKey: string): Subject | undefined {
  for (const [pattern, subject] of KEYS) {
    const match = pattern.exec(idempotencyKey);
    if (match) return subject(match);
  }
  return undefined;
}

/** The tenant's references and the public resources of a page of postings, in a few reads. */
async function describe(em: EntityManager, tenantId: string, postings: readonly AccountPosting[]) {
  const subjects = postings.map((posting) => subjectOf(posting.idempotencyKey));
  const idsOf = (type: Subject['type']) => [
    ...new Set(subjects.flatMap((subject) => (subject?.type === type && 'id' in subject ? [subject.id] : []))),
  ];
  const lookup = async (sql: string, ids: string[]) =>
    ids.length === 0
      ? new Map<string, { reference: string | null; owner: string | null }>()
      : new Map(
          (
            await executeNumbered<{ id: string; reference: string | null; owner: string | null }[]>(em, sql, [
              tenantId,
              ids,
            ])
          ).map((row) => [row.id, row]),
        );
  const credits = subjects.flatMap((subject) => (subject?.type === 'inbound_credit' ? [subject] : []));
  const [transfers, batches, fundings, creditRows] = await Promise.all([
    lookup(
      'select id, reference, null as owner from transfers where tenant_id = $1 and id = any($2::uuid[])',
      idsOf('transfer'),
    ),
    lookup(
      'select id, batch_reference as reference, null as owner from transfer_batches where tenant_id = $1 and id = any($2::uuid[])',
      idsOf('transfer_batch'),
    ),
    lookup(
      `select f.id, f.transaction_reference as reference, f.card_id::text as owner
         from card_fundings f join cards c on c.id = f.card_id where c.tenant_id = $1 and f.id = any($2::uuid[])`,
      idsOf('card_funding'),
    ),
    credits.length === 0
      ? []
      : executeNumbered<{ provider: string; transaction_reference: string; virtual_account_id: string | null }[]>(
          em,
          `select c.provider, c.transaction_reference, c.virtual_account_id::text
             from inbound_credits c join virtual_accounts v on v.id = c.virtual_account_id
            where v.tenant_id = $1
              and (c.provider, c.transaction_reference) in (select * from unnest($2::text[], $3::text[]))`,
          [tenantId, credits.map((credit) => credit.provider), credits.map((credit) => credit.transactionReference)],
        ),
  ]);
  const creditAccounts = new Map(
    creditRows.map((row) => [`${row.provider}:${row.transaction_reference}`, row.virtual_account_id]),
  );
  return postings.map((posting, i): Pick<StatementItem, 'reference' | 'resource'> => {
    const subject = subjects[i];
    switch (subject?.type) {
      case 'transfer':
        return {
          reference: transfers.get(subject.id)?.reference ?? null,
          resource: { type: 'transfer', id: subject.id },
        };
      case 'transfer_batch': {
        const batchReference = batches.get(subject.id)?.reference ?? null;
        return {
          reference:
            batchReference !== null && subject.index !== undefined
              ? batchItemReference(batchReference, subject.index)
              : batchReference,
          resource: { type: 'transfer_batch', id: subject.id },
        };
      }
      case 'inbound_credit': {
        const account = creditAccounts.get(`${subject.provider}:${subject.transactionReference}`);
        return {
          reference: subject.transactionReference,
          resource: account ? { type: 'virtual_account', id: account } : { type: 'journal_entry', id: posting.entryId },
        };
      }
      case 'card_funding': {
        const funding = fundings.get(subject.id);
        return {
          reference: funding?.reference ?? subject.id,
          resource: funding?.owner
            ? { type: 'card', id: funding.owner }
            : { type: 'journal_entry', id: posting.entryId },
        };
      }
      case 'wallet_funding':
        return { reference: subject.reference, resource: { type: 'journal_entry', id: posting.entryId } };
      default:
        return { reference: null, resource: { type: 'journal_entry', id: posting.entryId } };
    }
  });
}

/**
 * What an item was: its entry's kind, except the provider's fee on an inbound credit, booked in the
 * credit's own entry (src/ledger/movements.ts), whose one debit of the wallet it is (decisions §18).
 */
function itemType(posting: AccountPosting): string {
  return posting.kind === 'inbound_credit' && posting.amountMinor < 0 ? 'provider_fee' : posting.kind;
}

/** One page of the tenant's statement over `range`, newest first. */
export async function walletStatement(em: EntityManager, tenantId: string, range: TimeRange, window: Window) {
  const page = await accountPostings(em, tenantId, 'wallet', range, window);
  const described = await describe(em, tenantId, page.rows);
  const items: StatementItem[] = page.rows.map((posting, i) => ({
    id: posting.id,
    entry_id: posting.entryId,
    type: itemType(posting),
    amount_minor: posting.amountMinor,
    balance_after_minor: posting.balanceAfterMinor,
    ...described[i]!,
    created_at: posting.createdAt.toISOString(),
  }));
  return {
    items,
    pagination: paginationView(window, page.total),
    period: { from: range.from.toISOString(), to: range.to.toISOString() },
  };
}

/** The wallet as it was at `at`: what was available and reserved then. */
export async function walletAt(em: EntityManager, tenantId: string, at: Date) {
  const { balances, lastMovedAt } = await balancesAt(em, tenantId, ['wallet', 'in_flight'], at);
  return {
    currency: 'NGN' as const,
    available_minor: balances.get('wallet')!,
    pending_minor: balances.get('in_flight')!,
    updated_at: (lastMovedAt ?? at).toISOString(),
    at: at.toISOString(),
  };
}
