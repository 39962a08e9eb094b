// Operator commands for reconciliation of each connector's record of a day against our books
// (`reconcile run`, `reconcile report`): they record, never move money.
import { randomUUID } from 'node:crypto';
import { type OperatorCommand, withTemporal } from '../admin/command.ts';
import { OperatorRefusal } from '../admin/errors.ts';
import { CONNECTOR, connectorName, duration, flag, pastDay, uuid } from '../admin/flags.ts';
import {
  RECONCILIATION_WORKFLOW_TYPE,
  type ReconciliationInput,
  type ReconciliationResult,
  reconciliationWorkflowId,
} from '../../workflows/reconciliation/definitions.ts';
import { type RunSummary, findRun, latestRuns, runItems, runsOfWorkflow } from './store.ts';

const DATE = flag.required('YYYY-MM-DD', 'the UTC day, today or before');

export const reconciliationCommands: OperatorCommand[] = [
  {
    name: 'reconcile run',
    description:
      "Reconciles each connector's record of that UTC day against our books now, through the Schedule's workflow",
    mutates: true,
    flags: {
      date: DATE,
      connector: CONNECTOR,
      wait: flag.optional('D', 'how long to wait for it; then it prints the runs so far and goes on', '60s'),
    },
    async run(em, flags, config) {
      const date = flags.get('date', pastDay);
      const connector = flags.optional('connector', connectorName);
      const waitMs = flags.get('wait', duration);
      const workflowId = reconciliationWorkflowId(date, randomUUID());
      const args: [ReconciliationInput] = [
        { date, trigger: 'operator', ...(connector ? { connectors: [connector] } : {}) },
      ];
      const finished = await withTemporal(config, async (client) => {
        const handle = await client.workflow.start(RECONCILIATION_WORKFLOW_TYPE, {
          workflowId,
          taskQueue: config.TEMPORAL_TASK_QUEUE,
          args,
        });
        // Bounded: the wait is cancelled (not left open) when the run takes longer.
        const signal = AbortSignal.timeout(waitMs);
        try {
          return await client.withAbortSignal(signal, () => handle.result() as Promise<ReconciliationResult>);
        } catch (error) {
          if (signal.aborted) return undefined;
          throw error;
        }
      });
      const withMismatches = (runs: RunSummary[]) =>
        Promise.all(runs.map(async (run) => ({ ...run, mismatches: await runItems(em, run.run_id, { all: false }) })));
      if (!finished) {
        // The connectors whose record was had are done and recorded; the others go on retrying.
        return {
          status: 'running',
          date,
          workflow_id: workflowId,
          runs: await withMismatches(await runsOfWorkflow(em, workflowId)),
          message: `not finished within ${waitMs / 1000} s (is a connector's statement unavailable?); the runs recorded so far are listed, read the others later with reconcile report --date ${date}`,
        };
      }
      return {
        status: 'completed',
        date,
        workflow_id: workflowId,
        runs: await withMismatches(finished.runs),
        unavailable: finished.unavailable,
      };
    },
    // A connector whose record could not be had (or that the worker does not have) is a run not done.
    exitCodeOf(result) {
      const unavailable = (result as { unavailable?: unknown[] }).unavailable;
      return unavailable && unavailable.length > 0 ? 1 : 0;
    },
  },
  {
    name: 'reconcile report',
    description: "Each connector's latest run of the day: its counts and its items that did not match",
    flags: {
      date: DATE,
      connector: CONNECTOR,
      run: flag.optional('ID', 'this run instead of the latest'),
      all: flag.boolean('list the matched items too'),
    },
    async run(em, flags) {
      const date = flags.get('date', pastDay);
      const connector = flags.optional('connector', connectorName);
      const runId = flags.optional('run', uuid('a run id'));
      let runs: RunSummary[];
      if (runId) {
        const run = await findRun(em, runId);
        runs = run && run.date === date && (connector === undefined || run.connector === connector) ? [run] : [];
      } else {
        runs = await latestRuns(em, date, connector);
      }
      if (!runs.length) {
        const whose = connector ? ` of connector ${connector}` : '';
        throw new OperatorRefusal(
          'not_found',
          runId
            ? `no reconciliation run ${runId}${whose} for ${date}`
            : `no reconciliation${whose} has run for ${date}`,
        );
      }
      const all = flags.on('all');
      return {
        date,
        runs: await Promise.all(runs.map(async (run) => ({ ...run, items: await runItems(em, run.run_id, { all }) }))),
      };
    },
  },
];
