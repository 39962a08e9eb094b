// Live keys never reach the sandbox bank (decisions §12). A route that would reach a provider or
// move money says so in its config (`reachesProvider: true`); with no production provider
// configured for the deployment, a live key gets 403 there before anything is validated, reserved
// or sent. Every /api/v1/sandbox/… route answers 403 to live keys.
import type { FastifyInstance } from 'fastify';
import type { Providers } from '../providers/registry.ts';
import { ApiError } from './errors.ts';

declare module 'fastify' {
  interface FastifyContextConfig {
    /** The route reaches a provider or moves money: live keys need a production provider. */
    reachesProvider?: boolean;
  }
}

export const SANDBOX_PREFIX = '/api/v1/sandbox/';

export function registerLiveModeGuard(app: FastifyInstance, providers: Pick<Providers, 'live'>): void {
  app.addHook('preValidation', (request, _reply, done) => {
    if (request.auth?.mode !== 'live') return done();
    if (request.routeOptions.url?.startsWith(SANDBOX_PREFIX)) {
      return done(new ApiError('forbidden', 'sandbox routes need a sandbox (sk_test_) key'));
    }
    if (request.routeOptions.config.reachesProvider && !providers.live) {
      return done(
        new ApiError(
          'forbidden',
          'live mode has no provider configured for this deployment: nothing was reserved or sent. ' +
            'Use a sandbox (sk_test_) key, or configure a production provider (README, "Providers")',
        ),
      );
    }
    done();
  });
}
