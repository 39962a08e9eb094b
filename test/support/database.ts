// A fresh, migrated database per test file on the run's PostgreSQL server.
import { randomBytes } from 'node:crypto';
import pg from 'pg';
import { inject } from 'vitest';
import { type MikroORM, migrate, openOrm } from '../../src/orm.ts';

export interface TestDatabase {
  url: string;
  orm: MikroORM;
  drop(): Promise<void>;
}

async function admin<T>(work: (client: pg.Client) => Promise<T>): Promise<T> {
  const client = new pg.Client({ connectionString: inject('adminDatabaseUrl') });
  await client.connect();
  try {
    return await work(client);
  } finally {
    await client.end();
  }
}

/**
 * A fresh database on the run's server, migrated fully — or only up to `migrateTo` (a migration's
 * name), for a test that writes rows as older code did and then runs the migrations after it.
 */
export async function createTestDatabase(poolMax = 20, options: { migrateTo?: string } = {}): Promise<TestDatabase> {
  const name = `gw_test_${randomBytes(6).toString('hex')}`;
  await admin((client) => client.query(`create database ${name}`));
  const url = new URL(inject('adminDatabaseUrl'));
  url.pathname = `/${name}`;
  const orm = await openOrm({ databaseUrl: url.toString(), poolMax });
  if (options.migrateTo === undefined) await migrate(orm);
  else await orm.migrator.up({ to: options.migrateTo });
  return {
    url: url.toString(),
    orm,
    async drop() {
      await orm.close();
      await admin(async (client) => {
        // pg's pool resolves end() before its sockets have closed; a forced drop that terminates
        // them then surfaces as an unhandled 57P01 error in the test run. Give them a moment.
        for (let i = 0; i < 40; i += 1) {
          const { rows } = await client.query<{ n: string }>(
            'select count(*)::text as n from pg_stat_activity where datname = $1',
            [name],
          );
          if (rows[0]?.n === '0') break;
          await new Promise((resolve) => setTimeout(resolve, 50));
        }
        await client.query(`drop database if exists ${name} with (force)`);
      });
    },
  };
}
