// What one transfer costs, counted rather than timed: N transfers made one after another, each
// waited for to its end, then
//   - PostgreSQL statements, from pg_stat_statements (reset first), by kind, the sandbox bank's own
//     apart (the bench gives it a database of its own), and less what the gateway runs when idle
//     (the fan-out's poll) over the same time, measured just before; rows written by table, from
//     the tables' own counts (pg_stat_user_tables) before and after. BENCH_STATEMENTS_DUMP=<file>
//     writes each statement's calls and rows per transfer there, most called first;
//   - Temporal: history events, workflow tasks, activity tasks, local activities, signals and
//     updates, from each transfer's history, and the server-side writes they make;
//   - provider calls: name enquiries, submissions and status queries, from the same histories.
// The bench's own queries carry the comment below and are left out.
import type { Client } from '@temporalio/client';
// @temporalio/proto is CommonJS whose named exports Node cannot detect statically.
import proto from '@temporalio/proto';
import type pg from 'pg';
import { transferWorkflowId } from '../../workflows/transfers/definitions.ts';

const OURS = '/* bench */';
const EventType = proto.temporal.api.enums.v1.EventType;
type HistoryEvent = proto.temporal.api.history.v1.IHistoryEvent;

export interface TransferCost {
  transfers: number;
  /** Null when pg_stat_statements is not loaded (an external DATABASE_URL without it). */
  database: {
    statementsPerTransfer: number;
    byKind: Record<string, number>;
    rowsWrittenPerTransfer: number;
    rowsWrittenByTable: Record<string, number>;
    transactionsPerTransfer: number;
    sandboxBankStatementsPerTransfer: number;
    idleStatementsPerSecond: number;
  } | null;
  temporal: {
    historyEvents: number;
    workflowTasks: number;
    activityTasks: number;
    localActivities: number;
    signals: number;
    updates: number;
    /** Start (with its update), each workflow task started and completed, each activity started and finished, each signal. */
    serverWrites: number;
  };
  providerCalls: { nameEnquiry: number; submit: number; statusQuery: number };
  /** The last transfer's history, event by event (type, and the activity or marker it names). */
  lastHistory?: string[];
}

/**
 * What one transfer may cost at most (docs/performance.md#targets), on the path the bench takes: the
 * bank answers the submission "pending" and confirms by callback. The cost phase fails (the bench
 * exits 1) when a count is over its target, so that a change that adds a task or a statement is
 * seen at once.
 */
export const COST_TARGETS = {
  historyEvents: 20,
  serverWrites: 8,
  workflowTasks: 3,
  activityTasks: 1,
  statementsPerTransfer: 35,
  rowsWrittenPerTransfer: 18,
} as const;

/** The counts over their targets, as `name count > target`; empty when every one is within. */
export function overTargets(cost: TransferCost): string[] {
  const counts: Record<keyof typeof COST_TARGETS, number | undefined> = {
    historyEvents: cost.temporal.historyEvents,
    serverWrites: cost.temporal.serverWrites,
    workflowTasks: cost.temporal.workflowTasks,
    activityTasks: cost.temporal.activityTasks,
    statementsPerTransfer: cost.database?.statementsPerTransfer,
    rowsWrittenPerTransfer: cost.database?.rowsWrittenPerTransfer,
  };
  return Object.entries(COST_TARGETS).flatMap(([name, target]) => {
    const count = counts[name as keyof typeof COST_TARGETS];
    return count !== undefined && count > target ? [`${name} ${count} > ${target}`] : [];
  });
}

interface StatementRow {
  query: string;
  calls: string;
  rows: string;
}

async function statementStatsAvailable(db: pg.Client): Promise<boolean> {
  try {
    await db.query(`${OURS} create extension if not exists pg_stat_statements`);
    await db.query(`${OURS} select pg_stat_statements_reset()`);
    return true;
  } catch {
    return false;
  }
}

/** The statements run in one database of the server: the gateway's (the connection's own), or the sandbox bank's. */
async function statements(db: pg.Client, database?: string): Promise<StatementRow[]> {
  const { rows } = await db.query<StatementRow>(
    `${OURS} select query, calls::text, rows::text from pg_stat_statements
      where query not like '%/* bench */%' and dbid = (select oid from pg_database where datname = coalesce($1, current_database()))`,
    [database ?? null],
  );
  return rows;
}

const per = (total: number, n: number) => Math.round((total / n) * 10) / 10;

function kindOf(query: string): string {
  const word = /^\s*(?:\/\*.*?\*\/\s*)?([a-z]+)/i.exec(query)?.[1]?.toLowerCase() ?? 'other';
  return ['select', 'insert', 'update', 'delete', 'with'].includes(word) ? word : 'begin/commit/other';
}

function decodedDetails(event: HistoryEvent): string {
  const payloads = Object.values(event.markerRecordedEventAttributes?.details ?? {}).flatMap(
    (details) => details.payloads ?? [],
  );
  return payloads.map((payload) => Buffer.from(payload.data ?? new Uint8Array()).toString('utf8')).join(' ');
}

/** Rows inserted, updated and deleted so far in each of the gateway's tables (the sandbox bank's schema aside). */
async function tableWrites(db: pg.Client): Promise<Map<string, number>> {
  const { rows } = await db.query<{ table: string; n: string }>(
    `${OURS} select relname as table, (n_tup_ins + n_tup_upd + n_tup_del)::text as n
       from pg_stat_user_tables where schemaname <> 'sandbox_bank'`,
  );
  return new Map(rows.map((row) => [row.table, Number(row.n)]));
}

/**
 * tableWrites once every backend has reported its counts: a backend reports what it wrote when it
 * goes idle, at most once a second, and one that could not then (another held the shared counts)
 * 10 s later; so the counts are read after 11 s, once they have held still for 2 s (20 s at most).
 */
async function settledTableWrites(db: pg.Client): Promise<Map<string, number>> {
  const started = Date.now();
  let last = await tableWrites(db);
  for (;;) {
    await new Promise((resolve) => setTimeout(resolve, 2_000));
    const now = await tableWrites(db);
    const same = now.size === last.size && [...now].every(([table, n]) => last.get(table) === n);
    if ((same && Date.now() - started >= 11_000) || Date.now() - started >= 20_000) return now;
    last = now;
  }
}

export async function measureTransferCost(options: {
  db: pg.Client;
  client: Client;
  tenantId: string;
  count: number;
  /** Creates the transfer with this reference; resolves when the API has answered 201. */
  create: (reference: string) => Promise<void>;
  reference: (n: number) => string;
  /** The sandbox bank's database on the same server, whose statements are the bank's, counted apart. */
  bankDatabase?: string;
}): Promise<TransferCost> {
  const { db, client, tenantId, count } = options;
  const counted = await statementStatsAvailable(db);

  // The gateway's idle cost over a few seconds: the fan-out's poll, mainly.
  const idleMs = 3_000;
  await new Promise((resolve) => setTimeout(resolve, idleMs));
  const idle = counted ? (await statements(db)).reduce((sum, row) => sum + Number(row.calls), 0) : 0;
  const writesBefore = await settledTableWrites(db);
  if (counted) await db.query(`${OURS} select pg_stat_statements_reset()`);

  const started = Date.now();
  const references: string[] = [];
  for (let n = 0; n < count; n += 1) {
    const reference = options.reference(n);
    references.push(reference);
    await options.create(reference);
    await client.workflow.getHandle(transferWorkflowId(tenantId, reference)).result();
  }
  // The events these transfers recorded are fanned out (to no endpoint) before counting.
  for (;;) {
    const { rows } = await db.query<{ n: string }>(
      `${OURS} select count(*)::text as n from events where fanned_out_at is null and tenant_id = $1`,
      [tenantId],
    );
    if (rows[0]!.n === '0') break;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  const elapsedMs = Date.now() - started;

  let database: TransferCost['database'] = null;
  if (counted) {
    const rows = await statements(db);
    if (process.env.BENCH_STATEMENTS_DUMP)
      (await import('node:fs')).writeFileSync(
        process.env.BENCH_STATEMENTS_DUMP,
        rows
          .sort((a, b) => Number(b.calls) - Number(a.calls))
          .map(
            (row) =>
              `${(Number(row.calls) / count).toFixed(2)}\t${(Number(row.rows) / count).toFixed(2)}\t${row.query.replace(/\s+/g, ' ').slice(0, 300)}`,
          )
          .join('\n'),
      );
    const byKind: Record<string, number> = {};
    // Rows written by table, from the tables' own counts (a write inside a CTE, a trigger's write
    // and the sandbox bank's, in its own database, each where it belongs).
    const writesAfter = await settledTableWrites(db);
    const rowsWrittenByTable: Record<string, number> = {};
    for (const [table, n] of writesAfter) {
      const delta = n - (writesBefore.get(table) ?? 0);
      if (delta > 0) rowsWrittenByTable[table] = delta;
    }
    const written = Object.values(rowsWrittenByTable).reduce((sum, n) => sum + n, 0);
    let ours = 0;
    let bank = options.bankDatabase
      ? (await statements(db, options.bankDatabase)).reduce((sum, row) => sum + Number(row.calls), 0)
      : 0;
    let transactions = 0;
    for (const row of rows) {
      const calls = Number(row.calls);
      // A bank sharing the gateway's database: its statements name its schema (its begin and commit
      // cannot be told apart, which is why the bench gives it a database of its own).
      if (row.query.includes('sandbox_bank.')) {
        bank += calls;
        continue;
      }
      ours += calls;
      const kind = kindOf(row.query);
      byKind[kind] = (byKind[kind] ?? 0) + calls;
      if (/^\s*commit\b/i.test(row.query)) transactions += calls;
    }
    const idlePerSecond = idle / (idleMs / 1000);
    const idleShare = idlePerSecond * (elapsedMs / 1000);
    database = {
      statementsPerTransfer: per(Math.max(0, ours - idleShare), count),
      byKind: Object.fromEntries(Object.entries(byKind).map(([kind, calls]) => [kind, per(calls, count)])),
      rowsWrittenPerTransfer: per(written, count),
      rowsWrittenByTable: Object.fromEntries(
        Object.entries(rowsWrittenByTable)
          .filter(([, n]) => n > 0)
          .map(([table, n]) => [table, per(n, count)]),
      ),
      transactionsPerTransfer: per(transactions, count),
      sandboxBankStatementsPerTransfer: per(bank, count),
      idleStatementsPerSecond: Math.round(idlePerSecond * 10) / 10,
    };
  }

  const tally = {
    historyEvents: 0,
    workflowTasks: 0,
    activityTasks: 0,
    localActivities: 0,
    signals: 0,
    updates: 0,
    serverWrites: 0,
  };
  const calls = { nameEnquiry: 0, submit: 0, statusQuery: 0 };
  let lastHistory: string[] = [];
  for (const reference of references) {
    const history = await client.workflow.getHandle(transferWorkflowId(tenantId, reference)).fetchHistory();
    lastHistory = (history.events ?? []).map(described);
    for (const event of history.events ?? []) {
      tally.historyEvents += 1;
      switch (event.eventType) {
        case EventType.EVENT_TYPE_WORKFLOW_EXECUTION_STARTED:
          tally.serverWrites += 1;
          break;
        case EventType.EVENT_TYPE_WORKFLOW_TASK_STARTED:
          tally.serverWrites += 1;
          break;
        case EventType.EVENT_TYPE_WORKFLOW_TASK_COMPLETED:
          tally.workflowTasks += 1;
          tally.serverWrites += 1;
          break;
        case EventType.EVENT_TYPE_ACTIVITY_TASK_SCHEDULED: {
          tally.activityTasks += 1;
          const type = event.activityTaskScheduledEventAttributes?.activityType?.name;
          if (type === 'submitToBank') calls.submit += 1;
          if (type === 'queryBankStatus') calls.statusQuery += 1;
          if (type === 'nameEnquiry') calls.nameEnquiry += 1;
          break;
        }
        case EventType.EVENT_TYPE_ACTIVITY_TASK_STARTED:
        case EventType.EVENT_TYPE_ACTIVITY_TASK_COMPLETED:
        case EventType.EVENT_TYPE_ACTIVITY_TASK_FAILED:
        case EventType.EVENT_TYPE_ACTIVITY_TASK_TIMED_OUT:
        case EventType.EVENT_TYPE_WORKFLOW_EXECUTION_SIGNALED:
          tally.serverWrites += 1;
          if (event.eventType === EventType.EVENT_TYPE_WORKFLOW_EXECUTION_SIGNALED) tally.signals += 1;
          break;
        case EventType.EVENT_TYPE_WORKFLOW_EXECUTION_UPDATE_ACCEPTED:
          tally.updates += 1;
          break;
        case EventType.EVENT_TYPE_MARKER_RECORDED:
          if (event.markerRecordedEventAttributes?.markerName === 'core_local_activity') {
            tally.localActivities += 1;
            const details = decodedDetails(event);
            if (details.includes('"nameEnquiry"') || details.includes('"acceptTransfer"')) calls.nameEnquiry += 1;
            if (details.includes('"submitToBank"')) calls.submit += 1;
            if (details.includes('"queryBankStatus"')) calls.statusQuery += 1;
          }
          break;
        default:
          break;
      }
    }
  }
  return {
    transfers: count,
    database,
    temporal: Object.fromEntries(
      Object.entries(tally).map(([key, n]) => [key, per(n, count)]),
    ) as TransferCost['temporal'],
    providerCalls: {
      nameEnquiry: per(calls.nameEnquiry, count),
      submit: per(calls.submit, count),
      statusQuery: per(calls.statusQuery, count),
    },
    lastHistory,
  };
}

/** The transfer's local activities, as their markers' details name them. */
const LOCAL_ACTIVITY =
  /"(acceptTransfer|nameEnquiry|reserveFunds|settleReservation|markProcessing|clearPossiblyTaken|settleTransfer|reverseTransfer)"/;

/** One history event as a line: its type, and the activity, marker, signal or update it names. */
function described(event: HistoryEvent): string {
  const type = EventType[event.eventType ?? 0]?.replace(/^EVENT_TYPE_/, '') ?? String(event.eventType);
  const activity = event.activityTaskScheduledEventAttributes?.activityType?.name;
  const marker = event.markerRecordedEventAttributes?.markerName;
  const signal = event.workflowExecutionSignaledEventAttributes?.signalName;
  const named =
    activity ?? (marker === 'core_local_activity' ? LOCAL_ACTIVITY.exec(decodedDetails(event))?.[1] : marker) ?? signal;
  return named ? `${type} ${named}` : type;
}
