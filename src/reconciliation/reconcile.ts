// One connector's day: its settlement record against our books of that connector (the transfers
// it took, the credits of its virtual-account providers), by reference and session id. It reads
// and records; it never moves money. Differences are for operators (and the tenants they concern)
// to act on, through the audited commands that exist for that.
import type { EntityManager } from '@mikro-orm/postgresql';
import { isUuid } from '../http/ids.ts';
import {
  type TransferRow,
  discrepancyCounts,
  transfersByIdOrSession,
  transfersEndedBetween,
} from '../transfers/service.ts';
import {
  type CreditWithTenant,
  creditsByReferenceOrSession,
  creditsReceivedBetween,
  tenantsOfAccounts,
} from '../virtual-accounts/service.ts';
import type { ReconciledConnector } from './connectors.ts';
import { type OurTransaction, dayAfter, dayBounds, keysOf, matchDay } from './match.ts';
import { type RunInput, type RunSummary, findRun, recordRun } from './store.ts';

/** What a transfer and an inbound credit of ours carry alike: session id, amount, our status, tenant. */
function carried(row: TransferRow | CreditWithTenant) {
  return {
    sessionId: row.session_id ?? null,
    amountMinor: row.amount_minor,
    status: row.status,
    tenantId: row.tenant_id,
  };
}

function fromTransfer(row: TransferRow, onDay: boolean): OurTransaction {
  return {
    kind: 'transfer',
    reference: row.id,
    ...carried(row),
    transferId: row.id,
    tenantReference: row.reference,
    onDay,
  };
}

function fromCredit(row: CreditWithTenant, onDay: boolean): OurTransaction {
  return {
    kind: 'inbound_credit',
    reference: row.transaction_reference,
    ...carried(row),
    // What the provider settles for it: the credit less the fee it kept (decisions §18).
    amountMinor: row.amount_minor - row.fee_minor,
    transferId: null,
    tenantReference: null,
    onDay,
  };
}

export async function reconcileDay(
  deps: { em: EntityManager; connector: ReconciledConnector },
  run: Omit<RunInput, 'connector' | 'bankItems' | 'ourItems' | 'discrepancies'>,
): Promise<RunSummary> {
  const { em, connector } = deps;
  const done = await findRun(em, run.runId);
  if (done) return done;

  const statement = (await connector.settlementReport(run.date)).items;
  // Ours that ended just before or after midnight may be on the neighbouring day's statement.
  const neighbours = await Promise.all([-1, 1].map((days) => connector.settlementReport(dayAfter(run.date, days))));
  const elsewhere = keysOf(neighbours.flatMap((report) => report.items));

  const { from, to } = dayBounds(run.date);
  const lines = (kind: 'transfer' | 'inbound_credit') => statement.filter((line) => line.kind === kind);
  const sessions = (kind: 'transfer' | 'inbound_credit') => lines(kind).flatMap((line) => line.sessionId || []);
  const [endedOnDay, listedTransfers, creditsOnDay, listedCredits, discrepancies] = await Promise.all([
    transfersEndedBetween(em.fork(), connector.transfers, from, to),
    transfersByIdOrSession(
      em.fork(),
      connector.transfers,
      lines('transfer').flatMap((line) => (isUuid(line.reference) ? line.reference : [])),
      sessions('transfer'),
    ),
    creditsReceivedBetween(em.fork(), connector.creditProviders, from, to),
    creditsByReferenceOrSession(
      em.fork(),
      connector.creditProviders,
      lines('inbound_credit').map((line) => line.reference),
      sessions('inbound_credit'),
    ),
    discrepancyCounts(em.fork(), connector.transfers, from, to),
  ]);

  const ours = new Map<string, OurTransaction>();
  for (const row of endedOnDay) ours.set(`t:${row.id}`, fromTransfer(row, true));
  for (const row of creditsOnDay) ours.set(`c:${row.id}`, fromCredit(row, true));
  for (const row of listedTransfers) if (!ours.has(`t:${row.id}`)) ours.set(`t:${row.id}`, fromTransfer(row, false));
  for (const row of listedCredits) if (!ours.has(`c:${row.id}`)) ours.set(`c:${row.id}`, fromCredit(row, false));

  const items = matchDay(statement, [...ours.values()], elsewhere);
  // A credit only the bank lists still names an account: its tenant is told, as for any other item of
  // theirs; only on this connector's own providers, so that no connector's line speaks for another's account.
  const unowned = items.filter(
    (item) =>
      item.kind === 'inbound_credit' &&
      !item.tenantId &&
      item.provider !== null &&
      connector.creditProviders.includes(item.provider),
  );
  const owners = await tenantsOfAccounts(
    em.fork(),
    unowned.map((item) => ({ provider: item.provider!, accountNumber: item.accountNumber ?? '' })),
  );
  for (const item of unowned) item.tenantId = owners.get(`${item.provider}:${item.accountNumber}`) ?? null;
  return recordRun(
    em.fork(),
    {
      ...run,
      connector: connector.name,
      bankItems: statement.length,
      ourItems: endedOnDay.length + creditsOnDay.length,
      discrepancies,
    },
    items,
  );
}
