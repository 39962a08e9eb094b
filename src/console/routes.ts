// How a console route is declared: every one is public to the API's key check (the console has its
// own sessions: ./plugin.ts) and hidden from the OpenAPI document; `open` ones need no session.
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';

type Handler = (request: FastifyRequest, reply: FastifyReply) => Promise<FastifyReply | undefined | void>;

export function consoleRoutes(scope: FastifyInstance) {
  const options = (open: boolean) => ({
    config: { public: true, ...(open ? { consolePublic: true } : {}) },
    schema: { hide: true },
  });
  return {
    get: (path: string, handler: Handler, open = false) => scope.get(path, options(open), handler),
    post: (path: string, handler: Handler, open = false) => scope.post(path, options(open), handler),
  };
}

/** A form's fields: strings only (a repeated field keeps its last value), trimmed. */
export function formOf(request: FastifyRequest): Record<string, string> {
  const body = (request.body ?? {}) as Record<string, unknown>;
  const fields: Record<string, string> = {};
  for (const [name, value] of Object.entries(body)) {
    const last: unknown = Array.isArray(value) ? (value as unknown[]).at(-1) : value;
    if (typeof last === 'string') fields[name] = last.trim();
  }
  return fields;
}

/** A form's repeated field (checkboxes): every string value. */
export function formList(request: FastifyRequest, name: string): string[] {
  const value = ((request.body ?? {}) as Record<string, unknown>)[name];
  const values = Array.isArray(value) ? value : value === undefined ? [] : [value];
  return values.filter((item): item is string => typeof item === 'string');
}

/** The query's string values (a repeated parameter keeps its first). */
export function queryOf(request: FastifyRequest): Record<string, string> {
  const query = (request.query ?? {}) as Record<string, unknown>;
  const fields: Record<string, string> = {};
  for (const [name, value] of Object.entries(query)) {
    const first: unknown = Array.isArray(value) ? (value as unknown[])[0] : value;
    if (typeof first === 'string') fields[name] = first;
  }
  return fields;
}

/** Whether an id is safe to put in an API path (uuid-like, prefixed ids): anything else is no page. */
export function pathId(value: unknown): string | undefined {
  return typeof value === 'string' && /^[A-Za-z0-9_-]{1,100}$/.test(value) ? value : undefined;
}
