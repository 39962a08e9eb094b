// The overview: the mode's wallet, today's volume and failures (decisions §22).
import type { FastifyInstance } from 'fastify';
import type { ConsoleDeps } from '../plugin.ts';
import { withMode } from '../plugin.ts';
import { sendPage } from '../render.ts';
import { consoleRoutes } from '../routes.ts';

export function overviewPages(scope: FastifyInstance, deps: ConsoleDeps): void {
  const route = consoleRoutes(scope);
  route.get('/', async (request, reply) =>
    withMode(request, reply, deps, 'Overview', 'overview', async (frame, key) => {
      const wallet = await deps.api.ok<{ data: Record<string, unknown> }>(request, key, 'GET', '/api/v1/wallet');
      return sendPage(reply, 'overview', frame, { wallet: wallet.data });
    }),
  );
}
