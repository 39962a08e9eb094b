// An operator command's flags, declared once: node:util's parseArgs options, the usage text and
// the check of required flags are all made from the declaration, so the help cannot drift from
// what the command takes. A command reads its values through `Flags`, with a parser per kind of
// value; a value that is not what its flag takes is a UsageError naming the flag.
import { userInfo } from 'node:os';
import type { ParseArgsConfig } from 'node:util';
import { isUuid } from '../http/ids.ts';
import { MAX_POSTING_MINOR } from '../lib/money.ts';
import { UsageError } from './errors.ts';

export interface FlagSpec {
  type: 'string' | 'boolean';
  /** What the value looks like in the usage text: `ID` in `--tenant ID`. */
  value?: string;
  required?: boolean;
  /** Given once per value: `--feature F...`. */
  multiple?: boolean;
  /** The value when the flag is not given (never written to the audit: it was not typed). */
  default?: string;
  /** One line for the usage text. */
  help: string;
}

export type FlagSpecs = Record<string, FlagSpec>;

export const flag = {
  required: (value: string, help: string): FlagSpec => ({ type: 'string', value, required: true, help }),
  optional: (value: string, help: string, byDefault?: string): FlagSpec =>
    byDefault === undefined ? { type: 'string', value, help } : { type: 'string', value, help, default: byDefault },
  repeated: (value: string, help: string): FlagSpec => ({ type: 'string', value, multiple: true, help }),
  boolean: (help: string): FlagSpec => ({ type: 'boolean', help }),
};

/** Flags that mean the same wherever a command takes them. */
export const OPERATOR = flag.optional('NAME', 'who runs it, for the record (else GATEWAY_OPERATOR, else the OS user)');
export const NOTE = flag.required('TEXT', 'why, kept with the record (at most 1000 characters)');
export const CONNECTOR = flag.optional('NAME', 'only this connector (as LIVE_CONNECTORS names it, or sandbox)');
export const limitFlag = (byDefault: number) => flag.optional('N', 'how many at most, 1 to 1000', String(byDefault));

/** node:util parseArgs options for the declared flags (defaults stay out: see FlagSpec.default). */
export function parseOptions(specs: FlagSpecs): NonNullable<ParseArgsConfig['options']> {
  return Object.fromEntries(
    Object.entries(specs).map(([name, spec]) => [
      name,
      { type: spec.type, ...(spec.multiple ? { multiple: true } : {}) },
    ]),
  );
}

/** Turns a flag's text into its value, or throws a UsageError naming `--flag`. */
export type Parse<T> = (raw: string, flag: string) => T;

/** The values parseArgs found, read as their declarations say. */
export class Flags {
  /** As typed: what admin_audit records. */
  readonly values: Record<string, unknown>;
  private readonly specs: FlagSpecs;

  constructor(values: Record<string, unknown>, specs: FlagSpecs) {
    this.values = values;
    this.specs = specs;
  }

  /** Throws a UsageError for the first required flag not given. */
  checkRequired(): void {
    for (const [name, spec] of Object.entries(this.specs)) if (spec.required) this.get(name);
  }

  /** The flag's text (trimmed; blank counts as not given) or its default, parsed; undefined when neither. */
  optional(flag: string): string | undefined;
  optional<T>(flag: string, parse: Parse<T>): T | undefined;
  optional<T>(flag: string, parse?: Parse<T>): T | string | undefined {
    const given = this.values[this.declared(flag)];
    const raw = typeof given === 'string' && given.trim() !== '' ? given.trim() : this.specs[flag]!.default;
    return raw === undefined || !parse ? raw : parse(raw, flag);
  }

  /** As `optional`, but a flag with neither text nor default is a UsageError. */
  get(flag: string): string;
  get<T>(flag: string, parse: Parse<T>): T;
  get<T>(flag: string, parse?: Parse<T>): T | string {
    const raw = this.optional(flag);
    if (raw === undefined) throw new UsageError(`--${flag} is required`);
    return parse ? parse(raw, flag) : raw;
  }

  on(flag: string): boolean {
    return this.values[this.declared(flag)] === true;
  }

  list(flag: string): string[] {
    const value = this.values[this.declared(flag)];
    return Array.isArray(value) ? value.map(String) : [];
  }

  /** Who runs the command: --operator where a command takes it, else GATEWAY_OPERATOR, else the OS user. */
  operator(): string {
    const given = this.values.operator;
    return typeof given === 'string' && given.trim()
      ? given.trim()
      : (process.env.GATEWAY_OPERATOR ?? userInfo().username);
  }

  private declared(flag: string): string {
    if (!(flag in this.specs)) throw new Error(`--${flag} is read but not declared by the command`);
    return flag;
  }
}

export const uuid =
  (what: string): Parse<string> =>
  (raw, flag) => {
    if (!isUuid(raw)) throw new UsageError(`--${flag} must be ${what} (a UUID), got '${raw}'`);
    return raw;
  };

export const kobo =
  ({ min }: { min: number }): Parse<number> =>
  (raw, flag) => {
    if (!/^\d+$/.test(raw)) throw new UsageError(`--${flag} must be a whole number of kobo, got '${raw}'`);
    const value = Number(raw);
    if (!Number.isSafeInteger(value) || value < min || value > MAX_POSTING_MINOR) {
      throw new UsageError(`--${flag} must be between ${min} and ${MAX_POSTING_MINOR} kobo, got ${raw}`);
    }
    return value;
  };

export const atMost =
  (characters: number): Parse<string> =>
  (raw, flag) => {
    if (raw.length > characters) throw new UsageError(`--${flag} must be at most ${characters} characters`);
    return raw;
  };

export const oneOf =
  <const T extends string>(choices: readonly T[]): Parse<T> =>
  (raw, flag) => {
    if ((choices as readonly string[]).includes(raw)) return raw as T;
    const listed = `${choices.slice(0, -1).join(', ')} or ${choices.at(-1)}`;
    throw new UsageError(`--${flag} must be ${choices.length > 2 ? 'one of ' : ''}${listed}, got '${raw}'`);
  };

/** `90s`, `15m`, `2h`, `1d` → milliseconds. */
export const duration: Parse<number> = (raw, flag) => {
  const match = /^(\d+)(s|m|h|d)$/.exec(raw);
  if (!match) throw new UsageError(`--${flag} must look like 90s, 15m, 2h or 1d, got '${raw}'`);
  const unit = { s: 1_000, m: 60_000, h: 3_600_000, d: 86_400_000 }[match[2] as 's' | 'm' | 'h' | 'd'];
  return Number(match[1]) * unit;
};

/** A listing's `--limit`: 1 to 1000. */
export const limit: Parse<number> = (raw, flag) => {
  if (!/^\d+$/.test(raw) || Number(raw) < 1 || Number(raw) > 1000) {
    throw new UsageError(`--${flag} must be between 1 and 1000, got '${raw}'`);
  }
  return Number(raw);
};

export const instant: Parse<Date> = (raw, flag) => {
  const at = new Date(raw);
  if (!/^\d{4}-\d{2}-\d{2}/.test(raw) || Number.isNaN(at.getTime())) {
    throw new UsageError(`--${flag} must be an ISO 8601 time such as 2026-11-23T08:00:00Z, got '${raw}'`);
  }
  return at;
};

/** A UTC day, today or before. */
export const pastDay: Parse<string> = (raw, flag) => {
  const at = new Date(`${raw}T00:00:00.000Z`);
  if (!/^\d{4}-\d{2}-\d{2}$/.test(raw) || Number.isNaN(at.getTime()) || at.toISOString().slice(0, 10) !== raw) {
    throw new UsageError(`--${flag} must be a day such as 2026-11-23, got '${raw}'`);
  }
  if (raw > new Date().toISOString().slice(0, 10)) {
    throw new UsageError(`--${flag} ${raw} is in the future: the bank has no statement for it yet`);
  }
  return raw;
};

/** A connector's name (as LIVE_CONNECTORS spells them, or `sandbox`): safe inside a query's quotes. */
export const connectorName: Parse<string> = (raw, flag) => {
  if (!/^[a-z][a-z0-9_-]{0,39}$/.test(raw)) {
    throw new UsageError(`--${flag} must be a connector name (e.g. generic), got '${raw.slice(0, 40)}'`);
  }
  return raw;
};
