// The API's and the workers' configuration, parsed once from the environment with zod (the sandbox
// bank, a process of its own, reads its own: src/sandbox-bank/config.ts; the variables both read,
// and the secret rules, are in src/runtime/). Every bad variable is reported in a single error at
// start. Local runs need no variables at all: the embedded PostgreSQL and Temporal dev server
// defaults below are used unless DATABASE_URL / TEMPORAL_ADDRESS are set. In production mode those
// two and every secret are required; nothing secret has a fallback, and no secret may be one the
// repository publishes (PUBLISHED_SECRETS, src/runtime/secrets.ts) or shorter than 32 bytes. The
// secret rules hold too whenever the API listens beyond loopback (HOST), whatever NODE_ENV says, for
// the live connectors' secrets as for the gateway's own (src/connectors/live-rules.ts).
import ipaddr from 'ipaddr.js';
import { resolve } from 'node:path';
import { z } from 'zod';
import { connectorSettings } from './connectors/settings.ts';
import { liveConnectorRules } from './connectors/live-rules.ts';
import {
  SHARED_VARIABLES,
  databaseUrlOf,
  gatewayCallbackUrlOf,
  loadOrExit,
  parseEnvironment,
  port,
  ConfigError,
  sandboxBankDatabaseUrlOf,
  sandboxBankUrlOf,
  setVariables,
} from './runtime/environment.ts';
import {
  DEVELOPMENT_BVN_KEY_TEXT,
  DEVELOPMENT_CALLBACK_SECRET,
  DEVELOPMENT_SANDBOX_BANK_API_KEY,
  DEVELOPMENT_WEBHOOK_KEY_TEXT,
  SECRET_VARIABLES,
  type SecretVariable,
  exposedSecretIssues,
  exposure,
  sandboxControlTokenIssue,
  secretVariable,
} from './runtime/secrets.ts';

/** Every secret the API reads (all of the repository's), in the order their issues are named. */
const API_SECRETS = Object.keys(SECRET_VARIABLES) as SecretVariable[];

const EnvSchema = z
  .object({
    NODE_ENV: SHARED_VARIABLES.NODE_ENV,
    HOST: SHARED_VARIABLES.HOST,
    PORT: SHARED_VARIABLES.PORT,
    LOG_LEVEL: SHARED_VARIABLES.LOG_LEVEL,
    DATA_DIR: z.string().min(1).default('.data'),
    DATABASE_URL: SHARED_VARIABLES.DATABASE_URL,
    DATABASE_POOL_MAX: z.coerce.number().int().min(1).max(200).default(20),
    EMBEDDED_PG_PORT: SHARED_VARIABLES.EMBEDDED_PG_PORT,
    /**
     * As root, where embedded PostgreSQL's binaries and data go when user postgres cannot enter
     * the checkout (a mode-700 directory); see src/stack/postgres-placement.ts.
     */
    EMBEDDED_PG_RUNTIME_DIR: z.string().min(1).default('/var/lib/naira-gateway'),
    TEMPORAL_ADDRESS: z
      .string()
      .regex(/^[^\s:/]+:\d+$/, 'must be host:port')
      .optional(),
    TEMPORAL_NAMESPACE: z.string().min(1).default('default'),
    TEMPORAL_TASK_QUEUE: z.string().min(1).default('gateway'),
    /**
     * Where webhook deliveries run (their workflows and attempts), apart from transfers and cards:
     * served by the webhook worker (`npm run webhook-worker`). Default `<TEMPORAL_TASK_QUEUE>-webhooks`.
     */
    TEMPORAL_WEBHOOK_TASK_QUEUE: z.string().min(1).optional(),
    /**
     * Worker slots of the worker's own lanes (decisions §18), beside TEMPORAL_TASK_QUEUE's: bulk
     * transfers (their workflows, activities and items' runs) on `<TEMPORAL_TASK_QUEUE>-batches`,
     * sandbox single transfers on `<TEMPORAL_TASK_QUEUE>-sandbox`; each lane runs at most this many
     * activities, local activities and workflow tasks at once.
     */
    BATCH_WORKER_SLOTS: z.coerce.number().int().min(2).max(1_000).default(4),
    SANDBOX_WORKER_SLOTS: z.coerce.number().int().min(2).max(1_000).default(40),
    TEMPORAL_DEV_PORT: port.default(7233),
    TEMPORAL_UI_PORT: port.default(8233),
    TEMPORAL_UI_URL: z.url().optional(),
    TEMPORAL_CLI: z.string().min(1).optional(),
    /**
     * What `npm start` does when the API, the worker or the sandbox bank dies: stop the whole stack
     * (default), or start that process again (`restart`; the chaos run kills them on purpose).
     */
    STACK_CHILD_EXIT: z.enum(['stop', 'restart'], { error: 'must be stop or restart' }).default('stop'),
    // Where the sandbox bank is (it runs as its own process, src/sandbox-bank/, with its own config),
    // and its database: the gateway never sends webhooks there.
    SANDBOX_BANK_HOST: SHARED_VARIABLES.SANDBOX_BANK_HOST,
    SANDBOX_BANK_PORT: SHARED_VARIABLES.SANDBOX_BANK_PORT,
    SANDBOX_BANK_URL: SHARED_VARIABLES.SANDBOX_BANK_URL,
    SANDBOX_BANK_DATABASE_URL: SHARED_VARIABLES.SANDBOX_BANK_DATABASE_URL,
    /**
     * The credential of the sandbox bank's /control/* routes (sandbox credits, card purchases,
     * statement edits…): `Authorization: Bearer <token>`. Required when the bank listens beyond
     * loopback or is reached at a non-loopback address, and in production; unset on loopback, the
     * control routes stay open to local callers (development).
     */
    SANDBOX_BANK_CONTROL_TOKEN: secretVariable('SANDBOX_BANK_CONTROL_TOKEN'),
    /**
     * The sandbox bank's API key (the generic contract's bearer key): the bank refuses its contract
     * routes without it, and the gateway sends it. A development default outside production.
     */
    SANDBOX_BANK_API_KEY: secretVariable('SANDBOX_BANK_API_KEY'),
    GATEWAY_CALLBACK_URL: SHARED_VARIABLES.GATEWAY_CALLBACK_URL,
    PROVIDER_CALLBACK_SECRET: secretVariable('PROVIDER_CALLBACK_SECRET'),
    /**
     * The connectors live keys route to, in priority order (decisions §13): `generic`, `paystack`.
     * Each one's own settings are then required (src/connectors/<name>/).
     */
    LIVE_CONNECTORS: z
      .string()
      .default('')
      .transform((list) =>
        list
          .split(',')
          .map((name) => name.trim())
          .filter((name) => name !== ''),
      )
      .superRefine((names, ctx) => {
        const seen = new Set<string>();
        for (const name of names) {
          const problem =
            name === 'sandbox'
              ? 'sandbox serves test keys only and cannot be a live connector'
              : !connectorSettings(name)
                ? `unknown connector '${name.slice(0, 40)}'`
                : seen.has(name)
                  ? `'${name}' is named twice`
                  : undefined;
          if (problem) ctx.addIssue({ code: 'custom', message: problem });
          seen.add(name);
        }
      }),
    PROVIDER_TIMEOUT_MS: z.coerce.number().int().min(50).max(120_000).default(5_000),
    /** How long an account-name resolution (GET /api/v1/banks/resolve) is kept per bank and account. */
    NAME_ENQUIRY_CACHE_MS: z.coerce.number().int().min(0).max(3_600_000).default(60_000),
    WEBHOOK_ENCRYPTION_KEY: secretVariable('WEBHOOK_ENCRYPTION_KEY'),
    /** Server secret for BVNs (32 bytes, base64): their keyed hash and the copy a lookup reads. */
    BVN_SECRET_KEY: secretVariable('BVN_SECRET_KEY'),
    WEBHOOK_RETRY_SCHEDULE: z
      .string()
      .regex(/^\s*\d+(ms|s|m|h)(\s*,\s*\d+(ms|s|m|h))*\s*$/, 'must be a comma-separated list like 0s,5s,5m,30m')
      .default('0s,5s,5m,30m,2h,5h,10h,14h,20h,24h'),
    WEBHOOK_TIMEOUT_MS: z.coerce.number().int().min(100).max(60_000).default(15_000),
    /** At most this many attempts of one tenant's deliveries in flight at once, over every webhook worker. */
    WEBHOOK_TENANT_CONCURRENCY: z.coerce.number().int().min(1).max(1_000).default(10),
    /**
     * An endpoint every attempt to which has failed for this long (since the first failure after
     * its last success) is disabled (decisions §21). Hours; a fraction is allowed (tests shorten it).
     */
    WEBHOOK_DISABLE_AFTER_HOURS: z.coerce
      .number({ error: 'must be a number of hours' })
      .positive('must be more than 0 hours')
      .max(8_760, 'must be at most 8760 hours (a year)')
      .default(120),
    /** Attempts one webhook worker makes at once (its activity slots), whoever's they are. */
    WEBHOOK_WORKER_SLOTS: z.coerce.number().int().min(1).max(1_000).default(50),
    /** Event streams (GET /api/v1/events/stream) one API key may hold open across every API replica; 429 beyond. */
    STREAM_MAX_PER_KEY: z.coerce.number().int().min(1).max(1_000).default(5),
    /** Bytes an event stream may leave unsent (a client that stopped reading) before it is disconnected. */
    STREAM_BUFFER_BYTES: z.coerce.number().int().min(4_096).max(67_108_864).default(262_144),
    /** Sandbox keys may send webhooks to loopback; default on, off when NODE_ENV=production. */
    WEBHOOK_ALLOW_LOOPBACK: z.stringbool({ error: 'must be true or false' }).optional(),
    /**
     * An egress proxy (e.g. smokescreen) that every webhook delivery goes through: CONNECT for
     * https receivers, absolute-form requests for http ones. Unset: deliveries connect directly.
     */
    WEBHOOK_PROXY_URL: z.url({ protocol: /^https?$/, error: 'must be an http:// or https:// URL' }).optional(),
    TEMPORAL_DEV_HTTP_PORT: port.default(7243),
    /** How long a request waits for Temporal or PostgreSQL before answering 503. */
    DEPENDENCY_TIMEOUT_MS: z.coerce.number().int().min(100).max(120_000).default(10_000),
    BODY_LIMIT_BYTES: z.coerce.number().int().min(1024).default(1_048_576),
    /** A client must send its request line and headers within this (slowloris), else 408. */
    HEADERS_TIMEOUT_MS: z.coerce.number().int().min(100).max(120_000).default(10_000),
    /** …and its whole request, body included, within this, else 408. Not the time to answer it. */
    REQUEST_TIMEOUT_MS: z.coerce.number().int().min(100).max(600_000).default(30_000),
    RATE_LIMIT_PER_MINUTE: z.coerce.number().int().min(1).default(600),
    /**
     * Bulk-transfer items a tenant may have accepted per mode a minute, held as a sixth of it in any
     * 10 seconds (batches' items, counted as they are accepted): with the 5 open batches it bounds
     * how much of the workers one tenant's batches can take (decisions §18). At least one full batch
     * every 10 seconds.
     */
    BULK_ITEMS_PER_MINUTE: z.coerce.number().int().min(6_000).max(60_000_000).default(30_000),
    /** Per client address, for requests without a valid API key (decisions §12). */
    RATE_LIMIT_UNAUTHENTICATED_PER_MINUTE: z.coerce.number().int().min(1).default(120),
    /**
     * Proxies whose X-Forwarded-For is believed (comma-separated addresses or CIDRs, e.g. a load
     * balancer's network). None by default: the client address is the peer's.
     */
    TRUST_PROXY: z
      .string()
      .optional()
      .transform((value) =>
        (value ?? '')
          .split(',')
          .map((entry) => entry.trim())
          .filter(Boolean),
      )
      .refine((entries) => entries.every(isAddressOrRange), {
        error: 'must be comma-separated IP addresses or CIDR ranges (e.g. 10.0.0.0/8,127.0.0.1)',
      }),
    /**
     * The console's address as its people reach it (decisions §22): invitation links point here.
     * Default `http://127.0.0.1:<PORT>`; behind a proxy, its public https address.
     */
    CONSOLE_URL: z
      .url({ protocol: /^https?$/, error: 'must be an http(s) URL, e.g. https://console.example.com' })
      .optional(),
    /** Where the API serves GET /metrics (Prometheus), apart from the tenant routes; port 0 turns it off. */
    METRICS_HOST: z.string().min(1).default('127.0.0.1'),
    METRICS_PORT: z.coerce.number().int().min(0).max(65_535).default(9464),
    /** Where the worker serves the Temporal SDK's own Prometheus metrics; port 0 turns it off. */
    WORKER_METRICS_PORT: z.coerce.number().int().min(0).max(65_535).default(9465),
    /** …and the webhook worker; port 0 turns it off. */
    WEBHOOK_WORKER_METRICS_PORT: z.coerce.number().int().min(0).max(65_535).default(9466),
    /** How long an API key that resolved is remembered (0: looked up on every request). */
    API_KEY_CACHE_MS: z.coerce.number().int().min(0).max(1_000).default(1_000),
    /** When the daily reconciliation Schedule runs (HH:MM, UTC), reconciling the day before; `off` removes it. */
    RECONCILIATION_TIME: z
      .string()
      .regex(/^(?:(?:[01]\d|2[0-3]):[0-5]\d|off)$/, 'must be a UTC time such as 02:00, or off')
      .default('02:00'),
    /**
     * Where traces go (OTLP over HTTP, `…/v1/traces` below this URL). Unset: tracing is off, no
     * SDK is started and nothing is traced (src/telemetry/tracing.ts).
     */
    OTEL_EXPORTER_OTLP_ENDPOINT: z
      .url({ protocol: /^https?$/, error: 'must be an http:// or https:// URL' })
      .optional(),
    /** The traces' service.name; by default naira-gateway-api or naira-gateway-worker. */
    OTEL_SERVICE_NAME: z.string().min(1).optional(),
  })
  .superRefine((env, ctx) => {
    if (env.HEADERS_TIMEOUT_MS > env.REQUEST_TIMEOUT_MS) {
      ctx.addIssue({ code: 'custom', path: ['HEADERS_TIMEOUT_MS'], message: 'must not exceed REQUEST_TIMEOUT_MS' });
    }
    const production = env.NODE_ENV === 'production';
    const controlToken = sandboxControlTokenIssue(env);
    if (controlToken) ctx.addIssue({ code: 'custom', path: [controlToken.variable], message: controlToken.message });

    if (env.TEMPORAL_WEBHOOK_TASK_QUEUE === env.TEMPORAL_TASK_QUEUE) {
      // One queue would put every tenant's webhook attempts back in front of the transfers (issue #27).
      ctx.addIssue({
        code: 'custom',
        path: ['TEMPORAL_WEBHOOK_TASK_QUEUE'],
        message: 'must differ from TEMPORAL_TASK_QUEUE: webhook deliveries run apart from transfers and cards',
      });
    } else if (
      env.TEMPORAL_WEBHOOK_TASK_QUEUE !== undefined &&
      Object.values(laneTaskQueues(env.TEMPORAL_TASK_QUEUE)).includes(env.TEMPORAL_WEBHOOK_TASK_QUEUE)
    ) {
      ctx.addIssue({
        code: 'custom',
        path: ['TEMPORAL_WEBHOOK_TASK_QUEUE'],
        message:
          'must differ from the batches and sandbox lanes beside TEMPORAL_TASK_QUEUE (<queue>-batches, <queue>-sandbox)',
      });
    }
    // The API reachable beyond loopback takes provider callbacks from the network: whatever NODE_ENV
    // says, it must not run on secrets anyone who reads the repository knows.
    const exposed = exposure(env);
    if (!exposed) return;
    // Production never falls back to the embedded, single-machine defaults.
    if (production) {
      for (const key of ['DATABASE_URL', 'TEMPORAL_ADDRESS'] as const) {
        if (!env[key]) {
          ctx.addIssue({ code: 'custom', path: [key], message: 'is required when NODE_ENV=production' });
        }
      }
    }
    // …nor runs on a secret that anyone who reads the repository knows, or one short enough to guess.
    for (const issue of exposedSecretIssues(env, API_SECRETS, exposed)) {
      ctx.addIssue({ code: 'custom', path: [issue.variable], message: issue.message });
    }
  });

export type Env = z.infer<typeof EnvSchema>;

export interface Config extends Env {
  /** DATABASE_URL, or the URL of the embedded PostgreSQL that `npm start` runs. */
  databaseUrl: string;
  /** TEMPORAL_ADDRESS, or the embedded dev server's address. */
  temporalAddress: string;
  /** Where the Temporal Web UI is, when known. */
  temporalUiUrl: string | undefined;
  dataDir: string;
  embeddedDatabase: boolean;
  embeddedTemporal: boolean;
  /** Where the gateway reaches the sandbox bank. */
  sandboxBankUrl: string;
  sandboxBankDatabaseUrl: string;
  /** Base URL the sandbox bank calls the gateway back on. */
  gatewayCallbackUrl: string;
  /** Shared secret of provider callback signatures (a fixed value only outside production). */
  providerCallbackSecret: string;
  /** The sandbox bank's API key (a fixed value only outside production). */
  sandboxBankApiKey: string;
  /** AES-256 key that encrypts webhook signing secrets at rest (a fixed value only outside production). */
  webhookEncryptionKey: Buffer;
  /** The secret BVNs are hashed and sealed under (a fixed value only outside production). */
  bvnSecretKey: Buffer;
  /** Delay before each webhook attempt, in ms (the first is normally 0). */
  webhookRetryScheduleMs: number[];
  /** TEMPORAL_WEBHOOK_TASK_QUEUE, or `<TEMPORAL_TASK_QUEUE>-webhooks`. */
  webhookTaskQueue: string;
  webhookAllowLoopback: boolean;
  /** LIVE_CONNECTORS in priority order, each with its settings as its own schema read them. */
  liveConnectors: { name: string; settings: unknown }[];
  /** What the configuration allows but an operator should know, one line each (the API logs them at start). */
  warnings: string[];
}

/** Used only when NODE_ENV is not production, where WEBHOOK_ENCRYPTION_KEY is required. */
const DEVELOPMENT_WEBHOOK_KEY = Buffer.from(DEVELOPMENT_WEBHOOK_KEY_TEXT, 'utf8');
/** Used only when NODE_ENV is not production, where BVN_SECRET_KEY is required. */
const DEVELOPMENT_BVN_KEY = Buffer.from(DEVELOPMENT_BVN_KEY_TEXT, 'utf8');

/** The webhook deliveries' task queue beside a gateway task queue, unless TEMPORAL_WEBHOOK_TASK_QUEUE names another. */
export function defaultWebhookTaskQueue(taskQueue: string): string {
  return `${taskQueue}-webhooks`;
}

/**
 * The worker's lanes beside a gateway task queue (decisions §18), each served by a Worker of its
 * own with its own slots (BATCH_WORKER_SLOTS, SANDBOX_WORKER_SLOTS), so that neither can take the
 * slots live single transfers run on: bulk transfers (the batch workflow, its activities, its
 * items' transfer runs, which start on their parent's queue) and sandbox single transfers.
 */
export function laneTaskQueues(taskQueue: string): { batches: string; sandbox: string } {
  return { batches: `${taskQueue}-batches`, sandbox: `${taskQueue}-sandbox` };
}

export function parseDurationsMs(list: string): number[] {
  const units = { ms: 1, s: 1_000, m: 60_000, h: 3_600_000 } as const;
  return list.split(',').map((part) => {
    const match = /^(\d+)(ms|s|m|h)$/.exec(part.trim());
    if (!match) throw new ConfigError([`WEBHOOK_RETRY_SCHEDULE: bad duration '${part}'`]);
    return Number(match[1]) * units[match[2] as keyof typeof units];
  });
}

function isAddressOrRange(entry: string): boolean {
  try {
    if (entry.includes('/')) ipaddr.parseCIDR(entry);
    else ipaddr.parse(entry);
    return true;
  } catch {
    return false;
  }
}

/** Parses an environment (process.env by default); throws ConfigError naming every bad variable. */
export function loadConfig(source: NodeJS.ProcessEnv = process.env): Config {
  const env = parseEnvironment(EnvSchema, source);
  const liveConnectors: Config['liveConnectors'] = [];
  const connectorIssues: string[] = [];
  const warnings: string[] = [];
  const deployment = { production: env.NODE_ENV === 'production', exposed: exposure(env) };
  for (const name of env.LIVE_CONNECTORS) {
    const kind = connectorSettings(name)!;
    const variables = setVariables(source);
    const read = kind.parse(variables);
    // Production's rules only once the settings themselves are readable: one line per variable.
    const rules = read.ok ? liveConnectorRules(kind, variables, deployment) : { issues: read.issues, warnings: [] };
    if (read.ok && rules.issues.length === 0) liveConnectors.push({ name, settings: read.settings });
    connectorIssues.push(...rules.issues.map((issue) => `${issue} (LIVE_CONNECTORS names ${name})`));
    warnings.push(...rules.warnings);
  }
  if (connectorIssues.length > 0) throw new ConfigError(connectorIssues);
  const embeddedTemporal = env.TEMPORAL_ADDRESS === undefined;
  return {
    ...env,
    dataDir: resolve(env.DATA_DIR),
    databaseUrl: databaseUrlOf(env),
    temporalAddress: env.TEMPORAL_ADDRESS ?? `127.0.0.1:${env.TEMPORAL_DEV_PORT}`,
    temporalUiUrl: env.TEMPORAL_UI_URL ?? (embeddedTemporal ? `http://127.0.0.1:${env.TEMPORAL_UI_PORT}` : undefined),
    embeddedDatabase: env.DATABASE_URL === undefined,
    embeddedTemporal,
    sandboxBankUrl: sandboxBankUrlOf(env),
    sandboxBankDatabaseUrl: sandboxBankDatabaseUrlOf(env),
    gatewayCallbackUrl: gatewayCallbackUrlOf(env),
    providerCallbackSecret: env.PROVIDER_CALLBACK_SECRET ?? DEVELOPMENT_CALLBACK_SECRET,
    sandboxBankApiKey: env.SANDBOX_BANK_API_KEY ?? DEVELOPMENT_SANDBOX_BANK_API_KEY,
    webhookEncryptionKey: env.WEBHOOK_ENCRYPTION_KEY
      ? Buffer.from(env.WEBHOOK_ENCRYPTION_KEY, 'base64')
      : DEVELOPMENT_WEBHOOK_KEY,
    bvnSecretKey: env.BVN_SECRET_KEY ? Buffer.from(env.BVN_SECRET_KEY, 'base64') : DEVELOPMENT_BVN_KEY,
    webhookRetryScheduleMs: parseDurationsMs(env.WEBHOOK_RETRY_SCHEDULE),
    webhookTaskQueue: env.TEMPORAL_WEBHOOK_TASK_QUEUE ?? defaultWebhookTaskQueue(env.TEMPORAL_TASK_QUEUE),
    webhookAllowLoopback: env.WEBHOOK_ALLOW_LOOPBACK ?? env.NODE_ENV !== 'production',
    liveConnectors,
    warnings,
  };
}

/**
 * loadConfig for a process entry point: a bad configuration stops it with exit code 2 and the
 * error's lines on stderr (`invalid configuration:` then one line per variable, each naming it and
 * never its value), not a stack trace.
 */
export function loadConfigOrExit(source: NodeJS.ProcessEnv = process.env): Config {
  return loadOrExit(() => loadConfig(source))[0];
}
