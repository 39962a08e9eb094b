// GET /api/v1/wallet: the tenant's NGN wallet, from the ledger (decisions §3), now or as it was at
// a moment; GET /api/v1/wallet/transactions: its statement (decisions §15).
import type { FastifyInstance } from 'fastify';
import type { MikroORM } from '@mikro-orm/postgresql';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import { z } from 'zod';
import { tenantOf } from '../http/auth.ts';
import { envelopeSchema, ok } from '../http/envelope.ts';
import { PaginationQuery, listOf, refuseWrapperPayloads, windowOf } from '../http/pagination.ts';
import { routeSchemasOf } from '../http/route-docs.ts';
import { walletView } from './service.ts';
import {
  MAX_STATEMENT_DAYS,
  StatementMoment,
  momentAt,
  statementRange,
  walletAt,
  walletStatement,
} from './statement.ts';

const Wallet = z.object({
  currency: z.literal('NGN'),
  available_minor: z.number().int(),
  pending_minor: z.number().int(),
  updated_at: z.string(),
  at: z.string().optional().meta({ description: 'The moment asked for with `at`, when it was given' }),
});

const StatementItem = z.object({
  id: z.string(),
  entry_id: z.string(),
  type: z.string().meta({
    description:
      "The journal entry kind (transfer_reserve, inbound_credit, card_funding…), or provider_fee: an inbound credit's fee",
  }),
  amount_minor: z.number().int().meta({ description: 'Signed kobo: negative leaves the available balance' }),
  balance_after_minor: z.number().int(),
  reference: z.string().nullable(),
  resource: z.object({ type: z.string(), id: z.string() }),
  created_at: z.string(),
});

const Statement = listOf(StatementItem).extend({
  period: z.object({ from: z.string(), to: z.string() }),
});

const doc = routeSchemasOf('wallet');

export function walletRoutes(app: FastifyInstance, deps: { orm: MikroORM }) {
  const typed = app.withTypeProvider<ZodTypeProvider>();
  typed.get(
    '/api/v1/wallet',
    {
      schema: doc("The tenant's NGN wallet: available and reserved (pending) kobo", {
        description:
          'With `at` (an ISO 8601 date-time, or a date meaning the end of that day in Lagos), the balances as they were at that moment: the sum of every movement ' +
          'made until then.',
        querystring: z.object({ at: StatementMoment.optional() }),
        response: { 200: envelopeSchema(Wallet) },
      }),
    },
    async (request) => {
      const { tenantId } = tenantOf(request);
      const em = deps.orm.em.fork();
      if (request.query.at === undefined) return ok(request, await walletView(em, tenantId));
      return ok(request, await walletAt(em, tenantId, momentAt(request.query.at)));
    },
  );

  typed.get(
    '/api/v1/wallet/transactions',
    {
      preValidation: refuseWrapperPayloads,
      schema: doc("The wallet's statement: every movement of the available balance, newest first", {
        description:
          `One item per movement of the available balance, with the balance it left. \`from\` (inclusive) and \`to\` ` +
          `(exclusive) are ISO 8601 date-times, or dates meaning whole days in Lagos; \`to\` defaults to now and ` +
          `\`from\` to 30 days before \`to\`; at most ${MAX_STATEMENT_DAYS} days.`,
        querystring: PaginationQuery.extend({ from: StatementMoment.optional(), to: StatementMoment.optional() }),
        response: { 200: envelopeSchema(Statement) },
      }),
    },
    async (request) => {
      const range = statementRange(request.query);
      return ok(
        request,
        await walletStatement(deps.orm.em.fork(), tenantOf(request).tenantId, range, windowOf(request.query)),
      );
    },
  );
}
