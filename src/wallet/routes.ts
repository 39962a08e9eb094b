// GET /api/v1/wallet: the tenant's NGN wallet, from the ledger (decisions §3).
import type { FastifyInstance } from 'fastify';
import type { MikroORM } from '@mikro-orm/postgresql';
import { z } from 'zod';
import { tenantOf } from '../http/auth.ts';
import { ResourceErrorSchema, envelopeSchema, ok } from '../http/envelope.ts';
import { walletView } from './service.ts';

const Wallet = z.object({
  currency: z.literal('NGN'),
  available_minor: z.number().int(),
  pending_minor: z.number().int(),
  updated_at: z.string(),
});

export function walletRoutes(app: FastifyInstance, deps: { orm: MikroORM }) {
  app.get(
    '/api/v1/wallet',
    {
      schema: {
        tags: ['wallet'],
        summary: "The tenant's NGN wallet: available and reserved (pending) kobo",
        security: [{ apiKey: [] }],
        response: { 200: envelopeSchema(Wallet), 401: ResourceErrorSchema },
      },
    },
    async (request) => ok(request, await walletView(deps.orm.em.fork(), tenantOf(request).tenantId)),
  );
}
