// CI's short chaos run: `npm run chaos` with 500 operations on a fixed seed, as a separate process
// (it starts and stops its own stack, generic test bank and Paystack simulator, the live tenant's
// two connectors, on free ports). It must exit 0 with every invariant passed, after at least one
// SIGKILL of each of the API, the worker, the sandbox bank and the test bank, one pause of each of
// PostgreSQL and Temporal, one window in which the test bank lost its callbacks, and at least one
// answer lost by a live bank that took the submission (with a "refused, not taken" waiting for a
// retry); among the invariants, that no transfer was submitted to two connectors.
import { spawn } from 'node:child_process';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { PROJECT_ROOT } from '../../src/stack/tools.ts';

const RUN_TIMEOUT_MS = 9 * 60_000;

describe('npm run chaos (short)', () => {
  it(
    'keeps every invariant through kills of the API, worker, sandbox bank and test bank, pauses of PostgreSQL and Temporal, lost test-bank callbacks and lost answers',
    async () => {
      const child = spawn(
        process.execPath,
        [join(PROJECT_ROOT, 'test/chaos/chaos.ts'), '--ops', '500', '--seed', '1414'],
        { cwd: PROJECT_ROOT, env: process.env, stdio: ['ignore', 'pipe', 'pipe'] },
      );
      let output = '';
      child.stdout.on('data', (chunk: Buffer) => (output += chunk.toString()));
      child.stderr.on('data', (chunk: Buffer) => (output += chunk.toString()));
      // The run bounds its own waits; this only keeps a hung run from outliving the test (SIGTERM:
      // the run stops its stack on the way out).
      const timer = setTimeout(() => child.kill('SIGTERM'), RUN_TIMEOUT_MS - 30_000);
      const code = await new Promise<number | null>((resolve) => child.once('exit', (exit) => resolve(exit)));
      clearTimeout(timer);
      // The summary on success, the end of everything on failure.
      console.log(code === 0 ? output.slice(output.indexOf('chaos summary')) : output.slice(-20_000));
      expect(code).toBe(0);
      expect(output).toMatch(/chaos: all \d+ invariants passed/);
      for (const fault of [
        'SIGKILL api',
        'SIGKILL worker',
        'SIGKILL sandbox-bank',
        'SIGKILL test-bank',
        'SIGSTOP postgres',
        'SIGSTOP temporal',
        'callbacks lost test-bank',
        'answers lost',
      ]) {
        expect(output).toMatch(new RegExp(`${fault}\\s+[1-9]`));
      }
      expect(output).toMatch(/\n {2}transfer\s+\d+\s+.*201×/);
      expect(output).toMatch(/\n {2}live transfer\s+\d+\s+.*201×/);
      // The live tenant's own invariants ran (and passed, as every one did), and the two connectors'.
      for (const invariant of [
        'test and live never cross banks',
        'no transfer submitted to two connectors',
        'live transfers as the bank that holds each has them',
        'every transfer whose answer was lost ended as the bank that holds it says',
        'live credits applied once',
      ]) {
        expect(output).toMatch(new RegExp(`${invariant}.*\\s+pass\\s`));
      }
    },
    RUN_TIMEOUT_MS,
  );
});
