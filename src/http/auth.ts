// Authentication: every route is private unless its config says `public: true`. The tenant and
// key are resolved from `Authorization: Bearer sk_…` in onRequest, before the body is parsed or
// any handler runs; handlers read the tenant from request.auth and pass it to every query. A key
// that resolved is remembered for API_KEY_CACHE_MS (1 s; src/tenants/key-cache.ts).
// The same hook applies the rate limits (src/http/rate-limits.ts): per key id once the key is
// known, per client address before a 401, so that failed authentication is limited too.
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { ApiError } from './errors.ts';
import { sendError } from './error-handler.ts';
import type { RateLimits } from './rate-limits.ts';

/** What a key resolved to (src/tenants/tenants.ts resolves them). */
export interface ResolvedKey {
  keyId: string;
  mode: 'test' | 'live';
  /**
   * The id of the key's mode of its tenant (the tenant's own id for a test key, its live id for a
   * live key): what every record the key makes or reads is scoped by.
   */
  tenantId: string;
  tenantName: string;
  features: string[];
  dailyTransferLimitMinor: number;
  allowedAccountTypes: string[];
}

/** A key's resolution: its tenant and mode, or why it does not work. */
export type KeyResolution =
  { ok: true; key: ResolvedKey } | { ok: false; reason: 'malformed' | 'unknown' | 'revoked' | 'expired' };

declare module 'fastify' {
  interface FastifyRequest {
    /** Set for every authenticated route before its handler runs. */
    auth?: ResolvedKey;
  }
  interface FastifyContextConfig {
    /** No API key needed (health, docs, provider callbacks). */
    public?: boolean;
    /**
     * A public route whose every request must carry a provider's signature (provider callbacks):
     * not on the per-address budget, which a card processor asking about every purchase from one
     * address would exhaust (each purchase then declined on its timeout). An unsigned request is
     * refused 401 by the route before anything is parsed or stored.
     */
    signed?: boolean;
  }
}

const REASONS = {
  missing: 'missing API key: send Authorization: Bearer sk_test_… or sk_live_…',
  malformed: 'malformed API key: expected Authorization: Bearer sk_test_… or sk_live_…',
  unknown: 'invalid API key',
  revoked: 'this API key has been revoked',
  expired: 'this API key has expired: it was rolled, use its successor',
} as const;

function bearerToken(request: FastifyRequest): string | undefined {
  const header = request.headers.authorization;
  if (!header) return undefined;
  const match = /^Bearer\s+(\S+)\s*$/i.exec(header);
  return match ? match[1] : '';
}

/** The tenant of an authenticated request; throws if the route was not authenticated. */
export function tenantOf(request: FastifyRequest): ResolvedKey {
  if (!request.auth) throw new Error(`route ${request.routeOptions.url} used tenantOf without authentication`);
  return request.auth;
}

/** `resolve`: a bearer token to its key (the tenants feature's lookup behind its cache). */
export function registerAuth(
  app: FastifyInstance,
  limits: RateLimits,
  resolve: (token: string) => Promise<KeyResolution>,
): void {
  app.addHook('onRequest', async (request, reply) => {
    // Unknown routes fall through to the 404 handler; public routes need no key.
    if (!request.routeOptions.url) return;
    if (request.routeOptions.config.public) {
      if (!request.routeOptions.config.signed) await limits.publicRoutes(request, reply);
      return;
    }
    const token = bearerToken(request);
    let reason: keyof typeof REASONS | undefined;
    if (token === undefined) reason = 'missing';
    else if (token === '') reason = 'malformed';
    else {
      const resolution = await resolve(token);
      if (resolution.ok) {
        request.auth = resolution.key;
        request.log = request.log.child({ tenantId: resolution.key.tenantId, mode: resolution.key.mode });
        await limits.perKey(request, reply);
        return;
      }
      reason = resolution.reason;
    }
    // Throws 429 once this address has used its budget for requests without a valid key.
    await limits.unauthenticated(request, reply);
    reply.header('www-authenticate', 'Bearer');
    return sendError(request, reply, new ApiError('unauthorized', REASONS[reason]));
  });
}
