// Tracing off is the default and costs nothing: without OTEL_EXPORTER_OTLP_ENDPOINT no SDK starts,
// the OpenTelemetry API stays its no-op (spans are not recorded, nothing is propagated), and an
// outbound call runs without a span around it.
import { context, propagation, trace } from '@opentelemetry/api';
import { describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config.ts';
import { withHttpClientSpan } from '../../src/telemetry/http-client-span.ts';
import { startTracing, tracingStarted } from '../../src/telemetry/tracing.ts';

describe('tracing', () => {
  it('starts nothing without OTEL_EXPORTER_OTLP_ENDPOINT, and the OpenTelemetry API stays a no-op', async () => {
    const complaints: string[] = [];
    expect(await startTracing(loadConfig({}), 'naira-gateway-api', (line) => complaints.push(line))).toBeUndefined();
    expect(tracingStarted()).toBe(false);
    const span = trace.getTracer('probe').startSpan('probe');
    expect(span.isRecording()).toBe(false);
    const carrier: Record<string, string> = {};
    propagation.inject(trace.setSpan(context.active(), span), carrier);
    expect(carrier).toEqual({});
    let calls = 0;
    const answer = await withHttpClientSpan(
      'GET /probe',
      { method: 'GET', url: new URL('http://127.0.0.1:9/probe') },
      () => {
        calls += 1;
        return Promise.resolve({ status: 204 });
      },
    );
    expect({ answer, calls, active: trace.getActiveSpan() }).toEqual({
      answer: { status: 204 },
      calls: 1,
      active: undefined,
    });
    expect(complaints).toEqual([]);
  });
});
