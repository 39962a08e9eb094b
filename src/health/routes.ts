// GET /health: 200 when PostgreSQL and Temporal both answer within two seconds, 503 otherwise.
import type { FastifyInstance } from 'fastify';
import type { MikroORM } from '@mikro-orm/postgresql';
import type { Connection } from '@temporalio/client';
import { z } from 'zod';

const CHECK_TIMEOUT_MS = 2_000;

async function check(probe: (signal: AbortSignal) => Promise<unknown>): Promise<'ok' | 'unavailable'> {
  let timer: NodeJS.Timeout | undefined;
  // Aborted at the time limit, so that no call (nor its connection attempt's retries) outlives it.
  const controller = new AbortController();
  try {
    await Promise.race([
      probe(controller.signal),
      new Promise((_, reject) => {
        timer = setTimeout(() => {
          controller.abort();
          reject(new Error('timed out'));
        }, CHECK_TIMEOUT_MS);
      }),
    ]);
    return 'ok';
  } catch {
    return 'unavailable';
  } finally {
    clearTimeout(timer);
  }
}

const Check = z.enum(['ok', 'unavailable']);
const HealthResponse = z.object({
  status: z.enum(['ok', 'unavailable']),
  checks: z.object({ database: Check, temporal: Check }),
});

export function healthRoutes(app: FastifyInstance, deps: { orm: MikroORM; temporal: Connection; namespace: string }) {
  app.get(
    '/health',
    {
      config: { public: true },
      schema: {
        tags: ['platform'],
        summary: 'Liveness of the API and its dependencies',
        response: { 200: HealthResponse, 503: HealthResponse },
      },
    },
    async (_request, reply) => {
      const [database, temporal] = await Promise.all([
        check(() => deps.orm.em.fork().execute('select 1')),
        check((signal) =>
          deps.temporal.withAbortSignal(signal, () =>
            deps.temporal.withDeadline(Date.now() + CHECK_TIMEOUT_MS, () =>
              deps.temporal.workflowService.describeNamespace({ namespace: deps.namespace }),
            ),
          ),
        ),
      ]);
      const healthy = database === 'ok' && temporal === 'ok';
      return reply
        .status(healthy ? 200 : 503)
        .send({ status: healthy ? 'ok' : 'unavailable', checks: { database, temporal } });
    },
  );
}
