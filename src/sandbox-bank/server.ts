// The sandbox bank process (`npm run sandbox-bank`, and started by `npm start` beside the API and
// the workers), configured by its own variables (./config.ts). Its state lives in the
// `sandbox_bank` schema of SANDBOX_BANK_DATABASE_URL (by default the gateway's database server),
// apart from the gateway's own tables.
import { assertNodeVersion } from '../runtime/node-version.ts';
import { buildSandboxBank } from './app.ts';
import { loadSandboxBankConfigOrExit } from './config.ts';
import { SandboxRunner } from './runner.ts';
import { SandboxStore } from './store.ts';

assertNodeVersion();
const config = loadSandboxBankConfigOrExit();
// The app's logger exists only once the store has migrated: until then an idle connection's end
// goes to stderr.
let warn = (error: Error) => console.error(`sandbox bank: database connection ended: ${error.message}`);
const store = new SandboxStore(config.databaseUrl, (error) => warn(error));
await store.migrate();
// The runner logs through the app's logger, and is told by the app when work falls due, so that it
// does the work then rather than at its next poll.
const runner = new SandboxRunner({
  store,
  callbackUrl: `${config.gatewayCallbackUrl}/provider-callbacks/sandbox`,
  callbackSecret: config.callbackSecret,
  log: (message, fields) => app.log.warn(fields ?? {}, message),
});
const app = await buildSandboxBank({
  store,
  onDue: (inMs) => runner.dueIn(inMs),
  completionDelayMs: config.SANDBOX_BANK_COMPLETION_DELAY_MS,
  hangMs: config.SANDBOX_BANK_HANG_MS,
  logLevel: config.LOG_LEVEL,
  apiKey: config.apiKey,
  authorizationUrl: `${config.gatewayCallbackUrl}/provider-callbacks/sandbox`,
  callbackSecret: config.callbackSecret,
  ...(config.SANDBOX_BANK_CONTROL_TOKEN ? { controlToken: config.SANDBOX_BANK_CONTROL_TOKEN } : {}),
});
warn = (error) => app.log.warn({ error: error.message }, 'database connection ended; the next query reconnects');

let stopping = false;
async function shutdown() {
  if (stopping) return;
  stopping = true;
  try {
    await runner.stop();
    await app.close();
    await store.close();
  } finally {
    process.exit(0);
  }
}
process.once('SIGINT', () => void shutdown());
process.once('SIGTERM', () => void shutdown());

await app.listen({ host: config.SANDBOX_BANK_HOST, port: config.SANDBOX_BANK_PORT });
runner.start();
