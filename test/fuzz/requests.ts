// Requests for one operation of the OpenAPI document, as fast-check arbitraries: a valid request
// built from the operation's schemas (real ids of the test tenant where the path names one of its
// resources, a random id otherwise), and mutations of it — one part made hostile at a time (a body
// field, a missing or extra field, the whole body, its bytes, its content type, a query value, a
// path segment, a header), so that a refusal is the answer of that one fault.
import { randomUUID } from 'node:crypto';
import fc from 'fast-check';
import { type Operation, type ResourceIds, resourceOf } from '../support/openapi.ts';
import { type Hints, RawJson, hostile, hostileNumber, hostileString, isUnsatisfiable, valid } from './schemas.ts';

/** One request exactly as sent: replayable from this alone. */
export interface FuzzRequest {
  method: string;
  url: string;
  headers: Record<string, string>;
  /** The body's exact text; absent: no body. */
  payload?: string;
  /** What differs from a valid request (`valid` for none). */
  mutation: string;
}

export interface FuzzContext {
  /** The test tenant's sandbox key. */
  apiKey: string;
  /** Keys a client may send by mistake: the tenant's live key, a revoked one, another tenant's. */
  otherKeys: string[];
  ids: Partial<ResourceIds>;
  hints: Hints;
}

type Body = { kind: 'none' } | { kind: 'json'; value: unknown } | { kind: 'raw'; text: string };

interface Parts {
  /** Path parameter → its segment, already percent-encoded. */
  path: Record<string, string>;
  /** Query pairs, already percent-encoded. */
  query: [string, string][];
  headers: Record<string, string>;
  body: Body;
}

/** Percent-encoding that also writes lone surrogates (as the bytes a careless client sends, CESU-8). */
export function encode(value: string): string {
  try {
    return encodeURIComponent(value);
  } catch {
    let out = '';
    for (const char of value) {
      const code = char.codePointAt(0)!;
      if (code >= 0xd800 && code <= 0xdfff) {
        out += [0xe0 | (code >> 12), 0x80 | ((code >> 6) & 0x3f), 0x80 | (code & 0x3f)]
          .map((byte) => `%${byte.toString(16).toUpperCase()}`)
          .join('');
      } else out += encodeURIComponent(char);
    }
    return out;
  }
}

/** A JSON text for `value`, with RawJson tokens written verbatim. */
export function toJson(value: unknown): string {
  const raws: string[] = [];
  const text = JSON.stringify(value, (_key, inner: unknown) => {
    if (inner instanceof RawJson) {
      raws.push(inner.text);
      return `\u0001raw${raws.length - 1}\u0001`;
    }
    return inner;
  });
  return (text ?? 'null').replace(/"\\u0001raw(\d+)\\u0001"/g, (_match, index: string) => raws[Number(index)]!);
}

const scalar = (value: unknown): string =>
  value instanceof RawJson ? value.text : typeof value === 'string' ? value : toJson(value);

const pathNames = (template: string) => [...template.matchAll(/\{([^}]+)\}/g)].map((match) => match[1]!);

function parameters(operation: Operation, where: 'path' | 'query' | 'header') {
  return (operation.spec.parameters ?? []).filter((parameter) => parameter.in === where);
}

function bodySchema(operation: Operation) {
  return operation.spec.requestBody?.content?.['application/json']?.schema;
}

const isPublic = (operation: Operation) => (operation.spec.security ?? []).length === 0;

/** A valid request's parts: what the schemas accept, with the tenant's real ids. */
function validParts(operation: Operation, context: FuzzContext): fc.Arbitrary<Parts> {
  const resource = resourceOf(operation.template);
  const pathShape: Record<string, fc.Arbitrary<string>> = {};
  pathNames(operation.template).forEach((name, index) => {
    const id = index === 0 && resource ? context.ids[resource] : undefined;
    const schema = parameters(operation, 'path').find((parameter) => parameter.name === name)?.schema;
    // An id of a resource the tenant has; otherwise a hint, an enum, or a random id (then 404 is the answer).
    const hint = context.hints[`{${name}}`];
    const value =
      id !== undefined
        ? fc.constant(id)
        : hint
          ? hint.map(scalar)
          : Array.isArray(schema?.enum)
            ? valid(schema, context.hints).map(scalar)
            : fc.uuid();
    pathShape[name] = value.map(encode);
  });
  const queryShape = parameters(operation, 'query')
    .filter((parameter) => !isUnsatisfiable(parameter.schema))
    .map((parameter) => {
      const value = valid(parameter.schema, context.hints, parameter.name).map((inner): [string, string][] => [
        [encode(parameter.name), encode(scalar(inner))],
      ]);
      return parameter.required ? value : fc.option(value, { nil: [] as [string, string][] });
    });
  const headerShape = parameters(operation, 'header').map((parameter) => {
    const value = valid(parameter.schema, context.hints, parameter.name).map((inner): [string, string][] => [
      [parameter.name.toLowerCase(), scalar(inner)],
    ]);
    return parameter.required ? value : fc.option(value, { nil: [] as [string, string][] });
  });
  const schema = bodySchema(operation);
  const json = valid(schema, context.hints).map((value): Body => ({ kind: 'json', value }));
  const body: fc.Arbitrary<Body> =
    schema === undefined
      ? fc.constant({ kind: 'none' })
      : operation.spec.requestBody?.required
        ? json
        : fc.oneof(json, fc.constant<Body>({ kind: 'none' }));
  return fc
    .record({
      path: fc.record(pathShape),
      query: fc.tuple(...queryShape).map((pairs) => pairs.flat()),
      headers: fc.tuple(...headerShape).map((pairs) => Object.fromEntries(pairs.flat())),
      body,
    })
    .map((parts) => ({
      ...parts,
      headers: { ...(isPublic(operation) ? {} : { authorization: `Bearer ${context.apiKey}` }), ...parts.headers },
    }));
}

/** The request for `parts`: the URL, and the body as JSON with its content type unless told otherwise. */
function build(operation: Operation, parts: Parts, mutation: string): FuzzRequest {
  const path = operation.template.replace(/\{([^}]+)\}/g, (_match, name: string) => parts.path[name] ?? '');
  const query = parts.query.map(([key, value]) => `${key}=${value}`).join('&');
  const headers = { ...parts.headers };
  let payload: string | undefined;
  if (parts.body.kind === 'json') payload = toJson(parts.body.value);
  if (parts.body.kind === 'raw') payload = parts.body.text;
  if (payload !== undefined && !Object.keys(headers).some((name) => name.toLowerCase() === 'content-type')) {
    headers['content-type'] = 'application/json';
  }
  return {
    method: operation.method,
    url: query ? `${path}?${query}` : path,
    headers,
    mutation,
    ...(payload !== undefined ? { payload } : {}),
  };
}

const record = (value: unknown): value is Record<string, unknown> =>
  typeof value === 'object' && value !== null && !Array.isArray(value) && !(value instanceof RawJson);

/** Fields of the body, one level deep (`channels.pos`), as paths. */
function fieldPaths(value: unknown, schema: Record<string, unknown> | undefined): string[][] {
  const names = new Set<string>([
    ...(record(value) ? Object.keys(value) : []),
    ...Object.keys(schema?.properties ?? {}),
  ]);
  const paths: string[][] = [];
  for (const name of names) {
    paths.push([name]);
    const inner = record(value) ? value[name] : undefined;
    if (record(inner)) for (const child of Object.keys(inner)) paths.push([name, child]);
  }
  return paths;
}

function withField(value: unknown, path: string[], replacement: unknown): unknown {
  const copy: Record<string, unknown> = record(value) ? { ...value } : {};
  const [head, ...rest] = path as [string, ...string[]];
  if (rest.length === 0) {
    if (replacement === REMOVE) delete copy[head];
    else copy[head] = replacement;
  } else copy[head] = withField(copy[head], rest, replacement);
  return copy;
}

const REMOVE = Symbol('remove');

/** The body's properties that are objects of any keys (`metadata`). */
function freeFormProperties(schema: Record<string, unknown> | undefined): string[] {
  const properties = (schema?.properties ?? {}) as Record<string, Record<string, unknown>>;
  return Object.keys(properties).filter((name) => {
    const property = properties[name]!;
    return property.type === 'object' && property.properties === undefined;
  });
}

/** `value` with every string (and, if `keys`, every object key but the first level's) replaced by `bad`. */
function everyString(value: unknown, bad: string, keys: boolean, depth = 0): unknown {
  if (typeof value === 'string') return bad;
  if (Array.isArray(value)) return value.map((item) => everyString(item, bad, keys, depth + 1));
  if (!record(value)) return value;
  return Object.fromEntries(
    Object.entries(value).map(([key, inner], index) => [
      keys && depth > 0 ? `${bad}${index}` : key,
      everyString(inner, bad, keys, depth + 1),
    ]),
  );
}

const nested = (depth: number, open: string, close: string, inner = '1') =>
  `${open.repeat(depth)}${inner}${close.repeat(depth)}`;

/** Bodies that are not the JSON object a route wants, as text. */
const hostileBodyText = fc.oneof(
  fc.constantFrom(
    '',
    '{',
    '{"a":',
    "{'a':1}",
    '{"a":1,}',
    '[1,]',
    '{"a":1}garbage',
    'nul',
    'undefined',
    'NaN',
    '\u0000',
    '{"a":"\u0000"}',
    '{"a":1,"a":"x"}',
    '{"__proto__":{"polluted":true}}',
    '{"constructor":{"prototype":{"polluted":true}}}',
    '\ufeff{}',
    '"\\ud800"',
    '{"\\u0000":1}',
    '1e309',
    'null',
    'true',
    '[]',
    '"a string"',
    '9007199254740993',
  ),
  fc
    .constantFrom(33, 100, 10_000, 200_000)
    .chain((depth) =>
      fc.constantFrom(nested(depth, '[', ']'), nested(depth, '{"a":', '}'), nested(depth, '{"metadata":', '}', '{}')),
    ),
  fc.string({ unit: 'binary', maxLength: 50 }),
);

const CONTENT_TYPES = [
  'text/plain',
  'application/x-www-form-urlencoded',
  'multipart/form-data; boundary=x',
  'application/xml',
  'application/json; charset=utf-16',
  'application/json; charset=latin1',
  'application/vnd.api+json',
  'APPLICATION/JSON',
  'application/json;;;',
  'application/jsonx',
  'json',
  '',
  `application/json; ${'p=1;'.repeat(500)}`,
];

/** Header values a client may send: visible ASCII and latin-1 only (what HTTP can carry). */
const headerText = fc.oneof(
  fc.string({ unit: fc.integer({ min: 0x20, max: 0x7e }).map((code) => String.fromCharCode(code)), maxLength: 60 }),
  fc.string({ unit: fc.integer({ min: 0xa0, max: 0xff }).map((code) => String.fromCharCode(code)), maxLength: 20 }),
  fc.constantFrom('', ' ', 'x'.repeat(129), 'x'.repeat(8_000), '\t', 'a b', 'null', '-1'),
);

function hostileHeaders(context: FuzzContext): fc.Arbitrary<[string, string, string]> {
  return fc.oneof(
    fc
      .oneof(
        fc.constant(''),
        fc.constant('Bearer'),
        fc.constant('Bearer '),
        fc.constant(`bearer ${context.apiKey}`),
        fc.constant(`BEARER  ${context.apiKey}`),
        fc.constant(`Basic ${Buffer.from(`${context.apiKey}:`).toString('base64')}`),
        fc.constant(`Bearer ${context.apiKey}x`),
        fc.constant(`Bearer ${context.apiKey.slice(0, -1)}`),
        fc.constant(`Bearer sk_test_${'A'.repeat(40)}`),
        fc.constant(`Bearer sk_live_${'A'.repeat(40)}`),
        fc.constantFrom(...context.otherKeys).map((key) => `Bearer ${key}`),
        headerText.map((text) => `Bearer ${text}`),
        headerText,
      )
      .map((value): [string, string, string] => ['authorization', value, 'authorization']),
    fc
      .oneof(headerText, fc.stringMatching(/^[A-Za-z0-9._:-]{1,128}$/))
      .map((value): [string, string, string] => ['x-request-id', value, 'x-request-id']),
    fc
      .oneof(headerText, fc.uuid())
      .map((value): [string, string, string] => ['idempotency-key', value, 'idempotency-key']),
    fc
      .tuple(
        fc.constantFrom('accept', 'accept-encoding', 'x-forwarded-for', 'x-http-method-override', 'origin'),
        headerText,
      )
      .map(([name, value]): [string, string, string] => [name, value, name]),
  );
}

/** A mutation of valid parts: the changed parts and what was changed. */
type Mutation = (parts: Parts) => fc.Arbitrary<[Parts, string]>;

function mutations(operation: Operation, context: FuzzContext): Mutation[] {
  const schema = bodySchema(operation);
  const hasBody = schema !== undefined;
  const list: Mutation[] = [];
  /** One field of the body set to a value drawn from `values`, and `shown` in the mutation's description. */
  const oneFieldFrom =
    <T>(values: fc.Arbitrary<T>, shown: (bad: T) => string): Mutation =>
    (parts) => {
      const value = parts.body.kind === 'json' ? parts.body.value : undefined;
      const paths = fieldPaths(value, schema);
      if (paths.length === 0) return fc.constant([parts, 'unchanged (no field)']);
      return fc
        .tuple(fc.constantFrom(...paths), values)
        .map(([path, bad]) => [
          { ...parts, body: { kind: 'json', value: withField(value, path, bad) } },
          `body.${path.join('.')} = ${shown(bad)}`,
        ]);
    };
  if (hasBody) {
    list.push(
      // One field made hostile (or set where the body is not an object).
      oneFieldFrom(hostile, (bad) => toJson(bad).slice(0, 80)),
      // One field left out.
      (parts) => {
        const value = parts.body.kind === 'json' ? parts.body.value : undefined;
        const paths = fieldPaths(value, schema).filter((path) => path.length === 1 || record(value));
        if (paths.length === 0) return fc.constant([parts, 'unchanged (no field)']);
        return fc
          .constantFrom(...paths)
          .map((path) => [
            { ...parts, body: { kind: 'json', value: withField(value, path, REMOVE) } },
            `without body.${path.join('.')}`,
          ]);
      },
      // A field the schema does not name.
      (parts) =>
        fc
          .tuple(
            fc.oneof(
              fc.stringMatching(/^[a-z_]{1,20}$/),
              hostileString.filter((key) => key.length < 300),
            ),
            hostile,
          )
          .map(([name, bad]) => {
            const value = parts.body.kind === 'json' && record(parts.body.value) ? parts.body.value : {};
            return [
              { ...parts, body: { kind: 'json', value: { ...value, [name]: bad } } },
              `extra body field ${toJson(name).slice(0, 60)}`,
            ];
          }),
      // Every string of the body, nested ones (metadata) and object keys too, made the same hostile string.
      (parts) =>
        fc.tuple(hostileString, fc.boolean()).map(([bad, keys]) => [
          {
            ...parts,
            body: { kind: 'json', value: everyString(parts.body.kind === 'json' ? parts.body.value : {}, bad, keys) },
          },
          `every string${keys ? ' and key' : ''} = ${toJson(bad).slice(0, 60)}`,
        ]),
      // A hostile entry in every free-form object of the body (`metadata`), the rest left valid.
      (parts) => {
        const value = parts.body.kind === 'json' && record(parts.body.value) ? parts.body.value : {};
        const names = freeFormProperties(schema);
        if (names.length === 0) return fc.constant([parts, 'unchanged (no free-form object)']);
        return fc
          .tuple(
            fc.oneof(
              fc.stringMatching(/^[a-z]{1,8}$/),
              hostileString.filter((key) => key.length < 300),
            ),
            hostile,
          )
          .map(([key, bad]) => [
            {
              ...parts,
              body: {
                kind: 'json',
                value: {
                  ...value,
                  ...Object.fromEntries(
                    names.map((name) => [name, { ...(record(value[name]) ? value[name] : {}), [key]: bad }]),
                  ),
                },
              },
            },
            `${names.join(', ')} gets ${toJson(key).slice(0, 40)}: ${toJson(bad).slice(0, 60)}`,
          ]);
      },
      // A whole body of the wrong kind.
      (parts) =>
        hostile.map((bad) => [{ ...parts, body: { kind: 'json', value: bad } }, 'body replaced by a JSON value']),
      // A number field written as JSON JavaScript cannot hold exactly.
      oneFieldFrom(hostileNumber, toJson),
      // A body that is not JSON, or too deep.
      (parts) => hostileBodyText.map((text) => [{ ...parts, body: { kind: 'raw', text } }, 'hostile body text']),
      // A valid body under another content type; none at all.
      (parts) =>
        fc.constantFrom(...CONTENT_TYPES, undefined).map((type) => {
          const text = parts.body.kind === 'json' ? toJson(parts.body.value) : '{}';
          const body: Body = type === undefined ? { kind: 'none' } : { kind: 'raw', text };
          const headers = { ...parts.headers, ...(type !== undefined ? { 'content-type': type } : {}) };
          return [{ ...parts, headers, body }, type === undefined ? 'no body' : `content-type ${type.slice(0, 60)}`];
        }),
      // Form-encoded fields under the form content type.
      (parts) =>
        fc.constant([
          {
            ...parts,
            headers: { ...parts.headers, 'content-type': 'application/x-www-form-urlencoded' },
            body: { kind: 'raw', text: 'amount_minor=100&customer_id=x' },
          },
          'form-urlencoded body',
        ]),
      // Over the body limit (1 MiB).
      (parts) =>
        fc.constantFrom(1_048_577, 2_000_000).map((size) => {
          const value = parts.body.kind === 'json' && record(parts.body.value) ? parts.body.value : {};
          return [
            { ...parts, body: { kind: 'json', value: { ...value, padding: 'x'.repeat(size) } } },
            `body over ${size} bytes`,
          ];
        }),
    );
  } else if (operation.method !== 'GET') {
    // A body where the operation takes none.
    list.push((parts) =>
      fc
        .oneof(hostileBodyText, hostile.map(toJson), fc.constant('x'.repeat(1_100_000)))
        .map((text) => [{ ...parts, body: { kind: 'raw', text } }, `unexpected body (${text.length} bytes)`]),
    );
  }
  const queryParameters = parameters(operation, 'query');
  list.push(
    // A declared query parameter with a hostile value, or repeated.
    (parts) => {
      const names = queryParameters.map((parameter) => parameter.name);
      if (names.length === 0) return fc.constant([parts, 'unchanged (no query)']);
      return fc
        .tuple(fc.constantFrom(...names), fc.oneof(hostile.map(scalar), fc.constant(null)), fc.boolean())
        .map(([name, bad, repeat]) => {
          const others = parts.query.filter(([key]) => key !== encode(name));
          const value: [string, string][] =
            bad === null
              ? []
              : repeat
                ? [
                    [encode(name), encode(bad)],
                    [encode(name), '1'],
                  ]
                : [[encode(name), encode(bad)]];
          return [
            { ...parts, query: [...others, ...value] },
            `query ${name} ${bad === null ? 'left out' : `= ${bad.slice(0, 60)}`}${repeat ? ' (repeated)' : ''}`,
          ];
        });
    },
    // A query parameter the operation does not declare; a broken query string.
    (parts) =>
      fc
        .oneof(
          fc
            .tuple(fc.oneof(fc.stringMatching(/^[a-z_[\]]{1,20}$/), hostileString), hostile.map(scalar))
            .map(([key, value]): [string, string] => [encode(key), encode(value)]),
          fc.constantFrom<[string, string]>(
            ['%', ''],
            ['a', '%zz'],
            ['a', '%ED%A0%80'],
            ['%00', '1'],
            ['a[b][c]', '1'],
            ['', ''],
          ),
        )
        .map((pair) => [{ ...parts, query: [...parts.query, pair] }, `query pair ${pair.join('=').slice(0, 60)}`]),
    // A hostile header.
    (parts) =>
      hostileHeaders(context).map(([name, value, label]) => {
        const headers = { ...parts.headers, [name]: value };
        if (name === 'authorization' && value === '') delete headers.authorization;
        return [{ ...parts, headers }, `header ${label}: ${value.slice(0, 60)}`];
      }),
  );
  const names = pathNames(operation.template);
  if (names.length > 0) {
    list.push((parts) =>
      fc
        .tuple(
          fc.constantFrom(...names),
          fc.oneof(
            fc.uuid().map(encode),
            fc.constant(encode(randomUUID().toUpperCase())),
            hostileString.filter((value) => value.length > 0).map(encode),
            // Not `..`: clients resolve dot segments before sending, so it would name another route.
            fc.constantFrom('%00', '%zz', '%', '%ED%A0%80', '%2F', 'x'.repeat(101), '1', '-1', '0', 'null', '%20'),
          ),
        )
        .map(([name, segment]) => [
          { ...parts, path: { ...parts.path, [name]: segment } },
          `path ${name} = ${segment.slice(0, 60)}`,
        ]),
    );
  }
  return list;
}

/** Valid requests and mutated ones for `operation`; `validShare` of them valid. */
export function requestsFor(operation: Operation, context: FuzzContext): fc.Arbitrary<FuzzRequest> {
  const parts = validParts(operation, context);
  const mutated = mutations(operation, context);
  return fc.oneof(
    { weight: 1, arbitrary: parts.map((valid) => build(operation, valid, 'valid')) },
    {
      weight: 3,
      arbitrary: fc
        .tuple(parts, fc.integer({ min: 0, max: mutated.length - 1 }))
        .chain(([valid, index]) => mutated[index]!(valid))
        .map(([changed, label]) => build(operation, changed, label)),
    },
  );
}
