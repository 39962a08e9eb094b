// Live keys never reach the sandbox bank (decisions §12, §13, §16). A route that can reach a
// provider — moving money, or only reading from it (the bank list, a name enquiry, a card's lock) —
// names the capability it needs in its config (`reachesProvider: 'cards'`); when no live connector
// of the deployment serves that capability, a live key gets 403 there naming it, before anything
// is validated, reserved, read or sent. Every /api/v1/sandbox/… route answers 403 to live keys.
import type { FastifyInstance } from 'fastify';
import type { Capability } from '../connectors/types.ts';
import { type Providers, serving } from '../connectors/registry.ts';
import { ApiError } from './errors.ts';

export type { Capability };

declare module 'fastify' {
  interface FastifyContextConfig {
    /** The route reaches a provider for this capability: live keys need a production provider for it. */
    reachesProvider?: Capability;
  }
}

export const SANDBOX_PREFIX = '/api/v1/sandbox/';

export function registerLiveModeGuard(app: FastifyInstance, providers: Pick<Providers, 'connectors'>): void {
  app.addHook('preValidation', (request, _reply, done) => {
    if (request.auth?.mode !== 'live') return done();
    if (request.routeOptions.url?.startsWith(SANDBOX_PREFIX)) {
      return done(new ApiError('forbidden', 'sandbox routes need a sandbox (sk_test_) key'));
    }
    const capability = request.routeOptions.config.reachesProvider;
    if (capability && serving(providers, 'live', capability).length === 0) {
      return done(
        new ApiError(
          'forbidden',
          `live mode has no connector for ${capability.replace('_', ' ')} in this deployment: nothing was ` +
            'reserved, read or sent. Use a sandbox (sk_test_) key, or configure a live connector ' +
            '(LIVE_CONNECTORS; docs/going-live.md)',
        ),
      );
    }
    done();
  });
}
