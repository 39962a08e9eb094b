// A real OTLP/HTTP trace receiver on a local port, as a collector would be: it accepts
// `POST /v1/traces` in OTLP's JSON encoding (gzip too), answers 200, and keeps every span with the
// service that sent it. What the gateway exports is what the tests read.
import { type IncomingMessage, createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { gunzipSync } from 'node:zlib';

export interface ReceivedSpan {
  service: string;
  traceId: string;
  spanId: string;
  /** Empty for a root span. */
  parentSpanId: string;
  name: string;
  /** OTLP's SpanKind: 1 internal, 2 server, 3 client, 4 producer, 5 consumer. */
  kind: number;
  attributes: Record<string, unknown>;
  status: { code?: number; message?: string };
}

export interface OtlpReceiver {
  /** The value for OTEL_EXPORTER_OTLP_ENDPOINT. */
  url: string;
  spans: ReceivedSpan[];
  /** Export requests received (every POST, whatever its path). */
  requests: number;
  close(): Promise<void>;
}

interface OtlpValue {
  stringValue?: string;
  intValue?: number | string;
  doubleValue?: number;
  boolValue?: boolean;
}

interface OtlpAttribute {
  key: string;
  value: OtlpValue;
}

interface OtlpRequest {
  resourceSpans?: {
    resource?: { attributes?: OtlpAttribute[] };
    scopeSpans?: {
      spans?: {
        traceId: string;
        spanId: string;
        parentSpanId?: string;
        name: string;
        kind: number;
        attributes?: OtlpAttribute[];
        status?: { code?: number; message?: string };
      }[];
    }[];
  }[];
}

function attributes(list: OtlpAttribute[] | undefined): Record<string, unknown> {
  return Object.fromEntries(
    (list ?? []).map(({ key, value }) => [
      key,
      value.stringValue ??
        (value.intValue !== undefined ? Number(value.intValue) : (value.doubleValue ?? value.boolValue)),
    ]),
  );
}

async function body(request: IncomingMessage): Promise<Buffer> {
  const chunks: Buffer[] = [];
  for await (const chunk of request) chunks.push(chunk as Buffer);
  const raw = Buffer.concat(chunks);
  return request.headers['content-encoding'] === 'gzip' ? gunzipSync(raw) : raw;
}

export async function startOtlpReceiver(): Promise<OtlpReceiver> {
  const receiver = { spans: [] as ReceivedSpan[], requests: 0 };
  const server = createServer((request, response) => {
    if (request.method !== 'POST') {
      response.writeHead(405).end();
      return;
    }
    receiver.requests += 1;
    body(request).then(
      (bytes) => {
        if (request.url !== '/v1/traces' || !String(request.headers['content-type']).includes('application/json')) {
          response.writeHead(415, { 'content-type': 'application/json' }).end('{}');
          return;
        }
        const exported = JSON.parse(bytes.toString('utf8')) as OtlpRequest;
        for (const resourceSpans of exported.resourceSpans ?? []) {
          const service = resourceSpans.resource?.attributes?.find((entry) => entry.key === 'service.name')?.value
            .stringValue;
          for (const scope of resourceSpans.scopeSpans ?? []) {
            for (const span of scope.spans ?? []) {
              receiver.spans.push({
                service: service ?? '',
                traceId: span.traceId,
                spanId: span.spanId,
                parentSpanId: span.parentSpanId ?? '',
                name: span.name,
                kind: span.kind,
                attributes: attributes(span.attributes),
                status: span.status ?? {},
              });
            }
          }
        }
        response.writeHead(200, { 'content-type': 'application/json' }).end('{}');
      },
      () => response.writeHead(400).end(),
    );
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return Object.assign(receiver, {
    url: `http://127.0.0.1:${port}`,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  });
}
