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
  it('cover every workflow type: transfers (success, success on the bank’s word completing the waiting submission, bank failure, flaky bank, its answer lost and held as possibly taken, refused at the name enquiry, stuck then resolved by an operator\'s update, unconfirmed for a day then confirmed by a status query, "no such transfer" after the submission retries then resolved), webhook deliveries (retried then delivered, replayed after success, a wait for a slot, a run continued as new and the run it continued in, a wait for its disabled endpoint until it was enabled), inbound credits (applied; to a closed account, sent back to its sender), an operator\'s return of a held credit, account expiry, virtual-account create (also as recorded with a BVN in its input) and close, cards, reconciliation per connector, BVN verification, a transfer batch (an item refused, two paid: recorded before held batches) and a transfer reversal (confirmed and applied; denied by the status query, kept as a discrepancy); the transfer, webhook and reconciliation runs recorded with their patches deprecated; the transfers in the lean shape, and as the older shape ran them (*.older-shape.json)', () => {
    expect(files).toEqual(
      expect.arrayContaining([
        'transfer-success.json',
        'transfer-bank-word-completes-submission.json',
        'transfer-bank-failure.json',
        'transfer-flaky-bank.json',
        'transfer-answer-lost.json',
        'transfer-refused-invalid-account.json',
        'transfer-stuck-resolved.json',
        'transfer-stuck-then-confirmed.json',
        'transfer-unknown-at-bank-resolved.json',
        'transfer-success.older-shape.json',
        'transfer-bank-failure.older-shape.json',
        'transfer-answer-lost.older-shape.json',
        'transfer-refused-invalid-account.older-shape.json',
        'transfer-stuck-resolved.older-shape.json',
        'transfer-stuck-then-confirmed.older-shape.json',
        'transfer-unknown-at-bank-resolved.older-shape.json',
        'webhook-retry-then-success.json',
        'webhook-replay-after-success.json',
        'webhook-waited-for-slot.json',
        'webhook-replays-continue-as-new.json',
        'webhook-replays-continued.json',
        'webhook-paused-then-enabled.json',
        'inbound-credit-applied.json',
        'inbound-credit-returned.json',
        'held-credit-return.json',
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
        'bvn-verification-verified.json',
        'bvn-verification-name-mismatch.json',
        'bvn-verification-after-outage.json',
        'transfer-batch-completed.json',
        'transfer-batch-grouped.json',
        'transfer-batch-chunk-resolved.json',
        'transfer-reversal-applied.json',
        'transfer-reversal-denied.json',
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
