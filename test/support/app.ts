// Builds the real Fastify app for a test file, on that file's database and the run's Temporal.
import { Writable } from 'node:stream';
import type { Connection } from '@temporalio/client';
import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll, inject } from 'vitest';
import { type AppDeps, buildApp } from '../../src/app.ts';
import { type Config, defaultWebhookTaskQueue } from '../../src/config.ts';
import type { MikroORM } from '../../src/orm.ts';
import { type ResolvedKey, createTenant } from '../../src/tenants/tenants.ts';
import { postMovement } from '../../src/ledger/ledger.ts';
import { walletFunding } from '../../src/ledger/movements.ts';
import { CallbackDispatcher } from '../../src/provider-callbacks/dispatcher.ts';
import { createProviders } from '../../src/connectors/registry.ts';
import { boundedTemporalConnection } from '../../src/http/deadlines.ts';
import type { EgressPolicy } from '../../src/webhooks/destinations.ts';
import type { Scope } from '../../src/http/scopes.ts';
import { type TestDatabase, createTestDatabase } from './database.ts';

export interface TestApp {
  app: FastifyInstance;
  temporal: Connection;
  /** Every JSON log line the app wrote. */
  logs: Record<string, unknown>[];
  close(): Promise<void>;
}

export const TEST_CALLBACK_SECRET = 'test-callback-secret-0123456789';
export const TEST_WEBHOOK_KEY = Buffer.alloc(32, 7);
export const TEST_BVN_SECRET = Buffer.alloc(32, 11);
/** The test sandbox bank's control credential: every stack runs with one, so the adapter's header is exercised. */
export const TEST_SANDBOX_CONTROL_TOKEN = 'test-sandbox-bank-control-token-0123456789';
/** The test sandbox bank's API key (SANDBOX_BANK_API_KEY), which the sandbox connector sends. */
export const TEST_SANDBOX_BANK_API_KEY = 'test-sandbox-bank-api-key-0123456789';

export interface TestAppOptions {
  temporalAddress?: string;
  rateLimitPerMinute?: number;
  /** Per client address, for requests without a valid key; high by default like rateLimitPerMinute. */
  rateLimitUnauthenticatedPerMinute?: number;
  /** TRUST_PROXY: proxies whose X-Forwarded-For names the client. */
  trustProxy?: string[];
  /** Where the sandbox bank listens; by default an address where nothing does. */
  sandboxBankUrl?: string;
  providerTimeoutMs?: number;
  taskQueue?: string;
  webhookScheduleMs?: number[];
  egress?: EgressPolicy;
  cardContinueAsNewAfter?: number;
  /** How long a transfer policy's approval hour lasts (an hour): short, a held payout expires in a test. */
  approvalHourMs?: number;
  dispatcher?: CallbackDispatcher;
  extend?: (app: FastifyInstance) => void;
  /** The scope of each authenticated route `extend` adds, as `'METHOD /url'` (src/http/scopes.ts). */
  routeScopes?: Record<string, Scope>;
  /** DEPENDENCY_TIMEOUT_MS of the app (10 s by default, as in production). */
  dependencyTimeoutMs?: number;
  /** HEADERS_TIMEOUT_MS and REQUEST_TIMEOUT_MS (10 s and 30 s by default, as in production). */
  headersTimeoutMs?: number;
  requestTimeoutMs?: number;
  /** NAME_ENQUIRY_CACHE_MS (60 s by default, as in production). */
  nameEnquiryCacheMs?: number;
  /** The live connectors, as src/config.ts reads LIVE_CONNECTORS and their settings (none by default). */
  liveConnectors?: Config['liveConnectors'];
  /** STREAM_MAX_PER_KEY and STREAM_BUFFER_BYTES (5 and 256 KiB by default, as in production). */
  streamMaxPerKey?: number;
  streamBufferBytes?: number;
}

export async function createTestApp(orm: MikroORM, options: TestAppOptions = {}): Promise<TestApp> {
  const logs: Record<string, unknown>[] = [];
  const logStream = new Writable({
    write(chunk: Buffer, _encoding, done) {
      for (const line of chunk.toString('utf8').split('\n'))
        if (line.trim()) logs.push(JSON.parse(line) as Record<string, unknown>);
      done();
    },
  });
  const dependencyTimeoutMs = options.dependencyTimeoutMs ?? 10_000;
  const temporal = boundedTemporalConnection(options.temporalAddress ?? inject('temporalAddress'), dependencyTimeoutMs);
  const config: AppDeps['config'] = {
    LOG_LEVEL: 'info',
    BODY_LIMIT_BYTES: 1_048_576,
    RATE_LIMIT_PER_MINUTE: options.rateLimitPerMinute ?? 10_000,
    RATE_LIMIT_UNAUTHENTICATED_PER_MINUTE: options.rateLimitUnauthenticatedPerMinute ?? 10_000,
    BULK_ITEMS_PER_MINUTE: 30_000,
    API_KEY_CACHE_MS: 1_000,
    TRUST_PROXY: options.trustProxy ?? [],
    TEMPORAL_NAMESPACE: 'default',
    TEMPORAL_TASK_QUEUE: options.taskQueue ?? 'gateway-test',
    webhookTaskQueue: defaultWebhookTaskQueue(options.taskQueue ?? 'gateway-test'),
    providerCallbackSecret: TEST_CALLBACK_SECRET,
    webhookEncryptionKey: TEST_WEBHOOK_KEY,
    bvnSecretKey: TEST_BVN_SECRET,
    webhookRetryScheduleMs: options.webhookScheduleMs ?? [0, 500, 1_000],
    DEPENDENCY_TIMEOUT_MS: dependencyTimeoutMs,
    HEADERS_TIMEOUT_MS: options.headersTimeoutMs ?? 10_000,
    REQUEST_TIMEOUT_MS: options.requestTimeoutMs ?? 30_000,
    NAME_ENQUIRY_CACHE_MS: options.nameEnquiryCacheMs ?? 60_000,
    STREAM_MAX_PER_KEY: options.streamMaxPerKey ?? 5,
    STREAM_BUFFER_BYTES: options.streamBufferBytes ?? 262_144,
  };
  const providers = createProviders({
    sandboxBankUrl: options.sandboxBankUrl ?? 'http://127.0.0.1:9',
    PROVIDER_TIMEOUT_MS: options.providerTimeoutMs ?? 2_000,
    SANDBOX_BANK_CONTROL_TOKEN: TEST_SANDBOX_CONTROL_TOKEN,
    liveConnectors: options.liveConnectors ?? [],
    sandboxBankApiKey: TEST_SANDBOX_BANK_API_KEY,
    providerCallbackSecret: TEST_CALLBACK_SECRET,
  });
  const dispatcher = options.dispatcher ?? new CallbackDispatcher();
  const app = await buildApp({
    config,
    orm,
    temporal,
    logStream,
    providers,
    dispatcher,
    egress: options.egress ?? {},
    ...(options.cardContinueAsNewAfter ? { cardContinueAsNewAfter: options.cardContinueAsNewAfter } : {}),
    ...(options.routeScopes ? { extraRouteScopes: options.routeScopes } : {}),
    ...(options.approvalHourMs ? { approvalHourMs: options.approvalHourMs } : {}),
  });
  options.extend?.(app);
  await app.ready();
  return {
    app,
    temporal,
    logs,
    async close() {
      await app.close();
      await temporal.close();
    },
  };
}

/** A file's own app on its own database: what `useTestApp` hands the file's tests. */
export interface OwnTestApp {
  db: TestDatabase;
  gateway: TestApp;
  app: FastifyInstance;
}

/**
 * A test file's own app (no workers, no sandbox bank) on a fresh database: made before the file's
 * tests, closed after. The fields of what it returns are there from the file's first test on.
 */
export function useTestApp(options: TestAppOptions = {}): OwnTestApp {
  const own = {} as OwnTestApp;
  beforeAll(async () => {
    own.db = await createTestDatabase();
    own.gateway = await createTestApp(own.db.orm, options);
    own.app = own.gateway.app;
  });
  afterAll(async () => {
    await own.gateway?.close();
    await own.db?.drop();
  });
  return own;
}

/** Runs `work` on an app of its own, made with `options` on `orm`'s database, and closes that app after. */
export async function withTestApp(
  orm: MikroORM,
  options: TestAppOptions,
  work: (app: FastifyInstance) => Promise<void>,
): Promise<void> {
  const own = await createTestApp(orm, options);
  try {
    await work(own.app);
  } finally {
    await own.close();
  }
}

/** Has the app listen on a free port of 127.0.0.1, for clients that need Node's HTTP server: where it listens. */
export async function listenLocally(app: FastifyInstance): Promise<{ url: string; port: number }> {
  const url = await app.listen({ host: '127.0.0.1', port: 0 });
  return { url, port: Number(new URL(url).port) };
}

export type FundedTenant = Awaited<ReturnType<typeof createFundedTenant>>;

/** A tenant with a test key and, optionally, a funded wallet. */
export async function createFundedTenant(
  orm: MikroORM,
  walletMinor = 0,
  name = 'test tenant',
  mode: 'test' | 'live' = 'test',
) {
  const em = orm.em.fork();
  const { key } = await createTenant(em, { name, mode });
  // The wallet of the key's mode: a live key's tenant id is its live mode's (decisions §16).
  const tenantId = key.mode_tenant_id;
  if (walletMinor > 0) {
    await postMovement(em, tenantId, walletFunding({ tenantId, reference: 'test-initial', amountMinor: walletMinor }));
  }
  return { tenantId, ownerTenantId: key.tenant_id, apiKey: key.api_key, keyPrefix: key.key_prefix };
}

/**
 * A sandbox key of the tenant as the auth hook resolves it, for tests that call a service directly
 * instead of through HTTP. The services read the tenant id and the account types it may open.
 */
export function resolvedTestKey(tenantId: string, allowedAccountTypes: string[]): ResolvedKey {
  return {
    keyId: 'k',
    mode: 'test',
    tenantId,
    tenantName: 't',
    features: [],
    dailyTransferLimitMinor: 0,
    allowedAccountTypes,
    keyName: 'default',
    scopes: ['*'],
    allowedIps: [],
    liveKeysNeedIpAllowList: false,
  };
}
