// Daily reconciliation: one activity fetches the bank's statement, matches it against the ledger
// and the projections, and records the result with its events in one transaction (the statement
// never passes through workflow history: a busy day's would outgrow a payload). The workflow adds
// the Schedule, retries for as long as the bank's statement is unavailable (up to 6 h), and a
// place in the Web UI. It never moves money.
import { proxyActivities, uuid4, workflowInfo } from '@temporalio/workflow';
import type { ReconciliationActivities } from '../activities/reconciliation.ts';
import type { RunSummary } from '../src/reconciliation/store.ts';
import { type ReconciliationInput, dayBefore } from './reconciliation-definitions.ts';

const { reconcileDay } = proxyActivities<ReconciliationActivities>({
  startToCloseTimeout: '5 minutes',
  scheduleToCloseTimeout: '6 hours',
  retry: { initialInterval: '5s', backoffCoefficient: 2, maximumInterval: '10 minutes' },
});

export async function reconciliationWorkflow(input: ReconciliationInput): Promise<RunSummary> {
  const info = workflowInfo();
  // A scheduled run reconciles the day before it was due, however late a worker picks it up.
  const date = input.date ?? dayBefore(info.startTime);
  return reconcileDay({
    runId: uuid4(),
    date,
    trigger: input.trigger,
    workflowId: info.workflowId,
    startedAt: info.startTime.toISOString(),
  });
}
