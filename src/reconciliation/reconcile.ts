// One day's reconciliation: the bank's settlement statement against our books, by reference and
// session id. It reads and records; it never moves money. Differences are for operators (and the
// tenants they concern) to act on, through the audited commands that exist for that.
import type { EntityManager } from '@mikro-orm/postgresql';
import { isUuid } from '../http/ids.ts';
import { discrepancyCounts } from '../transfers/discrepancies.ts';
import type { BankSwitch } from '../providers/types.ts';
import { type TransferRow, transfersByIdOrSession, transfersEndedBetween } from '../transfers/store.ts';
import {
  type CreditWithTenant,
  creditsByReferenceOrSession,
  creditsReceivedBetween,
  tenantsOfAccounts,
} from '../virtual-accounts/store.ts';
import { type OurTransaction, dayAfter, dayBounds, keysOf, matchDay } from './match.ts';
import { type RunInput, type RunSummary, findRun, recordRun } from './store.ts';

function fromTransfer(row: TransferRow, onDay: boolean): OurTransaction {
  return {
    kind: 'transfer',
    reference: row.id,
    sessionId: row.session_id ?? null,
    amountMinor: row.amount_minor,
    status: row.status,
    tenantId: row.tenant_id,
    transferId: row.id,
    tenantReference: row.reference,
    onDay,
  };
}

function fromCredit(row: CreditWithTenant, onDay: boolean): OurTransaction {
  return {
    kind: 'inbound_credit',
    reference: row.transaction_reference,
    sessionId: row.session_id ?? null,
    amountMinor: row.amount_minor,
    status: row.status,
    tenantId: row.tenant_id,
    transferId: null,
    tenantReference: null,
    onDay,
  };
}

export async function reconcileDay(
  deps: { em: EntityManager; bankSwitch: BankSwitch },
  run: Omit<RunInput, 'bankItems' | 'ourItems' | 'discrepancies'>,
): Promise<RunSummary> {
  const { em, bankSwitch } = deps;
  const done = await findRun(em, run.runId);
  if (done) return done;

  const statement = (await bankSwitch.settlementReport(run.date)).items;
  // Ours that ended just before or after midnight may be on the neighbouring day's statement.
  const neighbours = await Promise.all([-1, 1].map((days) => bankSwitch.settlementReport(dayAfter(run.date, days))));
  const elsewhere = keysOf(neighbours.flatMap((report) => report.items));

  const { from, to } = dayBounds(run.date);
  const lines = (kind: 'transfer' | 'inbound_credit') => statement.filter((line) => line.kind === kind);
  const sessions = (kind: 'transfer' | 'inbound_credit') => lines(kind).flatMap((line) => line.sessionId || []);
  const [endedOnDay, listedTransfers, creditsOnDay, listedCredits, discrepancies] = await Promise.all([
    transfersEndedBetween(em.fork(), from, to),
    transfersByIdOrSession(
      em.fork(),
      lines('transfer').flatMap((line) => (isUuid(line.reference) ? line.reference : [])),
      sessions('transfer'),
    ),
    creditsReceivedBetween(em.fork(), from, to),
    creditsByReferenceOrSession(
      em.fork(),
      lines('inbound_credit').map((line) => line.reference),
      sessions('inbound_credit'),
    ),
    discrepancyCounts(em.fork(), from, to),
  ]);

  const ours = new Map<string, OurTransaction>();
  for (const row of endedOnDay) ours.set(`t:${row.id}`, fromTransfer(row, true));
  for (const row of creditsOnDay) ours.set(`c:${row.id}`, fromCredit(row, true));
  for (const row of listedTransfers) if (!ours.has(`t:${row.id}`)) ours.set(`t:${row.id}`, fromTransfer(row, false));
  for (const row of listedCredits) if (!ours.has(`c:${row.id}`)) ours.set(`c:${row.id}`, fromCredit(row, false));

  const items = matchDay(statement, [...ours.values()], elsewhere);
  // A credit only the bank lists still names an account: its tenant is told, as for any other item of theirs.
  const unowned = items.filter((item) => item.kind === 'inbound_credit' && !item.tenantId && item.provider);
  const owners = await tenantsOfAccounts(
    em.fork(),
    unowned.map((item) => ({ provider: item.provider!, accountNumber: item.accountNumber ?? '' })),
  );
  for (const item of unowned) item.tenantId = owners.get(`${item.provider}:${item.accountNumber}`) ?? null;
  return recordRun(
    em.fork(),
    { ...run, bankItems: statement.length, ourItems: endedOnDay.length + creditsOnDay.length, discrepancies },
    items,
  );
}
