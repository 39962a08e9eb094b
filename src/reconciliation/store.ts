// The only code that touches the reconciliation tables: `reconciliation_runs` (one per run of a
// connector's day) and `reconciliation_items` (every line it looked at, matched or not). A run is
// written whole, with its events, in one transaction: a retried activity finds it written and
// writes nothing twice. Runs, items and events name the connector whose record was reconciled.
import { randomUUID } from 'node:crypto';
import { type InferEntity, p } from '@mikro-orm/core';
import type { EntityManager } from '@mikro-orm/postgresql';
import { tableEntity } from '../db/columns.ts';
import { recordEvent } from '../events/events.ts';
import { type TransferStatus, publicStatus } from '../transfers/domain.ts';
import { OUTCOMES, type Outcome, type ReconciledItem } from './match.ts';

export const ReconciliationRun = tableEntity('ReconciliationRun', 'reconciliation_runs', {
  id: p.uuid().primary(),
  /** The connector whose record of the day this run reconciled (runs before migration 0024: `sandbox`). */
  connector: p.string(),
  value_date: p.date(),
  trigger: p.enum(['schedule', 'operator'] as const),
  workflow_id: p.string(),
  bank_items: p.integer(),
  our_items: p.integer(),
  matched: p.integer(),
  mismatched: p.integer(),
  counts: p.json<Record<Outcome, number>>(),
  discrepancies_open: p.integer(),
  discrepancies_received: p.integer(),
  started_at: p.datetime(),
  completed_at: p.datetime().defaultRaw('now()'),
});
export type ReconciliationRunRow = InferEntity<typeof ReconciliationRun>;

export const ReconciliationItem = tableEntity('ReconciliationItem', 'reconciliation_items', {
  id: p.uuid().primary(),
  run_id: p.uuid(),
  connector: p.string(),
  outcome: p.enum(OUTCOMES),
  kind: p.enum(['transfer', 'inbound_credit'] as const),
  reference: p.string(),
  session_id: p.string().nullable(),
  tenant_id: p.uuid().nullable(),
  transfer_id: p.uuid().nullable(),
  tenant_reference: p.string().nullable(),
  provider: p.string().nullable(),
  account_number: p.string().nullable(),
  bank_amount_minor: p.bigint('number').nullable(),
  our_amount_minor: p.bigint('number').nullable(),
  bank_status: p.string().nullable(),
  our_status: p.string().nullable(),
});
export type ReconciliationItemRow = InferEntity<typeof ReconciliationItem>;

export const reconciliationEntities = [ReconciliationRun, ReconciliationItem];

export interface RunInput {
  runId: string;
  connector: string;
  date: string;
  trigger: 'schedule' | 'operator';
  workflowId: string;
  startedAt: Date;
  bankItems: number;
  ourItems: number;
  /** Late bank answers that contradict the books (decisions §12): still open, and received that day. */
  discrepancies: { open: number; received_on_day: number };
}

/** What a run found, as the CLI prints it and the workflow returns it. */
export interface RunSummary {
  run_id: string;
  connector: string;
  date: string;
  trigger: 'schedule' | 'operator';
  workflow_id: string;
  bank_items: number;
  our_items: number;
  matched: number;
  mismatched: number;
  counts: Record<Outcome, number>;
  discrepancies: { open: number; received_on_day: number };
  started_at: string;
  completed_at: string;
}

function countsOf(items: readonly ReconciledItem[]): Record<Outcome, number> {
  const counts = Object.fromEntries(OUTCOMES.map((outcome) => [outcome, 0])) as Record<Outcome, number>;
  for (const item of items) counts[item.outcome] += 1;
  return counts;
}

function summaryOf(row: ReconciliationRunRow): RunSummary {
  return {
    run_id: row.id,
    connector: row.connector,
    date: dateText(row.value_date),
    trigger: row.trigger,
    workflow_id: row.workflow_id,
    bank_items: row.bank_items,
    our_items: row.our_items,
    matched: row.matched,
    mismatched: row.mismatched,
    counts: row.counts,
    discrepancies: { open: row.discrepancies_open, received_on_day: row.discrepancies_received },
    started_at: row.started_at.toISOString(),
    completed_at: row.completed_at.toISOString(),
  };
}

function dateText(value: unknown): string {
  return value instanceof Date ? value.toISOString().slice(0, 10) : String(value);
}

export async function findRun(em: EntityManager, runId: string): Promise<RunSummary | null> {
  const row = await em.findOne(ReconciliationRun, { id: runId });
  return row ? summaryOf(row) : null;
}

/** The day's latest run of each connector (of `connector` only, when given), by connector name. */
export async function latestRuns(em: EntityManager, date: string, connector?: string): Promise<RunSummary[]> {
  const rows = await em.find(
    ReconciliationRun,
    { value_date: date, ...(connector === undefined ? {} : { connector }) },
    { orderBy: { connector: 'asc', completed_at: 'desc', id: 'asc' } },
  );
  const latest = new Map<string, ReconciliationRunRow>();
  for (const row of rows) if (!latest.has(row.connector)) latest.set(row.connector, row);
  return [...latest.values()].map(summaryOf);
}

/** The runs one workflow has recorded so far (one per connector it reconciled), by connector name. */
export async function runsOfWorkflow(em: EntityManager, workflowId: string): Promise<RunSummary[]> {
  const rows = await em.find(ReconciliationRun, { workflow_id: workflowId }, { orderBy: { connector: 'asc' } });
  return rows.map(summaryOf);
}

/** The run's items: the mismatches, or with `all` every item; mismatches first. */
export async function runItems(em: EntityManager, runId: string, options: { all: boolean }) {
  const rows = await em.find(
    ReconciliationItem,
    { run_id: runId, ...(options.all ? {} : { outcome: { $ne: 'matched' } }) },
    { orderBy: { outcome: 'asc', kind: 'asc', reference: 'asc' } },
  );
  return rows.map(itemView);
}

function itemView(row: ReconciliationItemRow) {
  return {
    connector: row.connector,
    outcome: row.outcome,
    kind: row.kind,
    reference: row.reference,
    session_id: row.session_id,
    tenant_id: row.tenant_id,
    transfer_id: row.transfer_id,
    tenant_reference: row.tenant_reference,
    provider: row.provider,
    account_number: row.account_number,
    bank_amount_minor: row.bank_amount_minor,
    our_amount_minor: row.our_amount_minor,
    bank_status: row.bank_status,
    our_status: row.our_status,
  };
}

/** What a tenant is told about one of its transactions: its own reference, never the bank's internals. */
function tenantView(run: RunInput, item: ReconciledItem) {
  return {
    run_id: run.runId,
    connector: run.connector,
    date: run.date,
    outcome: item.outcome,
    kind: item.kind,
    transfer_id: item.transferId,
    reference: item.tenantReference ?? item.reference,
    session_id: item.sessionId,
    ...(item.kind === 'inbound_credit' ? { account_number: item.accountNumber } : {}),
    bank_amount_minor: item.bankAmountMinor,
    our_amount_minor: item.ourAmountMinor,
    bank_status: item.bankStatus,
    // In the API's vocabulary: a completed transfer is `successful` to a tenant.
    our_status:
      item.kind === 'transfer' && item.ourStatus ? publicStatus(item.ourStatus as TransferStatus) : item.ourStatus,
  };
}

/**
 * Writes the run, its items, and the events: per tenant with items in the connector's day one
 * `reconciliation.completed`, and one `reconciliation.mismatch` per item of its that is not
 * matched, each naming the connector. Items no tenant owns (a line the bank invented) are for operators only. Returns the
 * run as written, or as an earlier attempt of the same run wrote it.
 */
export async function recordRun(
  em: EntityManager,
  run: RunInput,
  items: readonly ReconciledItem[],
): Promise<RunSummary> {
  return em.transactional(async (tx) => {
    const done = await findRun(tx, run.runId);
    if (done) return done;
    const counts = countsOf(items);
    const mismatched = items.length - counts.matched;
    await tx.insert(ReconciliationRun, {
      id: run.runId,
      connector: run.connector,
      value_date: run.date,
      trigger: run.trigger,
      workflow_id: run.workflowId,
      bank_items: run.bankItems,
      our_items: run.ourItems,
      matched: counts.matched,
      mismatched,
      counts,
      discrepancies_open: run.discrepancies.open,
      discrepancies_received: run.discrepancies.received_on_day,
      started_at: run.startedAt,
    });
    if (items.length) {
      await tx.insertMany(
        ReconciliationItem,
        items.map((item) => ({
          id: randomUUID(),
          run_id: run.runId,
          connector: run.connector,
          outcome: item.outcome,
          kind: item.kind,
          reference: item.reference,
          session_id: item.sessionId,
          tenant_id: item.tenantId,
          transfer_id: item.transferId,
          tenant_reference: item.tenantReference,
          provider: item.provider,
          account_number: item.accountNumber,
          bank_amount_minor: item.bankAmountMinor,
          our_amount_minor: item.ourAmountMinor,
          bank_status: item.bankStatus,
          our_status: item.ourStatus,
        })),
      );
    }
    const byTenant = Map.groupBy(
      items.filter((item) => item.tenantId !== null),
      (item) => item.tenantId!,
    );
    for (const [tenantId, own] of byTenant) {
      const mismatches = own.filter((item) => item.outcome !== 'matched');
      for (const [index, item] of mismatches.entries()) {
        await recordEvent(tx, {
          tenantId,
          type: 'reconciliation.mismatch',
          sourceKey: `reconciliation:${run.runId}:${item.kind}:${item.reference}:${index}`,
          payload: tenantView(run, item),
        });
      }
      const ownCounts = countsOf(own);
      await recordEvent(tx, {
        tenantId,
        type: 'reconciliation.completed',
        sourceKey: `reconciliation:${run.runId}:${tenantId}:completed`,
        payload: {
          run_id: run.runId,
          connector: run.connector,
          date: run.date,
          items: own.length,
          matched: ownCounts.matched,
          mismatched: own.length - ownCounts.matched,
          counts: ownCounts,
        },
      });
    }
    return (await findRun(tx, run.runId))!;
  });
}
