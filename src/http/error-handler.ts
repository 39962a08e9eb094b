// Turns anything thrown while serving a request into the contract's envelope: ApiError as is,
// schema validation and body-parser failures as validation / payload errors, anything else as
// a 500 whose message says nothing of the internals (the real error goes to the log).
import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { hasZodFastifySchemaValidationErrors } from 'fastify-type-provider-zod';
import { ApiError, type EnvelopeStyle, type FieldIssue, envelopeStyleFor, renderError } from './errors.ts';

function fieldPath(instancePath: string, context: string | undefined): string {
  const path = instancePath.replace(/^\//, '').split('/').filter(Boolean).join('.');
  return path || context || 'body';
}

/** Maps a thrown value to an ApiError. Exported for unit tests. */
export function toApiError(error: unknown): ApiError {
  if (error instanceof ApiError) return error;
  if (hasZodFastifySchemaValidationErrors(error)) {
    const context = (error as { validationContext?: string }).validationContext;
    const fields: FieldIssue[] = error.validation.map((issue) => ({
      path: fieldPath(issue.instancePath, context),
      message: issue.message ?? 'is invalid',
    }));
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
      return new ApiError('payload_too_large', 'request body is larger than the 1 MB limit');
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
  return reply.status(apiError.status).send(renderError(apiError, style, { path, method: request.method }));
}

const LEGACY_PREFIX = /^\/(v1|api(?!\/v1(\/|$)))(\/|$)/;

/** `/v1/transfers` and `/api/transfers` → `/api/v1/transfers`. */
export function canonicalPathFor(path: string): string | undefined {
  const match = LEGACY_PREFIX.exec(path);
  if (!match) return undefined;
  const rest = path.slice(match[0].length).replace(/^v1(\/|$)/, '');
  return `/api/v1/${rest}`.replace(/\/$/, '');
}

export function registerErrorHandling(app: FastifyInstance): void {
  app.setErrorHandler((error, request, reply) => {
    const apiError = toApiError(error);
    if (apiError.status >= 500) {
      request.log.error({ err: error }, 'request failed');
    } else {
      request.log.info({ code: apiError.kind, message: apiError.message }, 'request refused');
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
