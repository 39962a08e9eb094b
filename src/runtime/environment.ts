// Reading a process's environment, for every process's own config (the API's src/config.ts, the
// sandbox bank's src/sandbox-bank/config.ts): parsed once with zod, empty strings counted as unset,
// and every bad variable named in one error (its name and the rule, never its value). Here too
// are the variables more than one process reads, defined once so that each reads them alike, and
// what they default to on one machine (`npm start`: embedded PostgreSQL, everything on loopback).
import ipaddr from 'ipaddr.js';
import { z } from 'zod';

export class ConfigError extends Error {
  readonly issues: string[];
  constructor(issues: string[]) {
    super(`invalid configuration:\n  - ${issues.join('\n  - ')}`);
    this.name = 'ConfigError';
    this.issues = issues;
  }
}

/** The environment without its empty values: shells and compose files often produce them for unset. */
export function setVariables(source: NodeJS.ProcessEnv): Record<string, string> {
  return Object.fromEntries(
    Object.entries(source).filter((entry): entry is [string, string] => entry[1] !== undefined && entry[1] !== ''),
  );
}

/** The schema's reading of the environment; throws ConfigError naming every bad variable. */
export function parseEnvironment<T extends z.ZodType>(schema: T, source: NodeJS.ProcessEnv): z.output<T> {
  const parsed = schema.safeParse(setVariables(source));
  if (!parsed.success) {
    throw new ConfigError(
      parsed.error.issues.map((issue) => `${issue.path.join('.') || '(environment)'}: ${issue.message}`),
    );
  }
  return parsed.data;
}

/**
 * The loaders' configurations for a process entry point: a bad configuration stops it with exit
 * code 2 and every loader's lines, once each, on stderr (`invalid configuration:` then one line per
 * variable), not a stack trace.
 */
export function loadOrExit<T extends unknown[]>(...loaders: { [K in keyof T]: () => T[K] }): T {
  const issues = new Set<string>();
  const loaded = loaders.map((load) => {
    try {
      return load();
    } catch (error) {
      if (!(error instanceof ConfigError)) throw error;
      for (const issue of error.issues) issues.add(issue);
      return undefined;
    }
  });
  if (issues.size > 0) {
    console.error(new ConfigError([...issues]).message);
    process.exit(2);
  }
  return loaded as T;
}

/** `localhost`, or an address in 127.0.0.0/8 or ::1 (also IPv4-mapped); 0.0.0.0 and :: are every interface. */
export function isLoopbackHost(host: string): boolean {
  const bare = host
    .replace(/^\[|\]$/g, '')
    .replace(/\.$/, '')
    .toLowerCase();
  if (bare === 'localhost' || bare.endsWith('.localhost')) return true;
  if (!ipaddr.isValid(bare)) return false;
  const address = ipaddr.process(bare);
  return address.range() === 'loopback';
}

/** The address a local client reaches a server on that listens on `host` (every interface: loopback). */
function localAddress(host: string): string {
  return host === '0.0.0.0' ? '127.0.0.1' : host;
}

export const port = z.coerce.number().int().min(1).max(65535);
const postgresUrl = z.string().regex(/^postgres(ql)?:\/\//, 'must be a postgres:// or postgresql:// URL');

/** The variables more than one process reads (the API, the workers, the sandbox bank, the launcher). */
export const SHARED_VARIABLES = {
  NODE_ENV: z.enum(['development', 'test', 'production']).default('development'),
  /** Where the API listens; the sandbox bank calls it back there unless GATEWAY_CALLBACK_URL says otherwise. */
  HOST: z.string().min(1).default('127.0.0.1'),
  PORT: port.default(3000),
  LOG_LEVEL: z.enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']).default('info'),
  DATABASE_URL: postgresUrl.optional(),
  EMBEDDED_PG_PORT: port.default(54329),
  /** Base URL the sandbox bank calls the gateway back on. */
  GATEWAY_CALLBACK_URL: z.url().optional(),
  SANDBOX_BANK_HOST: z.string().min(1).default('127.0.0.1'),
  SANDBOX_BANK_PORT: port.default(4010),
  /** Where the gateway reaches the sandbox bank (by default its host and port). */
  SANDBOX_BANK_URL: z.url().optional(),
  /** The sandbox bank's own schema lives here; by default on the gateway's database server. */
  SANDBOX_BANK_DATABASE_URL: postgresUrl.optional(),
};

export const EMBEDDED_PG_USER = 'postgres';
export const EMBEDDED_PG_PASSWORD = 'postgres';
export const EMBEDDED_PG_DATABASE = 'gateway';

export function embeddedDatabaseUrl(portNumber: number, database = EMBEDDED_PG_DATABASE): string {
  return `postgres://${EMBEDDED_PG_USER}:${EMBEDDED_PG_PASSWORD}@127.0.0.1:${portNumber}/${database}`;
}

type Shared<K extends keyof typeof SHARED_VARIABLES> = Pick<z.output<z.ZodObject<typeof SHARED_VARIABLES>>, K>;

/** DATABASE_URL, or the URL of the embedded PostgreSQL that `npm start` runs. */
export function databaseUrlOf(env: Shared<'DATABASE_URL' | 'EMBEDDED_PG_PORT'>): string {
  return env.DATABASE_URL ?? embeddedDatabaseUrl(env.EMBEDDED_PG_PORT);
}

/** Where the sandbox bank keeps its schema: SANDBOX_BANK_DATABASE_URL, else the gateway's database. */
export function sandboxBankDatabaseUrlOf(
  env: Shared<'DATABASE_URL' | 'EMBEDDED_PG_PORT' | 'SANDBOX_BANK_DATABASE_URL'>,
): string {
  return env.SANDBOX_BANK_DATABASE_URL ?? databaseUrlOf(env);
}

/** The base URL the sandbox bank calls the gateway back on, without a trailing slash. */
export function gatewayCallbackUrlOf(env: Shared<'GATEWAY_CALLBACK_URL' | 'HOST' | 'PORT'>): string {
  return (env.GATEWAY_CALLBACK_URL ?? `http://${localAddress(env.HOST)}:${env.PORT}`).replace(/\/$/, '');
}

/** Where the gateway reaches the sandbox bank. */
export function sandboxBankUrlOf(env: Shared<'SANDBOX_BANK_URL' | 'SANDBOX_BANK_HOST' | 'SANDBOX_BANK_PORT'>): string {
  return env.SANDBOX_BANK_URL ?? `http://${localAddress(env.SANDBOX_BANK_HOST)}:${env.SANDBOX_BANK_PORT}`;
}
