// Temporal's OpenTelemetry interceptors (@temporalio/interceptors-opentelemetry), installed only
// when tracing is on. The client interceptor opens a span for each call (StartWorkflow:…,
// UpdateWithStartWorkflow:…, SignalWorkflow:…) and passes its context in the call's headers; in
// the workflow sandbox, workflows/tracing-interceptors.ts (bundled with the workflow code) opens
// RunWorkflow:…, HandleUpdate:…, HandleSignal:… and StartActivity:… (local activities too) and
// hands their spans to the worker through a sink; the activity interceptor opens RunActivity:…
// under them and puts trace_id and span_id on the activity's log lines.
import { createRequire } from 'node:module';
import type { ClientInterceptors } from '@temporalio/client';
import {
  OpenTelemetryActivityInboundInterceptor,
  OpenTelemetryActivityOutboundInterceptor,
  type OpenTelemetrySinks,
  OpenTelemetryWorkflowClientInterceptor,
  makeWorkflowExporter,
} from '@temporalio/interceptors-opentelemetry';
import type { InjectedSinks, WorkerInterceptors } from '@temporalio/worker';
import type { Tracing } from './tracing.ts';

const require = createRequire(import.meta.url);

/** The workflow interceptors: bundled into the workflow code (bundleWorkflowCode's workflowInterceptorModules). */
export const WORKFLOW_TRACING_MODULES: string[] = [require.resolve('../../workflows/tracing-interceptors.ts')];

/** For every Temporal client of a traced process. */
export function workflowClientTracing(): ClientInterceptors {
  return { workflow: [new OpenTelemetryWorkflowClientInterceptor()] };
}

/** The worker's part: activity interceptors, and the sink that takes the spans workflows end. */
export function workerTracing(tracing: Pick<Tracing, 'spanProcessor' | 'resource'>): {
  interceptors: WorkerInterceptors;
  sinks: InjectedSinks<OpenTelemetrySinks>;
} {
  return {
    interceptors: {
      activity: [
        (ctx) => ({
          inbound: new OpenTelemetryActivityInboundInterceptor(ctx),
          outbound: new OpenTelemetryActivityOutboundInterceptor(ctx),
        }),
      ],
    },
    sinks: { exporter: makeWorkflowExporter(tracing.spanProcessor, tracing.resource) },
  };
}
