// OpenTelemetry traces, only when OTEL_EXPORTER_OTLP_ENDPOINT is set. Then each process (API,
// worker) registers one tracer provider whose spans leave in batches as OTLP/HTTP JSON to
// `<endpoint>/v1/traces`. Otherwise nothing here runs: the SDK is not even loaded, no provider,
// no exporter, no interceptor, and the OpenTelemetry API stays its no-op default. The SDK's own
// OTEL_* variables (batch delay, exporter headers, sampler) are read by the SDK itself.
import { DiagLogLevel, type Tracer, diag } from '@opentelemetry/api';
import type { Resource } from '@opentelemetry/resources';
import type { SpanProcessor } from '@opentelemetry/sdk-trace-base';
import type { Config } from '../config.ts';

/** The gateway's own spans (requests, provider and webhook calls) come from this tracer. */
export const TRACER_NAME = 'naira-gateway';

export interface Tracing {
  tracer: Tracer;
  /** Also takes the spans that workflows end inside the sandbox (through the worker's sink). */
  spanProcessor: SpanProcessor;
  resource: Resource;
  /** Exports what is still buffered, then stops; call once, at process exit. */
  shutdown(): Promise<void>;
}

let started = false;

/** Whether this process started tracing; the gateway's own spans are made only then. */
export function tracingStarted(): boolean {
  return started;
}

/**
 * Starts tracing for this process when OTEL_EXPORTER_OTLP_ENDPOINT is set (undefined otherwise).
 * `log` receives the SDK's warnings and errors (an unreachable collector, a refused export).
 */
export async function startTracing(
  config: Pick<Config, 'OTEL_EXPORTER_OTLP_ENDPOINT' | 'OTEL_SERVICE_NAME'>,
  defaultServiceName: string,
  log: (message: string) => void,
): Promise<Tracing | undefined> {
  const endpoint = config.OTEL_EXPORTER_OTLP_ENDPOINT;
  if (!endpoint) return undefined;
  if (started) throw new Error('tracing is already started in this process');
  const [{ OTLPTraceExporter }, { Resource }, { BatchSpanProcessor }, { NodeTracerProvider }] = await Promise.all([
    import('@opentelemetry/exporter-trace-otlp-http'),
    import('@opentelemetry/resources'),
    import('@opentelemetry/sdk-trace-base'),
    import('@opentelemetry/sdk-trace-node'),
  ]);
  diag.setLogger(
    {
      error: (message) => log(message),
      warn: (message) => log(message),
      info: () => undefined,
      debug: () => undefined,
      verbose: () => undefined,
    },
    DiagLogLevel.WARN,
  );
  const resource = Resource.default().merge(
    new Resource({ 'service.name': config.OTEL_SERVICE_NAME ?? defaultServiceName }),
  );
  const spanProcessor = new BatchSpanProcessor(
    new OTLPTraceExporter({ url: `${endpoint.replace(/\/+$/, '')}/v1/traces` }),
  );
  const provider = new NodeTracerProvider({ resource, spanProcessors: [spanProcessor] });
  // The global provider, AsyncLocalStorage as the context manager, W3C trace context propagation.
  provider.register();
  started = true;
  return {
    tracer: provider.getTracer(TRACER_NAME),
    spanProcessor,
    resource,
    shutdown: () => provider.shutdown(),
  };
}
