// Operator commands for wallets: `wallet fund`, `wallet statement`.
import { randomUUID } from 'node:crypto';
import type { OperatorCommand } from '../admin/command.ts';
import { UsageError } from '../admin/errors.ts';
import { type Flags, flag, kobo } from '../admin/flags.ts';
import { ApiError } from '../http/errors.ts';
import { TENANT, tenantModeOf } from '../tenants/admin.ts';
import { fundWallet, walletView } from './service.ts';
import { statementCsv } from '../client/statement-csv.ts';
import { type StatementItem, StatementMoment, statementRange, walletStatement } from './statement.ts';

/** The most items one statement export holds; a longer one is asked for in shorter ranges. */
const EXPORT_LIMIT = 100_000;
const EXPORT_PAGE = 1_000;

/** The range of --from/--to, refused as a usage error naming the flag. */
function rangeOf(flags: Flags) {
  const moment = (name: 'from' | 'to') => {
    const raw = flags.optional(name);
    if (raw === undefined) return undefined;
    const parsed = StatementMoment.safeParse(raw);
    if (!parsed.success) throw new UsageError(`--${name} ${parsed.error.issues[0]!.message}`);
    return parsed.data;
  };
  try {
    return statementRange({ from: moment('from'), to: moment('to') });
  } catch (error) {
    if (error instanceof ApiError) throw new UsageError(`--${error.message}`);
    throw error;
  }
}

export const walletCommands: OperatorCommand[] = [
  {
    name: 'wallet fund',
    description: "Credits the tenant's test wallet (or with --live its live one) from external_funding",
    mutates: true,
    flags: {
      tenant: TENANT,
      'amount-minor': flag.required('N', 'kobo to credit'),
      reference: flag.optional('R', 'the same reference funds once (default: a new one)'),
      live: flag.boolean("the tenant's live wallet (refused before it has a live key)"),
    },
    async run(em, flags) {
      const amount = flags.get('amount-minor', kobo({ min: 1 }));
      const mode = await tenantModeOf(em, flags);
      const reference = flags.optional('reference') ?? `cli-${randomUUID()}`;
      const posted = await fundWallet(em, mode.id, amount, reference);
      return {
        tenant_id: mode.ownerId,
        mode: mode.mode,
        mode_tenant_id: mode.id,
        entry_id: posted.entryId,
        reference,
        amount_minor: amount,
        applied: posted.created,
        wallet: await walletView(em, mode.id),
      };
    },
  },
  {
    name: 'wallet statement',
    description: "The tenant's wallet statement over a range (every movement, running balance), as JSON or CSV",
    flags: {
      tenant: TENANT,
      from: flag.optional('WHEN', 'ISO 8601 date-time or date (a whole Lagos day); default 30 days before --to'),
      to: flag.optional(
        'WHEN',
        'exclusive; a date means the end of that day; default now; at most 366 days after --from',
      ),
      csv: flag.boolean('print CSV (oldest first, with a header line) instead of JSON'),
      live: flag.boolean("the tenant's live wallet"),
    },
    async run(em, flags) {
      const range = rangeOf(flags);
      const mode = await tenantModeOf(em, flags);
      const items: StatementItem[] = [];
      for (let offset = 0; ; offset += EXPORT_PAGE) {
        const page = await walletStatement(em, mode.id, range, { limit: EXPORT_PAGE, offset });
        if (page.pagination.total > EXPORT_LIMIT) {
          throw new UsageError(
            `${page.pagination.total} movements in that range, more than ${EXPORT_LIMIT}: export shorter ranges`,
          );
        }
        items.push(...page.items);
        if (!page.pagination.has_more) break;
      }
      return {
        tenant_id: mode.ownerId,
        mode: mode.mode,
        period: { from: range.from.toISOString(), to: range.to.toISOString() },
        count: items.length,
        items,
      };
    },
    text(result, flags) {
      return flags.on('csv') ? statementCsv((result as { items: StatementItem[] }).items) : undefined;
    },
  },
];
