// One MikroORM instance per process, on the configured PostgreSQL. The schema comes only from
// the migrations in ./migrations (no auto-sync anywhere).
import { MikroORM } from '@mikro-orm/postgresql';
import { Migrator } from '@mikro-orm/migrations';
import { entities } from './entities.ts';
import { migrations } from './migrations/index.ts';

export interface OrmOptions {
  databaseUrl: string;
  poolMax?: number;
  debug?: boolean;
  /**
   * The API's bound on a wait for PostgreSQL: acquiring or opening a connection, and each query
   * (client side, so it holds even when the server stops answering). Omitted → no bound.
   */
  timeoutMs?: number;
}

export async function openOrm(options: OrmOptions): Promise<MikroORM> {
  return MikroORM.init({
    clientUrl: options.databaseUrl,
    entities,
    extensions: [Migrator],
    migrations: { migrationsList: migrations, transactional: true, allOrNothing: true, snapshot: false, silent: true },
    pool: { min: 0, max: options.poolMax ?? 10 },
    ...(options.timeoutMs
      ? { driverOptions: { connectionTimeoutMillis: options.timeoutMs, query_timeout: options.timeoutMs } }
      : {}),
    debug: options.debug ?? false,
    allowGlobalContext: false,
    ensureDatabase: false,
    discovery: { warnWhenNoEntities: true },
  });
}

export type { MikroORM };

/** Applies every pending migration; returns the names applied. */
export async function migrate(orm: MikroORM): Promise<string[]> {
  const applied = await orm.migrator.up();
  return applied.map((migration) => migration.name);
}
