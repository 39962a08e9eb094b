// Replays every recorded workflow history under test/fixtures/histories/ against today's workflow
// code: a change that would break running workflows (non-determinism) fails here. Record them
// again from real runs with `npm run record-histories` when a change is deliberately versioned.
import { readFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { Worker } from '@temporalio/worker';
import { describe, expect, it } from 'vitest';
import { PROJECT_ROOT } from '../../src/stack/tools.ts';
import { WORKFLOWS_PATH, installRuntime } from '../support/worker.ts';

const DIR = join(PROJECT_ROOT, 'test/fixtures/histories');
const files = readdirSync(DIR)
  .filter((file) => file.endsWith('.json'))
  .sort();

describe('recorded workflow histories', () => {
  it('cover the transfer paths (success, bank failure, flaky bank, stuck then resolved) and webhook deliveries, each also as recorded before their quick steps ran as local activities, inbound credits, account expiry and cards', () => {
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
        'transfer-stuck-resolved-before-local-steps.json',
        'transfer-success-before-local-steps.json',
        'webhook-retry-then-success-before-local-steps.json',
        'webhook-replay-after-success-before-local-steps.json',
        'inbound-credit-applied.json',
        'virtual-account-expiry.json',
        'virtual-account-create-failover.json',
        'virtual-account-close.json',
        'card-issue.json',
        'card-lock-fund.json',
        'card-continue-as-new.json',
        'card-signalled-lock-unlock.json',
      ]),
    );
  });

  it('all replay against the current workflow code without non-determinism', async () => {
    installRuntime();
    const histories = files.map((file) => ({
      workflowId: file.replace(/\.json$/, ''),
      // Raw JSON: the worker parses it with its own protobuf runtime.
      history: JSON.parse(readFileSync(join(DIR, file), 'utf8')) as unknown,
    }));
    const results = [];
    for await (const result of Worker.runReplayHistories({ workflowsPath: WORKFLOWS_PATH }, histories)) {
      results.push({ workflowId: result.workflowId, error: result.error ? String(result.error) : undefined });
    }
    expect(results).toEqual(files.map((file) => ({ workflowId: file.replace(/\.json$/, ''), error: undefined })));
  }, 120_000);
});
