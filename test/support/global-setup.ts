// Starts the real infrastructure the integration tests use, once per run: an embedded
// PostgreSQL (or TEST_DATABASE_URL's server) and a Temporal dev server, both on free ports and
// throwaway storage. Test files reach them through vitest's inject().
import { chmodSync, mkdtempSync, rmSync } from 'node:fs';
import { type AddressInfo, type Server, createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { TestProject } from 'vitest/node';
import { embeddedDatabaseUrl } from '../../src/config.ts';
import { type EmbeddedPostgresHandle, startEmbeddedPostgres } from '../../src/stack/postgres.ts';
import { type TemporalDevServerHandle, startTemporalDevServer } from '../../src/stack/temporal-dev.ts';

declare module 'vitest' {
  export interface ProvidedContext {
    /** URL of a database on the test server that may create databases (the maintenance db). */
    adminDatabaseUrl: string;
    temporalAddress: string;
  }
}

/** Ports free right now, distinct from each other (all are held open until every one is known). */
export async function freePorts(count: number): Promise<number[]> {
  const servers = await Promise.all(
    Array.from(
      { length: count },
      () =>
        new Promise<Server>((resolve, reject) => {
          const server = createServer();
          server.once('error', reject);
          server.listen(0, '127.0.0.1', () => resolve(server));
        }),
    ),
  );
  const ports = servers.map((server) => (server.address() as AddressInfo).port);
  await Promise.all(servers.map((server) => new Promise((resolve) => server.close(resolve))));
  return ports;
}

export async function freePort(): Promise<number> {
  const [port] = (await freePorts(1)) as [number];
  return port;
}

let postgres: EmbeddedPostgresHandle | undefined;
let temporal: TemporalDevServerHandle | undefined;
let workDir: string | undefined;

export async function setup(project: TestProject): Promise<void> {
  workDir = mkdtempSync(join(tmpdir(), 'gateway-test-'));
  // The postgres OS user must be able to reach its data directory below this one.
  chmodSync(workDir, 0o755);

  const [pgPort, temporalPort] = (await freePorts(2)) as [number, number];
  const startPostgres = async () => {
    if (process.env.TEST_DATABASE_URL) return process.env.TEST_DATABASE_URL;
    postgres = await startEmbeddedPostgres({
      dataDir: join(workDir!, 'postgres'),
      port: pgPort,
      // Throwaway cluster: durability off for speed.
      settings: { fsync: 'off', synchronous_commit: 'off', full_page_writes: 'off' },
    });
    return embeddedDatabaseUrl(pgPort, 'postgres');
  };
  const [adminDatabaseUrl, temporalServer] = await Promise.all([
    startPostgres(),
    startTemporalDevServer({ port: temporalPort, fastSqlite: true }),
  ]);
  temporal = temporalServer;
  project.provide('adminDatabaseUrl', adminDatabaseUrl);
  project.provide('temporalAddress', temporal.address);
}

export async function teardown(): Promise<void> {
  await Promise.allSettled([temporal?.stop(), postgres?.stop()]);
  if (workDir) rmSync(workDir, { recursive: true, force: true });
}
