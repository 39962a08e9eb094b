// Values from the OpenAPI document's JSON Schemas, as fast-check arbitraries: `valid(schema)`
// draws values the schema accepts (bounds included, often), `hostile` draws what a careless or
// malicious client sends instead (wrong types, extreme numbers, unicode that breaks naive code,
// NUL bytes, oversized strings). Only the keywords the document uses are read; an unknown shape
// falls back to any JSON value.
import fc from 'fast-check';
import type { JsonSchema } from '../support/openapi.ts';

/** A JSON token written as is into a body (numbers JSON.stringify cannot write: 2^53+1, 1e400, -0). */
export class RawJson {
  readonly text: string;
  constructor(text: string) {
    this.text = text;
  }
}

/**
 * Known-good values by field or query parameter name (a bank code the banks list has, an account the
 * sandbox bank pays…), and by `{name}` for path parameters: rules the schemas do not state.
 */
export type Hints = Record<string, fc.Arbitrary<unknown>>;

const MAX_SAFE = Number.MAX_SAFE_INTEGER;

/** A schema that nothing satisfies (`not: {}`): the parameter must not be sent. */
export function isUnsatisfiable(schema: JsonSchema | undefined): boolean {
  const not = schema?.not;
  return typeof not === 'object' && not !== null && Object.keys(not).length === 0;
}

const asSchemas = (value: unknown) => (Array.isArray(value) ? (value as JsonSchema[]) : []);

const num = (value: unknown): number | undefined => (typeof value === 'number' ? value : undefined);

function integers(schema: JsonSchema): fc.Arbitrary<number> {
  const exclusiveMin = num(schema.exclusiveMinimum);
  const exclusiveMax = num(schema.exclusiveMaximum);
  const min = Math.max(
    num(schema.minimum) ?? -1e12,
    exclusiveMin !== undefined ? Math.floor(exclusiveMin) + 1 : -MAX_SAFE,
    -MAX_SAFE,
  );
  const max = Math.min(
    num(schema.maximum) ?? 1e12,
    exclusiveMax !== undefined ? Math.ceil(exclusiveMax) - 1 : MAX_SAFE,
    MAX_SAFE,
  );
  const lo = Math.ceil(min);
  const hi = Math.floor(max);
  // The bounds themselves are where off-by-one errors live; small values are where most clients are.
  return fc.oneof(
    fc.constantFrom(lo, hi),
    fc.integer({ min: Math.max(lo, -1_000), max: Math.max(Math.min(hi, 1_000_000), Math.max(lo, -1_000)) }),
    fc.bigInt({ min: BigInt(lo), max: BigInt(hi) }).map(Number),
  );
}

function strings(schema: JsonSchema): fc.Arbitrary<string> {
  const minLength = num(schema.minLength) ?? 0;
  const maxLength = num(schema.maxLength);
  const fits = (value: string) => value.length >= minLength && (maxLength === undefined || value.length <= maxLength);
  if (typeof schema.pattern === 'string') {
    return fc.stringMatching(new RegExp(schema.pattern)).filter(fits);
  }
  if (schema.format === 'date-time') return fc.date({ noInvalidDate: true }).map((date) => date.toISOString());
  if (schema.format === 'date') return fc.date({ noInvalidDate: true }).map((date) => date.toISOString().slice(0, 10));
  const cap = Math.min(maxLength ?? 40, Math.max(minLength, 40));
  const bounds = { minLength, maxLength: cap };
  return fc
    .oneof(
      { weight: 4, arbitrary: fc.stringMatching(/^[A-Za-z0-9 _.-]*$/, { size: 'small' }) },
      { weight: 1, arbitrary: fc.string({ ...bounds, unit: 'grapheme' }) },
      { weight: 1, arbitrary: fc.string({ ...bounds, unit: 'binary' }).filter((value) => !value.includes('\u0000')) },
    )
    .map((value) => (value.length < minLength ? value.padEnd(minLength, 'x') : value.slice(0, cap)))
    .filter(fits);
}

/** Values `schema` accepts. `name` is the property's name, for hints. */
export function valid(schema: JsonSchema | undefined, hints: Hints = {}, name?: string): fc.Arbitrary<unknown> {
  const generated = fromSchema(schema ?? {}, hints);
  const hint = name !== undefined ? hints[name] : undefined;
  return hint ? fc.oneof({ weight: 3, arbitrary: hint }, { weight: 1, arbitrary: generated }) : generated;
}

function fromSchema(schema: JsonSchema, hints: Hints): fc.Arbitrary<unknown> {
  if ('const' in schema) return fc.constant(schema.const);
  if (Array.isArray(schema.enum)) return fc.constantFrom(...(schema.enum as unknown[]));
  const alternatives = [...asSchemas(schema.anyOf), ...asSchemas(schema.oneOf)];
  // An object's own alternatives (a transfer's payee: recipient_id, or an account and bank code):
  // the object, with the keys one of them requires and without those it forbids.
  if (alternatives.length > 0 && schema.type === 'object') {
    const { anyOf: _anyOf, oneOf: _oneOf, ...object } = schema;
    return fc.oneof(...alternatives.map((alternative) => objects(narrowed(object, alternative), hints)));
  }
  if (alternatives.length > 0) return fc.oneof(...alternatives.map((alternative) => valid(alternative, hints)));
  const all = asSchemas(schema.allOf);
  if (all.length > 0) return valid(all[0], hints);
  const type = schema.type;
  if (Array.isArray(type)) return fc.oneof(...type.map((one) => fromSchema({ ...schema, type: one }, hints)));
  switch (type) {
    case 'null':
      return fc.constant(null);
    case 'boolean':
      return fc.boolean();
    case 'integer':
      return integers(schema);
    case 'number':
      return fc.double({
        noNaN: true,
        noDefaultInfinity: true,
        min: num(schema.minimum) ?? -1e12,
        max: num(schema.maximum) ?? 1e12,
      });
    case 'string':
      return strings(schema);
    case 'array': {
      const items = valid(schema.items as JsonSchema | undefined, hints);
      const minLength = num(schema.minItems) ?? 0;
      const maxLength = Math.min(num(schema.maxItems) ?? 5, Math.max(minLength, 5));
      return schema.uniqueItems
        ? fc.uniqueArray(items, { minLength, maxLength, selector: (value) => JSON.stringify(value) })
        : fc.array(items, { minLength, maxLength });
    }
    case 'object':
      return objects(schema, hints);
    default:
      return fc.jsonValue({ maxDepth: 2 });
  }
}

/** The keys a `not` forbids: `{required}`, or `{anyOf: [{required}…]}`. */
function forbiddenKeys(not: unknown): string[] {
  if (typeof not !== 'object' || not === null) return [];
  const { required, anyOf } = not as JsonSchema;
  return [...(Array.isArray(required) ? (required as string[]) : []), ...asSchemas(anyOf).flatMap(forbiddenKeys)];
}

/** `object` as one of its alternatives has it: their required keys together, its forbidden keys gone. */
function narrowed(object: JsonSchema, alternative: JsonSchema): JsonSchema {
  const forbidden = new Set(forbiddenKeys(alternative.not));
  const properties = Object.fromEntries(
    Object.entries((object.properties ?? {}) as Record<string, JsonSchema>).filter(([name]) => !forbidden.has(name)),
  );
  const required = [object.required, alternative.required].flatMap((keys) => (Array.isArray(keys) ? keys : []));
  return { ...object, properties, required: required.filter((name) => !forbidden.has(name as string)) };
}

function objects(schema: JsonSchema, hints: Hints): fc.Arbitrary<unknown> {
  const properties = (schema.properties ?? {}) as Record<string, JsonSchema>;
  const names = Object.keys(properties);
  if (names.length === 0) {
    // A free-form object (`metadata`): a few small entries.
    return fc.dictionary(
      fc.stringMatching(/^[a-z_]{1,12}$/),
      fc.jsonValue({ maxDepth: 2 }).filter((value) => !JSON.stringify(value).includes('\\u0000')),
      { maxKeys: 4 },
    );
  }
  const required = new Set(Array.isArray(schema.required) ? (schema.required as string[]) : []);
  const shape = Object.fromEntries(names.map((name) => [name, valid(properties[name], hints, name)]));
  return fc.record(shape, { requiredKeys: names.filter((name) => required.has(name)) });
}

const LONE_SURROGATES = ['\ud800', '\udfff', 'a\ud83d', '\udc00b'];

/** Strings that break naive code: direction overrides, emoji, combining marks, NUL, lone surrogates, size. */
export const hostileString: fc.Arbitrary<string> = fc.oneof(
  {
    weight: 4,
    arbitrary: fc.constantFrom(
      '',
      ' ',
      '\u202Eevil\u202C',
      '\u0645\u0631\u062d\u0628\u0627',
      '💸🇳🇬👩‍👩‍👧‍👦',
      'e\u0301\u0302\u0303\u0304\u0305\u0306\u0307',
      'a\u0000b',
      '\u0000',
      '\u200b\ufeff',
      'NaN',
      'Infinity',
      '-0',
      '1e308',
      '9007199254740993',
      "'; drop table transfers; --",
      '../../etc/passwd',
      '%00',
      '<script>alert(1)</script>',
      '{"$gt":""}',
      '__proto__',
    ),
  },
  // Written by JSON.stringify as `\ud800` escapes: what PostgreSQL's jsonb refuses.
  { weight: 3, arbitrary: fc.constantFrom(...LONE_SURROGATES) },
  { weight: 1, arbitrary: fc.string({ unit: 'binary', maxLength: 30 }) },
  { weight: 1, arbitrary: fc.string({ unit: 'grapheme', maxLength: 30 }) },
  {
    weight: 1,
    arbitrary: fc.constantFrom(
      'x'.repeat(257),
      'x'.repeat(2_049),
      '\u{1F4B8}'.repeat(5_000),
      'a'.repeat(100_000),
      'e\u0301'.repeat(20_000),
    ),
  },
);

/** Numbers at the edges of what JSON and JavaScript can say. */
export const hostileNumber: fc.Arbitrary<unknown> = fc.oneof(
  fc.constantFrom(1e308, -1e308, -0, 0, -1, 0.5, 1e-308, 5e-324, MAX_SAFE, -MAX_SAFE, MAX_SAFE + 1, 2 ** 63, 99.99),
  fc.constantFrom(
    new RawJson('9007199254740993'),
    new RawJson('-9007199254740993'),
    new RawJson('1e309'),
    new RawJson('-1e309'),
    new RawJson('-0'),
    new RawJson('1E400'),
    new RawJson('0.0000000000000000000000001'),
    new RawJson('100.0'),
    new RawJson('1e2'),
    new RawJson('123456789012345678901234567890'),
  ),
  fc.double(),
  fc.integer(),
);

/** Anything but what the schema wants: wrong types, extremes, hostile strings. */
export const hostile: fc.Arbitrary<unknown> = fc.oneof(
  hostileString,
  hostileNumber,
  fc.constantFrom(true, false, null, [], {}, [1, 'a'], { $gt: '' }, [[[[]]]]),
  fc.constantFrom(
    new RawJson('{"__proto__":{"polluted":true}}'),
    new RawJson('{"constructor":{"prototype":{"polluted":true}}}'),
  ),
  fc.jsonValue({ maxDepth: 3 }),
);
