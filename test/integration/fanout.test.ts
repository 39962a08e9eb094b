// Event fan-out under load, against the real PostgreSQL and Temporal (no worker: the delivery
// workflows are started, not run). Two fan-out instances, as two worker replicas, share a backlog
// through claims and hand each delivery over once; an event whose fan-out fails is retried later
// with backoff and holds up nothing; a claim left by a replica that died is taken over when it
// runs out; a backlog drains without waiting for the polling interval; a new event goes out on
// PostgreSQL's notification, also after the listening connection was killed.
import { randomUUID } from 'node:crypto';
import { Client, Connection } from '@temporalio/client';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { sampleData } from '../../src/events/catalog.ts';
import { type EventInput, recordEvent } from '../../src/events/events.ts';
import { LISTENER_APPLICATION_NAME } from '../../src/events/notifications.ts';
import { EventFanout, type FanoutOptions, fanoutRetryDelayMs } from '../../worker/webhook-fanout.ts';
import { type EventType, subscribes } from '../../src/events/event-types.ts';
import { deliveryWorkflowId } from '../../workflows/webhooks/definitions.ts';
import { createFundedTenant } from '../support/app.ts';
import { type TestDatabase, createTestDatabase } from '../support/database.ts';
import { eventually } from '../support/eventually.ts';
import { listenForEvents } from '../support/event-notifications.ts';

const TASK_QUEUE = `fanout-${process.pid}-${randomUUID().slice(0, 8)}`;

let db: TestDatabase;
let connection: Connection;
let client: Client;

beforeAll(async () => {
  db = await createTestDatabase();
  connection = await Connection.connect({ address: inject('temporalAddress') });
  client = new Client({ connection });
});
afterAll(async () => {
  await connection?.close();
  await db?.drop();
});

const fanoutWith = (options: Partial<FanoutOptions> = {}) =>
  new EventFanout({ orm: db.orm, client, taskQueue: TASK_QUEUE, scheduleMs: [0, 1_000], jitter: 0, ...options });

async function sql<T = Record<string, unknown>>(query: string, params: unknown[] = []): Promise<T[]> {
  return db.orm.em.fork().execute<T[]>(query, params);
}

/** An endpoint row as registration leaves it (no worker runs here, so its URL and secret are never used). */
async function endpoint(
  tenantId: string,
  events: string[],
  status = 'listening',
): Promise<{ id: string; events: string[] }> {
  const id = randomUUID();
  await sql(
    `insert into webhook_endpoints (id, tenant_id, url, mode, events, secret_ciphertext, status)
     values (?, ?, ?, 'test', string_to_array(?, ','), 'unused', ?)`,
    [id, tenantId, `http://127.0.0.1:9/${id}`, events.join(','), status],
  );
  return { id, events };
}

/** An event of `type` with its catalog sample as payload (recording parses it against the type's schema). */
async function event(tenantId: string, type: EventType): Promise<string> {
  const input = { tenantId, type, sourceKey: `fanout-test:${randomUUID()}`, payload: sampleData(type) };
  return recordEvent(db.orm.em.fork(), input as EventInput);
}

/** A fresh tenant `name` with an endpoint for every event, and one event of `type` of its: the endpoint, the event's id. */
async function eventForAnEndpoint(name: string, type: EventType) {
  const tenant = await createFundedTenant(db.orm, 0, name);
  const target = await endpoint(tenant.tenantId, ['*']);
  return { target, id: await event(tenant.tenantId, type) };
}

async function eventRow(id: string) {
  const [row] = await sql<{
    fanned_out_at: Date | null;
    fanout_attempts: number;
    fanout_claimed_by: string | null;
    last_fanout_error: string | null;
    due_in_future: boolean;
  }>(
    `select fanned_out_at, fanout_attempts, fanout_claimed_by, last_fanout_error,
            coalesce(next_fanout_at > now(), false) as due_in_future
       from events where id = ?`,
    [id],
  );
  return row!;
}

async function deliveriesOf(eventId: string): Promise<number> {
  const [row] = await sql<{ n: number }>('select count(*)::int as n from webhook_deliveries where event_id = ?', [
    eventId,
  ]);
  return row!.n;
}

/** The event made one delivery to the endpoint, and its workflow is waiting for a worker (none runs here). */
async function expectOneDeliveryStarted(eventId: string, endpointId: string) {
  expect(await deliveriesOf(eventId)).toBe(1);
  const handle = client.workflow.getHandle(deliveryWorkflowId(eventId, endpointId));
  expect((await handle.describe()).status.name).toBe('RUNNING');
}

describe('retry delay', () => {
  it.each([
    [1, 1_000],
    [2, 2_000],
    [3, 4_000],
    [9, 256_000],
    [10, 300_000],
    [40, 300_000],
  ])('waits, after failure %i, %i ms (doubling from 1 s, capped at 5 min)', (failures, delay) => {
    expect(fanoutRetryDelayMs(failures, 1_000, 300_000)).toBe(delay);
  });
});

describe('two replicas', () => {
  it('hand over each of 200 events of four tenants once: every delivery and workflow exactly once, no event done twice', async () => {
    const types = [
      'transfer.created',
      'transfer.settled',
      'transfer.failed',
      'virtual_account.credited',
      'card.funded',
    ] as const;
    const tenants = await Promise.all(Array.from({ length: 4 }, (_, i) => createFundedTenant(db.orm, 0, `t${i}`)));
    const endpointsOf = new Map<string, { id: string; events: string[] }[]>();
    for (const tenant of tenants) {
      endpointsOf.set(tenant.tenantId, [
        await endpoint(tenant.tenantId, ['*']),
        await endpoint(tenant.tenantId, ['transfer.settled', 'transfer.failed']),
      ]);
      // A disabled endpoint receives nothing.
      await endpoint(tenant.tenantId, ['*'], 'disabled');
    }
    const expectedWorkflowIds = new Set<string>();
    for (let i = 0; i < 200; i += 1) {
      const tenant = tenants[i % tenants.length]!;
      const type = types[i % types.length]!;
      const id = await event(tenant.tenantId, type);
      for (const target of endpointsOf.get(tenant.tenantId)!) {
        if (subscribes(target.events, type)) expectedWorkflowIds.add(deliveryWorkflowId(id, target.id));
      }
    }
    const expected = expectedWorkflowIds.size;
    expect(expected).toBe(280); // 200 to the `*` endpoints, 80 transfer.settled/failed to the others
    expect((await sql<{ n: number }>('select count(*)::int as n from events'))[0]!.n).toBe(200);

    // Small batches, so that the two replicas interleave over many claims.
    const replicas = [
      fanoutWith({ batchSize: 15, owner: 'replica-a' }),
      fanoutWith({ batchSize: 15, owner: 'replica-b' }),
    ];
    const handedOver = [0, 0];
    for (let round = 0; round < 100; round += 1) {
      const counts = await Promise.all(replicas.map((replica) => replica.tick()));
      counts.forEach((count, i) => (handedOver[i]! += count));
      const [left] = await sql<{ n: number }>('select count(*)::int as n from events where fanned_out_at is null');
      if (left!.n === 0) break;
    }

    expect(handedOver[0]).toBeGreaterThan(0);
    expect(handedOver[1]).toBeGreaterThan(0);
    expect(handedOver[0]! + handedOver[1]!).toBe(expected);
    const [deliveries] = await sql<{ n: number; pairs: number }>(
      'select count(*)::int as n, count(distinct (event_id, endpoint_id))::int as pairs from webhook_deliveries',
    );
    expect(deliveries).toEqual({ n: expected, pairs: expected });
    // One event.delivery.queued per delivery: written only by the pass that inserted the delivery.
    const [queued] = await sql<{ n: number }>(
      `select count(*)::int as n from events where type = 'event.delivery.queued'`,
    );
    expect(queued!.n).toBe(expected);
    const [originals] = await sql<{ done: number; attempts: number; claimed: number }>(
      `select count(*) filter (where fanned_out_at is not null)::int as done,
              coalesce(sum(fanout_attempts), 0)::int as attempts,
              count(fanout_claimed_by)::int as claimed
         from events where type <> 'event.delivery.queued'`,
    );
    expect(originals).toEqual({ done: 200, attempts: 0, claimed: 0 });

    const query = `TaskQueue = '${TASK_QUEUE}' AND WorkflowType = 'webhookDeliveryWorkflow'`;
    await eventually(async () => (await client.workflow.count(query)).count === expected, 20_000, 200);
    const started: string[] = [];
    for await (const execution of client.workflow.list({ query })) started.push(execution.workflowId);
    expect(started).toHaveLength(expected);
    expect(new Set(started)).toEqual(expectedWorkflowIds);
  });
});

describe('a failing event', () => {
  it('is retried later with backoff, recorded and logged, and the events after it go out in the same pass', async () => {
    const tenant = await createFundedTenant(db.orm, 0, 'failing');
    const other = await createFundedTenant(db.orm, 0, 'other');
    const target = await endpoint(tenant.tenantId, ['*']);
    await endpoint(other.tenantId, ['*']);
    const bad = await event(tenant.tenantId, 'transfer.created');
    const after = [
      await event(tenant.tenantId, 'transfer.settled'),
      await event(other.tenantId, 'transfer.created'),
      await event(tenant.tenantId, 'card.funded'),
    ];
    // A real failure in PostgreSQL: the delivery insert of the bad event is refused.
    await sql(`
      create function refuse_test_delivery() returns trigger language plpgsql as $$
      begin
        if new.event_id = '${bad}' then
          raise exception 'delivery of event % refused by the test trigger', new.event_id;
        end if;
        return new;
      end $$`);
    await sql(
      'create trigger refuse_test_delivery before insert on webhook_deliveries for each row execute function refuse_test_delivery()',
    );
    const logs: { message: string; fields: Record<string, unknown> }[] = [];
    const fanout = fanoutWith({
      concurrency: 1,
      // Long enough that no retry falls due by itself during the test: time passing is written below.
      retryBaseMs: 60_000,
      log: (message, fields = {}) => logs.push({ message, fields }),
    });

    // The bad event is the oldest; the three after it still go out, in this one pass.
    expect(await fanout.tick()).toBe(3);
    for (const id of after) expect((await eventRow(id)).fanned_out_at).not.toBeNull();
    expect(await deliveriesOf(after[1]!)).toBe(1);
    const failed = await eventRow(bad);
    expect(failed).toMatchObject({
      fanned_out_at: null,
      fanout_attempts: 1,
      fanout_claimed_by: null,
      due_in_future: true,
      last_fanout_error: expect.stringContaining(`delivery of event ${bad} refused by the test trigger`),
    });
    expect(await deliveriesOf(bad)).toBe(0);
    expect(logs).toEqual([
      {
        message: 'event fan-out failed; retrying later',
        fields: expect.objectContaining({ eventId: bad, tenantId: tenant.tenantId, failures: 1, retryInMs: 60_000 }),
      },
    ]);

    // Not before its time.
    expect(await fanout.tick()).toBe(0);
    expect((await eventRow(bad)).fanout_attempts).toBe(1);

    // Its time comes: it fails again, and waits twice as long.
    const dueNow = () => sql('update events set next_fanout_at = now() where id = ?', [bad]);
    await dueNow();
    expect(await fanout.tick()).toBe(0);
    expect((await eventRow(bad)).fanout_attempts).toBe(2);
    expect(logs.map((log) => [log.fields.failures, log.fields.retryInMs])).toEqual([
      [1, 60_000],
      [2, 120_000],
    ]);
    expect((await eventRow(bad)).due_in_future).toBe(true);

    // Once the fault is gone, the next try after the backoff fans it out; the record of its failures stays.
    await sql('drop trigger refuse_test_delivery on webhook_deliveries');
    expect(await fanout.tick()).toBe(0);
    await dueNow();
    expect(await fanout.tick()).toBe(1);
    expect(await eventRow(bad)).toMatchObject({
      fanout_attempts: 2,
      fanout_claimed_by: null,
      last_fanout_error: expect.stringContaining('refused by the test trigger'),
    });
    await expectOneDeliveryStarted(bad, target.id);
  });
});

describe('a delivery queued by a pass whose workflow start failed', () => {
  it('gets its workflow on the next pass even though its endpoint stopped listening meanwhile (it stayed queued for ever)', async () => {
    const { target, id } = await eventForAnEndpoint('queued-then-disabled', 'transfer.created');
    // A real failing start: the real Temporal server refuses a namespace that does not exist, after
    // the delivery row was committed.
    const refusing = new Client({ connection, namespace: `missing-${randomUUID().slice(0, 8)}` });
    expect(await fanoutWith({ client: refusing }).tick()).toBe(0);
    expect(await deliveriesOf(id)).toBe(1);
    expect((await eventRow(id)).fanned_out_at).toBeNull();
    // The endpoint stops listening (a 410 to another delivery disables it) before the next try.
    await sql(`update webhook_endpoints set status = 'disabled', disabled_by = 'gone' where id = ?`, [target.id]);
    await sql('update events set next_fanout_at = now() where id = ?', [id]);
    // The next pass starts the queued delivery's workflow (whose first attempt finds the endpoint
    // disabled and ends it as failed, sending nothing), then marks the event.
    expect(await fanoutWith().tick()).toBe(1);
    expect((await eventRow(id)).fanned_out_at).not.toBeNull();
    await expectOneDeliveryStarted(id, target.id);
  });
});

describe('a replica that died holding a claim', () => {
  it('keeps its events until the claim runs out, and then another replica fans them out', async () => {
    const { target, id } = await eventForAnEndpoint('orphaned', 'transfer.settled');
    // As a replica leaves it when it is killed between its claim and its Temporal calls.
    await sql(
      `update events set fanout_claimed_by = 'replica-that-died:1', fanout_claimed_until = now() + interval '1 second'
        where id = ?`,
      [id],
    );
    const fanout = fanoutWith({ owner: 'survivor' });

    await fanout.tick();
    expect(await eventRow(id)).toMatchObject({ fanned_out_at: null, fanout_claimed_by: 'replica-that-died:1' });
    expect(await deliveriesOf(id)).toBe(0);

    await eventually(async () => (await fanout.tick(), (await eventRow(id)).fanned_out_at !== null), 5_000, 100);
    expect(await eventRow(id)).toMatchObject({ fanout_attempts: 0, fanout_claimed_by: null });
    await expectOneDeliveryStarted(id, target.id);
  });
});

describe('a backlog', () => {
  it('drains in back-to-back passes while batches come back full, not one batch per polling interval', async () => {
    const tenant = await createFundedTenant(db.orm, 0, 'backlog');
    await endpoint(tenant.tenantId, ['transfer.settled']);
    for (let i = 0; i < 35; i += 1) await event(tenant.tenantId, 'transfer.settled');
    // One pass, then a minute's wait unless a pass took a full batch.
    const fanout = fanoutWith({ batchSize: 10, intervalMs: 60_000 });
    fanout.start();
    try {
      await eventually(async () => {
        const [row] = await sql<{ n: number }>(
          `select count(*)::int as n from events
            where fanned_out_at is null and tenant_id = ? and type = 'transfer.settled'`,
          [tenant.tenantId],
        );
        return row!.n === 0;
      }, 15_000);
    } finally {
      await fanout.stop();
    }
    const [deliveries] = await sql<{ n: number }>(
      'select count(*)::int as n from webhook_deliveries where tenant_id = ?',
      [tenant.tenantId],
    );
    expect(deliveries!.n).toBe(35);
  });
});

describe('a new event', () => {
  it('goes out on PostgreSQL’s notification, without waiting for the polling interval, also after the listening connection was killed', async () => {
    const tenant = await createFundedTenant(db.orm, 0, 'notified');
    const target = await endpoint(tenant.tenantId, ['transfer.settled']);
    const logs: string[] = [];
    // After its first pass this fan-out would poll again only in ten minutes: only a
    // notification can make it see the events below within the test's time.
    const fanout = fanoutWith({
      intervalMs: 600_000,
      listen: { connectionString: db.url, reconnectMs: 100 },
      log: (message) => logs.push(message),
    });
    fanout.start();
    try {
      const listener = () =>
        sql<{ pid: number }>(
          'select pid from pg_stat_activity where datname = current_database() and application_name = ?',
          [LISTENER_APPLICATION_NAME],
        );
      const [first] = await eventually(async () => ((await listener()).length === 1 ? listener() : false));
      const firstEvent = await event(tenant.tenantId, 'transfer.settled');
      await eventually(async () => (await eventRow(firstEvent)).fanned_out_at !== null, 10_000);
      await expectOneDeliveryStarted(firstEvent, target.id);

      // The connection dies; the listener connects again and the next event still goes out at once.
      await sql('select pg_terminate_backend(?)', [first!.pid]);
      await eventually(async () => {
        const now = await listener();
        return now.length === 1 && now[0]!.pid !== first!.pid;
      }, 10_000);
      const secondEvent = await event(tenant.tenantId, 'transfer.settled');
      await eventually(async () => (await eventRow(secondEvent)).fanned_out_at !== null, 10_000);
      await expectOneDeliveryStarted(secondEvent, target.id);
      expect(logs).toContain('event notifications lost; polling until they are back');
    } finally {
      await fanout.stop();
    }
  });
});

describe('an event no listening endpoint subscribes to', () => {
  it('is written fanned out, by the rule endpoints subscribe by, and neither wakes nor costs the fan-out anything', async () => {
    const cases: { endpoints: { events: string[]; status?: string }[]; type: EventType }[] = [
      { endpoints: [], type: 'transfer.created' },
      { endpoints: [{ events: ['transfer.settled'] }], type: 'transfer.created' },
      { endpoints: [{ events: ['transfer.settled'] }], type: 'transfer.settled' },
      { endpoints: [{ events: ['*'] }], type: 'event.delivery.failed' },
      { endpoints: [{ events: ['*'] }], type: 'card.authorization.approved' },
      { endpoints: [{ events: ['event.delivery.failed'] }], type: 'event.delivery.failed' },
      { endpoints: [{ events: ['*'], status: 'disabled' }], type: 'transfer.settled' },
      { endpoints: [{ events: ['*'], status: 'deleted' }], type: 'transfer.settled' },
      {
        endpoints: [{ events: ['*'], status: 'disabled' }, { events: ['transfer.settled'] }],
        type: 'transfer.settled',
      },
    ];
    const owedTo: boolean[] = [];
    const ids: string[] = [];
    const listener = await listenForEvents(db.url);
    const { notified } = listener;
    try {
      const found: { owed: boolean; notified: boolean }[] = [];
      for (const [i, { endpoints, type }] of cases.entries()) {
        const tenant = await createFundedTenant(db.orm, 0, `owed-${i}`);
        for (const target of endpoints) await endpoint(tenant.tenantId, target.events, target.status);
        const before = notified.length;
        const id = await event(tenant.tenantId, type);
        ids.push(id);
        await listener.caughtUp();
        owedTo.push(
          endpoints.some((target) => (target.status ?? 'listening') === 'listening' && subscribes(target.events, type)),
        );
        found.push({ owed: (await eventRow(id)).fanned_out_at === null, notified: notified.length > before });
      }
      // The oracle is `subscribes`, the fan-out's own rule: 4 of the 9 are owed a delivery.
      expect(owedTo.filter(Boolean)).toHaveLength(4);
      expect(found).toEqual(owedTo.map((owed) => ({ owed, notified: owed })));
    } finally {
      await listener.end();
    }
    // The fan-out hands the 4 owed their one delivery each, and none to the 5 others.
    const fanout = fanoutWith();
    await eventually(async () => {
      await fanout.tick();
      return (await Promise.all(ids.map(eventRow))).every((row) => row.fanned_out_at !== null);
    }, 10_000);
    expect(await Promise.all(ids.map(deliveriesOf))).toEqual(owedTo.map((owed) => (owed ? 1 : 0)));
  });
});
