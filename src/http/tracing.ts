// With tracing on (src/telemetry/tracing.ts), every request is a server span named by its route
// pattern (`POST /api/v1/transfers`, never the raw URL), active while the request is handled: the
// Temporal calls made for it (the client interceptor) and the provider calls are its children.
// Each of the request's log lines carries `traceId` and `spanId` beside `requestId`. A W3C
// `traceparent` sent by the client is honoured, so a caller's own trace continues here. Health
// probes (`/health…`, polled every few seconds by orchestrators) make no spans.
import {
  ROOT_CONTEXT,
  type Span,
  SpanKind,
  SpanStatusCode,
  type Tracer,
  context,
  propagation,
  trace,
} from '@opentelemetry/api';
import type { FastifyInstance, FastifyRequest } from 'fastify';

export function registerRequestTracing(app: FastifyInstance, tracer: Tracer): void {
  const spans = new WeakMap<FastifyRequest, Span>();

  // A callback hook, not an async one: the rest of the request runs inside `done`, in the span's context.
  app.addHook('onRequest', (request, reply, done) => {
    const route = request.routeOptions.url;
    if (route?.startsWith('/health')) {
      done();
      return;
    }
    const parent = propagation.extract(ROOT_CONTEXT, request.headers);
    const span = tracer.startSpan(
      route ? `${request.method} ${route}` : request.method,
      {
        kind: SpanKind.SERVER,
        attributes: {
          'http.request.method': request.method,
          ...(route ? { 'http.route': route } : {}),
          'url.path': request.url.split('?')[0] ?? '/',
          'client.address': request.ip,
          'gateway.request_id': request.id,
        },
      },
      parent,
    );
    spans.set(request, span);
    const { traceId, spanId } = span.spanContext();
    // Both: Fastify writes some lines of its own through the reply's logger.
    request.log = reply.log = request.log.child({ traceId, spanId });
    const active = trace.setSpan(parent, span);
    // The body arrives in events of the raw request, and the answer is finished in events of the
    // raw response: their listeners run in the span's context too.
    context.bind(active, request.raw);
    context.bind(active, reply.raw);
    context.with(active, done);
  });

  const end = (request: FastifyRequest, statusCode: number | undefined) => {
    const span = spans.get(request);
    if (!span) return;
    spans.delete(request);
    if (statusCode === undefined) {
      span.setStatus({ code: SpanStatusCode.ERROR, message: 'the client went away before the answer' });
    } else {
      span.setAttribute('http.response.status_code', statusCode);
      // A server span fails on 5xx only: a 4xx is the client's mistake (OpenTelemetry's HTTP conventions).
      if (statusCode >= 500) span.setStatus({ code: SpanStatusCode.ERROR });
    }
    span.end();
  };
  app.addHook('onResponse', (request, reply, done) => {
    end(request, reply.statusCode);
    done();
  });
  app.addHook('onRequestAbort', (request, done) => {
    end(request, undefined);
    done();
  });
}
