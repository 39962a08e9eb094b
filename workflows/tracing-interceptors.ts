// Workflow interceptors for tracing, bundled into the workflow code only when the worker traces
// (src/telemetry/temporal.ts). They make the spans of @temporalio/interceptors-opentelemetry,
// with its names (RunWorkflow:…, HandleUpdate:…, HandleSignal:…, StartActivity:… for activities
// and local activities, ContinueAsNew:…), through its in-sandbox tracer and sink, with one
// difference that keeps running workflows safe: every intercepted call hands the workflow the very
// promise the SDK returned, and the span merely watches it settle.
//
// The package's own interceptors `await` inside async wrappers, so an activity's result (or an
// update's completion) reaches the workflow a few microtasks later than without them. A workflow
// in which an update completes in the same task as an activity result (the card workflow, with
// operations arriving while it funds) then issues its commands in another order, and a history
// recorded with tracing off fails to replay with it on ("Update machine does not handle this
// event"), or the other way round. test/replay replays every recorded history with these
// interceptors; test/integration/traces.test.ts replays traced runs without them.
import * as otel from '@opentelemetry/api';
import {
  OpenTelemetryInboundInterceptor,
  OpenTelemetryInternalsInterceptor,
  OpenTelemetryOutboundInterceptor,
  SPAN_DELIMITER,
  SpanName,
} from '@temporalio/interceptors-opentelemetry/lib/workflow/index.js';
import {
  UPDATE_ID_ATTR_KEY,
  extractContextFromHeaders,
  headersWithContext,
} from '@temporalio/interceptors-opentelemetry/lib/instrumentation.js';
import { ApplicationFailureCategory } from '@temporalio/common';
import {
  type ActivityInput,
  ApplicationFailure,
  ContinueAsNew,
  type ContinueAsNewInput,
  type LocalActivityInput,
  type Next,
  type QueryInput,
  type SignalInput,
  type SignalWorkflowInput,
  type StartChildWorkflowExecutionInput,
  type UpdateInput,
  type WorkflowExecuteInput,
  type WorkflowInboundCallsInterceptor,
  type WorkflowInterceptors,
  type WorkflowOutboundCallsInterceptor,
  workflowInfo,
} from '@temporalio/workflow';

const isContinueAsNew = (error: unknown) => error instanceof ContinueAsNew;

function endSpan(span: otel.Span, error?: unknown, acceptable?: (error: unknown) => boolean): void {
  if (error === undefined || acceptable?.(error)) {
    span.setStatus({ code: otel.SpanStatusCode.OK });
  } else {
    // A benign failure (e.g. an expected refusal) leaves the status unset, as the package does.
    const benign = error instanceof ApplicationFailure && error.category === ApplicationFailureCategory.BENIGN;
    const message = error instanceof Error ? error.message : 'failed with a value that is not an Error';
    span.setStatus({ code: benign ? otel.SpanStatusCode.UNSET : otel.SpanStatusCode.ERROR, message });
    span.recordException(error instanceof Error ? error : message);
  }
  span.end();
}

/**
 * Runs `call` inside a new span (under `parent`, else the active span) and returns call's own
 * promise, untouched: the span ends when it settles, without adding a step to the workflow's path.
 */
function watched<T>(
  tracer: otel.Tracer,
  name: string,
  parent: otel.Context | undefined,
  call: (span: otel.Span) => Promise<T>,
  acceptable?: (error: unknown) => boolean,
): Promise<T> {
  const base = parent ?? otel.context.active();
  const span = tracer.startSpan(name, {}, base);
  let result: Promise<T>;
  try {
    result = otel.context.with(otel.trace.setSpan(base, span), () => call(span));
  } catch (error) {
    endSpan(span, error, acceptable);
    throw error;
  }
  result.then(
    () => endSpan(span),
    (error: unknown) => endSpan(span, error, acceptable),
  );
  return result;
}

const spanName = (kind: SpanName, what: string) => `${kind}${SPAN_DELIMITER}${what}`;

class InboundTracing extends OpenTelemetryInboundInterceptor {
  override execute(input: WorkflowExecuteInput, next: Next<WorkflowInboundCallsInterceptor, 'execute'>) {
    const name = spanName(SpanName.WORKFLOW_EXECUTE, workflowInfo().workflowType);
    return watched(this.tracer, name, extractContextFromHeaders(input.headers), () => next(input), isContinueAsNew);
  }

  override handleSignal(input: SignalInput, next: Next<WorkflowInboundCallsInterceptor, 'handleSignal'>) {
    const name = spanName(SpanName.WORKFLOW_HANDLE_SIGNAL, input.signalName);
    return watched(this.tracer, name, extractContextFromHeaders(input.headers), () => next(input));
  }

  override handleUpdate(input: UpdateInput, next: Next<WorkflowInboundCallsInterceptor, 'handleUpdate'>) {
    const name = spanName(SpanName.WORKFLOW_HANDLE_UPDATE, input.name);
    return watched(this.tracer, name, extractContextFromHeaders(input.headers), (span) => {
      span.setAttribute(UPDATE_ID_ATTR_KEY, input.updateId);
      return next(input);
    });
  }

  override validateUpdate(input: UpdateInput, next: Next<WorkflowInboundCallsInterceptor, 'validateUpdate'>): void {
    const parent = extractContextFromHeaders(input.headers) ?? otel.context.active();
    const span = this.tracer.startSpan(spanName(SpanName.WORKFLOW_VALIDATE_UPDATE, input.name), {}, parent);
    span.setAttribute(UPDATE_ID_ATTR_KEY, input.updateId);
    try {
      otel.context.with(otel.trace.setSpan(parent, span), () => next(input));
    } catch (error) {
      endSpan(span, error);
      throw error;
    }
    endSpan(span);
  }

  override handleQuery(input: QueryInput, next: Next<WorkflowInboundCallsInterceptor, 'handleQuery'>) {
    const name = spanName(SpanName.WORKFLOW_HANDLE_QUERY, input.queryName);
    return watched(this.tracer, name, extractContextFromHeaders(input.headers), () => next(input));
  }
}

class OutboundTracing extends OpenTelemetryOutboundInterceptor {
  override scheduleActivity(input: ActivityInput, next: Next<WorkflowOutboundCallsInterceptor, 'scheduleActivity'>) {
    const name = spanName(SpanName.ACTIVITY_START, input.activityType);
    return watched(this.tracer, name, undefined, () => next({ ...input, headers: headersWithContext(input.headers) }));
  }

  override scheduleLocalActivity(
    input: LocalActivityInput,
    next: Next<WorkflowOutboundCallsInterceptor, 'scheduleLocalActivity'>,
  ) {
    const name = spanName(SpanName.ACTIVITY_START, input.activityType);
    return watched(this.tracer, name, undefined, () => next({ ...input, headers: headersWithContext(input.headers) }));
  }

  override startChildWorkflowExecution(
    input: StartChildWorkflowExecutionInput,
    next: Next<WorkflowOutboundCallsInterceptor, 'startChildWorkflowExecution'>,
  ) {
    const name = spanName(SpanName.CHILD_WORKFLOW_START, input.workflowType);
    return watched(this.tracer, name, undefined, () => next({ ...input, headers: headersWithContext(input.headers) }));
  }

  override continueAsNew(input: ContinueAsNewInput, next: Next<WorkflowOutboundCallsInterceptor, 'continueAsNew'>) {
    const name = spanName(SpanName.CONTINUE_AS_NEW, input.options.workflowType);
    return watched(
      this.tracer,
      name,
      undefined,
      () => next({ ...input, headers: headersWithContext(input.headers) }),
      isContinueAsNew,
    );
  }

  override signalWorkflow(input: SignalWorkflowInput, next: Next<WorkflowOutboundCallsInterceptor, 'signalWorkflow'>) {
    const name = spanName(SpanName.WORKFLOW_SIGNAL, input.signalName);
    return watched(this.tracer, name, undefined, () => next({ ...input, headers: headersWithContext(input.headers) }));
  }
}

export const interceptors = (): WorkflowInterceptors => ({
  inbound: [new InboundTracing()],
  outbound: [new OutboundTracing()],
  internals: [new OpenTelemetryInternalsInterceptor()],
});
