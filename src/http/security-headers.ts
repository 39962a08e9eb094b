// Response headers that keep browsers from doing harm with our answers (#14): no MIME sniffing
// anywhere; API answers never cached (they carry balances and account numbers); and the docs page
// (swagger-ui, the only HTML we serve) under a strict Content-Security-Policy, which
// @fastify/swagger-ui sets (staticCSP: scripts and styles from our origin only), never framed.
import type { FastifyInstance } from 'fastify';

const DOCS_HEADERS: Record<string, string> = {
  'x-frame-options': 'DENY',
  'referrer-policy': 'no-referrer',
  'cross-origin-opener-policy': 'same-origin',
  'cross-origin-resource-policy': 'same-origin',
};

/** The docs page may not be framed by anyone (clickjacking): added to swagger-ui's own policy. */
export function docsContentSecurityPolicy(header: string): string {
  const directives = header
    .split(';')
    .map((directive) => directive.trim())
    .filter((directive) => directive !== '' && !directive.startsWith('frame-ancestors'));
  return [...directives, "frame-ancestors 'none'"].join('; ');
}

export function registerSecurityHeaders(app: FastifyInstance): void {
  app.addHook('onSend', async (request, reply, payload) => {
    reply.header('x-content-type-options', 'nosniff');
    const path = request.url;
    if (path === '/docs' || path.startsWith('/docs/') || path.startsWith('/docs?')) {
      for (const [name, value] of Object.entries(DOCS_HEADERS)) reply.header(name, value);
    } else if (path.startsWith('/api/') && !reply.hasHeader('cache-control')) {
      reply.header('cache-control', 'no-store');
    }
    return payload;
  });
}
