// What an API key may do (decisions §19): its scopes, and the one table that names the scope each
// authenticated route needs, keyed as Fastify knows the route (`METHOD /url` with its `:params`).
// The auth hook (./auth.ts) refuses a call whose key lacks the route's scope with 403
// FORBIDDEN / forbidden and `details:{required_scope}`; the app refuses to start when an
// authenticated route is missing here (registerScopeGuard), so a new route cannot go unscoped.
// A HEAD request is a GET's (Fastify adds the HEAD routes itself).
import type { FastifyInstance, RouteOptions } from 'fastify';

export const SCOPES = [
  'read',
  'transfers:write',
  'transfers:approve',
  'virtual_accounts:write',
  'cards:write',
  'identity:write',
  'webhooks:write',
  'keys:write',
  '*',
] as const;
export type Scope = (typeof SCOPES)[number];

export function isScope(value: string): value is Scope {
  return (SCOPES as readonly string[]).includes(value);
}

/** Whether a key holding `held` may do what `needed` allows: `*` holds every scope. */
export function holdsScope(held: readonly string[], needed: Scope): boolean {
  return held.includes('*') || held.includes(needed);
}

/**
 * The scope of every authenticated route. `read` is every GET but the keys list, the transfer
 * policy and the audit log (keys:write). Rows for routes the app does not have (yet) are harmless:
 * only a route that exists is checked.
 */
export const ROUTE_SCOPES: Readonly<Record<string, Scope>> = {
  'GET /api/v1/wallet': 'read',
  'GET /api/v1/wallet/transactions': 'read',
  'GET /api/v1/banks': 'read',
  'GET /api/v1/banks/resolve': 'read',
  'GET /api/v1/event-types': 'read',
  'GET /api/v1/events': 'read',
  'GET /api/v1/events/stream': 'read',
  'GET /api/v1/events/:id': 'read',

  'GET /api/v1/transfers': 'read',
  'GET /api/v1/transfers/:id': 'read',
  'GET /api/v1/transfers/bulk': 'read',
  'GET /api/v1/transfers/bulk/:id': 'read',
  'GET /api/v1/transfers/bulk/:id/items': 'read',
  'POST /api/v1/transfers': 'transfers:write',
  'POST /api/v1/transfers/bulk': 'transfers:write',
  'POST /api/v1/transfers/:id/approve': 'transfers:approve',
  'POST /api/v1/transfers/:id/reject': 'transfers:approve',
  'POST /api/v1/transfers/bulk/:id/approve': 'transfers:approve',
  'POST /api/v1/transfers/bulk/:id/reject': 'transfers:approve',
  'GET /api/v1/recipients': 'read',
  'GET /api/v1/recipients/:id': 'read',
  'POST /api/v1/recipients': 'transfers:write',
  'DELETE /api/v1/recipients/:id': 'transfers:write',

  'GET /api/v1/virtual-accounts': 'read',
  'GET /api/v1/virtual-accounts/:id': 'read',
  'GET /api/v1/virtual-accounts/:id/credits': 'read',
  // A return sends money out of the wallet: a transfer's scope, not an account's.
  'POST /api/v1/virtual-accounts/:id/credits/:credit_id/return': 'transfers:write',
  'POST /api/v1/virtual-accounts': 'virtual_accounts:write',
  'POST /api/v1/virtual-accounts/:id/close': 'virtual_accounts:write',
  'POST /api/v1/sandbox/virtual-accounts/:id/credits': 'virtual_accounts:write',

  'GET /api/v1/cards': 'read',
  'GET /api/v1/cards/:card_id': 'read',
  'GET /api/v1/cards/:card_id/security-settings': 'read',
  'GET /api/v1/cards/:card_id/auto-reload': 'read',
  'GET /api/v1/cards/:card_id/authorizations': 'read',
  'GET /api/v1/cards/:card_id/funding/history': 'read',
  'GET /api/v1/cards/:card_id/balance': 'read',
  'POST /api/v1/cards': 'cards:write',
  'PATCH /api/v1/cards/:card_id': 'cards:write',
  'PUT /api/v1/cards/:card_id/security-settings': 'cards:write',
  'PUT /api/v1/cards/:card_id/auto-reload': 'cards:write',
  'POST /api/v1/cards/:card_id/lock': 'cards:write',
  'POST /api/v1/cards/:card_id/unlock': 'cards:write',
  'POST /api/v1/cards/:card_id/jit-fund': 'cards:write',
  'POST /api/v1/cards/:card_id/fund': 'cards:write',
  'POST /api/v1/sandbox/cards/:card_id/purchases': 'cards:write',
  'POST /api/v1/sandbox/card-authorizations/:authorization_id/clear': 'cards:write',
  'POST /api/v1/sandbox/card-authorizations/:authorization_id/reverse': 'cards:write',

  'GET /api/v1/identity/customers/:id': 'read',
  'POST /api/v1/identity/customers': 'identity:write',
  'POST /api/v1/identity/customers/:id/bvn-verification': 'identity:write',

  'GET /api/v1/webhook-endpoints': 'read',
  'GET /api/v1/webhook-endpoints/:id': 'read',
  'GET /api/v1/webhook-deliveries': 'read',
  'GET /api/v1/webhook-deliveries/:id': 'read',
  'POST /api/v1/webhook-endpoints': 'webhooks:write',
  'POST /webhook-endpoints': 'webhooks:write',
  'DELETE /api/v1/webhook-endpoints/:id': 'webhooks:write',
  'PATCH /api/v1/webhook-endpoints/:id': 'webhooks:write',
  'POST /api/v1/webhook-endpoints/:id/rotate-secret': 'webhooks:write',
  'POST /api/v1/webhook-endpoints/:id/recover': 'webhooks:write',
  'POST /api/v1/webhook-endpoints/:id/test': 'webhooks:write',
  'POST /api/v1/webhook-deliveries/:id/replay': 'webhooks:write',

  'GET /api/v1/api-keys': 'keys:write',
  'POST /api/v1/api-keys': 'keys:write',
  'POST /api/v1/api-keys/:id/roll': 'keys:write',
  'DELETE /api/v1/api-keys/:id': 'keys:write',
  'GET /api/v1/transfer-policy': 'keys:write',
  'PUT /api/v1/transfer-policy': 'keys:write',
  'GET /api/v1/audit-log': 'keys:write',
  'GET /api/v1/audit-log/:id': 'keys:write',
};

/** The table's key of a route: its method (a HEAD as its GET) and its URL pattern. */
export function routeScopeKey(method: string, url: string): string {
  return `${method === 'HEAD' ? 'GET' : method} ${url}`;
}

/** The scope a route needs; undefined for a route not in the table. */
export function scopeOf(
  method: string,
  url: string,
  table: Readonly<Record<string, Scope>> = ROUTE_SCOPES,
): Scope | undefined {
  const key = routeScopeKey(method, url);
  return Object.hasOwn(table, key) ? table[key] : undefined;
}

/** The table's keys of an authenticated route (one per method); none for a public route. */
export function authenticatedRouteKeys(route: Pick<RouteOptions, 'method' | 'url' | 'config'>): string[] {
  if (route.config?.public) return [];
  const methods = Array.isArray(route.method) ? route.method : [route.method];
  return methods.map((method) => routeScopeKey(String(method).toUpperCase(), route.url));
}

const authenticated = new WeakMap<FastifyInstance, Set<string>>();

/** The table's keys of every authenticated route the app has, as its guard saw them registered. */
export function authenticatedRoutes(app: FastifyInstance): string[] {
  return [...(authenticated.get(app) ?? [])];
}

/**
 * Refuses to register an authenticated route that ROUTE_SCOPES does not name: the app then fails to
 * build, with the route in the message. Registered after every hook that marks routes public.
 */
export function registerScopeGuard(app: FastifyInstance, table: Readonly<Record<string, Scope>> = ROUTE_SCOPES): void {
  const seen = new Set<string>();
  authenticated.set(app, seen);
  app.addHook('onRoute', (route) => {
    for (const key of authenticatedRouteKeys(route)) {
      seen.add(key);
      if (!Object.hasOwn(table, key)) {
        throw new Error(
          `route ${key} needs an API key but names no scope: add it to ROUTE_SCOPES (src/http/scopes.ts)`,
        );
      }
    }
  });
}
