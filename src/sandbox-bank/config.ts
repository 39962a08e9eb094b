// The sandbox bank's own configuration, from its own environment variables (the names, defaults and
// refusals it has always had): where it listens, where its schema lives, how slow its transfers
// are, its API key and control token, and where and with which secret it calls the gateway back.
// The variables it shares with the gateway's processes, and the secret rules, come from
// src/runtime/; nothing of the API's own configuration is read here.
import { z } from 'zod';
import {
  SHARED_VARIABLES,
  gatewayCallbackUrlOf,
  loadOrExit,
  parseEnvironment,
  sandboxBankDatabaseUrlOf,
} from '../runtime/environment.ts';
import {
  DEVELOPMENT_CALLBACK_SECRET,
  DEVELOPMENT_SANDBOX_BANK_API_KEY,
  type SecretVariable,
  exposedSecretIssues,
  exposure,
  sandboxControlTokenIssue,
  secretVariable,
} from '../runtime/secrets.ts';

/** The secrets the bank reads, in the order their issues are named (none of the API's others). */
export const SANDBOX_BANK_SECRETS: readonly SecretVariable[] = [
  'PROVIDER_CALLBACK_SECRET',
  'SANDBOX_BANK_CONTROL_TOKEN',
  'SANDBOX_BANK_API_KEY',
];

const delayMs = (fallback: number) => z.coerce.number().int().min(0).max(600_000).default(fallback);

const SandboxBankEnvironment = z
  .object({
    // In the order the gateway's configuration names them, so that their refusals read alike.
    NODE_ENV: SHARED_VARIABLES.NODE_ENV,
    // The gateway's address: the bank calls it back there (GATEWAY_CALLBACK_URL, else HOST and PORT).
    HOST: SHARED_VARIABLES.HOST,
    PORT: SHARED_VARIABLES.PORT,
    LOG_LEVEL: SHARED_VARIABLES.LOG_LEVEL,
    // Its schema `sandbox_bank`: SANDBOX_BANK_DATABASE_URL, else the gateway's database server.
    DATABASE_URL: SHARED_VARIABLES.DATABASE_URL,
    EMBEDDED_PG_PORT: SHARED_VARIABLES.EMBEDDED_PG_PORT,
    SANDBOX_BANK_HOST: SHARED_VARIABLES.SANDBOX_BANK_HOST,
    SANDBOX_BANK_PORT: SHARED_VARIABLES.SANDBOX_BANK_PORT,
    // Where the gateway reaches it: a non-loopback address requires the control token.
    SANDBOX_BANK_URL: SHARED_VARIABLES.SANDBOX_BANK_URL,
    SANDBOX_BANK_DATABASE_URL: SHARED_VARIABLES.SANDBOX_BANK_DATABASE_URL,
    /** How long an ordinary transfer takes to complete. */
    SANDBOX_BANK_COMPLETION_DELAY_MS: delayMs(1_000),
    /** How long 6666666666's first submission hangs before answering (the caller times out first). */
    SANDBOX_BANK_HANG_MS: delayMs(30_000),
    /**
     * The credential of the /control/* routes (sandbox credits, card purchases, statement edits…):
     * `Authorization: Bearer <token>`. Required when the bank listens beyond loopback or is reached
     * at a non-loopback address, and in production; unset on loopback, the control routes stay open
     * to local callers (development).
     */
    SANDBOX_BANK_CONTROL_TOKEN: secretVariable('SANDBOX_BANK_CONTROL_TOKEN'),
    /** The contract's bearer key: the bank refuses its contract routes without it. A development default outside production. */
    SANDBOX_BANK_API_KEY: secretVariable('SANDBOX_BANK_API_KEY'),
    GATEWAY_CALLBACK_URL: SHARED_VARIABLES.GATEWAY_CALLBACK_URL,
    /** What the bank signs its callbacks (and authorization requests) to the gateway with. */
    PROVIDER_CALLBACK_SECRET: secretVariable('PROVIDER_CALLBACK_SECRET'),
  })
  .superRefine((env, ctx) => {
    const issue = (variable: string, message: string) => ctx.addIssue({ code: 'custom', path: [variable], message });
    const controlToken = sandboxControlTokenIssue(env);
    if (controlToken) issue(controlToken.variable, controlToken.message);
    // The stack exposed beyond loopback (the gateway's HOST, or production) runs on no published secret.
    const exposed = exposure(env);
    if (!exposed) return;
    // Production never falls back to the embedded, single-machine database.
    if (env.NODE_ENV === 'production' && !env.DATABASE_URL && !env.SANDBOX_BANK_DATABASE_URL) {
      issue('DATABASE_URL', 'is required when NODE_ENV=production, unless SANDBOX_BANK_DATABASE_URL is set');
    }
    for (const refused of exposedSecretIssues(env, SANDBOX_BANK_SECRETS, exposed))
      issue(refused.variable, refused.message);
  });

export type SandboxBankEnvironment = z.output<typeof SandboxBankEnvironment>;

export interface SandboxBankConfig extends SandboxBankEnvironment {
  /** Where its `sandbox_bank` schema lives. */
  databaseUrl: string;
  /** Base URL it calls the gateway back on, without a trailing slash. */
  gatewayCallbackUrl: string;
  /** SANDBOX_BANK_API_KEY, or the development default outside production. */
  apiKey: string;
  /** PROVIDER_CALLBACK_SECRET, or the development default outside production. */
  callbackSecret: string;
}

/** Parses an environment (process.env by default); throws ConfigError naming every bad variable. */
export function loadSandboxBankConfig(source: NodeJS.ProcessEnv = process.env): SandboxBankConfig {
  const env = parseEnvironment(SandboxBankEnvironment, source);
  return {
    ...env,
    databaseUrl: sandboxBankDatabaseUrlOf(env),
    gatewayCallbackUrl: gatewayCallbackUrlOf(env),
    apiKey: env.SANDBOX_BANK_API_KEY ?? DEVELOPMENT_SANDBOX_BANK_API_KEY,
    callbackSecret: env.PROVIDER_CALLBACK_SECRET ?? DEVELOPMENT_CALLBACK_SECRET,
  };
}

/** loadSandboxBankConfig for the bank's entry point: a bad configuration exits 2, every bad variable named. */
export function loadSandboxBankConfigOrExit(source: NodeJS.ProcessEnv = process.env): SandboxBankConfig {
  return loadOrExit(() => loadSandboxBankConfig(source))[0];
}
