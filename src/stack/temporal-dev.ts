// Runs `temporal server start-dev` as a child process: the embedded default when
// TEMPORAL_ADDRESS is not set, and the server the test suite starts. The project's custom search
// attributes are registered at launch so workflows can upsert them and operators can query them.
import { type ChildProcess, spawn } from 'node:child_process';
import { mkdirSync } from 'node:fs';
import { dirname } from 'node:path';
import { Connection } from '@temporalio/client';
import { findTool } from './tools.ts';

/** Custom search attributes, by name and Temporal type. */
export const SEARCH_ATTRIBUTES = {
  TenantId: 'Keyword',
  TransferReference: 'Keyword',
  TransferStatus: 'Keyword',
  TransferConnector: 'Keyword',
  TransferBatchReference: 'Keyword',
  TransferApproval: 'Keyword',
  AmountMinor: 'Int',
  CardId: 'Keyword',
} as const;

export interface TemporalDevServerOptions {
  port: number;
  /** Web UI port; omitted → headless. */
  uiPort?: number;
  /** HTTP API port; omitted → a random free port. */
  httpPort?: number;
  /** SQLite file for state that survives restarts; omitted → in memory. */
  dbFile?: string;
  namespace?: string;
  /** Faster, non-durable SQLite settings for throwaway test servers. */
  fastSqlite?: boolean;
  onOutput?: (line: string, stream: 'stdout' | 'stderr') => void;
  /**
   * In a process group of its own, so a terminal's Ctrl-C reaches only the launcher, which stops
   * the server after the processes that use it (npm start).
   */
  detached?: boolean;
}

export interface TemporalDevServerHandle {
  address: string;
  uiUrl: string | undefined;
  process: ChildProcess;
  stop(): Promise<void>;
}

export async function startTemporalDevServer(options: TemporalDevServerOptions): Promise<TemporalDevServerHandle> {
  const cli = findTool('temporal');
  const args = ['server', 'start-dev', '--ip', '127.0.0.1', '--port', String(options.port), '--log-level', 'warn'];
  if (options.uiPort) args.push('--ui-port', String(options.uiPort));
  else args.push('--headless');
  if (options.httpPort) args.push('--http-port', String(options.httpPort));
  if (options.dbFile) {
    mkdirSync(dirname(options.dbFile), { recursive: true });
    args.push('--db-filename', options.dbFile);
  }
  if (options.namespace && options.namespace !== 'default') args.push('--namespace', options.namespace);
  // A state file is journalled ahead (WAL) and each commit still synced to disk (FULL): as durable
  // as SQLite's default rollback journal, which creates, syncs and deletes a journal file per
  // transaction; that doubled a bare Update-with-Start's throughput here (docs/performance.md,
  // "Temporal's state file"). Throwaway servers skip the sync.
  if (options.fastSqlite || options.dbFile) {
    const synchronous = options.fastSqlite ? 'OFF' : 'FULL';
    args.push('--sqlite-pragma', 'journal_mode=WAL', '--sqlite-pragma', `synchronous=${synchronous}`);
  }
  for (const [name, type] of Object.entries(SEARCH_ATTRIBUTES)) args.push('--search-attribute', `${name}=${type}`);

  const child = spawn(cli, args, { stdio: ['ignore', 'pipe', 'pipe'], detached: options.detached ?? false });
  const recent: string[] = [];
  for (const stream of ['stdout', 'stderr'] as const) {
    child[stream].setEncoding('utf8');
    child[stream].on('data', (chunk: string) => {
      for (const line of chunk.split('\n')) {
        if (!line.trim()) continue;
        recent.push(line);
        if (recent.length > 10) recent.shift();
        options.onOutput?.(line, stream);
      }
    });
  }
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  const address = `127.0.0.1:${options.port}`;

  const stop = async () => {
    if (child.exitCode !== null || child.signalCode !== null) return;
    child.kill('SIGTERM');
    const timer = setTimeout(() => child.kill('SIGKILL'), 10_000);
    await exited;
    clearTimeout(timer);
  };

  const deadline = Date.now() + 60_000;
  for (;;) {
    if (child.exitCode !== null) {
      throw new Error(
        `temporal server start-dev exited with code ${child.exitCode} (is port ${options.port} or ${options.uiPort ?? '-'} taken?): ` +
          recent.join(' | '),
      );
    }
    if (await temporalReachable(address, options.namespace ?? 'default')) break;
    if (Date.now() > deadline) {
      await stop();
      throw new Error(`temporal server start-dev did not answer on ${address} within 60 s`);
    }
    await new Promise((resolve) => setTimeout(resolve, 250));
  }
  return {
    address,
    uiUrl: options.uiPort ? `http://127.0.0.1:${options.uiPort}` : undefined,
    process: child,
    stop,
  };
}

/** True when the frontend answers and the namespace exists. */
export async function temporalReachable(address: string, namespace: string): Promise<boolean> {
  let connection: Connection | undefined;
  try {
    connection = await Connection.connect({ address, connectTimeout: 1_000 });
    await connection.withDeadline(Date.now() + 2_000, () =>
      connection!.workflowService.describeNamespace({ namespace }),
    );
    return true;
  } catch {
    return false;
  } finally {
    await connection?.close();
  }
}
