// Daily reconciliation, per connector (decisions §13): the workflow asks the worker which
// connectors have a settlement record, then runs one activity per connector, side by side. Each
// fetches that connector's record of the day, matches it against our books of that connector and
// records the run with its events in one transaction (a record never passes through workflow
// history: a busy day's would outgrow a payload). Each is retried on its own for as long as its
// provider's record is unavailable (up to 6 h), so one provider being down neither holds up nor
// fails another's run. The workflow adds the Schedule and a place in the Web UI. It never moves money.
import { log, proxyActivities, proxyLocalActivities, uuid4, workflowInfo } from '@temporalio/workflow';
import type { ReconciliationActivities } from './definitions.ts';
import { type ReconciliationInput, type ReconciliationResult, dayBefore } from './definitions.ts';

const { reconcileConnectorDay } = proxyActivities<ReconciliationActivities>({
  startToCloseTimeout: '5 minutes',
  scheduleToCloseTimeout: '6 hours',
  retry: { initialInterval: '5s', backoffCoefficient: 2, maximumInterval: '10 minutes' },
});

// The worker's configuration, read where it lives: quick, and only a marker in history.
const { reconciliationConnectors } = proxyLocalActivities<ReconciliationActivities>({
  startToCloseTimeout: '10 seconds',
});

export async function reconciliationWorkflow(input: ReconciliationInput): Promise<ReconciliationResult> {
  const info = workflowInfo();
  // A scheduled run reconciles the day before it was due, however late a worker picks it up.
  const date = input.date ?? dayBefore(info.startTime);
  const day = { date, trigger: input.trigger, workflowId: info.workflowId, startedAt: info.startTime.toISOString() };
  const { connectors, unknown } = await reconciliationConnectors(input.connectors ? { only: input.connectors } : {});
  const settled = await Promise.allSettled(
    connectors.map((connector) => reconcileConnectorDay({ runId: uuid4(), connector, ...day })),
  );
  const result: ReconciliationResult = {
    date,
    runs: [],
    unavailable: unknown.map((connector) => ({ connector, message: 'no such connector with a settlement record' })),
  };
  for (const [index, outcome] of settled.entries()) {
    if (outcome.status === 'fulfilled') {
      result.runs.push(outcome.value);
      continue;
    }
    const error = outcome.reason as Error & { cause?: Error };
    const connector = connectors[index]!;
    const message = error.cause?.message ?? error.message;
    log.error("reconciliation could not have a connector's record of the day", { connector, date, message });
    result.unavailable.push({ connector, message });
  }
  return result;
}
