// The reconciliation activities: one connector's record of a day against our books of that
// connector, recorded once per run. The workflow runs one per connector, each retried on its own,
// so that one provider's statement being unavailable holds up no other's.
import { ApplicationFailure, log } from '@temporalio/activity';
import { reconciledConnectors } from '../../src/reconciliation/connectors.ts';
import { reconcileDay } from '../../src/reconciliation/reconcile.ts';
import type { RunSummary } from '../../src/reconciliation/store.ts';
import type { MikroORM } from '@mikro-orm/postgresql';
import type { Providers } from '../../src/connectors/registry.ts';
import type { DayInput, ReconciliationActivities } from '../../workflows/reconciliation/definitions.ts';

export function createReconciliationActivities(deps: {
  orm: MikroORM;
  providers: Providers;
}): ReconciliationActivities {
  const connectors = reconciledConnectors(deps.providers);

  async function reconcileConnector(name: string, input: DayInput): Promise<RunSummary> {
    const connector = connectors.find((candidate) => candidate.name === name);
    // The worker's configuration changed between the listing and this run: retrying cannot help.
    if (!connector) {
      throw ApplicationFailure.nonRetryable(
        `this worker has no connector ${name} with a settlement record`,
        'ConnectorNotConfigured',
      );
    }
    const summary = await reconcileDay(
      { em: deps.orm.em.fork(), connector },
      { ...input, startedAt: new Date(input.startedAt) },
    );
    if (summary.mismatched > 0) {
      log.error('reconciliation found differences with the provider', {
        connector: summary.connector,
        date: summary.date,
        runId: summary.run_id,
        counts: summary.counts,
      });
    }
    return summary;
  }

  return {
    /**
     * The connectors to reconcile, by name: those of this worker with a settlement record, in
     * the registry's order (the sandbox first), or of those the ones `only` names. Names `only`
     * gives that the worker lacks come back in `unknown`.
     */
    reconciliationConnectors(input: { only?: string[] }): Promise<{ connectors: string[]; unknown: string[] }> {
      const names = connectors.map((connector) => connector.name);
      const only = input.only;
      return Promise.resolve(
        only
          ? {
              connectors: names.filter((name) => only.includes(name)),
              unknown: only.filter((name) => !names.includes(name)),
            }
          : { connectors: names, unknown: [] },
      );
    },

    /** One connector's day (decisions §13). */
    async reconcileConnectorDay(input: DayInput & { connector: string }): Promise<RunSummary> {
      const { connector, ...day } = input;
      return reconcileConnector(connector, day);
    },
  };
}

export type { ReconciliationActivities };
