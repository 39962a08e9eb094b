// GET /api/v1/banks: the banks transfers can be sent to, as the bank switch lists them.
import type { FastifyInstance } from 'fastify';
import { z } from 'zod';
import { ApiError } from '../http/errors.ts';
import { ResourceErrorSchema, envelopeSchema, ok } from '../http/envelope.ts';
import { tenantOf } from '../http/auth.ts';
import { type Providers, banksOf } from '../connectors/registry.ts';

const BankList = z.object({ items: z.array(z.object({ code: z.string(), name: z.string(), slug: z.string() })) });

export function bankRoutes(app: FastifyInstance, deps: { providers: Providers }) {
  app.get(
    '/api/v1/banks',
    {
      config: { reachesProvider: 'transfers' },
      schema: {
        tags: ['banks'],
        summary: 'Banks that transfers can be sent to (use `code` as recipient_bank_code)',
        security: [{ apiKey: [] }],
        response: {
          200: envelopeSchema(BankList),
          401: ResourceErrorSchema,
          403: ResourceErrorSchema,
          503: ResourceErrorSchema,
        },
      },
    },
    async (request) => {
      let items;
      try {
        // The first transfers connector of the key's mode whose list answers (the live-mode guard
        // has made sure it has one).
        items = await banksOf(deps.providers, tenantOf(request).mode).list();
      } catch (cause) {
        throw new ApiError('unavailable', 'the bank list is unavailable right now; retry shortly', null, { cause });
      }
      return ok(request, { items: items.map(({ code, name, slug }) => ({ code, name, slug })) });
    },
  );
}
