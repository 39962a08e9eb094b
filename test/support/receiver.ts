// A real local HTTP server that plays a tenant's webhook receiver: it records every request and
// answers each path from a programmed list of responses (then `answer`'s choice, else 200). An
// answer may be to hang: the request is never answered (its connection is dropped at close).
import { type IncomingHttpHeaders, createServer } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface ReceivedWebhook {
  path: string;
  headers: IncomingHttpHeaders;
  body: string;
  at: number;
}

export interface PlannedResponse {
  status: number;
  headers?: Record<string, string>;
  body?: string;
}

export interface Receiver {
  url: string;
  received: ReceivedWebhook[];
  /** Answers for the next requests to `path`, in order; afterwards 200. */
  plan(path: string, ...responses: PlannedResponse[]): void;
  on(path: string): ReceivedWebhook[];
  close(): Promise<void>;
}

export interface ReceiverOptions {
  /** The answer to a request no plan covers; `hang` answers nothing. */
  answer?: (request: ReceivedWebhook) => PlannedResponse | 'hang';
}

export async function startReceiver(options: ReceiverOptions = {}): Promise<Receiver> {
  const received: ReceivedWebhook[] = [];
  const plans = new Map<string, PlannedResponse[]>();
  const server = createServer((request, response) => {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => {
      const path = request.url ?? '/';
      const webhook = { path, headers: request.headers, body: Buffer.concat(chunks).toString('utf8'), at: Date.now() };
      received.push(webhook);
      const next = plans.get(path)?.shift() ?? options.answer?.(webhook) ?? { status: 200, body: 'ok' };
      if (next === 'hang') return;
      response.writeHead(next.status, { 'content-type': 'text/plain', ...next.headers });
      response.end(next.body ?? '');
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    received,
    plan(path, ...responses) {
      plans.set(path, [...(plans.get(path) ?? []), ...responses]);
    },
    on(path) {
      return received.filter((request) => request.path === path);
    },
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
