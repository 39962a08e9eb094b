// The OpenAPI document states every error status a route can answer, so that a client generated
// from it knows them all: 400, 401, 429 and 503 everywhere; 404 where the path names a resource;
// 409, 413 and 422 on POSTs, 413 on PUTs, PATCHes and DELETEs (Fastify reads their bodies too, so
// an oversized one is refused). Each in the route's own envelope style (decisions §1), except that
// a transfer route with a path parameter may also answer 400 in the resource style: the router
// refuses a malformed or overlong parameter before any route is chosen (decisions §12). 403 where
// a live key is refused (src/http/live-mode.ts): routes that reach a provider, and sandbox routes.
// Filled in at route registration; what a route declares itself is kept.
import type { FastifyInstance } from 'fastify';
import { z } from 'zod';
import { ResourceErrorSchema } from './envelope.ts';
import { envelopeStyleFor } from './errors.ts';
import { SANDBOX_PREFIX } from './live-mode.ts';

export const TransferErrorSchema = z.object({
  success: z.literal(false),
  error: z.object({
    code: z.string(),
    message: z.string(),
    status: z.number(),
    details: z.record(z.string(), z.unknown()).optional(),
  }),
});

/** Methods other than POST whose bodies Fastify reads (and so may find over the limit). */
const BODY_METHODS = ['PUT', 'PATCH', 'DELETE'];

export function registerErrorResponseDocs(app: FastifyInstance): void {
  app.addHook('onRoute', (route) => {
    const schema = route.schema as { hide?: boolean; response?: Record<string, unknown> } | undefined;
    if (!schema || schema.hide || route.url.startsWith('/docs')) return;
    const methods = Array.isArray(route.method) ? route.method : [route.method];
    const envelope = envelopeStyleFor(route.url) === 'transfer' ? TransferErrorSchema : ResourceErrorSchema;
    const statuses = [400, 429, 503];
    if (!route.config?.public) statuses.push(401);
    if (route.config?.reachesProvider || route.url.startsWith(SANDBOX_PREFIX)) statuses.push(403);
    if (route.url.includes('/:')) statuses.push(404);
    if (methods.includes('POST')) statuses.push(409, 413, 422);
    else if (methods.some((method) => BODY_METHODS.includes(method))) statuses.push(413);
    const documented: Record<string, unknown> = Object.fromEntries(
      statuses.map((status) => [String(status), envelope]),
    );
    const response: Record<string, unknown> = { ...documented, ...schema.response };
    if (envelope === TransferErrorSchema && route.url.includes('/:')) {
      const own = (response['400'] ?? TransferErrorSchema) as z.ZodType;
      response['400'] = z.union([own, ResourceErrorSchema]);
    }
    schema.response = response;
  });
}
