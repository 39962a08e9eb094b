// CI's short chaos run: `npm run chaos` with 500 operations on a fixed seed, as a separate process
// (it starts and stops its own stack on free ports). It must exit 0 with every invariant passed,
// after at least one SIGKILL of each of the API, the worker and the sandbox bank and one pause of
// each of PostgreSQL and Temporal.
import { spawn } from 'node:child_process';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { PROJECT_ROOT } from '../../src/stack/tools.ts';

const RUN_TIMEOUT_MS = 9 * 60_000;

describe('npm run chaos (short)', () => {
  it(
    'keeps every invariant through kills of the API, worker and sandbox bank and pauses of PostgreSQL and Temporal',
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
        'SIGSTOP postgres',
        'SIGSTOP temporal',
      ]) {
        expect(output).toMatch(new RegExp(`${fault}\\s+[1-9]`));
      }
      expect(output).toMatch(/transfer\s+\d+\s+.*201×/);
    },
    RUN_TIMEOUT_MS,
  );
});
