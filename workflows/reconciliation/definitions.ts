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

/** What the reconciliation workflow asks of its activities (activities/reconciliation/reconciliation.ts). */
/** One connector's day, as the reconciliation workflow asks for it. */
export interface DayInput {
  runId: string;
  date: string;
  trigger: 'schedule' | 'operator';
  workflowId: string;
  startedAt: string;
}

export type ReconciliationActivities = {
  /**
   * The connectors to reconcile, by name: those of this worker with a settlement record, in
   * the registry's order (the sandbox first), or of those the ones `only` names. Names `only`
   * gives that the worker lacks come back in `unknown`.
   */
  reconciliationConnectors(input: { only?: string[] }): Promise<{
    connectors: string[];
    unknown: string[];
  }>;
  /** One connector's day (decisions §13). */
  reconcileConnectorDay(
    input: DayInput & {
      connector: string;
    },
  ): Promise<RunSummary>;
};
