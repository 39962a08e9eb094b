// How the console does anything (decisions §22, "one path"): it calls the API's own routes, in
// process, as the signed-in person (src/http/internal-calls.ts). The route validates, checks the
// scope (the person's role's), runs the feature's service, writes the audit log naming the person,
// and answers in its envelope; the console renders that answer. A list pages exactly as the API's
// list does, because it is the API's list.
import type { EntityManager } from '@mikro-orm/postgresql';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { errorOfResponse } from '../client/errors.ts';
import type { ResolvedKey } from '../http/auth.ts';
import { INTERNAL_CALL_HEADER, type InternalCalls } from '../http/internal-calls.ts';
import { consoleKeyOf } from '../tenants/tenants.ts';
import { ROLE_SCOPES } from './roles.ts';
import type { Session } from './store.ts';

/** An answer of the API: its status, and its body as JSON (or text, for a CSV). */
export interface ApiAnswer<T = unknown> {
  status: number;
  body: T;
  headers: Record<string, string | string[] | number | undefined>;
}

/** The API refused what the console asked: the page shows its message (escaped), with its status. */
export class ApiRefusal extends Error {
  readonly status: number;
  readonly code: string;
  readonly details: unknown;
  constructor(status: number, message: string, code: string, details?: unknown) {
    super(message);
    this.status = status;
    this.code = code;
    this.details = details;
  }
}

/** The message, code and details of an error answer, in either envelope style, as the typed client reads them. */
export function refusalOf(answer: ApiAnswer): ApiRefusal {
  const headers = new Headers();
  for (const [name, value] of Object.entries(answer.headers)) {
    if (typeof value === 'string' || typeof value === 'number') headers.set(name, String(value));
  }
  const error = errorOfResponse(new Response(null, { status: answer.status, headers }), answer.body);
  return new ApiRefusal(answer.status, error.message, error.code, 'details' in error ? error.details : undefined);
}

export class ConsoleApi {
  private readonly app: FastifyInstance;
  private readonly calls: InternalCalls<ResolvedKey>;
  private readonly em: () => EntityManager;
  constructor(app: FastifyInstance, calls: InternalCalls<ResolvedKey>, em: () => EntityManager) {
    this.app = app;
    this.calls = calls;
    this.em = em;
  }

  /** Who the session's person is in its mode; undefined when the tenant has no such mode. */
  async keyOf(session: Session): Promise<ResolvedKey | undefined> {
    return consoleKeyOf(this.em(), session.tenant_id, session.mode, {
      id: session.user_id,
      email: session.email,
      role: session.role,
      scopes: [...ROLE_SCOPES[session.role]],
    });
  }

  /** Calls a route as the person; any answer comes back (an error's too). */
  async call(
    request: FastifyRequest,
    key: ResolvedKey,
    method: 'GET' | 'POST' | 'PUT' | 'DELETE' | 'PATCH',
    url: string,
    body?: unknown,
    headers: Record<string, string> = {},
  ): Promise<ApiAnswer> {
    const { ticket, done } = this.calls.issue(key);
    try {
      const response = await this.app.inject({
        method,
        url,
        remoteAddress: request.ip,
        headers: {
          [INTERNAL_CALL_HEADER]: ticket,
          'x-request-id': request.id,
          ...(body !== undefined ? { 'content-type': 'application/json' } : {}),
          ...headers,
        },
        ...(body !== undefined ? { payload: JSON.stringify(body) } : {}),
      });
      const type = String(response.headers['content-type'] ?? '');
      let parsed: unknown = response.body;
      if (type.includes('json') && response.body !== '') parsed = JSON.parse(response.body);
      return { status: response.statusCode, body: parsed, headers: response.headers };
    } finally {
      done();
    }
  }

  /** A successful answer's body, or ApiRefusal with the API's message. */
  async ok<T = Record<string, unknown>>(
    request: FastifyRequest,
    key: ResolvedKey,
    method: 'GET' | 'POST' | 'PUT' | 'DELETE' | 'PATCH',
    url: string,
    body?: unknown,
  ): Promise<T> {
    const answer = await this.call(request, key, method, url, body);
    if (answer.status >= 400) throw refusalOf(answer);
    return answer.body as T;
  }
}

/** `path?query` from a base path and the query's defined values. */
export function withQuery(path: string, query: Record<string, string | number | undefined | null>): string {
  const params = new URLSearchParams();
  for (const [name, value] of Object.entries(query)) {
    if (value !== undefined && value !== null && value !== '') params.set(name, String(value));
  }
  const text = params.toString();
  return text ? `${path}?${text}` : path;
}
