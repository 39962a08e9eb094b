import { spawnSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { existsSync, readFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { laneTaskQueues, loadConfig } from '../../src/config.ts';
import { CONNECTORS } from '../../src/connectors/index.ts';
import { ConfigError } from '../../src/runtime/environment.ts';
import {
  DEVELOPMENT_SANDBOX_BANK_API_KEY,
  PUBLISHED_SECRETS,
  SECRET_VARIABLES,
  type SecretVariable,
} from '../../src/runtime/secrets.ts';
import { PROJECT_ROOT } from '../../src/stack/tools.ts';
import {
  TEST_BVN_SECRET,
  TEST_CALLBACK_SECRET,
  TEST_SANDBOX_BANK_API_KEY,
  TEST_SANDBOX_CONTROL_TOKEN,
  TEST_WEBHOOK_KEY,
} from '../support/app.ts';
import { configIssues } from '../support/config-issues.ts';

/** Secrets of this run's own, as a deployment would make them (openssl rand). */
const OWN: Record<SecretVariable, string> = {
  PROVIDER_CALLBACK_SECRET: randomBytes(32).toString('hex'),
  WEBHOOK_ENCRYPTION_KEY: randomBytes(32).toString('base64'),
  BVN_SECRET_KEY: randomBytes(32).toString('base64'),
  SANDBOX_BANK_CONTROL_TOKEN: randomBytes(32).toString('hex'),
  SANDBOX_BANK_API_KEY: randomBytes(32).toString('hex'),
};
const SECRETS = Object.keys(SECRET_VARIABLES) as SecretVariable[];
/** Every live connector's secret variables. */
const CONNECTOR_SECRETS = CONNECTORS.flatMap((connector) => Object.keys(connector.secrets));

/** Each live connector's settings, with credentials of this run's own, as LIVE_CONNECTORS would name it alone. */
const LIVE: Record<string, Record<string, string>> = {
  generic: {
    LIVE_CONNECTORS: 'generic',
    GENERIC_BANK_URL: 'https://bank.example/v1',
    GENERIC_BANK_API_KEY: randomBytes(32).toString('hex'),
    GENERIC_BANK_WEBHOOK_SECRET: `whsec_${randomBytes(32).toString('base64')}`,
  },
  paystack: { LIVE_CONNECTORS: 'paystack', PAYSTACK_SECRET_KEY: `sk_live_${randomBytes(20).toString('hex')}` },
};

/** A complete production environment with the run's own secrets, and the overrides given. */
function productionEnv(overrides: Record<string, string> = {}): NodeJS.ProcessEnv {
  return {
    NODE_ENV: 'production',
    DATABASE_URL: 'postgres://db/gw',
    TEMPORAL_ADDRESS: 't:7233',
    ...OWN,
    ...overrides,
  };
}

/** The ConfigError's lines, or [] when the environment is accepted. */
const issuesOf = (env: NodeJS.ProcessEnv) => configIssues(loadConfig, env);

describe('loadConfig', () => {
  it('runs on embedded defaults with no variables at all', () => {
    const config = loadConfig({});
    expect(config).toMatchObject({
      NODE_ENV: 'development',
      PORT: 3000,
      embeddedDatabase: true,
      embeddedTemporal: true,
      databaseUrl: 'postgres://postgres:postgres@127.0.0.1:54329/gateway',
      temporalAddress: '127.0.0.1:7233',
      temporalUiUrl: 'http://127.0.0.1:8233',
      BODY_LIMIT_BYTES: 1_048_576,
    });
  });

  it('uses DATABASE_URL and TEMPORAL_ADDRESS when set', () => {
    const config = loadConfig({
      DATABASE_URL: 'postgres://u:p@db:5432/gw',
      TEMPORAL_ADDRESS: 'temporal:7233',
      PORT: '8080',
    });
    expect(config).toMatchObject({
      databaseUrl: 'postgres://u:p@db:5432/gw',
      temporalAddress: 'temporal:7233',
      embeddedDatabase: false,
      embeddedTemporal: false,
      temporalUiUrl: undefined,
      PORT: 8080,
    });
  });

  it('reads TRUST_PROXY as addresses and ranges, none by default, and names it when an entry is neither', () => {
    expect(loadConfig({}).TRUST_PROXY).toEqual([]);
    expect(loadConfig({ TRUST_PROXY: ' 10.0.0.0/8, 127.0.0.1 ,::1' }).TRUST_PROXY).toEqual([
      '10.0.0.0/8',
      '127.0.0.1',
      '::1',
    ]);
    expect(() => loadConfig({ TRUST_PROXY: '10.0.0.0/8,balancer' })).toThrow(/TRUST_PROXY/);
  });

  it('reads the slow-client limits, 10 s for headers and 30 s for the request, and refuses headers longer than the request', () => {
    expect(loadConfig({})).toMatchObject({ HEADERS_TIMEOUT_MS: 10_000, REQUEST_TIMEOUT_MS: 30_000 });
    expect(loadConfig({ HEADERS_TIMEOUT_MS: '2000', REQUEST_TIMEOUT_MS: '2000' })).toMatchObject({
      HEADERS_TIMEOUT_MS: 2_000,
      REQUEST_TIMEOUT_MS: 2_000,
    });
    expect(() => loadConfig({ HEADERS_TIMEOUT_MS: '40000' })).toThrow(
      /HEADERS_TIMEOUT_MS.*must not exceed REQUEST_TIMEOUT_MS/s,
    );
    expect(() => loadConfig({ REQUEST_TIMEOUT_MS: '0' })).toThrow(/REQUEST_TIMEOUT_MS/);
  });

  it('reads STACK_CHILD_EXIT as stop (default) or restart, and names it otherwise', () => {
    expect(loadConfig({}).STACK_CHILD_EXIT).toBe('stop');
    expect(loadConfig({ STACK_CHILD_EXIT: 'restart' }).STACK_CHILD_EXIT).toBe('restart');
    expect(() => loadConfig({ STACK_CHILD_EXIT: 'ignore' })).toThrow('STACK_CHILD_EXIT: must be stop or restart');
  });

  it('reads RECONCILIATION_TIME as a UTC time or off, 02:00 by default, and names it otherwise', () => {
    expect(loadConfig({}).RECONCILIATION_TIME).toBe('02:00');
    expect(loadConfig({ RECONCILIATION_TIME: '23:59' }).RECONCILIATION_TIME).toBe('23:59');
    expect(loadConfig({ RECONCILIATION_TIME: 'off' }).RECONCILIATION_TIME).toBe('off');
    for (const bad of ['24:00', '2:00', '02:60', '02:00Z', 'daily']) {
      expect(() => loadConfig({ RECONCILIATION_TIME: bad })).toThrow(
        'RECONCILIATION_TIME: must be a UTC time such as 02:00, or off',
      );
    }
  });

  it('turns tracing on only with an http(s) OTEL_EXPORTER_OTLP_ENDPOINT, and names it otherwise', () => {
    const defaults = loadConfig({});
    expect([defaults.OTEL_EXPORTER_OTLP_ENDPOINT, defaults.OTEL_SERVICE_NAME]).toEqual([undefined, undefined]);
    expect(loadConfig({ OTEL_EXPORTER_OTLP_ENDPOINT: '' }).OTEL_EXPORTER_OTLP_ENDPOINT).toBeUndefined();
    expect(
      loadConfig({ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://collector:4318', OTEL_SERVICE_NAME: 'gw-eu' }),
    ).toMatchObject({ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://collector:4318', OTEL_SERVICE_NAME: 'gw-eu' });
    expect(() => loadConfig({ OTEL_EXPORTER_OTLP_ENDPOINT: 'grpc://collector:4317' })).toThrow(
      /OTEL_EXPORTER_OTLP_ENDPOINT: must be an http:\/\/ or https:\/\/ URL/,
    );
  });

  it('names every bad variable in one error', () => {
    let error: unknown;
    try {
      loadConfig({ PORT: 'eighty', DATABASE_URL: 'mysql://x', TEMPORAL_ADDRESS: 'no-port', LOG_LEVEL: 'loud' });
    } catch (caught) {
      error = caught;
    }
    expect(error).toBeInstanceOf(ConfigError);
    const names = (error as ConfigError).issues.map((issue) => issue.split(':')[0]).sort();
    expect(names).toEqual(['DATABASE_URL', 'LOG_LEVEL', 'PORT', 'TEMPORAL_ADDRESS']);
  });

  it('refuses the embedded fallbacks and the development secret in production', () => {
    expect(() => loadConfig({ NODE_ENV: 'production' })).toThrow(
      /DATABASE_URL: is required when NODE_ENV=production[\s\S]*TEMPORAL_ADDRESS: is required[\s\S]*PROVIDER_CALLBACK_SECRET: is required[\s\S]*WEBHOOK_ENCRYPTION_KEY: is required[\s\S]*BVN_SECRET_KEY: is required/,
    );
    const production = loadConfig(productionEnv());
    expect(production.providerCallbackSecret).toBe(OWN.PROVIDER_CALLBACK_SECRET);
    expect(production.webhookEncryptionKey).toEqual(Buffer.from(OWN.WEBHOOK_ENCRYPTION_KEY, 'base64'));
    expect(production.bvnSecretKey).toEqual(Buffer.from(OWN.BVN_SECRET_KEY, 'base64'));
    expect(production.SANDBOX_BANK_CONTROL_TOKEN).toBe(OWN.SANDBOX_BANK_CONTROL_TOKEN);
    expect(production.sandboxBankApiKey).toBe(OWN.SANDBOX_BANK_API_KEY);
    expect(() => loadConfig({ BVN_SECRET_KEY: Buffer.alloc(31).toString('base64') })).toThrow(
      /BVN_SECRET_KEY: must be 32 bytes/,
    );
    expect(() => loadConfig({ WEBHOOK_ENCRYPTION_KEY: Buffer.alloc(16).toString('base64') })).toThrow(
      /WEBHOOK_ENCRYPTION_KEY: must be 32 bytes/,
    );
  });

  it('puts webhook deliveries on their own task queue, beside the gateway’s unless named, and never on it', () => {
    expect(loadConfig({})).toMatchObject({
      webhookTaskQueue: 'gateway-webhooks',
      WEBHOOK_TENANT_CONCURRENCY: 10,
      WEBHOOK_WORKER_SLOTS: 50,
      WEBHOOK_WORKER_METRICS_PORT: 9466,
    });
    expect(loadConfig({ TEMPORAL_TASK_QUEUE: 'pay' }).webhookTaskQueue).toBe('pay-webhooks');
    expect(loadConfig({ TEMPORAL_WEBHOOK_TASK_QUEUE: 'hooks' }).webhookTaskQueue).toBe('hooks');
    expect(() => loadConfig({ TEMPORAL_TASK_QUEUE: 'pay', TEMPORAL_WEBHOOK_TASK_QUEUE: 'pay' })).toThrow(
      /TEMPORAL_WEBHOOK_TASK_QUEUE: must differ from TEMPORAL_TASK_QUEUE/,
    );
    expect(() => loadConfig({ WEBHOOK_TENANT_CONCURRENCY: '0' })).toThrow(/WEBHOOK_TENANT_CONCURRENCY/);
  });

  it('gives bulk transfers and sandbox transfers lanes of their own beside the gateway’s queue, never the webhooks’', () => {
    expect(loadConfig({})).toMatchObject({ BATCH_WORKER_SLOTS: 4, SANDBOX_WORKER_SLOTS: 40 });
    expect(laneTaskQueues('gateway')).toEqual({ batches: 'gateway-batches', sandbox: 'gateway-sandbox' });
    expect(laneTaskQueues('pay')).toEqual({ batches: 'pay-batches', sandbox: 'pay-sandbox' });
    for (const lane of ['pay-batches', 'pay-sandbox']) {
      expect(() => loadConfig({ TEMPORAL_TASK_QUEUE: 'pay', TEMPORAL_WEBHOOK_TASK_QUEUE: lane })).toThrow(
        /TEMPORAL_WEBHOOK_TASK_QUEUE: must differ from the batches and sandbox lanes/,
      );
    }
    expect(() => loadConfig({ BATCH_WORKER_SLOTS: '1' })).toThrow(/BATCH_WORKER_SLOTS/);
    expect(() => loadConfig({ SANDBOX_WORKER_SLOTS: 'many' })).toThrow(/SANDBOX_WORKER_SLOTS/);
  });

  it('reads the webhook retry schedule', () => {
    expect(loadConfig({}).webhookRetryScheduleMs).toEqual([
      0, 5_000, 300_000, 1_800_000, 7_200_000, 18_000_000, 36_000_000, 50_400_000, 72_000_000, 86_400_000,
    ]);
    expect(loadConfig({ WEBHOOK_RETRY_SCHEDULE: '0s, 250ms,1m' }).webhookRetryScheduleMs).toEqual([0, 250, 60_000]);
    expect(() => loadConfig({ WEBHOOK_RETRY_SCHEDULE: '5 minutes' })).toThrow(/WEBHOOK_RETRY_SCHEDULE/);
  });

  it('treats empty variables as unset', () => {
    expect(loadConfig({ DATABASE_URL: '', PORT: '' })).toMatchObject({ embeddedDatabase: true, PORT: 3000 });
  });

  it('takes SANDBOX_BANK_API_KEY, with the development default outside production only, never with spaces', () => {
    expect(loadConfig({}).sandboxBankApiKey).toBe(DEVELOPMENT_SANDBOX_BANK_API_KEY);
    expect(loadConfig({ SANDBOX_BANK_API_KEY: OWN.SANDBOX_BANK_API_KEY }).sandboxBankApiKey).toBe(
      OWN.SANDBOX_BANK_API_KEY,
    );
    const { SANDBOX_BANK_API_KEY: _omitted, ...withoutKey } = productionEnv();
    expect(issuesOf(withoutKey)).toEqual(['SANDBOX_BANK_API_KEY: is required when NODE_ENV=production']);
    for (const bad of ['short', 'with a space in it, long enough']) {
      expect(issuesOf({ SANDBOX_BANK_API_KEY: bad })).toEqual([
        'SANDBOX_BANK_API_KEY: must be at least 16 printable characters, without spaces',
      ]);
    }
  });

  it('requires SANDBOX_BANK_CONTROL_TOKEN beyond loopback and in production, at least 32 bytes, and not otherwise', () => {
    expect(loadConfig({}).SANDBOX_BANK_CONTROL_TOKEN).toBeUndefined();
    for (const host of ['127.0.0.1', '127.0.0.2', 'localhost', '::1', '::ffff:127.0.0.1']) {
      expect(issuesOf({ SANDBOX_BANK_HOST: host })).toEqual([]);
    }
    for (const host of ['0.0.0.0', '::', '10.0.0.5', 'sandbox-bank']) {
      expect(issuesOf({ SANDBOX_BANK_HOST: host })).toEqual([
        expect.stringMatching(new RegExp(`^SANDBOX_BANK_CONTROL_TOKEN: is required when the sandbox bank listens on`)),
      ]);
    }
    expect(issuesOf({ SANDBOX_BANK_URL: 'http://sandbox-bank:4010' })).toEqual([
      expect.stringMatching(/^SANDBOX_BANK_CONTROL_TOKEN: is required when SANDBOX_BANK_URL is not a loopback address/),
    ]);
    expect(issuesOf({ SANDBOX_BANK_URL: 'http://127.0.0.1:4010' })).toEqual([]);
    const { SANDBOX_BANK_CONTROL_TOKEN: _omitted, ...withoutToken } = productionEnv();
    expect(issuesOf(withoutToken)).toEqual([
      expect.stringMatching(/^SANDBOX_BANK_CONTROL_TOKEN: is required when NODE_ENV=production/),
    ]);
    expect(issuesOf({ SANDBOX_BANK_HOST: '0.0.0.0', SANDBOX_BANK_CONTROL_TOKEN: 'x'.repeat(31) })).toEqual([
      'SANDBOX_BANK_CONTROL_TOKEN: must be at least 32 bytes',
    ]);
    expect(
      loadConfig({ SANDBOX_BANK_HOST: '0.0.0.0', SANDBOX_BANK_CONTROL_TOKEN: OWN.SANDBOX_BANK_CONTROL_TOKEN })
        .SANDBOX_BANK_CONTROL_TOKEN,
    ).toBe(OWN.SANDBOX_BANK_CONTROL_TOKEN);
  });
});

describe('production refuses published and short secrets', () => {
  it('accepts secrets of its own', () => {
    expect(issuesOf(productionEnv())).toEqual([]);
  });

  it.each(SECRETS)(
    'refuses %s set to any value the repository publishes, in one line naming it and not the value',
    (name) => {
      const published = [...PUBLISHED_SECRETS];
      // The test suite's own secrets are published too (test/support/app.ts).
      published.push(TEST_CALLBACK_SECRET, TEST_WEBHOOK_KEY.toString('base64'), TEST_BVN_SECRET.toString('base64'));
      published.push(TEST_SANDBOX_CONTROL_TOKEN, TEST_SANDBOX_BANK_API_KEY);
      for (const value of published) {
        const issues = issuesOf(productionEnv({ [name]: value }));
        expect(issues, `${name}=${value}`).toHaveLength(1);
        expect(issues[0]).toMatch(new RegExp(`^${name}: `));
        expect(issues[0]).not.toContain(value);
        expect(issues[0]).not.toContain('\n');
      }
    },
  );

  it('refuses a published key in another base64 spelling, and the text whose bytes it is', () => {
    const compose = 'Y2hhbmdlLW1lLWNoYW5nZS1tZS1jaGFuZ2UtbWUtMzI=';
    for (const spelling of [compose, compose.replace(/=+$/, ''), `${compose}\n`]) {
      expect(issuesOf(productionEnv({ WEBHOOK_ENCRYPTION_KEY: spelling }))).toEqual([
        expect.stringMatching(/^WEBHOOK_ENCRYPTION_KEY: is a value published in the repository/),
      ]);
    }
    // The development key's text, base64-encoded: the very key the development default uses.
    const development = Buffer.from('development-only-webhook-key-32b').toString('base64');
    expect(issuesOf(productionEnv({ BVN_SECRET_KEY: development }))).toEqual([
      expect.stringMatching(/^BVN_SECRET_KEY: is a value published/),
    ]);
  });

  it('refuses a secret shorter than 32 bytes, and names each bad variable once', () => {
    expect(issuesOf(productionEnv({ PROVIDER_CALLBACK_SECRET: 'a'.repeat(31) }))).toEqual([
      'PROVIDER_CALLBACK_SECRET: must be at least 32 bytes when NODE_ENV=production (e.g. openssl rand -hex 32)',
    ]);
    expect(issuesOf(productionEnv({ PROVIDER_CALLBACK_SECRET: 'a'.repeat(32) }))).toEqual([]);
    // Outside production the development rules stand (16 characters).
    expect(issuesOf({ PROVIDER_CALLBACK_SECRET: 'a'.repeat(16) })).toEqual([]);
    const issues = issuesOf(
      productionEnv({
        PROVIDER_CALLBACK_SECRET: 'change-me-sandbox-callback-secret',
        WEBHOOK_ENCRYPTION_KEY: Buffer.alloc(16, 1).toString('base64'),
        BVN_SECRET_KEY: 'Y2hhbmdlLW1lLWNoYW5nZS1tZS1idm4tc2VjcmV0MzI=',
        SANDBOX_BANK_CONTROL_TOKEN: 'short',
        SANDBOX_BANK_API_KEY: 'x'.repeat(20),
      }),
    );
    expect(issues.map((issue) => issue.split(':')[0]).sort()).toEqual([...SECRETS].sort());
  });

  it('holds the API to the same secret rules whenever it listens beyond loopback, whatever NODE_ENV', () => {
    // On loopback (npm start's default) the development defaults stand.
    for (const host of ['127.0.0.1', 'localhost', '::1']) expect(issuesOf({ HOST: host })).toEqual([]);
    for (const host of ['0.0.0.0', '::', '10.0.0.5', 'api.internal']) {
      expect(issuesOf({ HOST: host })).toEqual([
        `PROVIDER_CALLBACK_SECRET: is required when HOST is ${host}`,
        `WEBHOOK_ENCRYPTION_KEY: is required when HOST is ${host}`,
        `BVN_SECRET_KEY: is required when HOST is ${host}`,
        `SANDBOX_BANK_API_KEY: is required when HOST is ${host}`,
      ]);
    }
    expect(
      issuesOf({
        HOST: '0.0.0.0',
        PROVIDER_CALLBACK_SECRET: 'change-me-sandbox-callback-secret',
        WEBHOOK_ENCRYPTION_KEY: OWN.WEBHOOK_ENCRYPTION_KEY,
        BVN_SECRET_KEY: OWN.BVN_SECRET_KEY,
        SANDBOX_BANK_API_KEY: OWN.SANDBOX_BANK_API_KEY,
      }),
    ).toEqual([expect.stringMatching(/^PROVIDER_CALLBACK_SECRET: is a value published in the repository/)]);
    const { NODE_ENV: _production, DATABASE_URL: _db, TEMPORAL_ADDRESS: _temporal, ...secrets } = productionEnv();
    expect(issuesOf({ HOST: '0.0.0.0', ...secrets })).toEqual([]);
  });

  /**
   * Every value the repository's own deployment files and docs give one of the secret variables:
   * compose defaults (`${VAR:-value}`), assignments (`VAR=value`, `VAR: value`, `"VAR": "value"`).
   * References (`$VAR`, `${VAR:?…}`, `$(openssl …)`) are not values.
   */
  function exampleValues(text: string): { name: string; value: string }[] {
    const names = [...SECRETS, ...CONNECTOR_SECRETS].join('|');
    const found: { name: string; value: string }[] = [];
    for (const match of text.matchAll(new RegExp(`\\$\\{(${names}):?-([^}]*)\\}`, 'g'))) {
      found.push({ name: match[1]!, value: match[2]! });
    }
    const assignment = new RegExp(`\\b(${names})["'\`]?[ \\t]*(?:=|:(?![?-]))[ \\t]*(["'\`]?)([^\\s"'\`]+)`, 'g');
    for (const match of text.matchAll(assignment)) {
      const value = match[3]!;
      if (value.startsWith('$')) continue;
      found.push({ name: match[1]!, value });
    }
    return found;
  }

  it('finds example values in the forms compose files, shells and docs give them', () => {
    const sample = [
      'PROVIDER_CALLBACK_SECRET: ${PROVIDER_CALLBACK_SECRET:-compose-default}',
      'export WEBHOOK_ENCRYPTION_KEY="c2hlbGwtZXhhbXBsZQ=="',
      '    - BVN_SECRET_KEY=list-form',
      '{"SANDBOX_BANK_CONTROL_TOKEN": "json-form"}',
      'PROVIDER_CALLBACK_SECRET=$(openssl rand -hex 32) BVN_SECRET_KEY: ${BVN_SECRET_KEY:?required}',
    ].join('\n');
    expect(exampleValues(sample)).toEqual([
      { name: 'PROVIDER_CALLBACK_SECRET', value: 'compose-default' },
      { name: 'WEBHOOK_ENCRYPTION_KEY', value: 'c2hlbGwtZXhhbXBsZQ==' },
      { name: 'BVN_SECRET_KEY', value: 'list-form' },
      { name: 'SANDBOX_BANK_CONTROL_TOKEN', value: 'json-form' },
    ]);
  });

  it("refuses every example value of the repository's docker-compose.yml, README.md and docs/", () => {
    const files = ['docker-compose.yml', 'README.md'];
    const walk = (dir: string): string[] =>
      readdirSync(join(PROJECT_ROOT, dir), { withFileTypes: true }).flatMap((entry) =>
        entry.isDirectory() ? walk(join(dir, entry.name)) : [join(dir, entry.name)],
      );
    if (existsSync(join(PROJECT_ROOT, 'docs'))) files.push(...walk('docs'));
    let examples = 0;
    for (const file of files) {
      for (const { name, value } of exampleValues(readFileSync(join(PROJECT_ROOT, file), 'utf8'))) {
        examples += 1;
        // A connector's secret is read when LIVE_CONNECTORS names its connector.
        const connector = CONNECTORS.find((kind) => Object.hasOwn(kind.secrets, name));
        expect(
          issuesOf(productionEnv({ ...(connector ? LIVE[connector.name] : {}), [name]: value })).filter((issue) =>
            issue.startsWith(`${name}:`),
          ),
          `${file}: ${name}=${value} must be refused by production (add it to PUBLISHED_SECRETS)`,
        ).toHaveLength(1);
      }
    }
    // The compose file requires every secret (`${VAR:?…}`), with no default; its comments show
    // placeholders (`VAR=…`), which the scan finds and production refuses.
    const compose = readFileSync(join(PROJECT_ROOT, 'docker-compose.yml'), 'utf8');
    for (const name of SECRETS) expect(compose).toContain(`\${${name}:?`);
    expect(examples).toBeGreaterThan(0);
  });
});

describe('live connectors in production (decisions §18)', () => {
  it('accepts live credentials of its own, over https', () => {
    for (const connector of CONNECTORS) {
      const config = loadConfig(productionEnv(LIVE[connector.name]));
      expect(config.liveConnectors.map((live) => live.name)).toEqual([connector.name]);
      expect(config.warnings).toEqual([]);
    }
  });

  it('stops on a Paystack test key with one line naming PAYSTACK_SECRET_KEY, and never its value', () => {
    const key = `sk_test_${randomBytes(20).toString('hex')}`;
    expect(issuesOf(productionEnv({ ...LIVE.paystack, PAYSTACK_SECRET_KEY: key }))).toEqual([
      "PAYSTACK_SECRET_KEY: is a Paystack test key (sk_test_…), of Paystack's test mode: a live connector takes the provider's live credentials when NODE_ENV=production (LIVE_CONNECTORS names paystack)",
    ]);
  });

  it('allows a Paystack test key outside production, with one warning naming the variable', () => {
    const key = `sk_test_${randomBytes(20).toString('hex')}`;
    for (const env of [{}, { HOST: '0.0.0.0', ...OWN }]) {
      const config = loadConfig({ ...env, ...LIVE.paystack, PAYSTACK_SECRET_KEY: key });
      expect(config.liveConnectors.map((live) => live.name)).toEqual(['paystack']);
      expect(config.warnings).toEqual([
        "PAYSTACK_SECRET_KEY is a Paystack test key (sk_test_…), of Paystack's test mode: the live connector paystack credits and pays out in the provider's test mode (refused when NODE_ENV=production)",
      ]);
      expect(config.warnings.join('')).not.toContain(key);
    }
    expect(loadConfig(LIVE.paystack).warnings).toEqual([]);
  });

  it('holds every connector secret to the production secret rules: 32 bytes, none published', () => {
    const short = {
      GENERIC_BANK_API_KEY: 'a'.repeat(22),
      // A key of 24 bytes: enough outside production, not in it.
      GENERIC_BANK_WEBHOOK_SECRET: `whsec_${randomBytes(24).toString('base64')}`,
      PAYSTACK_SECRET_KEY: `sk_live_${'a'.repeat(23)}`,
    };
    for (const [name, value] of Object.entries(short)) {
      const connector = CONNECTORS.find((kind) => Object.hasOwn(kind.secrets, name))!;
      expect(issuesOf(productionEnv({ ...LIVE[connector.name], [name]: value }))).toEqual([
        expect.stringMatching(
          new RegExp(
            `^${name}: must be at least 32 bytes when NODE_ENV=production \\(e\\.g\\. .+\\) \\(LIVE_CONNECTORS names ${connector.name}\\)$`,
          ),
        ),
      ]);
      // Outside production (on loopback) the connector's own rules stand.
      expect(issuesOf({ ...LIVE[connector.name], [name]: value })).toEqual([]);
    }
    const longEnough = { ...LIVE.generic, GENERIC_BANK_API_KEY: 'a'.repeat(32) };
    expect(issuesOf(productionEnv(longEnough))).toEqual([]);
    // The test suite's own connector secrets are published; whsec_ secrets by the key they decode to.
    const published = {
      GENERIC_BANK_WEBHOOK_SECRET: `whsec_${Buffer.from('generic-test-bank-signing-key-32b').toString('base64')}`,
      PAYSTACK_SECRET_KEY: 'sk_live_0123456789abcdef0123456789abcdef',
    };
    for (const [name, value] of Object.entries(published)) {
      const connector = CONNECTORS.find((kind) => Object.hasOwn(kind.secrets, name))!;
      expect(issuesOf(productionEnv({ ...LIVE[connector.name], [name]: value }))).toEqual([
        expect.stringMatching(new RegExp(`^${name}: is a value published in the repository`)),
      ]);
    }
    // Wherever the API is exposed, as for the gateway's own secrets.
    expect(issuesOf({ HOST: '0.0.0.0', ...OWN, ...LIVE.generic, GENERIC_BANK_API_KEY: 'a'.repeat(22) })).toEqual([
      'GENERIC_BANK_API_KEY: must be at least 32 bytes when HOST is 0.0.0.0 (e.g. openssl rand -hex 32) (LIVE_CONNECTORS names generic)',
    ]);
  });

  it('takes provider base URLs over https only in production', () => {
    expect(issuesOf(productionEnv({ ...LIVE.generic, GENERIC_BANK_URL: 'http://bank.example/v1' }))).toEqual([
      'GENERIC_BANK_URL: must be an https:// URL when NODE_ENV=production (LIVE_CONNECTORS names generic)',
    ]);
    expect(issuesOf(productionEnv({ ...LIVE.paystack, PAYSTACK_BASE_URL: 'http://api.paystack.co' }))).toEqual([
      'PAYSTACK_BASE_URL: must be an https:// URL when NODE_ENV=production (LIVE_CONNECTORS names paystack)',
    ]);
    expect(loadConfig(productionEnv(LIVE.paystack)).liveConnectors[0]!.settings).toMatchObject({
      baseUrl: 'https://api.paystack.co',
    });
    // Outside production, a test bank or simulator on this machine.
    expect(issuesOf({ ...LIVE.generic, GENERIC_BANK_URL: 'http://127.0.0.1:4020' })).toEqual([]);
  });

  it('names every bad connector variable at once, one line each', () => {
    const issues = issuesOf(
      productionEnv({
        ...LIVE.generic,
        ...LIVE.paystack,
        LIVE_CONNECTORS: 'paystack,generic',
        PAYSTACK_SECRET_KEY: 'sk_test_abc',
        GENERIC_BANK_URL: 'http://bank.example',
        GENERIC_BANK_API_KEY: 'short-key',
        GENERIC_BANK_WEBHOOK_SECRET: `whsec_${randomBytes(24).toString('base64')}`,
      }),
    );
    expect(issues.map((issue) => issue.split(':')[0])).toEqual([
      'PAYSTACK_SECRET_KEY',
      'GENERIC_BANK_API_KEY',
      'GENERIC_BANK_WEBHOOK_SECRET',
      'GENERIC_BANK_URL',
    ]);
  });

  it('stops the API process with exit code 2 and the line, before it listens', () => {
    const started = spawnSync(process.execPath, [join(PROJECT_ROOT, 'src/server.ts')], {
      cwd: PROJECT_ROOT,
      encoding: 'utf8',
      timeout: 60_000,
      env: {
        PATH: process.env.PATH,
        ...productionEnv({ ...LIVE.paystack, PAYSTACK_SECRET_KEY: `sk_test_${randomBytes(20).toString('hex')}` }),
      },
    });
    expect(started.status).toBe(2);
    expect(started.stderr).toBe(
      "invalid configuration:\n  - PAYSTACK_SECRET_KEY: is a Paystack test key (sk_test_…), of Paystack's test mode: a live connector takes the provider's live credentials when NODE_ENV=production (LIVE_CONNECTORS names paystack)\n",
    );
  }, 60_000);
});
