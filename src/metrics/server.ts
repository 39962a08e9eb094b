// GET /metrics on its own address (METRICS_HOST:METRICS_PORT, loopback by default), apart from the
// tenant API: nothing here needs or accepts an API key, so it must not share the tenants' port.
// Any other path answers 404; a failed scrape answers 500 with one line, never a stack trace.
import { type Server, createServer } from 'node:http';
import type { GatewayMetrics } from './metrics.ts';

export function serveMetrics(metrics: GatewayMetrics, options: { host: string; port: number }): Promise<Server> {
  const server = createServer((request, response) => {
    if (request.method !== 'GET' || request.url?.split('?')[0] !== '/metrics') {
      response.writeHead(404, { 'content-type': 'text/plain' }).end('not found: GET /metrics\n');
      return;
    }
    metrics.scrape().then(
      (text) => response.writeHead(200, { 'content-type': metrics.registry.contentType }).end(text),
      (error: unknown) =>
        response.writeHead(500, { 'content-type': 'text/plain' }).end(`scrape failed: ${String(error)}\n`),
    );
  });
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port, options.host, () => resolve(server));
  });
}
