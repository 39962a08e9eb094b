// An HTTP reverse proxy between a connector and its provider that plays, on request, every way a
// provider's answer can go wrong on the wire, the same way whatever the provider: nothing
// listening (connection refused), a hang, a reset connection, a proxy's HTML 502 page, a 500, a
// 429, a 200 that is not JSON, a 200 with its fields missing, a refusal for a wrong key, and the
// lost answer — the provider gets the request, does the work and records it, and the answer never
// reaches the caller. The connector conformance suite (test/conformance/) produces its error
// classes here rather than with each simulator's own controls, so that the three connectors meet
// the very same bytes.
//
// The edge faults (hang, reset, 502, 500, 429) answer without forwarding: the provider never sees
// the call. The corrupted answers (not JSON, fields missing) and the lost answer forward it first:
// the provider has done the work when the caller meets the fault. The wrong key forwards it with
// the Authorization header replaced, so the refusal is the provider's own, in its own format.
import { type IncomingMessage, type ServerResponse, createServer, request as httpRequest } from 'node:http';
import type { Socket } from 'node:net';
import { freePort } from './ports.ts';

export type ProxyFault =
  'hang' | 'reset' | 'html_502' | 'http_500' | 'http_429' | 'not_json' | 'missing_fields' | 'wrong_key' | 'lose_answer';

/** `METHOD /path` (exact, query aside) or `METHOD /prefix/` (any path below it); null for any call. */
export type RouteMatch = string | null;

export interface FaultProxy {
  url: string;
  /** Every call that reached the proxy, as `METHOD /path?query`, in order. */
  requests: string[];
  /** The next call matching `route` meets `fault`; plans are used in the order they were made. */
  failNext(fault: ProxyFault, route?: RouteMatch): void;
  /** Faults planned and not met yet. */
  planned(): { fault: ProxyFault; route: RouteMatch }[];
  /** Forgets every plan. */
  clear(): void;
  /** Stops listening and cuts every connection: connections are refused until `up`. */
  down(): Promise<void>;
  /** Listens again on the same port. */
  up(): Promise<void>;
  close(): Promise<void>;
}

const HTML_502 =
  '<html>\r\n<head><title>502 Bad Gateway</title></head>\r\n<body>\r\n<center><h1>502 Bad Gateway</h1></center>\r\n' +
  '<hr><center>nginx</center>\r\n</body>\r\n</html>\r\n';

/** Hop-by-hop headers, which a proxy never passes on. */
const HOP_BY_HOP = new Set([
  'connection',
  'keep-alive',
  'proxy-connection',
  'transfer-encoding',
  'te',
  'trailer',
  'upgrade',
  'content-length',
]);

function matches(route: RouteMatch, method: string, path: string): boolean {
  if (route === null) return true;
  const call = `${method} ${path}`;
  return route.endsWith('/') ? call.startsWith(route) : call === route;
}

/**
 * The answer with every text and number field taken out, objects and arrays kept: the envelope of
 * the provider's answer (a Paystack `status: true` included) with none of the values a caller needs.
 */
export function withoutFields(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(withoutFields);
  if (typeof value === 'object' && value !== null) {
    return Object.fromEntries(
      Object.entries(value)
        .filter(([, field]) => typeof field !== 'string' && typeof field !== 'number')
        .map(([key, field]) => [key, withoutFields(field)]),
    );
  }
  return value;
}

export async function startFaultProxy(target: string): Promise<FaultProxy> {
  const upstream = new URL(target);
  const port = await freePort();
  const plans: { fault: ProxyFault; route: RouteMatch }[] = [];
  const sockets = new Set<Socket>();
  const requests: string[] = [];

  function take(method: string, path: string): ProxyFault | undefined {
    const index = plans.findIndex((plan) => matches(plan.route, method, path));
    return index === -1 ? undefined : plans.splice(index, 1)[0]!.fault;
  }

  /** The call as the provider gets it, and its whole answer. */
  function forward(
    request: IncomingMessage,
    body: Buffer,
    headers: IncomingMessage['headers'],
  ): Promise<{ status: number; headers: IncomingMessage['headers']; body: Buffer }> {
    return new Promise((resolve, reject) => {
      const outgoing = httpRequest(
        {
          host: upstream.hostname,
          port: upstream.port,
          method: request.method,
          path: request.url,
          headers: { ...headers, host: upstream.host, 'content-length': String(body.length) },
        },
        (answer) => {
          const chunks: Buffer[] = [];
          answer.on('data', (chunk: Buffer) => chunks.push(chunk));
          answer.on('end', () =>
            resolve({ status: answer.statusCode ?? 502, headers: answer.headers, body: Buffer.concat(chunks) }),
          );
          answer.on('error', reject);
        },
      );
      outgoing.on('error', reject);
      outgoing.end(body);
    });
  }

  function reply(response: ServerResponse, status: number, headers: IncomingMessage['headers'], body: Buffer | string) {
    const passed = Object.fromEntries(
      Object.entries(headers).filter(([name, value]) => !HOP_BY_HOP.has(name) && value !== undefined),
    );
    response.writeHead(status, { ...passed, 'content-length': String(Buffer.byteLength(body)) });
    response.end(body);
  }

  async function handle(request: IncomingMessage, response: ServerResponse, body: Buffer): Promise<void> {
    const method = request.method ?? 'GET';
    const url = new URL(request.url ?? '/', 'http://proxy');
    requests.push(`${method} ${url.pathname}${url.search}`);
    const fault = take(method, url.pathname);
    const json = { 'content-type': 'application/json' };
    switch (fault) {
      case 'hang':
        // Never answered; the connection is cut when the caller gives up or the proxy closes.
        return;
      case 'reset':
        request.socket.resetAndDestroy();
        return;
      case 'html_502':
        return reply(response, 502, { 'content-type': 'text/html' }, HTML_502);
      case 'http_500':
        return reply(response, 500, json, '{"message":"Internal Server Error"}');
      case 'http_429':
        return reply(response, 429, { ...json, 'retry-after': '1' }, '{"message":"Too Many Requests"}');
      default:
        break;
    }
    const headers = { ...request.headers };
    if (fault === 'wrong_key') headers.authorization = 'Bearer conformance-wrong-key-0000000000';
    let answer;
    try {
      answer = await forward(request, body, headers);
    } catch {
      return reply(response, 502, { 'content-type': 'text/plain' }, 'upstream unreachable');
    }
    if (fault === 'lose_answer') {
      // The provider has answered, so it has done the work; the caller never hears of it.
      request.socket.resetAndDestroy();
      return;
    }
    if (fault === 'not_json') {
      // Half of the real answer, as a body cut short: never JSON.
      const half = answer.body.subarray(0, Math.max(1, Math.floor(answer.body.length / 2)));
      return reply(response, 200, answer.headers, half);
    }
    if (fault === 'missing_fields') {
      let parsed: unknown;
      try {
        parsed = JSON.parse(answer.body.toString('utf8'));
      } catch {
        parsed = {};
      }
      return reply(response, 200, { ...answer.headers, ...json }, JSON.stringify(withoutFields(parsed)));
    }
    reply(response, answer.status, answer.headers, answer.body);
  }

  const server = createServer((request, response) => {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => {
      handle(request, response, Buffer.concat(chunks)).catch(() => request.socket.destroy());
    });
  });
  server.on('connection', (socket) => {
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
    // A socket cut by a fault (or by the caller giving up on a hang) is expected here.
    socket.on('error', () => {});
  });

  const listen = () =>
    new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(port, '127.0.0.1', () => {
        server.off('error', reject);
        resolve();
      });
    });
  const stop = () =>
    new Promise<void>((resolve) => {
      for (const socket of sockets) socket.destroy();
      if (!server.listening) return resolve();
      server.close(() => resolve());
    });
  await listen();

  return {
    url: `http://127.0.0.1:${port}`,
    requests,
    failNext: (fault, route = null) => void plans.push({ fault, route }),
    planned: () => plans.map((plan) => ({ ...plan })),
    clear: () => void (plans.length = 0),
    down: stop,
    up: listen,
    close: stop,
  };
}
