// `npm run migrate`: applies pending migrations to the configured database and exits.
import { loadConfig } from '../config.ts';
import { migrate, openOrm } from './orm.ts';

const config = loadConfig();
const orm = await openOrm({ databaseUrl: config.databaseUrl, poolMax: 2 });
try {
  const applied = await migrate(orm);
  console.log(JSON.stringify({ applied }));
} finally {
  await orm.close();
}
