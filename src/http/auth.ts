// Authentication: every route is private unless its config says `public: true`. The tenant and
// key are resolved from `Authorization: Bearer sk_…` in onRequest, before the body is parsed or
// any handler runs; handlers read the tenant from request.auth and pass it to every query. A key
// that resolved is remembered for API_KEY_CACHE_MS (1 s; src/tenants/key-cache.ts).
// The same hook applies the rate limits (src/http/rate-limits.ts): per key id once the key is
// known, per client address before a 401, so that failed authentication is limited too, and per
// client address on public routes.
// Then, before the body is parsed or anything is looked up, what the key may do (decisions §19):
// the address it is used from must be on its allow-list (./ip-allow-list.ts; a live key of a
// tenant mode whose transfer policy requires one must have one), and it must hold the route's
// scope (./scopes.ts). Each refusal is 403 FORBIDDEN / forbidden in the route's envelope.
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { ApiError } from './errors.ts';
import { sendError } from './error-handler.ts';
import { INTERNAL_CALL_HEADER, type InternalCalls } from './internal-calls.ts';
import { ipAllowed } from './ip-allow-list.ts';
import type { RateLimits } from './rate-limits.ts';
import { ROUTE_SCOPES, type Scope, holdsScope, scopeOf } from './scopes.ts';

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
  /** The key's name, as its tenant gave it ('default' for keys made before names). */
  keyName: string;
  /** Its scopes (./scopes.ts): `*` holds them all. */
  scopes: string[];
  /** The addresses and CIDR ranges it may be used from, normalised; empty: any address. */
  allowedIps: string[];
  /** The tenant mode's transfer policy requires every live key to have an allow-list. */
  liveKeysNeedIpAllowList: boolean;
  /**
   * Set when a person acts through the console (decisions §22; src/console/): `keyId` is then their
   * id, `keyName` their email and `scopes` their role's. Audit entries name them as a user.
   */
  user?: { id: string; email: string; role: string };
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
    /**
     * A public route on no budget at all: the orchestrator's liveness probe, which must answer
     * whether or not the rate limits' counter (PostgreSQL) does.
     */
    unlimited?: boolean;
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

/**
 * Why a key that resolved may not make this call: its address, its tenant's policy, or its scope.
 * The policy's refusal (`ip_allow_list_required`) is for a live key without an allow-list when
 * the tenant mode's transfer policy has `live_keys_need_ip_allow_list`: such a key works nowhere
 * until it is replaced by one with a list.
 */
export function refusalFor(
  key: ResolvedKey,
  method: string,
  url: string,
  ip: string,
  table: Readonly<Record<string, Scope>> = ROUTE_SCOPES,
): ApiError | undefined {
  if (!ipAllowed(key.allowedIps, ip)) {
    return new ApiError('forbidden', `this API key may not be used from ${ip}: the address is not on its allow-list`, {
      reason: 'ip_not_allowed',
    });
  }
  if (key.mode === 'live' && key.liveKeysNeedIpAllowList && key.allowedIps.length === 0) {
    return new ApiError(
      'forbidden',
      "this live API key has no IP allow-list, which the tenant's transfer policy requires of every live key",
      { reason: 'ip_allow_list_required' },
    );
  }
  const scope = scopeOf(method, url, table);
  // A route missing from the table cannot be registered (registerScopeGuard); refuse it if one is.
  if (!scope || !holdsScope(key.scopes, scope)) {
    const required = scope ?? 'unknown';
    return new ApiError('forbidden', `this API key lacks the scope ${required} that this call needs`, {
      required_scope: required,
    });
  }
  return undefined;
}

/**
 * `resolve`: a bearer token to its key (the tenants feature's lookup behind its cache);
 * `used`: told of every request a key authenticated and was allowed to make; `table`: the scope of
 * each route (ROUTE_SCOPES, and the rows of routes a test adds); `internal`: the tickets of the
 * calls the app makes to itself for a person (./internal-calls.ts), checked like keys.
 */
export function registerAuth(
  app: FastifyInstance,
  limits: RateLimits,
  resolve: (token: string) => Promise<KeyResolution>,
  used: (key: ResolvedKey) => void = () => {},
  table: Readonly<Record<string, Scope>> = ROUTE_SCOPES,
  internal?: InternalCalls<ResolvedKey>,
): void {
  app.addHook('onRequest', async (request, reply) => {
    // Unknown routes fall through to the 404 handler; public routes need no key.
    if (!request.routeOptions.url) return;
    if (request.routeOptions.config.public) {
      const { signed, unlimited } = request.routeOptions.config;
      if (!signed && !unlimited) await limits.publicRoutes(request, reply);
      return;
    }
    const ticket = request.headers[INTERNAL_CALL_HEADER];
    const person = typeof ticket === 'string' ? internal?.take(ticket) : undefined;
    if (person) {
      request.auth = person;
      request.log = request.log.child({ tenantId: person.tenantId, mode: person.mode, userId: person.keyId });
      await limits.perKey(request, reply);
      const refusal = refusalFor(person, request.method, request.routeOptions.url, request.ip, table);
      if (refusal) return sendError(request, reply, refusal);
      return;
    }
    const token = ticket === undefined ? bearerToken(request) : '';
    let reason: keyof typeof REASONS | undefined;
    if (token === undefined) reason = 'missing';
    else if (token === '') reason = 'malformed';
    else {
      const resolution = await resolve(token);
      if (resolution.ok) {
        const key = resolution.key;
        request.auth = key;
        request.log = request.log.child({ tenantId: key.tenantId, mode: key.mode });
        await limits.perKey(request, reply);
        const refusal = refusalFor(key, request.method, request.routeOptions.url, request.ip, table);
        if (refusal) {
          request.log.info({ keyId: key.keyId, ...refusal.details }, 'request refused: key may not make it');
          return sendError(request, reply, refusal);
        }
        used(key);
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
