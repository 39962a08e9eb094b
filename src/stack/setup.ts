// `npm run setup`: prepares external infrastructure for a deploy — applies database migrations
// and registers Temporal search attributes — then exits. `npm start` does the same by itself.
import { loadConfigOrExit } from '../config.ts';
import { migrate, openOrm } from '../orm.ts';
import { assertNodeVersion } from '../runtime/node-version.ts';
import { ensureDatabase } from './postgres.ts';
import { ensureSearchAttributes } from './search-attributes.ts';

assertNodeVersion();
const config = loadConfigOrExit();
await ensureDatabase(config.databaseUrl);
const orm = await openOrm({ databaseUrl: config.databaseUrl, poolMax: 2 });
try {
  const applied = await migrate(orm);
  const registered = await ensureSearchAttributes(config.temporalAddress, config.TEMPORAL_NAMESPACE);
  console.log(JSON.stringify({ migrations_applied: applied, search_attributes_registered: registered }));
} finally {
  await orm.close();
}
