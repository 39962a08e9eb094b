// Hostile shapes refused at the edge (decisions §12), before any handler, database or workflow
// sees them: a NUL character or a lone surrogate in any string (body, query, path, and object
// keys), bodies nested deeper than 32 levels, and `metadata` over 16 KiB or 8 levels. Every walk
// here is iterative, so no input can exhaust the stack.
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { z } from 'zod';
import { ApiError, type FieldIssue } from './errors.ts';

export const MAX_BODY_DEPTH = 32;
export const MAX_METADATA_BYTES = 16 * 1024;
export const MAX_METADATA_DEPTH = 8;

/** Levels of nesting: a scalar is 0, `{}` or `[]` is 1, `{a:{}}` is 2. Stops counting past `limit`. */
export function nestingDepth(value: unknown, limit = Number.POSITIVE_INFINITY): number {
  let deepest = 0;
  const stack: [unknown, number][] = [[value, 0]];
  while (stack.length > 0) {
    const [current, depth] = stack.pop()!;
    if (current === null || typeof current !== 'object') continue;
    const level = depth + 1;
    if (level > deepest) deepest = level;
    if (deepest > limit) return deepest;
    for (const child of Object.values(current as Record<string, unknown>)) stack.push([child, level]);
  }
  return deepest;
}

function joinPath(parent: string, key: string | number): string {
  if (typeof key === 'number') return `${parent}[${key}]`;
  return parent ? `${parent}.${key}` : key;
}

/** A lone surrogate half, which well-formed UTF-16 never has (a `u` regex sees pairs as one code point). */
const LONE_SURROGATE = /\p{Surrogate}/u;

/** Writes NULs and lone surrogates of an object key as `\uXXXX`, so that the field's path can be shown. */
const printable = (key: string) =>
  key
    .replaceAll('\u0000', '\\u0000')
    .replace(/\p{Surrogate}/gu, (char) => `\\u${char.charCodeAt(0).toString(16).padStart(4, '0')}`);

/** The first place in `value` where a string or an object key is `bad`, as a field path. */
function findString(value: unknown, bad: (text: string) => boolean, root: string): string | undefined {
  const stack: [unknown, string][] = [[value, root]];
  while (stack.length > 0) {
    const [current, path] = stack.pop()!;
    if (typeof current === 'string') {
      if (bad(current)) return path || 'body';
      continue;
    }
    if (current === null || typeof current !== 'object') continue;
    if (Array.isArray(current)) {
      current.forEach((child, index) => stack.push([child, joinPath(path, index)]));
      continue;
    }
    for (const [key, child] of Object.entries(current as Record<string, unknown>)) {
      const childPath = joinPath(path, key);
      if (bad(key)) return printable(childPath);
      stack.push([child, childPath]);
    }
  }
  return undefined;
}

/** The first place in `value` that holds a NUL character (in a string or an object key), as a field path. */
export function findNul(value: unknown, root = ''): string | undefined {
  return findString(value, (text) => text.includes('\u0000'), root);
}

/**
 * The first place in `value` that holds a lone surrogate (`"\ud800"` in JSON): text PostgreSQL's
 * jsonb refuses and its text columns would store as U+FFFD, so it is refused here, like NUL.
 */
export function findLoneSurrogate(value: unknown, root = ''): string | undefined {
  return findString(value, (text) => LONE_SURROGATE.test(text), root);
}

/** The issues of a request's parsed parts, in the order a client would fix them. */
export function hostileInputIssues(request: Pick<FastifyRequest, 'params' | 'query' | 'body'>): FieldIssue[] {
  const issues: FieldIssue[] = [];
  const strings = (part: unknown) => {
    const nul = findNul(part);
    if (nul) issues.push({ path: nul, message: 'must not contain a NUL character (U+0000)' });
    const surrogate = findLoneSurrogate(part);
    if (surrogate) issues.push({ path: surrogate, message: 'must be well-formed Unicode (no lone surrogate)' });
  };
  strings(request.params);
  strings(request.query);
  // Bodies that a route keeps as raw text (signed provider callbacks) are checked by their route.
  if (request.body !== null && typeof request.body === 'object') {
    if (nestingDepth(request.body, MAX_BODY_DEPTH) > MAX_BODY_DEPTH) {
      issues.push({ path: 'body', message: `must not be nested deeper than ${MAX_BODY_DEPTH} levels` });
    } else strings(request.body);
  }
  return issues;
}

export function registerHostileInputGuard(app: FastifyInstance): void {
  app.addHook('preValidation', (request, _reply, done) => {
    const issues = hostileInputIssues(request);
    done(issues.length > 0 ? ApiError.validation(issues) : undefined);
  });
}

/** `metadata`, wherever a resource has it: a JSON object of at most 16 KiB and 8 levels. */
export const Metadata = z
  .record(z.string(), z.unknown(), { error: 'must be an object' })
  .superRefine((value, context) => {
    if (nestingDepth(value, MAX_METADATA_DEPTH) > MAX_METADATA_DEPTH) {
      context.addIssue({ code: 'custom', message: `must be at most ${MAX_METADATA_DEPTH} levels deep` });
      return;
    }
    if (Buffer.byteLength(JSON.stringify(value)) > MAX_METADATA_BYTES) {
      context.addIssue({
        code: 'custom',
        message: `must be at most ${MAX_METADATA_BYTES} bytes (16 KiB) as JSON`,
      });
    }
  });
