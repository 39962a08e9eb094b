// Runs the command lines as their users do, each a separate process: the operator CLI (JSON on
// stdout) and the tenant CLI (`npm run gateway`, src/client/cli/).
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
  return runScript('src/admin-cli/main.ts', env, args);
}

/** The tenant CLI with GATEWAY_URL and GATEWAY_API_KEY (and any other variables) as given. */
export function runGateway(env: Record<string, string>, ...args: string[]): Promise<CliResult> {
  return runScript('src/client/cli/main.ts', env, args);
}

function runScript(script: string, env: Record<string, string>, args: string[]): Promise<CliResult> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [join(PROJECT_ROOT, script), ...args], {
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
