// The API process: config, database, a lazy Temporal connection, the Fastify app. Stops
// cleanly on SIGINT/SIGTERM (in-flight requests finish, then connections close).
import { Connection } from '@temporalio/client';
import { buildApp } from './app.ts';
import { loadConfig } from './config.ts';
import { openOrm } from './db/orm.ts';
import { CallbackDispatcher } from './provider-callbacks/dispatcher.ts';
import { createProviders } from './providers/registry.ts';
import { assertNodeVersion } from './stack/node-version.ts';

assertNodeVersion();
const config = loadConfig();
const orm = await openOrm({ databaseUrl: config.databaseUrl, poolMax: config.DATABASE_POOL_MAX });
// Lazy: the API starts (and /health reports 503) even while Temporal is still coming up.
const temporal = Connection.lazy({ address: config.temporalAddress });
const dispatcher = new CallbackDispatcher();
const app = await buildApp({ config, orm, temporal, providers: createProviders(config), dispatcher });

let stopping = false;
async function shutdown(signal: string) {
  if (stopping) return;
  stopping = true;
  app.log.info({ signal }, 'api stopping');
  try {
    await app.close();
    await temporal.close();
    await orm.close();
  } finally {
    process.exit(0);
  }
}
process.once('SIGINT', () => void shutdown('SIGINT'));
process.once('SIGTERM', () => void shutdown('SIGTERM'));

await app.listen({ host: config.HOST, port: config.PORT });
