// The tenant console (decisions §22): server-rendered pages under /dashboard for the tenant's
// people, served by the API process. Its pages call the API's own routes as the signed-in person
// (./api.ts), so that the console and the API are one path; its own tables are the team's.
import type { Feature } from '../feature.ts';
import { decryptSecret, encryptSecret } from '../webhooks/secrets.ts';
import { consoleCommands } from './admin.ts';
import { ConsoleApi } from './api.ts';
import { pageRoutes } from './pages/index.ts';
import { CONSOLE_PREFIX, type ConsoleDeps, consoleScope } from './plugin.ts';
import { signInRoutes } from './sign-in.ts';

export const consoleFeature: Feature = {
  name: 'console',
  commands: consoleCommands,
  async api(app, { config, orm, internalCalls }) {
    const key = config.webhookEncryptionKey;
    const deps: ConsoleDeps = {
      em: () => orm.em.fork(),
      api: new ConsoleApi(app, internalCalls, () => orm.em.fork()),
      consoleUrl: (request) => config.CONSOLE_URL ?? `${request.protocol}://${request.host}`,
      seal: (secret) => encryptSecret(key, secret),
      open: (sealed) => decryptSecret(key, sealed),
    };
    await app.register(
      (scope) =>
        consoleScope(scope, deps, (routes, routeDeps) => {
          signInRoutes(routes, routeDeps);
          pageRoutes(routes, routeDeps);
        }),
      { prefix: CONSOLE_PREFIX },
    );
  },
};
