// Builds the Fastify application: platform concerns (request ids, logging, envelopes, auth,
// rate limits, OpenAPI) and every feature's routes, from the list of features (src/features.ts).
// The process entry is src/server.ts; tests build the same app against their own database and
// Temporal server.
import { readFile } from 'node:fs/promises';
import Fastify, { type FastifyInstance, LogController } from 'fastify';
import swagger from '@fastify/swagger';
import swaggerUi from '@fastify/swagger-ui';
import type { MikroORM } from '@mikro-orm/postgresql';
import type { Tracer } from '@opentelemetry/api';
import { Client, type Connection } from '@temporalio/client';
import { jsonSchemaTransform, serializerCompiler, validatorCompiler } from 'fastify-type-provider-zod';
import { type ResolvedKey, registerAuth } from './http/auth.ts';
import { InternalCalls } from './http/internal-calls.ts';
import { type GatewayMetrics, createMetrics } from './metrics/metrics.ts';
import { ApiKeyCache } from './tenants/key-cache.ts';
import { KeyUsage } from './tenants/key-usage.ts';
import { ROUTE_SCOPES, type Scope, registerScopeGuard } from './http/scopes.ts';
import { resolveApiKey } from './tenants/tenants.ts';
import { registerErrorResponseDocs } from './http/error-docs.ts';
import { docsContentSecurityPolicy, registerSecurityHeaders } from './http/security-headers.ts';
import { MAX_PARAM_LENGTH, frameworkErrors, registerErrorHandling } from './http/error-handler.ts';
import { clientErrorHandler, registerEarlyAnswerClose } from './http/client-error.ts';
import { registerRateLimits } from './http/rate-limits.ts';
import { postgresRateLimitCounter } from './http/rate-limit-windows.ts';
import { registerDependencyDeadline } from './http/deadlines.ts';
import { registerHostileInputGuard } from './http/hostile-input.ts';
import { registerGracefulClose } from './http/shutdown.ts';
import { idempotencyFingerprintKey, registerIdempotency } from './http/idempotency.ts';
import { registerLiveModeGuard } from './http/live-mode.ts';
import { requestIdFor } from './http/request-id.ts';
import { maskUrl, maskedErrorSerializer } from './runtime/log-masking.ts';
import { registerRequestTracing } from './http/tracing.ts';
import { workflowClientTracing } from './telemetry/temporal.ts';
import type { CallbackDispatcher } from './provider-callbacks/dispatcher.ts';
import { providerCallbackRoutes } from './provider-callbacks/routes.ts';
import type { Providers } from './connectors/registry.ts';
import type { ApiConfig } from './feature.ts';
import { FEATURES } from './features.ts';
import type { EgressPolicy } from './webhooks/destinations.ts';

export interface AppDeps {
  config: ApiConfig;
  orm: MikroORM;
  temporal: Connection;
  providers: Providers;
  /** Acts on provider callbacks; features register their handlers on it. */
  dispatcher: CallbackDispatcher;
  /** Continue-as-new threshold for new card workflows (tests make it small). */
  cardContinueAsNewAfter?: number;
  /** How long a transfer policy's approval hour lasts, in ms (an hour; tests make it short). */
  approvalHourMs?: number;
  /** Where webhooks may go: loopback for sandbox keys, never the deployment's own services. */
  egress: EgressPolicy;
  /** Where JSON log lines go (stdout by default); tests capture them. */
  logStream?: NodeJS.WritableStream;
  /** Prometheus metrics this app records into (src/metrics/metrics.ts); made here when absent. */
  metrics?: GatewayMetrics;
  /**
   * Given when tracing is on (src/telemetry/tracing.ts): requests become server spans and the
   * Temporal client carries their context into workflows. Absent: neither hook nor interceptor.
   */
  tracer?: Tracer;
  /**
   * The scopes of routes added to the app beyond the features' (tests' probe routes), beside
   * ROUTE_SCOPES: an authenticated route that neither names stops the app from building.
   */
  extraRouteScopes?: Readonly<Record<string, Scope>>;
}

declare module 'fastify' {
  interface FastifyInstance {
    /** The metrics this app records, served by src/metrics/server.ts. */
    metrics: GatewayMetrics;
  }
}

/** The levels at which the per-request line is written. */
const REQUEST_LINE_LEVELS = new Set(['trace', 'debug', 'info']);

let contractText: Promise<string> | undefined;
/** docs/generic-bank-contract-v1.yaml, read once. */
function genericBankContract(): Promise<string> {
  contractText ??= readFile(new URL('../docs/generic-bank-contract-v1.yaml', import.meta.url), 'utf8');
  return contractText;
}

export async function buildApp(deps: AppDeps): Promise<FastifyInstance> {
  const app = Fastify({
    logger: {
      level: deps.config.LOG_LEVEL,
      base: { service: 'api' },
      redact: ['req.headers.authorization'],
      // An error's message and stack can quote a provider's answer: account numbers masked there too.
      serializers: { err: maskedErrorSerializer },
      ...(deps.logStream ? { stream: deps.logStream } : {}),
    },
    genReqId: requestIdFor,
    requestIdHeader: false,
    // One line per request, written when it is answered (below), instead of Fastify's two. Given
    // to the log controller: beside it, Fastify ignores the top-level disableRequestLogging.
    logController: new LogController({ requestIdLogLabel: 'requestId', disableRequestLogging: true }),
    bodyLimit: deps.config.BODY_LIMIT_BYTES,
    // Only the proxies named in TRUST_PROXY may set the client address (rate limits per address).
    trustProxy: deps.config.TRUST_PROXY.length > 0 ? deps.config.TRUST_PROXY : false,
    // Closing is answered in the contract's envelope by src/http/shutdown.ts.
    return503OnClosing: false,
    // What the router and Node's HTTP parser refuse before any route answers in the envelope too.
    frameworkErrors,
    clientErrorHandler,
    routerOptions: { maxParamLength: MAX_PARAM_LENGTH },
    // Slow clients (slowloris, a body dripped a byte at a time) hold a connection no longer than
    // these; Node answers 408 through clientErrorHandler. Checked every quarter of the headers' limit.
    requestTimeout: deps.config.REQUEST_TIMEOUT_MS,
    http: {
      headersTimeout: deps.config.HEADERS_TIMEOUT_MS,
      connectionsCheckingInterval: Math.min(1_000, Math.max(25, Math.floor(deps.config.HEADERS_TIMEOUT_MS / 4))),
    },
  });
  app.setValidatorCompiler(validatorCompiler);
  app.setSerializerCompiler(serializerCompiler);
  // First, so that every other hook and the handler run inside the request's span.
  if (deps.tracer) registerRequestTracing(app, deps.tracer);

  app.addHook('onRequest', async (request, reply) => {
    reply.header('x-request-id', request.id);
  });
  registerSecurityHeaders(app);
  registerEarlyAnswerClose(app);
  const metrics = deps.metrics ?? createMetrics(deps.orm);
  app.decorate('metrics', metrics);
  app.addHook('onResponse', async (request, reply) => {
    // By route pattern, never the raw URL: ids would make a series per resource.
    metrics.observeRequest(
      { route: request.routeOptions.url ?? 'unknown', method: request.method, status: reply.statusCode },
      reply.elapsedTime / 1000,
    );
    // Nothing is built for a line that a quieter level (warn, error…) would drop.
    if (!REQUEST_LINE_LEVELS.has(request.log.level)) return;
    request.log.info(
      {
        // Query strings and paths can hold account numbers (`/banks/resolve?account_number=…`): masked.
        req: { method: request.method, url: maskUrl(request.url), remoteAddress: request.ip },
        res: { statusCode: reply.statusCode },
        responseTime: reply.elapsedTime,
      },
      'request completed',
    );
  });
  // First: every route registered after this is bounded by the dependency deadline.
  registerDependencyDeadline(app, deps.config.DEPENDENCY_TIMEOUT_MS, deps.temporal);
  registerErrorHandling(app);
  registerErrorResponseDocs(app);
  registerHostileInputGuard(app);
  registerGracefulClose(app);

  await app.register(swagger, {
    openapi: {
      openapi: '3.1.0',
      info: {
        title: 'Payments gateway API',
        version: '1.0.0',
        description:
          'Virtual accounts, naira transfers, cards, identity customers and signed webhooks. ' +
          'Authenticate with `Authorization: Bearer sk_test_…`. Money is integer kobo.',
      },
      components: {
        securitySchemes: { apiKey: { type: 'http', scheme: 'bearer', bearerFormat: 'sk_test_… / sk_live_…' } },
      },
    },
    transform: jsonSchemaTransform,
  });
  // swagger-ui's own routes are public.
  app.addHook('onRoute', (route) => {
    if (route.url.startsWith('/docs')) route.config = { ...(route.config ?? {}), public: true };
  });
  // After the hook above: every route that needs a key must name its scope, or the app does not start.
  const routeScopes = { ...ROUTE_SCOPES, ...deps.extraRouteScopes };
  registerScopeGuard(app, routeScopes);
  await app.register(swaggerUi, {
    routePrefix: '/docs',
    uiConfig: { deepLinking: true },
    staticCSP: true,
    transformStaticCSP: docsContentSecurityPolicy,
  });

  const rateLimits = registerRateLimits(
    app,
    {
      perMinute: deps.config.RATE_LIMIT_PER_MINUTE,
      unauthenticatedPerMinute: deps.config.RATE_LIMIT_UNAUTHENTICATED_PER_MINUTE,
    },
    {
      counter: postgresRateLimitCounter(deps.orm),
      log: app.log,
      uncounted: (policy) => metrics.countUncountedRequest(policy),
    },
  );
  const keys = new ApiKeyCache({ ttlMs: deps.config.API_KEY_CACHE_MS });
  const usage = new KeyUsage(deps.orm, app.log);
  const internalCalls = new InternalCalls<ResolvedKey>();
  registerAuth(
    app,
    rateLimits,
    (token) => keys.resolve(token, () => resolveApiKey(deps.orm.em.fork(), token)),
    (key) => usage.used(key.keyId),
    routeScopes,
    internalCalls,
  );

  registerLiveModeGuard(app, deps.providers);
  // A claim lives a little longer than any request may run.
  registerIdempotency(app, {
    orm: deps.orm,
    leaseMs: deps.config.DEPENDENCY_TIMEOUT_MS + 5_000,
    fingerprintKey: idempotencyFingerprintKey(deps.config.webhookEncryptionKey),
  });

  app.get('/openapi.json', { config: { public: true }, schema: { hide: true } }, (_request, reply) =>
    reply.send(app.swagger()),
  );
  // The generic HTTP bank contract (decisions §13), for banks and shims implementing it.
  app.get(
    '/contracts/generic-bank-v1.yaml',
    { config: { public: true }, schema: { hide: true } },
    async (_request, reply) => reply.type('application/yaml; charset=utf-8').send(await genericBankContract()),
  );
  const client = new Client({
    connection: deps.temporal,
    namespace: deps.config.TEMPORAL_NAMESPACE,
    ...(deps.tracer ? { interceptors: workflowClientTracing() } : {}),
  });
  // Every feature's routes and callback handlers, in the list's order (src/features.ts).
  const context = {
    config: deps.config,
    orm: deps.orm,
    client,
    temporal: deps.temporal,
    providers: deps.providers,
    dispatcher: deps.dispatcher,
    metrics,
    egress: deps.egress,
    internalCalls,
    ...(deps.cardContinueAsNewAfter ? { cardContinueAsNewAfter: deps.cardContinueAsNewAfter } : {}),
    ...(deps.approvalHourMs ? { approvalHourMs: deps.approvalHourMs } : {}),
  };
  for (const feature of FEATURES) await feature.api?.(app, context);
  await providerCallbackRoutes(app, {
    orm: deps.orm,
    // Each connector's receiver under its name: the sandbox bank at /provider-callbacks/sandbox.
    receivers: new Map(
      deps.providers.connectors.flatMap((connector) =>
        connector.callbacks ? [[connector.name, connector.callbacks] as const] : [],
      ),
    ),
    dispatcher: deps.dispatcher,
    refused: rateLimits.unauthenticated,
  });

  return app;
}
