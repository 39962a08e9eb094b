// Rate limits (decisions §12), in process memory through @fastify/rate-limit. Three budgets a
// minute, each its own store: an authenticated request counts against its API key's id (so every
// spelling of the Authorization header is one budget); a request without a valid key (missing,
// malformed, unknown or revoked) counts against its client address on a smaller budget, so that
// guessing keys is limited too; public routes (health, docs, provider callbacks) count per address
// on the general budget. The auth hook (src/http/auth.ts) picks the budget once it knows which
// case a request is; nothing is limited by the plugin's own global hook.
import rateLimit, { normalizeIP } from '@fastify/rate-limit';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { ApiError } from './errors.ts';

export type RateLimitCheck = (request: FastifyRequest, reply: FastifyReply) => Promise<unknown>;

export interface RateLimits {
  /** Authenticated requests, per API key id. */
  perKey: RateLimitCheck;
  /** Requests without a valid key, per client address. */
  unauthenticated: RateLimitCheck;
  /** Public routes, per client address. */
  publicRoutes: RateLimitCheck;
}

export interface RateLimitConfig {
  perMinute: number;
  unauthenticatedPerMinute: number;
}

function refusal(message: string) {
  return (_request: FastifyRequest, context: { max: number; ttl: number; after: string }) =>
    new ApiError(
      'rate_limited',
      `${message} of ${context.max} requests a minute exceeded; retry in ${context.after}`,
      null,
      {
        headers: { 'retry-after': String(Math.ceil(context.ttl / 1000)) },
      },
    );
}

const clientAddress = (request: FastifyRequest) => normalizeIP(request.ip);

export async function registerRateLimits(app: FastifyInstance, config: RateLimitConfig): Promise<RateLimits> {
  await app.register(rateLimit, { global: false, timeWindow: 60_000 });
  const check = (options: Parameters<FastifyInstance['rateLimit']>[0]): RateLimitCheck => {
    const hook = app.rateLimit(options);
    return (request, reply) => hook.call(app, request, reply);
  };
  return {
    perKey: check({
      max: config.perMinute,
      keyGenerator: (request) => {
        if (!request.auth) throw new Error('the per-key rate limit needs an authenticated request');
        return request.auth.keyId;
      },
      errorResponseBuilder: refusal('rate limit'),
    }),
    unauthenticated: check({
      max: config.unauthenticatedPerMinute,
      keyGenerator: clientAddress,
      errorResponseBuilder: refusal('rate limit for requests without a valid API key from this address'),
    }),
    publicRoutes: check({
      max: config.perMinute,
      keyGenerator: clientAddress,
      errorResponseBuilder: refusal('rate limit'),
    }),
  };
}
