// The reconciliation workflow's contract. A daily Schedule (id `daily-reconciliation:<task
// queue>`) starts it without a date: it then reconciles the UTC day before the one it was started
// on. `admin reconcile run --date D [--connector NAME]` starts one for a given day (id
// `reconciliation:<D>:<uuid>`). Each run reconciles every configured connector with a settlement
// record (decisions §13), each on its own: one run per (connector, day).
import type { RunSummary } from '../../src/reconciliation/store.ts';
export { RECONCILIATION_WORKFLOW_TYPE, reconciliationScheduleId, reconciliationWorkflowId } from '../workflow-names.ts';

export interface ReconciliationInput {
  /** The UTC day to reconcile (YYYY-MM-DD); absent → the day before the workflow started. */
  date?: string;
  trigger: 'schedule' | 'operator';
  /** Only these connectors (an operator's `--connector`); absent → every one with a settlement record. */
  connectors?: string[];
}

/** What a run found: one summary per connector reconciled, and the connectors whose record it could not have. */
export interface ReconciliationResult {
  date: string;
  /** In the worker's connector order: the sandbox first, then LIVE_CONNECTORS order. */
  runs: RunSummary[];
  /** A connector whose record stayed unavailable for the activity's 6 h, or that the worker does not have. */
  unavailable: { connector: string; message: string }[];
}

/** The UTC day before `at`. */
export function dayBefore(at: Date): string {
  return new Date(at.getTime() - 86_400_000).toISOString().slice(0, 10);
}
