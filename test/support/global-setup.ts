// Starts the real infrastructure the integration tests use, once per run: an embedded
// PostgreSQL (or TEST_DATABASE_URL's server) and a Temporal dev server, both on free ports and
// throwaway storage. Test files reach them through vitest's inject().
import { chmodSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { TestProject } from 'vitest/node';
import { embeddedDatabaseUrl } from '../../src/runtime/environment.ts';
import { type EmbeddedPostgresHandle, startEmbeddedPostgres } from '../../src/stack/postgres.ts';
import { type TemporalDevServerHandle, startTemporalDevServer } from '../../src/stack/temporal-dev.ts';
import { freePorts } from './ports.ts';

declare module 'vitest' {
  export interface ProvidedContext {
    /** URL of a database on the test server that may create databases (the maintenance db). */
    adminDatabaseUrl: string;
    temporalAddress: string;
  }
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
