// The name enquiry slots (decisions §18, src/connectors/name-enquiry-slots.ts) on a real PostgreSQL,
// each "process" a limiter on an ORM (a pool) of its own, as the API and the workers each have one:
// never more than 16 enquiries in flight at one connector whichever process asks; a second tenant's
// single enquiry served while a first tenant floods (from other processes, and from its own); the
// slots of a process that died come free when their leases lapse; an enquiry that finds none free in
// time fails as a transient fault without being made. Enquiries here are the test's own work, each
// held until the test lets it go; the same bound at a real bank is in transfer-batches.test.ts.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type MikroORM, openOrm } from '../../src/orm.ts';
import {
  NAME_ENQUIRY_SLOTS,
  NameEnquirySlotTimeout,
  NameEnquirySlots,
  type SlotTimings,
} from '../../src/connectors/name-enquiry-slots.ts';
import { ProviderError } from '../../src/connectors/capabilities.ts';
import { type TestDatabase, createTestDatabase } from '../support/database.ts';
import { eventually } from '../support/eventually.ts';

let db: TestDatabase;
const orms: MikroORM[] = [];
beforeAll(async () => {
  db = await createTestDatabase();
});
afterAll(async () => {
  await Promise.all(orms.map((orm) => orm.close()));
  await db?.drop();
});

/** A process's slots: a limiter on a pool of its own. */
async function startProcess(timings: Partial<SlotTimings> = {}): Promise<NameEnquirySlots> {
  const orm = await openOrm({ databaseUrl: db.url, poolMax: 20 });
  orms.push(orm);
  return new NameEnquirySlots(orm, { waitMs: 30_000, ...timings });
}

/** Enquiries the test lets go one by one: each holds its slot until released. */
function heldEnquiries() {
  const waiting: (() => void)[] = [];
  let inFlight = 0;
  let maxInFlight = 0;
  const started: string[] = [];
  return {
    started,
    get inFlight() {
      return inFlight;
    },
    get maxInFlight() {
      return maxInFlight;
    },
    enquiry(label: string) {
      return async () => {
        inFlight += 1;
        maxInFlight = Math.max(maxInFlight, inFlight);
        started.push(label);
        await new Promise<void>((resolve) => waiting.push(resolve));
        inFlight -= 1;
        return label;
      };
    },
    /** Lets the oldest held enquiry finish. */
    releaseOne() {
      waiting.shift()!();
    },
    releaseAll() {
      for (const release of waiting.splice(0)) release();
    },
  };
}

async function slotRows(connector: string) {
  const [row] = await db.orm.em.fork().execute<{ held: number; waiters: number }[]>(
    `select (select count(*)::int from name_enquiry_slots where connector = ? and holder is not null) as held,
              (select count(*)::int from name_enquiry_waiters where connector = ?) as waiters`,
    [connector, connector],
  );
  return row!;
}

async function waitersOf(connector: string, tenantId: string): Promise<number> {
  const [row] = await db.orm.em
    .fork()
    .execute<{ n: number }[]>(
      'select count(*)::int as n from name_enquiry_waiters where connector = ? and tenant_id = ? and expires_at > now()',
      [connector, tenantId],
    );
  return row!.n;
}

describe('name enquiry slots', () => {
  it('never lets more than 16 enquiries run at one connector, over three processes and five tenants', async () => {
    const processes = await Promise.all([startProcess(), startProcess(), startProcess()]);
    const held = heldEnquiries();
    const runs = Array.from({ length: 150 }, (_, i) =>
      processes[i % 3]!.run('bound', `tenant-${i % 5}`, held.enquiry(`e${i}`)),
    );
    // The first 16 hold their slots until the bound is reached; then each is let go as the next starts.
    await eventually(() => held.inFlight === NAME_ENQUIRY_SLOTS, 20_000, 10);
    const releasing = (async () => {
      while (held.started.length < 150 || held.inFlight > 0) {
        if (held.inFlight > 0) held.releaseOne();
        await new Promise((resolve) => setTimeout(resolve, 2));
      }
    })();
    expect((await Promise.all(runs)).sort()).toEqual(Array.from({ length: 150 }, (_, i) => `e${i}`).sort());
    await releasing;
    expect(held.maxInFlight).toBe(NAME_ENQUIRY_SLOTS);
    // Every slot given back, nobody left waiting.
    expect(await slotRows('bound')).toEqual({ held: 0, waiters: 0 });
    // A connector's slots are its own: another is not held up by this one's.
    const other = heldEnquiries();
    const elsewhere = processes[0].run('other', 'tenant-0', other.enquiry('x'));
    await eventually(() => other.inFlight === 1, 5_000, 10);
    other.releaseAll();
    expect(await elsewhere).toBe('x');
  });

  it("gives another process's tenant a slot as soon as one comes free while a first tenant holds all 16", async () => {
    const [floodA, floodB, quiet] = await Promise.all([startProcess(), startProcess(), startProcess()]);
    const held = heldEnquiries();
    const flood = Array.from({ length: 100 }, (_, i) =>
      (i % 2 ? floodA : floodB).run('fair', 'flooder', held.enquiry(`f${i}`)),
    );
    await eventually(() => held.inFlight === NAME_ENQUIRY_SLOTS, 20_000, 10);
    const single = quiet.run('fair', 'single', held.enquiry('single'));
    // Waiting where every process can see it.
    await eventually(async () => (await waitersOf('fair', 'single')) === 1, 5_000, 10);
    // One of the flooder's slots comes free: the flooder holds 15 of a fair share of 8, so the
    // waiting tenant takes it, before any of the flooder's 84 waiting enquiries.
    held.releaseOne();
    await eventually(() => held.started.includes('single'), 5_000, 10);
    expect(held.started).toHaveLength(NAME_ENQUIRY_SLOTS + 1);
    expect(held.started.at(-1)).toBe('single');
    // The flooder then waits until it is within its share: its enquiries start only as slots free up.
    held.releaseOne();
    await eventually(() => held.started.length === NAME_ENQUIRY_SLOTS + 2, 5_000, 10);
    held.releaseAll();
    const releasing = (async () => {
      while (held.started.length < 101 || held.inFlight > 0) {
        held.releaseAll();
        await new Promise((resolve) => setTimeout(resolve, 5));
      }
    })();
    await Promise.all([single, ...flood]);
    await releasing;
    expect(held.maxInFlight).toBe(NAME_ENQUIRY_SLOTS);
    expect(await slotRows('fair')).toEqual({ held: 0, waiters: 0 });
  });

  it('serves another tenant first in the same process, ahead of the flooder’s enquiries waiting there', async () => {
    const shared = await startProcess();
    const held = heldEnquiries();
    const flood = Array.from({ length: 60 }, (_, i) => shared.run('local', 'flooder', held.enquiry(`f${i}`)));
    await eventually(() => held.inFlight === NAME_ENQUIRY_SLOTS, 20_000, 10);
    const single = shared.run('local', 'single', held.enquiry('single'));
    // The next place this process gives back goes to the tenant holding none, before the flooder's 44.
    held.releaseOne();
    await eventually(() => held.started.length === NAME_ENQUIRY_SLOTS + 1, 5_000, 10);
    expect(held.started.at(-1)).toBe('single');
    const releasing = (async () => {
      while (held.started.length < 61 || held.inFlight > 0) {
        held.releaseAll();
        await new Promise((resolve) => setTimeout(resolve, 5));
      }
    })();
    await Promise.all([single, ...flood]);
    await releasing;
    expect(await slotRows('local')).toEqual({ held: 0, waiters: 0 });
  });

  it('frees the slots of a process that died once their leases lapse', async () => {
    // A process that takes every slot and dies: its enquiries never end, and it renews nothing.
    const dead = await startProcess({ leaseMs: 600, renewMs: 3_600_000 });
    const never = heldEnquiries();
    for (let i = 0; i < NAME_ENQUIRY_SLOTS; i++) void dead.run('lapse', 'gone', never.enquiry(`d${i}`));
    await eventually(() => never.inFlight === NAME_ENQUIRY_SLOTS, 20_000, 10);
    expect((await slotRows('lapse')).held).toBe(NAME_ENQUIRY_SLOTS);
    const alive = await startProcess({ waitMs: 10_000 });
    const held = heldEnquiries();
    const after = alive.run('lapse', 'alive', held.enquiry('after'));
    await eventually(() => held.inFlight === 1, 10_000, 10);
    held.releaseAll();
    expect(await after).toBe('after');
  });

  it('fails an enquiry that finds no slot free in time as a transient fault, without making it', async () => {
    const busy = await startProcess();
    const held = heldEnquiries();
    const holding = Array.from({ length: NAME_ENQUIRY_SLOTS }, (_, i) =>
      busy.run('deadline', 'holder', held.enquiry(`h${i}`)),
    );
    await eventually(() => held.inFlight === NAME_ENQUIRY_SLOTS, 20_000, 10);
    const impatient = await startProcess({ waitMs: 300 });
    let made = false;
    const refused = await impatient
      .run('deadline', 'late', async () => {
        made = true;
      })
      .then(
        () => undefined,
        (error: unknown) => error,
      );
    expect(refused).toBeInstanceOf(NameEnquirySlotTimeout);
    // Not a provider's answer: no other connector is asked on its account, and callers retry it.
    expect(refused).not.toBeInstanceOf(ProviderError);
    expect((refused as Error).message).toMatch(/^all 16 name enquiry slots of deadline stayed busy for \d+ ms/);
    expect(made).toBe(false);
    // It no longer counts as waiting.
    expect(await waitersOf('deadline', 'late')).toBe(0);
    held.releaseAll();
    await Promise.all(holding);
    expect(await slotRows('deadline')).toEqual({ held: 0, waiters: 0 });
  });
});
