// A small forward proxy in the role of smokescreen (WEBHOOK_PROXY_URL): it resolves names itself
// from its own table, forwards absolute-form http requests and CONNECT tunnels to the names it
// knows, and refuses the rest with 403 as smokescreen refuses a denied destination. It records
// every request it is asked to make.
import { type IncomingMessage, type ServerResponse, createServer, request as httpRequest } from 'node:http';
import { type AddressInfo, connect } from 'node:net';

export interface EgressProxy {
  url: URL;
  /** `CONNECT host:port` or `METHOD absolute-url`, in order. */
  seen: string[];
  close(): Promise<void>;
}

/** `names` maps a host name to the loopback port where it is served (this proxy's own DNS). */
export async function startEgressProxy(names: Record<string, number>): Promise<EgressProxy> {
  const seen: string[] = [];
  const server = createServer((request: IncomingMessage, response: ServerResponse) => {
    seen.push(`${request.method} ${request.url}`);
    let target: URL;
    try {
      target = new URL(request.url ?? '');
    } catch {
      response.writeHead(400).end('absolute-form requests only');
      return;
    }
    const port = names[target.hostname];
    if (port === undefined) {
      response.writeHead(403).end('destination denied');
      return;
    }
    const forwarded = httpRequest(
      {
        host: '127.0.0.1',
        port,
        method: request.method,
        path: target.pathname + target.search,
        headers: request.headers,
      },
      (answer) => {
        response.writeHead(answer.statusCode ?? 502, answer.headers);
        answer.pipe(response);
      },
    );
    forwarded.on('error', () => response.writeHead(502).end('upstream failed'));
    request.pipe(forwarded);
  });
  server.on('connect', (request: IncomingMessage, client, head: Buffer) => {
    seen.push(`CONNECT ${request.url}`);
    const [host, port] = (request.url ?? '').split(':');
    const mapped = host === undefined ? undefined : names[host];
    if (mapped === undefined || port === undefined) {
      client.end('HTTP/1.1 403 Forbidden\r\ncontent-length: 0\r\n\r\n');
      return;
    }
    const upstream = connect(mapped, '127.0.0.1', () => {
      client.write('HTTP/1.1 200 Connection Established\r\n\r\n');
      upstream.write(head);
      upstream.pipe(client);
      client.pipe(upstream);
    });
    upstream.on('error', () => client.destroy());
    client.on('error', () => upstream.destroy());
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: new URL(`http://127.0.0.1:${port}`),
    seen,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
