// Turns anything thrown while serving a request into the contract's envelope: ApiError as is,
// schema validation and body-parser failures as validation / payload errors, anything else as
// a 500 whose message says nothing of the internals (the real error goes to the log). Requests
// the router refuses before any route (bad URL encoding, a path parameter over the length limit)
// get the same envelope through Fastify's `frameworkErrors` option, never Fastify's own body.
import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { hasZodFastifySchemaValidationErrors } from 'fastify-type-provider-zod';
import { RETRY_AFTER_SECONDS, isDependencyUnavailable, unavailable } from './deadlines.ts';
import { maskAccountNumbers } from '../runtime/log-masking.ts';
import { ApiError, type EnvelopeStyle, type FieldIssue, envelopeStyleFor, renderError } from './errors.ts';

/** A field's path as messages name it: `transfers[3].amount_minor`, an item of a list by its index. */
function fieldPath(instancePath: string, context: string | undefined): string {
  const path = instancePath
    .replace(/^\//, '')
    .split('/')
    .filter(Boolean)
    .map((segment, i) => (/^\d+$/.test(segment) ? `[${segment}]` : i === 0 ? segment : `.${segment}`))
    .join('');
  return path || context || 'body';
}

/** Maps a thrown value to an ApiError. Exported for unit tests. */
export function toApiError(error: unknown, bodyLimit?: number): ApiError {
  if (error instanceof ApiError) return error;
  if (hasZodFastifySchemaValidationErrors(error)) {
    const context = (error as { validationContext?: string }).validationContext;
    const fields: FieldIssue[] = error.validation.flatMap((issue) => {
      // A strict object's unknown keys: name each key, not the object that holds it.
      const keys = (issue.params as { keys?: unknown } | undefined)?.keys;
      if (issue.keyword === 'unrecognized_keys' && Array.isArray(keys) && keys.length > 0) {
        const parent = fieldPath(issue.instancePath, undefined);
        return keys.map((key) => ({
          path: parent === 'body' ? String(key) : `${parent}.${String(key)}`,
          message: 'is not a known field',
        }));
      }
      return [{ path: fieldPath(issue.instancePath, context), message: issue.message ?? 'is invalid' }];
    });
    return ApiError.validation(fields);
  }
  const fastifyError = error as Partial<FastifyError> | undefined;
  switch (fastifyError?.code) {
    case 'FST_ERR_CTP_INVALID_JSON_BODY':
      return ApiError.validation([{ path: 'body', message: 'is not valid JSON' }], 'malformed JSON body');
    case 'FST_ERR_CTP_EMPTY_JSON_BODY':
      return ApiError.validation(
        [{ path: 'body', message: 'is empty but Content-Type is application/json' }],
        'empty JSON body',
      );
    case 'FST_ERR_CTP_INVALID_MEDIA_TYPE':
      return ApiError.validation(
        [{ path: 'content-type', message: 'must be application/json' }],
        'unsupported Content-Type: send application/json',
      );
    case 'FST_ERR_CTP_BODY_TOO_LARGE':
      return new ApiError(
        'payload_too_large',
        bodyLimit === undefined
          ? 'request body is larger than the limit (BODY_LIMIT_BYTES)'
          : `request body is larger than this route's limit of ${bodyLimit} bytes`,
      );
    case 'FST_ERR_CTP_INVALID_CONTENT_LENGTH':
      return ApiError.validation([{ path: 'content-length', message: 'does not match the body' }]);
    default:
      break;
  }
  if (fastifyError?.statusCode === 429) {
    return new ApiError('rate_limited', 'too many requests', null);
  }
  if (fastifyError?.statusCode === 400 && fastifyError.code?.startsWith('FST_ERR_')) {
    return ApiError.validation([{ path: 'request', message: fastifyError.message ?? 'is invalid' }]);
  }
  if (isDependencyUnavailable(error)) {
    return unavailable('a dependency (Temporal or PostgreSQL) is unavailable right now; retry shortly', error);
  }
  return new ApiError('internal', 'internal error', null, { cause: error });
}

export function sendError(
  request: FastifyRequest,
  reply: FastifyReply,
  apiError: ApiError,
  style: EnvelopeStyle = envelopeStyleFor(request.url),
): FastifyReply {
  const path = request.url.split('?')[0] ?? request.url;
  for (const [name, value] of Object.entries(apiError.headers)) reply.header(name, value);
  // Every 503 says when to come back.
  if (apiError.status === 503 && !apiError.headers['retry-after'])
    reply.header('retry-after', String(RETRY_AFTER_SECONDS));
  return reply
    .status(apiError.status)
    .send(renderError(apiError, style, { path, method: request.method, requestId: request.id }));
}

const LEGACY_PREFIX = /^\/(v1|api(?!\/v1(\/|$)))(\/|$)/;

/** `/v1/transfers` and `/api/transfers` → `/api/v1/transfers`. */
export function canonicalPathFor(path: string): string | undefined {
  const match = LEGACY_PREFIX.exec(path);
  if (!match) return undefined;
  const rest = path.slice(match[0].length).replace(/^v1(\/|$)/, '');
  return `/api/v1/${rest}`.replace(/\/$/, '');
}

/** find-my-way's limit on one path parameter's length, set explicitly by src/app.ts. */
export const MAX_PARAM_LENGTH = 100;

function decodedLength(segment: string): number {
  try {
    return decodeURIComponent(segment).length;
  } catch {
    return segment.length;
  }
}

/**
 * The name of the path parameter whose value is over MAX_PARAM_LENGTH, found by matching the path
 * against the app's route patterns (the router's error names only the path). Exported for tests.
 */
export function overlongParameter(patterns: Iterable<string>, path: string): string | undefined {
  const segments = path.split('/');
  for (const pattern of patterns) {
    const parts = pattern.split('/');
    if (parts.length !== segments.length) continue;
    let name: string | undefined;
    const matches = parts.every((part, index) => {
      const segment = segments[index] ?? '';
      if (!part.startsWith(':')) return part === segment;
      if (decodedLength(segment) > MAX_PARAM_LENGTH) name ??= part.slice(1).replace(/\(.*$/, '');
      return segment.length > 0;
    });
    if (matches && name) return name;
  }
  return undefined;
}

/** Route patterns per app, so that the framework-error handler can name a parameter. */
const routePatterns = new WeakMap<FastifyInstance, Set<string>>();

/**
 * Fastify's `frameworkErrors` option: what the router refuses before a route (and its hooks) is
 * chosen. Always the resource style: no route, so no area (decisions §12).
 */
export function frameworkErrors(error: FastifyError, request: FastifyRequest, reply: FastifyReply): void {
  reply.header('x-request-id', request.id);
  const path = request.url.split('?')[0] ?? request.url;
  let apiError: ApiError;
  if (error.code === 'FST_ERR_BAD_URL') {
    apiError = ApiError.validation(
      [{ path: 'url', message: 'must be a valid URL path with well-formed percent-encoding' }],
      'malformed URL: invalid percent-encoding',
    );
  } else if (error.code === 'FST_ERR_MAX_PARAM_LENGTH') {
    const name = overlongParameter(routePatterns.get(request.server) ?? [], path) ?? 'path';
    apiError = ApiError.validation([{ path: name, message: `must be at most ${MAX_PARAM_LENGTH} characters` }]);
  } else {
    apiError = toApiError(error);
  }
  if (apiError.status >= 500) request.log.error({ err: error }, 'request failed before routing');
  else
    request.log.info(
      { code: apiError.kind, message: maskAccountNumbers(apiError.message) },
      'request refused before routing',
    );
  sendError(request, reply, apiError, 'resource');
}

export function registerErrorHandling(app: FastifyInstance): void {
  const patterns = new Set<string>();
  routePatterns.set(app, patterns);
  app.addHook('onRoute', (route) => {
    patterns.add(route.url);
  });

  app.setErrorHandler((error, request, reply) => {
    const apiError = toApiError(error, request.routeOptions.bodyLimit);
    if (apiError.status >= 500) {
      request.log.error({ err: error }, 'request failed');
    } else {
      // The answer may quote the request (`no account 0123456789 at …`); the log shows the last 4 only.
      request.log.info({ code: apiError.kind, message: maskAccountNumbers(apiError.message) }, 'request refused');
    }
    return sendError(request, reply, apiError);
  });

  app.setNotFoundHandler((request, reply) => {
    const path = request.url.split('?')[0] ?? request.url;
    const canonical = canonicalPathFor(path);
    const message = canonical
      ? `${path} is not a supported route form; use the canonical path ${canonical}`
      : `no route ${request.method} ${path}`;
    // Unknown routes always answer in the resource style, whatever their prefix (decisions §1).
    return sendError(request, reply, new ApiError('not_found', message), 'resource');
  });
}
