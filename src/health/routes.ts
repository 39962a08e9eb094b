// Health for people and orchestrators:
//   GET /health        200 when PostgreSQL and Temporal both answer within two seconds, 503 otherwise;
//   GET /health/live   200 whenever the process answers at all (restart it when this fails), on no
//                      rate limit, so that it never waits on PostgreSQL;
//   GET /health/ready  200 when PostgreSQL and Temporal answer and every migration this build
//                      knows is applied, 503 otherwise (send it no traffic until then).
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
const LiveResponse = z.object({ status: z.literal('ok') });
const ReadyResponse = z.object({
  status: z.enum(['ok', 'unavailable']),
  checks: z.object({ database: Check, temporal: Check, migrations: z.enum(['ok', 'pending', 'unavailable']) }),
});

/** A public route of the platform's, without a key. */
const platformRoute = <const Response extends object>(summary: string, response: Response) => ({
  config: { public: true },
  schema: { tags: ['platform'], summary, response },
});

export function healthRoutes(app: FastifyInstance, deps: { orm: MikroORM; temporal: Connection; namespace: string }) {
  app.get(
    '/health',
    platformRoute('Liveness of the API and its dependencies', { 200: HealthResponse, 503: HealthResponse }),
    async (_request, reply) => {
      const [database, temporal] = await Promise.all([databaseCheck(), temporalCheck()]);
      const healthy = database === 'ok' && temporal === 'ok';
      return reply
        .status(healthy ? 200 : 503)
        .send({ status: healthy ? 'ok' : 'unavailable', checks: { database, temporal } });
    },
  );

  // On no rate limit: it must answer without PostgreSQL, where the limits count (src/http/auth.ts).
  const live = platformRoute('The process answers', { 200: LiveResponse });
  app.get('/health/live', { ...live, config: { ...live.config, unlimited: true } }, () =>
    Promise.resolve({ status: 'ok' as const }),
  );

  app.get(
    '/health/ready',
    platformRoute('Ready for traffic: dependencies answer and the schema is migrated', {
      200: ReadyResponse,
      503: ReadyResponse,
    }),
    async (_request, reply) => {
      let pending = false;
      const [database, temporal, migrationsReachable] = await Promise.all([
        databaseCheck(),
        temporalCheck(),
        check(async () => {
          pending = (await deps.orm.migrator.getPending()).length > 0;
        }),
      ]);
      const migrations = migrationsReachable === 'ok' ? (pending ? 'pending' : 'ok') : 'unavailable';
      const ready = database === 'ok' && temporal === 'ok' && migrations === 'ok';
      return reply
        .status(ready ? 200 : 503)
        .send({ status: ready ? 'ok' : 'unavailable', checks: { database, temporal, migrations } });
    },
  );

  function databaseCheck() {
    return check(() => deps.orm.em.fork().execute('select 1'));
  }

  function temporalCheck() {
    return check((signal) =>
      deps.temporal.withAbortSignal(signal, () =>
        deps.temporal.withDeadline(Date.now() + CHECK_TIMEOUT_MS, () =>
          deps.temporal.workflowService.describeNamespace({ namespace: deps.namespace }),
        ),
      ),
    );
  }
}
