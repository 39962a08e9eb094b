// Every page of the console, one module per area; each registers its routes on the console's scope.
import type { FastifyInstance } from 'fastify';
import type { ConsoleDeps } from '../plugin.ts';
import { cardPages } from './cards.ts';
import { overviewPages } from './overview.ts';
import { virtualAccountPages } from './virtual-accounts.ts';
import { walletPages } from './wallet.ts';

export function pageRoutes(scope: FastifyInstance, deps: ConsoleDeps): void {
  overviewPages(scope, deps);
  virtualAccountPages(scope, deps);
  cardPages(scope, deps);
  walletPages(scope, deps);
}
