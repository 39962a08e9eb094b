// Writes a workflow's history as a replay fixture when RECORD_HISTORIES is set
// (`npm run record-histories`); otherwise does nothing.
import { spawnSync } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { WorkflowHandle } from '@temporalio/client';
import { historyToJSON } from '@temporalio/common/lib/proto-utils.js';
import { inject } from 'vitest';
import { PROJECT_ROOT, findTool } from '../../src/stack/tools.ts';

export const HISTORIES_DIR = join(PROJECT_ROOT, 'test/fixtures/histories');

/** Failures' stack traces name files under the checkout: kept relative, so no machine path is committed. */
function withoutMachinePaths(history: string): string {
  return history.replaceAll(`${PROJECT_ROOT}/`, '');
}

/** For servers the CLI cannot be pointed at (the time-skipping test server): through the SDK. */
export async function recordHistoryOf(name: string, handle: WorkflowHandle): Promise<void> {
  if (!process.env.RECORD_HISTORIES) return;
  mkdirSync(HISTORIES_DIR, { recursive: true });
  writeFileSync(join(HISTORIES_DIR, `${name}.json`), withoutMachinePaths(historyToJSON(await handle.fetchHistory())));
}

export function recordHistory(name: string, workflowId: string, runId?: string): void {
  if (!process.env.RECORD_HISTORIES) return;
  // The CLI writes the canonical JSON history that the SDK's replayer reads.
  const shown = spawnSync(
    findTool('temporal'),
    [
      'workflow',
      'show',
      '--workflow-id',
      workflowId,
      ...(runId ? ['--run-id', runId] : []),
      '--output',
      'json',
      '--address',
      inject('temporalAddress'),
    ],
    { encoding: 'utf8' },
  );
  if (shown.status !== 0) throw new Error(`temporal workflow show failed: ${shown.stderr}`);
  mkdirSync(HISTORIES_DIR, { recursive: true });
  writeFileSync(join(HISTORIES_DIR, `${name}.json`), withoutMachinePaths(shown.stdout));
}
