// The sandbox bank's own configuration (src/sandbox-bank/config.ts): the variables it has always
// read, with their defaults, and the same refusals the gateway's configuration makes of them; and
// nothing of the API's own variables.
import { randomBytes } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config.ts';
import {
  DEVELOPMENT_CALLBACK_SECRET,
  DEVELOPMENT_SANDBOX_BANK_API_KEY,
  PUBLISHED_SECRETS,
} from '../../src/runtime/secrets.ts';
import { SANDBOX_BANK_SECRETS, loadSandboxBankConfig } from '../../src/sandbox-bank/config.ts';
import { configIssues } from '../support/config-issues.ts';

const OWN = {
  PROVIDER_CALLBACK_SECRET: randomBytes(32).toString('hex'),
  SANDBOX_BANK_CONTROL_TOKEN: randomBytes(32).toString('hex'),
  SANDBOX_BANK_API_KEY: randomBytes(32).toString('hex'),
};
const API_KEYS = {
  WEBHOOK_ENCRYPTION_KEY: randomBytes(32).toString('base64'),
  BVN_SECRET_KEY: randomBytes(32).toString('base64'),
};

const issuesOf = configIssues;
const bankIssues = (env: NodeJS.ProcessEnv) => configIssues(loadSandboxBankConfig, env);

/** The variables the bank reads with the gateway, whose refusals must be the gateway's own. */
const SHARED_WITH_THE_GATEWAY = [
  'NODE_ENV',
  'HOST',
  'PORT',
  'LOG_LEVEL',
  'EMBEDDED_PG_PORT',
  'GATEWAY_CALLBACK_URL',
  'SANDBOX_BANK_HOST',
  'SANDBOX_BANK_PORT',
  'SANDBOX_BANK_URL',
  'SANDBOX_BANK_DATABASE_URL',
  'PROVIDER_CALLBACK_SECRET',
  'SANDBOX_BANK_CONTROL_TOKEN',
  'SANDBOX_BANK_API_KEY',
];

describe('the sandbox bank configuration', () => {
  it('runs on the defaults it always had, with no variables at all', () => {
    expect(loadSandboxBankConfig({})).toMatchObject({
      NODE_ENV: 'development',
      LOG_LEVEL: 'info',
      SANDBOX_BANK_HOST: '127.0.0.1',
      SANDBOX_BANK_PORT: 4010,
      SANDBOX_BANK_COMPLETION_DELAY_MS: 1_000,
      SANDBOX_BANK_HANG_MS: 30_000,
      databaseUrl: 'postgres://postgres:postgres@127.0.0.1:54329/gateway',
      gatewayCallbackUrl: 'http://127.0.0.1:3000',
      apiKey: DEVELOPMENT_SANDBOX_BANK_API_KEY,
      callbackSecret: DEVELOPMENT_CALLBACK_SECRET,
    });
    expect(loadSandboxBankConfig({}).SANDBOX_BANK_CONTROL_TOKEN).toBeUndefined();
  });

  it('finds its schema and the gateway where the gateway finds them', () => {
    const envs: NodeJS.ProcessEnv[] = [
      {},
      // The API's own keys too, which it needs beyond loopback (the bank reads neither).
      { DATABASE_URL: 'postgres://u:p@db:5432/gw', PORT: '8080', HOST: '0.0.0.0', ...OWN, ...API_KEYS },
      { EMBEDDED_PG_PORT: '55000', SANDBOX_BANK_DATABASE_URL: 'postgresql://bank@db/bank' },
      {
        GATEWAY_CALLBACK_URL: 'http://api:3000/',
        SANDBOX_BANK_PORT: '4999',
        SANDBOX_BANK_API_KEY: OWN.SANDBOX_BANK_API_KEY,
      },
    ];
    for (const env of envs) {
      const bank = loadSandboxBankConfig(env);
      const gateway = loadConfig(env);
      expect(bank.databaseUrl).toBe(gateway.sandboxBankDatabaseUrl);
      expect(bank.gatewayCallbackUrl).toBe(gateway.gatewayCallbackUrl);
      expect(bank.apiKey).toBe(gateway.sandboxBankApiKey);
      expect(bank.callbackSecret).toBe(gateway.providerCallbackSecret);
      expect([bank.SANDBOX_BANK_HOST, bank.SANDBOX_BANK_PORT]).toEqual([
        gateway.SANDBOX_BANK_HOST,
        gateway.SANDBOX_BANK_PORT,
      ]);
    }
    expect(loadSandboxBankConfig({ GATEWAY_CALLBACK_URL: 'http://api:3000/' }).gatewayCallbackUrl).toBe(
      'http://api:3000',
    );
  });

  it('reads its transfers’ pace, 0 to 600000 ms, and names the variable otherwise', () => {
    expect(
      loadSandboxBankConfig({ SANDBOX_BANK_COMPLETION_DELAY_MS: '0', SANDBOX_BANK_HANG_MS: '8000' }),
    ).toMatchObject({ SANDBOX_BANK_COMPLETION_DELAY_MS: 0, SANDBOX_BANK_HANG_MS: 8_000 });
    for (const bad of ['-1', '600001', 'soon', '1.5']) {
      expect(
        bankIssues({ SANDBOX_BANK_COMPLETION_DELAY_MS: bad, SANDBOX_BANK_HANG_MS: bad }).map(
          (line) => line.split(':')[0],
        ),
      ).toEqual(['SANDBOX_BANK_COMPLETION_DELAY_MS', 'SANDBOX_BANK_HANG_MS']);
    }
  });

  it('refuses what the gateway refuses of the variables they share, in the same words', () => {
    const production = { NODE_ENV: 'production', DATABASE_URL: 'postgres://db/gw', TEMPORAL_ADDRESS: 't:7233' };
    const envs: NodeJS.ProcessEnv[] = [
      { PORT: 'eighty', LOG_LEVEL: 'loud', SANDBOX_BANK_PORT: '70000', SANDBOX_BANK_DATABASE_URL: 'mysql://x' },
      { GATEWAY_CALLBACK_URL: 'not a url', SANDBOX_BANK_URL: 'nowhere', EMBEDDED_PG_PORT: '0' },
      { SANDBOX_BANK_HOST: '0.0.0.0' },
      { SANDBOX_BANK_HOST: '0.0.0.0', SANDBOX_BANK_CONTROL_TOKEN: 'x'.repeat(31) },
      { SANDBOX_BANK_URL: 'http://sandbox-bank:4010' },
      { SANDBOX_BANK_API_KEY: 'with a space in it, long enough', PROVIDER_CALLBACK_SECRET: 'short' },
      { HOST: '0.0.0.0' },
      { HOST: '10.0.0.5', ...OWN, PROVIDER_CALLBACK_SECRET: 'change-me-sandbox-callback-secret' },
      production,
      { ...production, ...OWN },
      { ...production, ...OWN, SANDBOX_BANK_API_KEY: 'x'.repeat(20), SANDBOX_BANK_CONTROL_TOKEN: 'short' },
      ...PUBLISHED_SECRETS.flatMap((value) =>
        SANDBOX_BANK_SECRETS.map((name) => ({ ...production, ...OWN, [name]: value })),
      ),
    ];
    for (const env of envs) {
      const gateway = issuesOf(loadConfig, env).filter((line) => SHARED_WITH_THE_GATEWAY.includes(line.split(':')[0]!));
      expect(bankIssues(env), JSON.stringify(env)).toEqual(gateway);
    }
    // At least one of each kind was refused (the comparison above would pass on two silences).
    expect(bankIssues({ ...production, PROVIDER_CALLBACK_SECRET: PUBLISHED_SECRETS[0]! })).toContainEqual(
      expect.stringMatching(/^PROVIDER_CALLBACK_SECRET: is a value published in the repository/),
    );
    expect(bankIssues({ HOST: '0.0.0.0' })).toEqual([
      'PROVIDER_CALLBACK_SECRET: is required when HOST is 0.0.0.0',
      'SANDBOX_BANK_API_KEY: is required when HOST is 0.0.0.0',
    ]);
  });

  it('needs a database of its own naming in production, and nothing of Temporal', () => {
    expect(bankIssues({ NODE_ENV: 'production', ...OWN })).toEqual([
      'DATABASE_URL: is required when NODE_ENV=production, unless SANDBOX_BANK_DATABASE_URL is set',
    ]);
    expect(bankIssues({ NODE_ENV: 'production', SANDBOX_BANK_DATABASE_URL: 'postgres://db/bank', ...OWN })).toEqual([]);
    expect(loadSandboxBankConfig({ NODE_ENV: 'production', DATABASE_URL: 'postgres://db/gw', ...OWN })).toMatchObject({
      databaseUrl: 'postgres://db/gw',
      apiKey: OWN.SANDBOX_BANK_API_KEY,
      callbackSecret: OWN.PROVIDER_CALLBACK_SECRET,
      SANDBOX_BANK_CONTROL_TOKEN: OWN.SANDBOX_BANK_CONTROL_TOKEN,
    });
  });

  it.each([
    ['WEBHOOK_ENCRYPTION_KEY', 'not a key'],
    ['BVN_SECRET_KEY', 'not a key'],
    ['TEMPORAL_ADDRESS', 'no-port'],
    ['LIVE_CONNECTORS', 'nobody'],
    ['STACK_CHILD_EXIT', 'ignore'],
  ])("reads none of the API's own variables: a bad %s stops the API, not the bank", (name, value) => {
    expect(issuesOf(loadConfig, { [name]: value }).map((line) => line.split(':')[0])).toEqual([name]);
    expect(bankIssues({ [name]: value })).toEqual([]);
  });
});
