import { describe, expect, it } from 'vitest';
import { ConfigError, loadConfig } from '../../src/config.ts';

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
    const production = loadConfig({
      NODE_ENV: 'production',
      DATABASE_URL: 'postgres://db/gw',
      TEMPORAL_ADDRESS: 't:7233',
      PROVIDER_CALLBACK_SECRET: 'a-real-secret-from-the-vault',
      WEBHOOK_ENCRYPTION_KEY: Buffer.alloc(32, 1).toString('base64'),
      BVN_SECRET_KEY: Buffer.alloc(32, 2).toString('base64'),
    });
    expect(production.providerCallbackSecret).toBe('a-real-secret-from-the-vault');
    expect(production.webhookEncryptionKey).toEqual(Buffer.alloc(32, 1));
    expect(production.bvnSecretKey).toEqual(Buffer.alloc(32, 2));
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
});
