// Runs the operator CLI as an operator does: a separate process, JSON on stdout.
import { spawn } from 'node:child_process';
import { join } from 'node:path';
import { PROJECT_ROOT } from '../../src/stack/tools.ts';

export interface CliResult {
  code: number | null;
  stdout: string;
  stderr: string;
  /** The printed JSON object (also from a check that exits 1 after printing its report), else {} (also for a CSV export). */
  json: Record<string, any>;
}

export function runAdmin(env: Record<string, string>, ...args: string[]): Promise<CliResult> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [join(PROJECT_ROOT, 'src/admin/cli.ts'), ...args], {
      env: { ...process.env, NODE_ENV: 'test', ...env },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    child.once('error', reject);
    child.once('exit', (code) => {
      resolve({
        code,
        stdout,
        stderr,
        json: stdout.trim().startsWith('{') ? (JSON.parse(stdout) as Record<string, any>) : {},
      });
    });
  });
}
