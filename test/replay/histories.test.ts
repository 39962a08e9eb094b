// Replays every recorded workflow history under test/fixtures/histories/ against today's workflow
// code: a change that would break running workflows (non-determinism) fails here. Record them
// again from real runs with `npm run record-histories` when a change is deliberately versioned.
// They replay twice: as a worker without tracing runs them, and with the tracing interceptors of
// a worker whose OTEL_EXPORTER_OTLP_ENDPOINT is set (turning tracing on must not break a run).
import { readFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { Resource } from '@opentelemetry/resources';
import { InMemorySpanExporter, SimpleSpanProcessor } from '@opentelemetry/sdk-trace-base';
import { type ReplayWorkerOptions, Worker } from '@temporalio/worker';
import { describe, expect, it } from 'vitest';
import { PROJECT_ROOT } from '../../src/stack/tools.ts';
import { WORKFLOW_TRACING_MODULES, workerTracing } from '../../src/telemetry/temporal.ts';
import { WORKFLOWS_PATH, installRuntime } from '../support/worker.ts';

const DIR = join(PROJECT_ROOT, 'test/fixtures/histories');
const files = readdirSync(DIR)
  .filter((file) => file.endsWith('.json'))
  .sort();

describe('recorded workflow histories', () => {
  it("cover the transfer paths (success, bank failure, flaky bank, stuck then resolved by an operator's update), those but the operator's also as recorded before their quick steps ran as local activities, webhook deliveries also as recorded before their quick steps ran as local activities, webhook deliveries as recorded before their attempts were bounded (tenant slots, continue-as-new) and after (a wait for a slot, a run continued as new and the run it continued in), each of those also as recorded while bounded attempts were local activities, inbound credits, account expiry, cards, reconciliation (per connector, and as recorded when it reconciled the sandbox bank alone) and BVN verification", () => {
    expect(files).toEqual(
      expect.arrayContaining([
        'transfer-bank-failure.json',
        'transfer-flaky-bank.json',
        'transfer-stuck-resolved.json',
        'transfer-success.json',
        'webhook-retry-then-success.json',
        'webhook-replay-after-success.json',
        'transfer-bank-failure-before-local-steps.json',
        'transfer-flaky-bank-before-local-steps.json',
        'transfer-success-before-local-steps.json',
        'webhook-retry-then-success-before-local-steps.json',
        'webhook-replay-after-success-before-local-steps.json',
        'webhook-retry-then-success-before-bounds.json',
        'webhook-replay-after-success-before-bounds.json',
        'webhook-waited-for-slot.json',
        'webhook-replays-continue-as-new.json',
        'webhook-replays-continued.json',
        'webhook-retry-then-success-local-attempts.json',
        'webhook-replay-after-success-local-attempts.json',
        'webhook-waited-for-slot-local-attempts.json',
        'webhook-replays-continue-as-new-local-attempts.json',
        'webhook-replays-continued-local-attempts.json',
        'inbound-credit-applied.json',
        'virtual-account-expiry.json',
        'virtual-account-create-failover.json',
        'virtual-account-create-sealed-bvn.json',
        'virtual-account-create-sealed-bvn-no-provider.json',
        'virtual-account-create-bvn-before-sealing.json',
        'virtual-account-close.json',
        'card-issue.json',
        'card-lock-fund.json',
        'card-continue-as-new.json',
        'card-signalled-lock-unlock.json',
        'reconciliation-operator.json',
        'reconciliation-statement-unavailable.json',
        'reconciliation-scheduled.json',
        'reconciliation-operator-before-connectors.json',
        'reconciliation-statement-unavailable-before-connectors.json',
        'reconciliation-scheduled-before-connectors.json',
        'bvn-verification-verified.json',
        'bvn-verification-name-mismatch.json',
        'bvn-verification-after-outage.json',
      ]),
    );
  });

  async function replayAll(options: ReplayWorkerOptions) {
    installRuntime();
    const histories = files.map((file) => ({
      workflowId: file.replace(/\.json$/, ''),
      // Raw JSON: the worker parses it with its own protobuf runtime.
      history: JSON.parse(readFileSync(join(DIR, file), 'utf8')) as unknown,
    }));
    const results = [];
    for await (const result of Worker.runReplayHistories(options, histories)) {
      results.push({ workflowId: result.workflowId, error: result.error ? String(result.error) : undefined });
    }
    return results;
  }
  const replayedCleanly = files.map((file) => ({ workflowId: file.replace(/\.json$/, ''), error: undefined }));

  it('all replay against the current workflow code without non-determinism', async () => {
    expect(await replayAll({ workflowsPath: WORKFLOWS_PATH })).toEqual(replayedCleanly);
  }, 120_000);

  it('all replay with the tracing interceptors installed, and a replay exports no span', async () => {
    const exported = new InMemorySpanExporter();
    const { sinks } = workerTracing({
      spanProcessor: new SimpleSpanProcessor(exported),
      resource: Resource.default(),
    });
    const results = await replayAll({
      workflowsPath: WORKFLOWS_PATH,
      interceptors: { workflowModules: WORKFLOW_TRACING_MODULES },
      sinks,
    });
    expect(results).toEqual(replayedCleanly);
    // The spans of a run were exported when it ran; replaying it (a worker's cache evicted) sends none again.
    expect(exported.getFinishedSpans()).toEqual([]);
  }, 120_000);
});
