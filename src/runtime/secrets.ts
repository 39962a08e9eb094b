// The repository's secret rules, for every process's config: each secret variable's format, the
// values this repository publishes (development defaults, test fixtures, old examples), which a
// process exposed to the network refuses, and when the sandbox bank's control token is required.
// No secret has a fallback where it matters: the development defaults below serve loopback only.
import { z } from 'zod';
import { isLoopbackHost } from './environment.ts';

/** The shortest secret production accepts (and the sandbox bank's control token, anywhere). */
export const MIN_SECRET_BYTES = 32;

/** The secrets production checks against PUBLISHED_SECRETS, and how each value becomes key bytes. */
export const SECRET_VARIABLES = {
  PROVIDER_CALLBACK_SECRET: 'utf8',
  WEBHOOK_ENCRYPTION_KEY: 'base64',
  BVN_SECRET_KEY: 'base64',
  SANDBOX_BANK_CONTROL_TOKEN: 'utf8',
  SANDBOX_BANK_API_KEY: 'utf8',
} as const;
export type SecretVariable = keyof typeof SECRET_VARIABLES;

/** Used only when NODE_ENV is not production, where PROVIDER_CALLBACK_SECRET is required. */
export const DEVELOPMENT_CALLBACK_SECRET = 'sandbox-callback-secret-for-development-only';
export const DEVELOPMENT_WEBHOOK_KEY_TEXT = 'development-only-webhook-key-32b';
export const DEVELOPMENT_BVN_KEY_TEXT = 'development-only-bvn-secret-32by';
/** Used only when NODE_ENV is not production, where SANDBOX_BANK_API_KEY is required. */
export const DEVELOPMENT_SANDBOX_BANK_API_KEY = 'sandbox-bank-api-key-for-development-only';

/**
 * Every secret value this repository publishes or has published — the development defaults above,
 * the test suite's fixed secrets (test/support/app.ts) and the defaults docker-compose.yml once
 * carried — kept in this one place. Production refuses each of them, in any spelling that gives
 * the same key bytes (a base64 key with or without padding, or the text whose bytes it encodes).
 * test/unit/config.test.ts scans docker-compose.yml, README.md and docs/ for example values given
 * to the secret variables and fails on any that production would accept: a new example goes here.
 */
export const PUBLISHED_SECRETS: readonly string[] = [
  DEVELOPMENT_CALLBACK_SECRET,
  DEVELOPMENT_WEBHOOK_KEY_TEXT,
  DEVELOPMENT_BVN_KEY_TEXT,
  DEVELOPMENT_SANDBOX_BANK_API_KEY,
  // docker-compose.yml's defaults until #27.
  'change-me-sandbox-callback-secret',
  'Y2hhbmdlLW1lLWNoYW5nZS1tZS1jaGFuZ2UtbWUtMzI=',
  'Y2hhbmdlLW1lLWNoYW5nZS1tZS1idm4tc2VjcmV0MzI=',
  // test/support/app.ts: TEST_CALLBACK_SECRET, TEST_WEBHOOK_KEY (32 × 0x07), TEST_BVN_SECRET (32 × 0x0b),
  // TEST_SANDBOX_CONTROL_TOKEN, TEST_SANDBOX_BANK_API_KEY.
  'test-callback-secret-0123456789',
  'BwcHBwcHBwcHBwcHBwcHBwcHBwcHBwcHBwcHBwcHBwc=',
  'CwsLCwsLCwsLCwsLCwsLCwsLCwsLCwsLCwsLCwsLCws=',
  'test-sandbox-bank-control-token-0123456789',
  'test-sandbox-bank-api-key-0123456789',
  // The live connectors' secrets in the test suite (test/unit/paystack-reference.test.ts, the keys of
  // the generic test bank's whsec_ secrets in test/integration/generic-bank.test.ts and
  // test/conformance/generic.test.ts).
  'sk_live_0123456789abcdef0123456789abcdef',
  'generic-test-bank-signing-key-32b',
  'generic-conformance-signing-key-32',
];

const PUBLISHED_MESSAGE =
  'is a value published in the repository (a development default or an example); ' +
  'set a secret of your own (e.g. openssl rand -hex 32, or openssl rand -base64 32 for a key)';

const isKey32 = (value: string) => Buffer.from(value, 'base64').length === 32;
/** What each secret's own field accepts in every mode; an exposed process then also refuses published and short ones. */
const SECRET_FORMATS: Record<SecretVariable, { accepts: (value: string) => boolean; rule: string }> = {
  PROVIDER_CALLBACK_SECRET: { accepts: (value) => value.length >= 16, rule: 'must be at least 16 characters' },
  WEBHOOK_ENCRYPTION_KEY: { accepts: isKey32, rule: 'must be 32 bytes, base64-encoded' },
  BVN_SECRET_KEY: { accepts: isKey32, rule: 'must be 32 bytes, base64-encoded' },
  SANDBOX_BANK_CONTROL_TOKEN: {
    accepts: (value) => Buffer.byteLength(value, 'utf8') >= MIN_SECRET_BYTES,
    rule: `must be at least ${MIN_SECRET_BYTES} bytes`,
  },
  SANDBOX_BANK_API_KEY: {
    accepts: (value) => value.length >= 16 && /^[\x21-\x7e]+$/.test(value),
    rule: 'must be at least 16 printable characters, without spaces',
  },
};

/** A secret variable's field in a config schema: optional, and refused (by its rule) when malformed. */
export function secretVariable(variable: SecretVariable) {
  const { accepts, rule } = SECRET_FORMATS[variable];
  return z.string().refine(accepts, rule).optional();
}

/** The key bytes a secret variable's value stands for. */
export function secretBytes(variable: SecretVariable, value: string): Buffer {
  return Buffer.from(value, SECRET_VARIABLES[variable]);
}

/** Each published value as key bytes: its text, and what it decodes to when it reads as base64. */
const PUBLISHED_BYTES = new Set(
  PUBLISHED_SECRETS.flatMap((value) => {
    const forms = [Buffer.from(value, 'utf8').toString('hex')];
    if (/^[A-Za-z0-9+/]+={0,2}$/.test(value)) forms.push(Buffer.from(value, 'base64').toString('hex'));
    return forms;
  }),
);

/** Whether a value is one the repository publishes, as its text or as the key bytes it stands for. */
function isPublishedValue(value: string, bytes: Buffer): boolean {
  return (
    PUBLISHED_BYTES.has(bytes.toString('hex')) || PUBLISHED_BYTES.has(Buffer.from(value.trim(), 'utf8').toString('hex'))
  );
}

/**
 * What an exposed process refuses of a secret's value, given the key bytes it stands for: one the
 * repository publishes, or one shorter than 32 bytes (`example` says how to make one); undefined
 * when it is neither. Every secret, the gateway's and its connectors', is held to this.
 */
export function exposedValueIssue(
  value: string,
  bytes: Buffer,
  exposed: string,
  example = 'openssl rand -hex 32',
): string | undefined {
  if (isPublishedValue(value, bytes)) return PUBLISHED_MESSAGE;
  if (bytes.length >= MIN_SECRET_BYTES) return undefined;
  return `must be at least ${MIN_SECRET_BYTES} bytes when ${exposed} (e.g. ${example})`;
}

export interface VariableIssue {
  variable: string;
  message: string;
}

/**
 * Why the stack is exposed, if it is: production, or the API listening beyond loopback (it then
 * takes provider callbacks from the network). An exposed process runs on no published secret.
 */
export function exposure(env: { NODE_ENV: string; HOST: string }): string | undefined {
  if (env.NODE_ENV === 'production') return 'NODE_ENV=production';
  return isLoopbackHost(env.HOST) ? undefined : `HOST is ${env.HOST}`;
}

/**
 * What an exposed process (`exposed` says why: `NODE_ENV=production`, `HOST is 0.0.0.0`) refuses
 * of its secrets: a missing one, one the repository publishes, one shorter than 32 bytes. A value
 * its own field already refused (e.g. a key that is not 32 bytes) is named once, there; the control
 * token's absence is named by sandboxControlTokenIssue, with the reason it is needed.
 */
export function exposedSecretIssues(
  env: Partial<Record<SecretVariable, string>>,
  variables: readonly SecretVariable[],
  exposed: string,
): VariableIssue[] {
  const issues: VariableIssue[] = [];
  for (const variable of variables) {
    const value = env[variable];
    if (!value) {
      if (variable !== 'SANDBOX_BANK_CONTROL_TOKEN') issues.push({ variable, message: `is required when ${exposed}` });
    } else if (SECRET_FORMATS[variable].accepts(value)) {
      const message = exposedValueIssue(value, secretBytes(variable, value), exposed);
      if (message) issues.push({ variable, message });
    }
  }
  return issues;
}

/**
 * The sandbox bank's control routes can credit wallets through the provider path: never open beyond
 * loopback. Without SANDBOX_BANK_CONTROL_TOKEN, a bank that listens (or is reached) beyond loopback,
 * or any production process, is refused.
 */
export function sandboxControlTokenIssue(env: {
  NODE_ENV: string;
  SANDBOX_BANK_HOST: string;
  SANDBOX_BANK_URL?: string | undefined;
  SANDBOX_BANK_CONTROL_TOKEN?: string | undefined;
}): VariableIssue | undefined {
  if (env.SANDBOX_BANK_CONTROL_TOKEN) return undefined;
  const reason =
    env.NODE_ENV === 'production'
      ? 'NODE_ENV=production'
      : !isLoopbackHost(env.SANDBOX_BANK_HOST)
        ? `the sandbox bank listens on ${env.SANDBOX_BANK_HOST}, beyond loopback`
        : env.SANDBOX_BANK_URL &&
            URL.canParse(env.SANDBOX_BANK_URL) &&
            !isLoopbackHost(new URL(env.SANDBOX_BANK_URL).hostname)
          ? 'SANDBOX_BANK_URL is not a loopback address'
          : undefined;
  if (!reason) return undefined;
  return {
    variable: 'SANDBOX_BANK_CONTROL_TOKEN',
    message: `is required when ${reason} (at least ${MIN_SECRET_BYTES} random bytes, e.g. openssl rand -hex 32)`,
  };
}
