// What one tenant can make the webhook worker do is bounded (decisions §16, issue #27): a tenant's
// attempts in flight are held to WEBHOOK_TENANT_CONCURRENCY (here 2) while its other deliveries wait
// for a slot without blocking another tenant's; event.delivery.* events are never about deliveries
// of event.delivery.* events; a delivery replayed 150 times continues as new, each run's history
// short, with every attempt recorded in order; and a delivery whose run began on the gateway's queue
// (before deliveries had their own) still finishes there, while a replay after it ended runs on the
// webhook queue. On the real stack, with a local receiver that holds requests until told.
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { FastifyInstance } from 'fastify';
import { describe, expect, it } from 'vitest';
import { EventFanout } from '../../worker/webhook-fanout.ts';
import { deliveryStatusQuery, deliveryWorkflowId } from '../../workflows/webhooks/definitions.ts';
import { ATTEMPTS_PER_RUN, HISTORY_EVENTS_PER_RUN } from '../../workflows/webhooks/webhook-delivery.ts';
import { auth, issueCard, newSigningSecret, registerEndpoint } from '../support/api.ts';
import { createFundedTenant } from '../support/app.ts';
import type { TestDatabase } from '../support/database.ts';
import { eventually } from '../support/eventually.ts';
import { recordHistory } from '../support/histories.ts';
import { type GatewayStack, useGatewayStack } from '../support/stack.ts';

const TASK_QUEUE = `webhook-bounds-${process.pid}`;
const TENANT_CONCURRENCY = 2;
// One attempt now, the next an hour later: what the tests see are replays and slots, not retries.
const SCHEDULE_MS = [0, 3_600_000];

interface Held {
  path: string;
  release(status?: number): void;
}

/** A receiver that holds every request to a path under /held/ until released; others it answers at once. */
async function startHoldingReceiver() {
  const held: Held[] = [];
  const answered: { path: string; status: number }[] = [];
  const inFlight = new Map<string, number>();
  const most = new Map<string, number>();
  let answer = (_path: string) => 200;
  const server = createServer((request, response) => {
    request.resume();
    request.on('end', () => {
      const path = request.url ?? '/';
      if (!path.startsWith('/held/')) {
        const status = answer(path);
        answered.push({ path, status });
        response.writeHead(status).end();
        return;
      }
      inFlight.set(path, (inFlight.get(path) ?? 0) + 1);
      most.set(path, Math.max(most.get(path) ?? 0, inFlight.get(path)!));
      held.push({
        path,
        release(status = 200) {
          inFlight.set(path, inFlight.get(path)! - 1);
          answered.push({ path, status });
          response.writeHead(status).end();
        },
      });
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    held,
    answered,
    /** The most requests to `path` that were open at once. */
    most: (path: string) => most.get(path) ?? 0,
    open: (path: string) => inFlight.get(path) ?? 0,
    answerWith(choose: (path: string) => number) {
      answer = choose;
    },
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

let stack: GatewayStack;
let db: TestDatabase;
let app: FastifyInstance;
let receiver: Awaited<ReturnType<typeof startHoldingReceiver>>;

useGatewayStack(
  {
    taskQueue: TASK_QUEUE,
    bank: { completionDelayMs: 100 },
    webhookTenantConcurrency: TENANT_CONCURRENCY,
    // Held requests must not time out while the test holds them.
    webhookTimeoutMs: 30_000,
    webhookScheduleMs: SCHEDULE_MS,
  },
  async (started) => {
    stack = started;
    ({ db, app } = started);
    receiver = await startHoldingReceiver();
  },
  () => receiver.close(),
);

async function sql<T>(query: string, params: unknown[] = []): Promise<T[]> {
  return db.orm.em.fork().execute<T[]>(query, params);
}

/** A tenant with a card, and an endpoint on the receiver's `path` for the card's security-settings changes. */
async function tenantWithCard(name: string, path: string, events = ['card.security_settings.updated']) {
  const tenant = await createFundedTenant(db.orm, 0, name);
  const card = await issueCard(app, tenant.apiKey);
  expect(card.statusCode).toBe(201);
  const endpoint = await registerEndpoint(app, tenant.apiKey, {
    url: `${receiver.url}${path}`,
    events,
    signing_secret: newSigningSecret(),
  });
  expect(endpoint.statusCode).toBe(201);
  return { ...tenant, cardId: card.json().data.id as string, endpointId: endpoint.json().data.id as string };
}

let changes = 0;
/** One card.security_settings.updated event (each PUT differs from the last). */
async function changeSettings(tenant: { apiKey: string; cardId: string }) {
  const response = await app.inject({
    method: 'PUT',
    url: `/api/v1/cards/${tenant.cardId}/security-settings`,
    headers: auth(tenant.apiKey),
    payload: {
      per_transaction_limit_minor: 100_000 + ++changes,
      daily_limit_minor: null,
      channels: { pos: true, web: true, atm: true },
      blocked_merchant_categories: [],
    },
  });
  expect(response.statusCode).toBe(200);
}

async function slots(tenantId: string) {
  const [row] = await sql<{ granted: number; waiting: number }>(
    `select count(*) filter (where state = 'granted')::int as granted,
            count(*) filter (where state = 'waiting')::int as waiting
       from webhook_attempt_slots where tenant_id = ?`,
    [tenantId],
  );
  return row!;
}

describe('a tenant’s attempts in flight', () => {
  it(`are held to ${TENANT_CONCURRENCY} while its other deliveries wait for a slot, and another tenant’s deliveries go meanwhile`, async () => {
    const busy = await tenantWithCard('busy tenant', '/held/busy');
    for (let i = 0; i < 8; i++) await changeSettings(busy);
    // Two attempts reach the receiver and are held there; the six other deliveries wait, holding no worker slot.
    await eventually(async () => {
      const now = await slots(busy.tenantId);
      return receiver.open('/held/busy') === 2 && now.granted === 2 && now.waiting === 6 ? true : undefined;
    });

    // Another tenant's delivery is not held up by the six that wait.
    const other = await tenantWithCard('other tenant', '/other');
    await changeSettings(other);
    await eventually(() => receiver.answered.some((request) => request.path === '/other'));
    expect(receiver.open('/held/busy')).toBe(2);
    expect(await slots(busy.tenantId)).toEqual({ granted: 2, waiting: 6 });

    // Each answer lets exactly one waiting delivery in.
    let released = 0;
    while (released < 8) {
      const next = await eventually(() => receiver.held[released]);
      next.release(200);
      released += 1;
    }
    const delivered = await eventually(async () => {
      const [row] = await sql<{ n: number }>(
        `select count(*)::int as n from webhook_deliveries where tenant_id = ? and status = 'succeeded'`,
        [busy.tenantId],
      );
      return row!.n === 8 ? row!.n : undefined;
    });
    expect(delivered).toBe(8);
    expect(receiver.held).toHaveLength(8);
    expect(receiver.most('/held/busy')).toBe(TENANT_CONCURRENCY);
    // Every slot was handed back.
    await eventually(async () => ((await slots(busy.tenantId)).granted === 0 ? true : undefined));
    expect(await slots(busy.tenantId)).toEqual({ granted: 0, waiting: 0 });

    // A delivery that waited for its slot: its history, as a replay fixture.
    const [waited] = await sql<{ event_id: string; endpoint_id: string }>(
      `select d.event_id, d.endpoint_id from webhook_deliveries d
         join webhook_attempts a on a.delivery_id = d.id
        where d.tenant_id = ? order by a.attempted_at desc limit 1`,
      [busy.tenantId],
    );
    recordHistory('webhook-waited-for-slot', deliveryWorkflowId(waited!.event_id, waited!.endpoint_id));
  });
});

describe('delivery events', () => {
  it('are recorded for deliveries of other events only, never for deliveries of event.delivery.* events', async () => {
    receiver.answerWith((path) => (path.startsWith('/failing/') ? 500 : 200));
    const tenant = await tenantWithCard('delivery events', '/failing/ops', [
      'event.delivery.queued',
      'event.delivery.failed',
      'event.delivery.succeeded',
    ]);
    const catchAll = await registerEndpoint(app, tenant.apiKey, {
      url: `${receiver.url}/failing/all`,
      events: ['*'],
      signing_secret: newSigningSecret(),
    });
    expect(catchAll.statusCode).toBe(201);
    await changeSettings(tenant);
    await changeSettings(tenant);
    // Settled: every event fanned out, every delivery attempted once (the next attempt is an hour away).
    await eventually(async () => {
      const [row] = await sql<{ pending: number; unattempted: number; ops: number }>(
        `select (select count(*) from events where tenant_id = ? and fanned_out_at is null)::int as pending,
                (select count(*) from webhook_deliveries where tenant_id = ? and attempt_count = 0)::int as unattempted,
                (select count(*) from webhook_deliveries where tenant_id = ? and event_type like 'event.delivery.%')::int as ops`,
        [tenant.tenantId, tenant.tenantId, tenant.tenantId],
      );
      return row!.pending === 0 && row!.unattempted === 0 && row!.ops > 0 ? true : undefined;
    }, 30_000);
    const [counts] = await sql<{ delivery_events: number; owed: number; about_delivery_events: number; ops: number }>(
      `select (select count(*) from events where tenant_id = ? and type like 'event.delivery.%')::int as delivery_events,
              -- one queued, and one per attempt, for each delivery of another event type
              (select count(*) + sum(attempt_count) from webhook_deliveries
                where tenant_id = ? and event_type not like 'event.delivery.%')::int as owed,
              (select count(*) from events
                where tenant_id = ? and payload->>'event_type' like 'event.delivery.%')::int as about_delivery_events,
              (select count(*) from webhook_deliveries
                where tenant_id = ? and event_type like 'event.delivery.%')::int as ops`,
      [tenant.tenantId, tenant.tenantId, tenant.tenantId, tenant.tenantId],
    );
    expect(counts!.about_delivery_events).toBe(0);
    expect(counts!.delivery_events).toBe(counts!.owed);
    // …and each of them went to the endpoint that names them (and only to it: `*` does not take them).
    expect(counts!.ops).toBe(counts!.delivery_events);
    const [catchAllDeliveries] = await sql<{ n: number }>(
      `select count(*)::int as n from webhook_deliveries where endpoint_id = ? and event_type like 'event.delivery.%'`,
      [catchAll.json().data.id],
    );
    expect(catchAllDeliveries!.n).toBe(0);
  });
});

describe('a delivery replayed 150 times', () => {
  it(`continues as new every ${ATTEMPTS_PER_RUN} attempts, each run's history short, and records every attempt in order`, async () => {
    receiver.answerWith(() => 500);
    const tenant = await tenantWithCard('replayed', '/replayed');
    await changeSettings(tenant);
    const [delivery] = await eventually(async () => {
      const rows = await sql<{ id: string; event_id: string; endpoint_id: string }>(
        `select id, event_id, endpoint_id from webhook_deliveries where endpoint_id = ? and attempt_count = 1`,
        [tenant.endpointId],
      );
      return rows.length === 1 ? rows : undefined;
    });
    // 150 replays at once: most wait in the workflow, and a run that continues as new carries them.
    const replays = await Promise.all(
      Array.from({ length: 150 }, () =>
        app.inject({
          method: 'POST',
          url: `/api/v1/webhook-deliveries/${delivery!.id}/replay`,
          headers: auth(tenant.apiKey),
        }),
      ),
    );
    expect(replays.map((response) => response.statusCode)).toEqual(Array.from({ length: 150 }, () => 202));
    const replayIds = replays.map((response) => response.json().data.replay_id as string);

    const attempts = await eventually(async () => {
      const rows = await sql<{ number: number; at_ms: number; status_code: number; replay_id: string | null }>(
        `select number, extract(epoch from attempted_at) * 1000 as at_ms, status_code, replay_id
           from webhook_attempts where delivery_id = ? order by number`,
        [delivery!.id],
      );
      return rows.length === 151 ? rows : undefined;
    }, 60_000);
    expect(attempts.map((attempt) => attempt.number)).toEqual(Array.from({ length: 151 }, (_, i) => i + 1));
    for (let i = 1; i < attempts.length; i++) {
      expect(Number(attempts[i]!.at_ms)).toBeGreaterThanOrEqual(Number(attempts[i - 1]!.at_ms));
    }
    expect(attempts.every((attempt) => attempt.status_code === 500)).toBe(true);
    expect(attempts[0]!.replay_id).toBeNull();
    // Every replay made exactly one attempt.
    expect(
      attempts
        .slice(1)
        .map((attempt) => attempt.replay_id)
        .sort(),
    ).toEqual([...replayIds].sort());

    const one = (
      await app.inject({
        method: 'GET',
        url: `/api/v1/webhook-deliveries/${delivery!.id}`,
        headers: auth(tenant.apiKey),
      })
    ).json().data;
    expect(one).toMatchObject({ status: 'retrying', attempt_count: 151, endpoint_status: 500 });
    expect(one.attempts).toHaveLength(151);
    const listed = (
      await app.inject({
        method: 'GET',
        url: `/api/v1/webhook-deliveries?endpoint_id=${tenant.endpointId}`,
        headers: auth(tenant.apiKey),
      })
    ).json().data.items[0];
    expect(listed.attempt_count).toBe(151);
    expect(listed.attempts.map((attempt: { number: number }) => attempt.number)).toEqual(
      Array.from({ length: 20 }, (_, i) => i + 132),
    );

    // The workflow's runs: each with at most ATTEMPTS_PER_RUN attempts and a short history.
    const workflowId = deliveryWorkflowId(delivery!.event_id, delivery!.endpoint_id);
    const runs: { runId: string; status: string; startTime: Date }[] = [];
    for await (const execution of stack.client.workflow.list({ query: `WorkflowId = '${workflowId}'` })) {
      runs.push({ runId: execution.runId, status: execution.status.name, startTime: execution.startTime });
    }
    runs.sort((a, b) => a.startTime.getTime() - b.startTime.getTime());
    expect(runs.length).toBeGreaterThanOrEqual(Math.ceil(151 / ATTEMPTS_PER_RUN));
    expect(runs.slice(0, -1).every((run) => run.status === 'CONTINUED_AS_NEW')).toBe(true);
    expect(runs.at(-1)!.status).toBe('RUNNING');
    let attemptsInRuns = 0;
    for (const run of runs) {
      const events = (await stack.client.workflow.getHandle(workflowId, run.runId).fetchHistory()).events ?? [];
      // Attempts are activities (patch attempts-as-activities): one scheduled per attempt.
      const attemptTasks = events.filter(
        (event) => event.activityTaskScheduledEventAttributes?.activityType?.name === 'attemptDelivery',
      ).length;
      attemptsInRuns += attemptTasks;
      expect(attemptTasks).toBeLessThanOrEqual(ATTEMPTS_PER_RUN);
      expect(events.length).toBeLessThan(HISTORY_EVENTS_PER_RUN);
    }
    expect(attemptsInRuns).toBe(151);
    // The running run's `status` query counts the whole delivery's attempts, earlier runs' included.
    expect(await stack.client.workflow.getHandle(workflowId).query(deliveryStatusQuery)).toMatchObject({
      status: 'retrying',
      attempts: 151,
    });
    recordHistory('webhook-replays-continue-as-new', workflowId, runs[0]!.runId);
    recordHistory('webhook-replays-continued', workflowId, runs[1]!.runId);
  }, 120_000);
});

describe('a delivery whose run began on the gateway’s queue', () => {
  it('still finishes there; a replay after it ended runs on the webhook queue', async () => {
    // As a worker from before the split did: deliveries started on the gateway's own queue.
    await stack.fanout!.stop();
    const before = new EventFanout({
      orm: db.orm,
      client: stack.client,
      taskQueue: TASK_QUEUE,
      scheduleMs: SCHEDULE_MS,
      jitter: 0,
    });
    receiver.answerWith((path) => (path === '/old-queue' ? 500 : 200));
    const tenant = await tenantWithCard('old queue', '/old-queue');
    await changeSettings(tenant);
    const delivery = await eventually(async () => {
      await before.tick();
      const [row] = await sql<{ id: string; event_id: string; endpoint_id: string; attempt_count: number }>(
        `select id, event_id, endpoint_id, attempt_count from webhook_deliveries where endpoint_id = ?`,
        [tenant.endpointId],
      );
      return row?.attempt_count === 1 ? row : undefined;
    });
    const workflowId = deliveryWorkflowId(delivery.event_id, delivery.endpoint_id);
    const first = await stack.client.workflow.getHandle(workflowId).describe();
    expect(first.taskQueue).toBe(TASK_QUEUE);
    expect(first.status.name).toBe('RUNNING');

    // A replay of the running delivery reaches it where it runs; it succeeds and the run ends there.
    receiver.answerWith(() => 200);
    const replay = async () =>
      app.inject({
        method: 'POST',
        url: `/api/v1/webhook-deliveries/${delivery.id}/replay`,
        headers: auth(tenant.apiKey),
      });
    expect((await replay()).statusCode).toBe(202);
    await eventually(async () =>
      (await stack.client.workflow.getHandle(workflowId, first.runId).describe()).status.name === 'COMPLETED'
        ? true
        : undefined,
    );
    // A replay now starts a new run: on the webhook queue.
    expect((await replay()).statusCode).toBe(202);
    const next = await eventually(async () => {
      const described = await stack.client.workflow.getHandle(workflowId).describe();
      return described.runId !== first.runId ? described : undefined;
    });
    expect(next.taskQueue).toBe(stack.webhookTaskQueue);
    const attempts = await eventually(async () => {
      const rows = await sql<{ number: number; status_code: number }>(
        `select number, status_code from webhook_attempts where delivery_id = ? order by number`,
        [delivery.id],
      );
      return rows.length === 3 ? rows : undefined;
    });
    expect(attempts).toEqual([
      { number: 1, status_code: 500 },
      { number: 2, status_code: 200 },
      { number: 3, status_code: 200 },
    ]);
  });
});
