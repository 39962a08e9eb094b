// API key scopes and allow-lists as pure rules (src/http/scopes.ts, src/http/ip-allow-list.ts): the
// route table's keys, the startup guard that refuses an authenticated route the table does not
// name, and how allow-list entries are read, written and matched.
import Fastify from 'fastify';
import { describe, expect, it } from 'vitest';
import { ipAllowed, normaliseIpEntry } from '../../src/http/ip-allow-list.ts';
import {
  ROUTE_SCOPES,
  SCOPES,
  authenticatedRoutes,
  holdsScope,
  registerScopeGuard,
  scopeOf,
} from '../../src/http/scopes.ts';

describe('route scopes', () => {
  it('names a scope of the list for every row, and reads a HEAD as its GET', () => {
    for (const [route, scope] of Object.entries(ROUTE_SCOPES)) {
      expect(SCOPES, route).toContain(scope);
      expect(route).toMatch(/^(GET|POST|PUT|PATCH|DELETE) \//);
    }
    expect(scopeOf('HEAD', '/api/v1/wallet')).toBe('read');
    expect(scopeOf('GET', '/api/v1/api-keys')).toBe('keys:write');
    expect(scopeOf('GET', '/api/v1/nowhere')).toBeUndefined();
    expect(ROUTE_SCOPES['POST /api/v1/transfers/:id/approve']).toBe('transfers:approve');
    expect(ROUTE_SCOPES['POST /api/v1/transfers/bulk/:id/reject']).toBe('transfers:approve');
  });

  it('lets * hold every scope, and any other key only its own', () => {
    expect(SCOPES.every((scope) => holdsScope(['*'], scope))).toBe(true);
    expect(holdsScope(['read'], 'read')).toBe(true);
    expect(holdsScope(['read'], 'transfers:write')).toBe(false);
    expect(holdsScope(['keys:write'], 'read')).toBe(false);
  });

  it('refuses to start an app with an authenticated route the table does not name, and lets public ones be', async () => {
    const app = Fastify();
    registerScopeGuard(app);
    app.get('/health-like', { config: { public: true } }, async () => 'ok');
    app.get('/api/v1/wallet', async () => 'ok');
    expect(() => app.post('/api/v1/unscoped', async () => 'ok')).toThrow(
      /route POST \/api\/v1\/unscoped needs an API key but names no scope/,
    );
    expect(authenticatedRoutes(app)).toContain('GET /api/v1/wallet');
    expect(authenticatedRoutes(app)).not.toContain('GET /health-like');
    await app.close();
  });
});

describe('IP allow-lists', () => {
  it.each([
    ['192.0.2.7', '192.0.2.7'],
    ['198.51.100.0/24', '198.51.100.0/24'],
    ['2001:DB8:0:0::1', '2001:db8::1'],
    ['2001:db8::/32', '2001:db8::/32'],
    ['::ffff:192.0.2.9', '192.0.2.9'],
    ['::ffff:192.0.2.0/120', '192.0.2.0/24'],
    ['0.0.0.0/0', '0.0.0.0/0'],
    ['::/0', '::/0'],
  ])('reads %j as %j', (entry, stored) => {
    expect(normaliseIpEntry(entry)).toBe(stored);
  });

  it.each([
    'example.com',
    '',
    '1.2.3',
    '01.2.3.4',
    '256.1.1.1',
    '1.2.3.4/33',
    '1.2.3.4/08',
    '1.2.3.4/-1',
    '1.2.3.4/24/1',
    '2001:db8::/129',
    'fe80::1%eth0',
    '[::1]',
    '1.2.3.4; drop table api_keys',
    'http://1.2.3.4/',
    '1.2.3.4\n',
    ' 198.51.100.0/24',
    'x'.repeat(10_000),
    '::ffff:192.0.2.0/95',
  ])('refuses %j', (entry) => {
    expect(normaliseIpEntry(entry)).toBeUndefined();
  });

  it('matches addresses and ranges of both families, an IPv4-mapped address as its IPv4, and an empty list as anywhere', () => {
    const list = ['198.51.100.0/24', '192.0.2.7', '2001:db8::/32'].map((entry) => normaliseIpEntry(entry)!);
    expect(ipAllowed(list, '198.51.100.200')).toBe(true);
    expect(ipAllowed(list, '192.0.2.7')).toBe(true);
    expect(ipAllowed(list, '192.0.2.8')).toBe(false);
    expect(ipAllowed(list, '::ffff:198.51.100.5')).toBe(true);
    expect(ipAllowed(list, '::ffff:203.0.113.5')).toBe(false);
    expect(ipAllowed(list, '2001:db8:ffff::1')).toBe(true);
    expect(ipAllowed(list, '2001:db9::1')).toBe(false);
    expect(ipAllowed(list, 'not an address')).toBe(false);
    expect(ipAllowed([], '203.0.113.5')).toBe(true);
  });
});
