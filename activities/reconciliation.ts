// The reconciliation activity: the bank's statement against our books, recorded once per run.
import { log } from '@temporalio/activity';
import { reconcileDay } from '../src/reconciliation/reconcile.ts';
import type { RunSummary } from '../src/reconciliation/store.ts';
import type { ActivityDeps } from './index.ts';

export function createReconciliationActivities(deps: Pick<ActivityDeps, 'orm' | 'providers'>) {
  return {
    async reconcileDay(input: {
      runId: string;
      date: string;
      trigger: 'schedule' | 'operator';
      workflowId: string;
      startedAt: string;
    }): Promise<RunSummary> {
      const summary = await reconcileDay(
        { em: deps.orm.em.fork(), bankSwitch: deps.providers.bankSwitch },
        { ...input, startedAt: new Date(input.startedAt) },
      );
      if (summary.mismatched > 0) {
        log.error('reconciliation found differences with the bank', {
          date: summary.date,
          runId: summary.run_id,
          counts: summary.counts,
        });
      }
      return summary;
    },
  };
}

export type ReconciliationActivities = ReturnType<typeof createReconciliationActivities>;
