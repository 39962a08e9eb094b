// The reconciliation workflow's contract. A daily Schedule (id `daily-reconciliation:<task
// queue>`) starts it without a date: it then reconciles the UTC day before the one it was started
// on. `admin reconcile run --date D` starts one for a given day (id `reconciliation:<D>:<uuid>`).

export const RECONCILIATION_WORKFLOW_TYPE = 'reconciliationWorkflow';

export interface ReconciliationInput {
  /** The UTC day to reconcile (YYYY-MM-DD); absent → the day before the workflow started. */
  date?: string;
  trigger: 'schedule' | 'operator';
}

export function reconciliationScheduleId(taskQueue: string): string {
  return `daily-reconciliation:${taskQueue}`;
}

export function reconciliationWorkflowId(date: string, unique: string): string {
  return `reconciliation:${date}:${unique}`;
}

/** The UTC day before `at`. */
export function dayBefore(at: Date): string {
  return new Date(at.getTime() - 86_400_000).toISOString().slice(0, 10);
}
