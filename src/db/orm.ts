// One MikroORM instance per process, on the configured PostgreSQL, over the entities it is given
// (every feature's: src/orm.ts). The schema comes only from the migrations in ./migrations (no
// auto-sync anywhere).
import { MikroORM } from '@mikro-orm/postgresql';
import { Migrator } from '@mikro-orm/migrations';
import { migrations } from './migrations/index.ts';

/** An entity as the features declare them (defineEntity). */
export type Entity = NonNullable<Parameters<typeof MikroORM.init>[0]>['entities'] extends
  readonly (infer E)[] | undefined
  ? E
  : never;

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

export async function openDatabase(entities: readonly Entity[], options: OrmOptions): Promise<MikroORM> {
  return MikroORM.init({
    clientUrl: options.databaseUrl,
    entities: [...entities],
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
