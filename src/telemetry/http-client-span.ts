// A client span around one outbound HTTP call (a bank or provider, a tenant's webhook endpoint),
// child of whatever span is active (the activity running it). Made only when tracing is started;
// otherwise the call runs as it is. The URL is recorded without its query or credentials, which
// may carry a tenant's secrets, and with account numbers masked; no trace header is sent to these
// third parties.
import { type Attributes, SpanKind, SpanStatusCode, trace } from '@opentelemetry/api';
import { TRACER_NAME, tracingStarted } from './tracing.ts';
import { maskAccountNumbers } from '../runtime/log-masking.ts';

export async function withHttpClientSpan<T extends { status: number }>(
  name: string,
  request: { method: string; url: URL; attributes?: Attributes },
  call: () => Promise<T>,
): Promise<T> {
  if (!tracingStarted()) return call();
  const { url } = request;
  const span = trace.getTracer(TRACER_NAME).startSpan(name, {
    kind: SpanKind.CLIENT,
    attributes: {
      'http.request.method': request.method,
      // Account numbers in a provider's paths (a sandbox credit's) masked, as in the logs.
      'url.full': `${url.origin}${maskAccountNumbers(url.pathname)}`,
      'server.address': url.hostname,
      'server.port': Number(url.port || (url.protocol === 'https:' ? 443 : 80)),
      ...request.attributes,
    },
  });
  try {
    const response = await call();
    span.setAttribute('http.response.status_code', response.status);
    // A client span fails on any 4xx or 5xx (OpenTelemetry's HTTP conventions).
    if (response.status >= 400) span.setStatus({ code: SpanStatusCode.ERROR });
    return response;
  } catch (error) {
    span.recordException(error instanceof Error ? error : String(error));
    span.setAttribute('error.type', error instanceof Error ? error.name : 'Error');
    span.setStatus({ code: SpanStatusCode.ERROR, message: error instanceof Error ? error.message : String(error) });
    throw error;
  } finally {
    span.end();
  }
}
