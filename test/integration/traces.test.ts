// Traces as a deployment makes them: the real API and worker processes (src/server.ts,
// worker/main.ts, and worker/webhooks.ts for the webhook deliveries), started with OTEL_EXPORTER_OTLP_ENDPOINT aimed at an OTLP receiver in this
// test, on the run's PostgreSQL and Temporal, with the sandbox bank and a tenant's webhook
// receiver. One transfer makes one trace, from its HTTP request through the workflow, its
// activities (local ones too) and the bank calls, to the webhook attempt its settlement causes.
// Without the variable, nothing is traced: no span, no trace header in Temporal, no trace id on
// the events or in the logs. Runs recorded either way replay either way.
import { type ChildProcess, spawn } from 'node:child_process';
import { join } from 'node:path';
import { Resource } from '@opentelemetry/resources';
import { InMemorySpanExporter, SimpleSpanProcessor } from '@opentelemetry/sdk-trace-base';
import { Client, Connection } from '@temporalio/client';
import type { temporal } from '@temporalio/proto';
import { Worker } from '@temporalio/worker';
import { afterAll, afterEach, beforeAll, expect, inject, it } from 'vitest';
import { postingsTotal } from '../../src/ledger/ledger.ts';
import { readThrough, verifyLedger } from '../../src/ledger/verify.ts';
import { PROJECT_ROOT } from '../../src/stack/tools.ts';
import { WORKFLOW_TRACING_MODULES, workerTracing } from '../../src/telemetry/temporal.ts';
import { deliveryIdFor } from '../../src/webhooks/store.ts';
import { deliveryWorkflowId } from '../../workflows/webhooks/definitions.ts';
import { transferWorkflowId } from '../../workflows/transfers/definitions.ts';
import { auth, newSigningSecret, transferBody } from '../support/api.ts';
import { TEST_CALLBACK_SECRET, TEST_SANDBOX_BANK_API_KEY, createFundedTenant } from '../support/app.ts';
import { type TestDatabase, createTestDatabase } from '../support/database.ts';
import { eventually } from '../support/eventually.ts';
import { freePort } from '../support/ports.ts';
import { type OtlpReceiver, type ReceivedSpan, startOtlpReceiver } from '../support/otlp-receiver.ts';
import { type Receiver, startReceiver } from '../support/receiver.ts';
import { type TestSandboxBank, startSandboxBank } from '../support/sandbox-bank.ts';
import { WORKFLOWS_PATH, installRuntime } from '../support/worker.ts';

const TRACER_HEADER = '_tracer-data';
const API = 'naira-gateway-api';
const WORKER = 'naira-gateway-worker';
const WEBHOOK_WORKER = 'naira-gateway-webhook-worker';

type SpanShape = [service: string, parent: string | null];

/** The two spans Temporal's interceptors make of an activity: its scheduling under `parent`, and its run under that. */
const activitySpans = (service: string, activity: string, parent: string): Record<string, SpanShape> => ({
  [`StartActivity:${activity}`]: [service, parent],
  [`RunActivity:${activity}`]: [service, `StartActivity:${activity}`],
});

/** Every span of the transfer's trace: its service, and the span it is a child of (null: the root). */
const TRANSFER_TRACE: Record<string, SpanShape> = {
  'POST /api/v1/transfers': [API, null],
  // The bank list, read once by a fresh API to name the recipient's bank.
  'GET /banks': [API, 'POST /api/v1/transfers'],
  'UpdateWithStartWorkflow:create': [API, 'POST /api/v1/transfers'],
  'RunWorkflow:transferWorkflow': [WORKER, 'UpdateWithStartWorkflow:create'],
  'HandleUpdate:create': [WORKER, 'UpdateWithStartWorkflow:create'],
  // The create path's one local activity (the name enquiry and the reservation), inside the update.
  ...activitySpans(WORKER, 'acceptTransfer', 'HandleUpdate:create'),
  'POST /name-enquiry': [WORKER, 'RunActivity:acceptTransfer'],
  // The submission, which marks the transfer processing itself (the lean shape).
  ...activitySpans(WORKER, 'submitToBank', 'RunWorkflow:transferWorkflow'),
  'POST /transfers': [WORKER, 'RunActivity:submitToBank'],
  // The settlement, a local activity in the task that takes the bank's word.
  ...activitySpans(WORKER, 'settleTransfer', 'RunWorkflow:transferWorkflow'),
  // transfer.settled was recorded in that activity's span; the fan-out (in the webhook worker)
  // starts its delivery there, on the webhook queue.
  'StartWorkflow:webhookDeliveryWorkflow': [WEBHOOK_WORKER, 'RunActivity:settleTransfer'],
  'RunWorkflow:webhookDeliveryWorkflow': [WEBHOOK_WORKER, 'StartWorkflow:webhookDeliveryWorkflow'],
  ...activitySpans(WEBHOOK_WORKER, 'attemptDelivery', 'RunWorkflow:webhookDeliveryWorkflow'),
  'POST webhook': [WEBHOOK_WORKER, 'RunActivity:attemptDelivery'],
};

interface Gateway {
  url: string;
  /** The API's JSON log lines. */
  apiLogs(): Record<string, unknown>[];
  workerOutput(): string;
  /** SIGTERM to all three, as an orchestrator stops them; resolves with their exit codes (spans flushed). */
  stop(): Promise<[number | null, number | null, number | null]>;
}

let db: TestDatabase;
let bank: TestSandboxBank;
let hooks: Receiver;
let otlp: OtlpReceiver;
let client: Client;
let connection: Connection;
let apiPort: number;
const children: ChildProcess[] = [];

beforeAll(async () => {
  db = await createTestDatabase();
  apiPort = await freePort();
  bank = await startSandboxBank({ databaseUrl: db.url, gatewayUrl: `http://127.0.0.1:${apiPort}` });
  hooks = await startReceiver();
  otlp = await startOtlpReceiver();
  connection = await Connection.connect({ address: inject('temporalAddress') });
  client = new Client({ connection });
});
afterEach(async () => {
  expect(await postingsTotal(db.orm.em.fork())).toBe(0);
  const report = await verifyLedger(readThrough(db.orm.em.fork()));
  expect(report.checks.filter((check) => !check.ok)).toEqual([]);
});
afterAll(async () => {
  for (const child of children) if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
  await connection?.close();
  await otlp?.close();
  await hooks?.close();
  await bank?.close();
  await db?.drop();
});

function launch(script: string, env: Record<string, string>) {
  const child = spawn(process.execPath, [join(PROJECT_ROOT, script)], {
    cwd: PROJECT_ROOT,
    env,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  children.push(child);
  let stdout = '';
  let output = '';
  child.stdout.on('data', (chunk: Buffer) => {
    stdout += chunk.toString();
    output += chunk.toString();
  });
  child.stderr.on('data', (chunk: Buffer) => (output += chunk.toString()));
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  return { child, stdout: () => stdout, output: () => output, exited };
}

/** The API and the workers as `npm run api`, `npm run worker` and `npm run webhook-worker` start them, on this file's database and bank. */
async function startGateway(taskQueue: string, extraEnv: Record<string, string>): Promise<Gateway> {
  // Whatever OTEL_* this run inherited, only what the test gives counts.
  const inherited = Object.fromEntries(Object.entries(process.env).filter(([name]) => !name.startsWith('OTEL_')));
  const env = {
    ...inherited,
    NODE_ENV: 'test',
    LOG_LEVEL: 'info',
    HOST: '127.0.0.1',
    PORT: String(apiPort),
    DATABASE_URL: db.url,
    TEMPORAL_ADDRESS: inject('temporalAddress'),
    TEMPORAL_TASK_QUEUE: taskQueue,
    SANDBOX_BANK_URL: bank.url,
    SANDBOX_BANK_API_KEY: TEST_SANDBOX_BANK_API_KEY,
    PROVIDER_CALLBACK_SECRET: TEST_CALLBACK_SECRET,
    WEBHOOK_RETRY_SCHEDULE: '0s,1s',
    METRICS_PORT: '0',
    WORKER_METRICS_PORT: '0',
    WEBHOOK_WORKER_METRICS_PORT: '0',
    ...extraEnv,
  };
  const worker = launch('worker/main.ts', env);
  const webhookWorker = launch('worker/webhooks.ts', env);
  const api = launch('src/server.ts', env);
  const url = `http://127.0.0.1:${apiPort}`;
  await eventually(
    async () => {
      if (api.child.exitCode !== null || worker.child.exitCode !== null || webhookWorker.child.exitCode !== null) {
        throw new Error(
          `a process exited:\n${api.output().slice(-2000)}\n${worker.output().slice(-2000)}\n${webhookWorker.output().slice(-2000)}`,
        );
      }
      const ready = await fetch(`${url}/health/ready`).catch(() => undefined);
      return (
        ready?.status === 200 &&
        worker.output().includes('"msg":"worker running"') &&
        webhookWorker.output().includes('"msg":"webhook worker running"')
      );
    },
    90_000,
    250,
  );
  return {
    url,
    apiLogs: () =>
      api
        .stdout()
        .split('\n')
        .filter((line) => line.startsWith('{'))
        .map((line) => JSON.parse(line) as Record<string, unknown>),
    workerOutput: () => worker.output() + webhookWorker.output(),
    async stop() {
      api.child.kill('SIGTERM');
      worker.child.kill('SIGTERM');
      webhookWorker.child.kill('SIGTERM');
      return Promise.all([api.exited, worker.exited, webhookWorker.exited]);
    },
  };
}

/** A funded tenant whose webhook endpoint (on the local receiver) takes transfer.settled; returns its key. */
async function tenantWithEndpoint(gateway: Gateway, name: string, path: string) {
  const tenant = await createFundedTenant(db.orm, 1_000_000, name);
  const registered = await fetch(`${gateway.url}/api/v1/webhook-endpoints`, {
    method: 'POST',
    headers: { ...auth(tenant.apiKey), 'content-type': 'application/json' },
    body: JSON.stringify({
      url: `${hooks.url}${path}`,
      events: ['transfer.settled'],
      signing_secret: newSigningSecret(),
    }),
  });
  expect(registered.status).toBe(201);
  const endpointId = ((await registered.json()) as { data: { id: string } }).data.id;
  return { ...tenant, endpointId };
}

/**
 * A tenant `name` with an endpoint on the receiver's `/<name>`, and its transfer `<name>-1` sent under
 * `requestId`: waits until the settlement's webhook was delivered and both workflows ended.
 */
async function transferDelivered(gateway: Gateway, name: string, requestId: string) {
  const path = `/${name}`;
  const reference = `${name}-1`;
  const tenant = await tenantWithEndpoint(gateway, name, path);
  const created = await fetch(`${gateway.url}/api/v1/transfers`, {
    method: 'POST',
    headers: { ...auth(tenant.apiKey, { 'x-request-id': requestId }), 'content-type': 'application/json' },
    body: JSON.stringify(transferBody('traced', { reference })),
  });
  expect(created.status).toBe(201);
  const transfer = client.workflow.getHandle(transferWorkflowId(tenant.tenantId, reference));
  expect((await transfer.result()) as { status: string }).toMatchObject({ status: 'completed' });
  const settled = await eventually(async () => {
    const [row] = await db.orm.em
      .fork()
      .execute<{ id: string; traceparent: string | null }[]>(
        `select id, traceparent from events where tenant_id = ? and type = 'transfer.settled'`,
        [tenant.tenantId],
      );
    return row;
  });
  const delivery = client.workflow.getHandle(deliveryWorkflowId(settled.id, tenant.endpointId));
  await eventually(() =>
    delivery
      .describe()
      .then((described) => described.status.name === 'COMPLETED')
      .catch(() => false),
  );
  expect(hooks.on(path)).toHaveLength(1);
  return { tenant, transfer, delivery, settled };
}

/** How many events of a workflow's history carry the tracing interceptors' header. */
async function tracedEvents(handle: { fetchHistory(): Promise<temporal.api.history.v1.IHistory> }) {
  const history = await handle.fetchHistory();
  return (history.events ?? []).filter((event) => {
    const header =
      event.workflowExecutionStartedEventAttributes?.header ?? event.activityTaskScheduledEventAttributes?.header;
    return header?.fields?.[TRACER_HEADER] !== undefined;
  }).length;
}

/** Replays histories as a worker with tracing on or off would; the errors by workflow id (none: replayed). */
async function replay(histories: { workflowId: string; history: unknown }[], tracing: boolean) {
  installRuntime();
  const exported = new InMemorySpanExporter();
  const options = tracing
    ? {
        workflowsPath: WORKFLOWS_PATH,
        interceptors: { workflowModules: WORKFLOW_TRACING_MODULES },
        sinks: workerTracing({ spanProcessor: new SimpleSpanProcessor(exported), resource: Resource.default() }).sinks,
      }
    : { workflowsPath: WORKFLOWS_PATH };
  const errors: Record<string, string | undefined> = {};
  for await (const result of Worker.runReplayHistories(options, histories)) {
    errors[result.workflowId] = result.error ? String(result.error) : undefined;
  }
  expect(exported.getFinishedSpans()).toEqual([]);
  return errors;
}

it('follows a transfer in one trace from its request through the workflow, activities and bank calls to the webhook attempt', async () => {
  const gateway = await startGateway(`traces-on-${process.pid}`, {
    OTEL_EXPORTER_OTLP_ENDPOINT: otlp.url,
    // Spans leave 100 ms after they end instead of 5 s; the stop below flushes the rest.
    OTEL_BSP_SCHEDULE_DELAY: '100',
  });
  const { tenant, transfer, delivery, settled } = await transferDelivered(gateway, 'traced', 'traces-transfer-1');
  expect(await gateway.stop()).toEqual([0, 0, 0]);

  const root = otlp.spans.find(
    (span) => span.name === 'POST /api/v1/transfers' && span.attributes['gateway.request_id'] === 'traces-transfer-1',
  );
  expect(root).toBeDefined();
  const trace = otlp.spans.filter((span) => span.traceId === root!.traceId);
  // Each span once, every one of them, and nothing else in the trace.
  expect(trace.map((span) => span.name).sort()).toEqual(Object.keys(TRANSFER_TRACE).sort());
  const byName = new Map(trace.map((span) => [span.name, span]));
  const byId = new Map(trace.map((span) => [span.spanId, span]));
  const shape = (span: ReceivedSpan) => [span.service, byId.get(span.parentSpanId)?.name ?? null];
  expect(Object.fromEntries(trace.map((span) => [span.name, shape(span)]))).toEqual(TRANSFER_TRACE);
  expect(root!.parentSpanId).toBe('');

  // The request, named by its route; the bank and webhook calls as client spans with their answers.
  expect(root).toMatchObject({
    kind: 2,
    attributes: { 'http.route': '/api/v1/transfers', 'http.request.method': 'POST', 'http.response.status_code': 201 },
  });
  expect(byName.get('POST /transfers')).toMatchObject({
    kind: 3,
    attributes: {
      'url.full': `${bank.url}/transfers`,
      // Accepted, pending: the contract's 202.
      'http.response.status_code': 202,
      'gateway.provider': 'sandbox',
    },
  });
  expect(byName.get('POST webhook')).toMatchObject({
    kind: 3,
    attributes: {
      'url.full': `${hooks.url}/traced`,
      'http.request.method': 'POST',
      'http.response.status_code': 200,
      'gateway.delivery_id': deliveryIdFor(settled.id, tenant.endpointId),
      'gateway.attempt': 1,
    },
  });
  expect(byName.get('RunWorkflow:transferWorkflow')!.attributes).toMatchObject({
    workflowId: transferWorkflowId(tenant.tenantId, 'traced-1'),
  });
  expect(byName.get('RunWorkflow:webhookDeliveryWorkflow')!.attributes).toMatchObject({
    workflowId: deliveryWorkflowId(settled.id, tenant.endpointId),
  });
  // The event keeps the span it was recorded in: the settlement's activity.
  expect(settled.traceparent).toBe(`00-${root!.traceId}-${byName.get('RunActivity:settleTransfer')!.spanId}-01`);

  // The request's log line carries the trace beside the request id.
  const lines = gateway.apiLogs().filter((line) => line.requestId === 'traces-transfer-1');
  expect(lines).toEqual([
    expect.objectContaining({
      msg: 'request completed',
      traceId: root!.traceId,
      spanId: root!.spanId,
      res: { statusCode: 201 },
    }),
  ]);

  // Temporal carries the context in headers: the workflow's start and every activity scheduled
  // (the lean shape schedules one, the submission; its local activities are spans above).
  expect(await tracedEvents(transfer)).toBe(2);
  expect(await tracedEvents(delivery)).toBeGreaterThanOrEqual(1);
  // A traced run replays on a worker with tracing off, and on one with it on.
  const histories = [
    { workflowId: 'transfer', history: await transfer.fetchHistory() },
    { workflowId: 'delivery', history: await delivery.fetchHistory() },
  ];
  expect(await replay(histories, false)).toEqual({ transfer: undefined, delivery: undefined });
  expect(await replay(histories, true)).toEqual({ transfer: undefined, delivery: undefined });
}, 240_000);

it('traces nothing without OTEL_EXPORTER_OTLP_ENDPOINT: no span, no trace header, no trace id on events or logs', async () => {
  const exportsBefore = otlp.requests;
  const gateway = await startGateway(`traces-off-${process.pid}`, {});
  const { tenant, transfer, delivery, settled } = await transferDelivered(gateway, 'untraced', 'traces-transfer-2');
  expect(await gateway.stop()).toEqual([0, 0, 0]);

  expect(otlp.requests).toBe(exportsBefore);
  expect(gateway.workerOutput()).toContain('"tracing":"off"');
  expect(gateway.apiLogs().some((line) => line.msg === 'tracing on: spans exported over OTLP')).toBe(false);
  expect(gateway.apiLogs().filter((line) => 'traceId' in line)).toEqual([]);
  expect(gateway.apiLogs().filter((line) => line.requestId === 'traces-transfer-2')).toEqual([
    expect.objectContaining({ msg: 'request completed', res: { statusCode: 201 } }),
  ]);
  // No interceptor ran: neither the API's client nor the workflow put a trace header anywhere.
  expect(await tracedEvents(transfer)).toBe(0);
  expect(await tracedEvents(delivery)).toBe(0);
  const [untraced] = await db.orm.em
    .fork()
    .execute<{ n: string }[]>(
      'select count(*)::text as n from events where tenant_id = ? and traceparent is not null',
      [tenant.tenantId],
    );
  expect(untraced?.n).toBe('0');
  expect(settled.traceparent).toBeNull();
  // An untraced run replays on a worker that traces (tracing turned on while it was open).
  const histories = [
    { workflowId: 'transfer', history: await transfer.fetchHistory() },
    { workflowId: 'delivery', history: await delivery.fetchHistory() },
  ];
  expect(await replay(histories, true)).toEqual({ transfer: undefined, delivery: undefined });
}, 240_000);
