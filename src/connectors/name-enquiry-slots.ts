// Name enquiries to one connector run at most NAME_ENQUIRY_SLOTS (16) at a time across the whole
// deployment, every API and worker process together, shared fairly between tenants (decisions
// §18): a tenant's batches cannot take the enquiries another tenant's single transfer needs, nor
// get the platform's integration throttled by its provider.
//
// - The slots are rows in PostgreSQL, `name_enquiry_slots`: NAME_ENQUIRY_SLOTS per connector,
//   written the first time a process asks that connector. An enquiry takes a free row (never
//   taken, or its lease lapsed) with ONE statement, an UPDATE whose sub-select locks the row
//   `FOR UPDATE SKIP LOCKED`, so two takers never get the same row and none waits on a row another
//   is taking; it gives the row back with one UPDATE when it ends. A single transfer's create pays
//   those two statements when a slot is free. A lease (`leaseMs`) is renewed every `renewMs` while
//   an enquiry lasts that long, so the slots of a process that dies come free within `leaseMs`.
// - Fairly: a tenant takes a free row only if no other tenant waiting for one holds fewer rows
//   than it does, so a free row goes to the waiting tenant that holds the fewest, and tenants that
//   all keep asking end with equal shares (16 divided by their number), while a row nobody else
//   waits for is never left idle. A tenant that found no row says it is waiting
//   (`name_enquiry_waiters`, one row per waiting enquiry, lapsing after `waiterTtlMs` unless
//   refreshed), so that others see it. The holdings are read in the statement that takes the row:
//   two tenants' takers racing may both pass the rule (the shares are fair to within the takers
//   racing at that moment); the bound of 16 per connector is exact.
// - In each process, at most NAME_ENQUIRY_SLOTS enquiries per connector are at the database at a
//   time (holding a row or asking for one); the others wait in memory, and a place given back goes
//   to the waiting tenant that holds the fewest, so a flood in one process does not queue another
//   tenant's enquiry behind it there either. One that asked and found no row asks again after a
//   short pause (`pollMs`, doubling up to 10×), or at once when a row of its process is given back.
// - An enquiry with no slot after `waitMs` fails with NameEnquirySlotTimeout, a transient fault,
//   and nothing was sent: the caller's retry policy applies (a transfer's create retries, a batch's
//   enquiries are retried, the resolve route answers 503), and no other connector is asked on
//   that account: a busy connector is not a connector that is down.
import { randomUUID } from 'node:crypto';
import type { MikroORM } from '@mikro-orm/postgresql';
import { executeNumbered } from '../db/numbered-sql.ts';

/** Name enquiries in flight at once at one connector, over the whole deployment. */
export const NAME_ENQUIRY_SLOTS = 16;

export interface SlotTimings {
  /** How long a taken slot holds unless renewed (or given back). */
  leaseMs: number;
  /** How often a slot whose enquiry is still running is renewed. */
  renewMs: number;
  /** How long an enquiry waits for a slot before it fails as a transient fault. */
  waitMs: number;
  /** The first pause between two asks for a slot (it doubles, up to ten times this). */
  pollMs: number;
  /** How long a waiting enquiry counts as waiting unless its process says so again. */
  waiterTtlMs: number;
}

export const SLOT_TIMINGS: SlotTimings = {
  leaseMs: 15_000,
  renewMs: 5_000,
  // Within a create's local activity (15 s) with the enquiry itself (PROVIDER_TIMEOUT_MS, 5 s).
  waitMs: 5_000,
  pollMs: 10,
  waiterTtlMs: 3_000,
};

/** No slot of the connector came free in time: nothing was sent; retry. */
export class NameEnquirySlotTimeout extends Error {
  readonly connector: string;

  constructor(connector: string, waitedMs: number) {
    super(
      `all ${NAME_ENQUIRY_SLOTS} name enquiry slots of ${connector} stayed busy for ${waitedMs} ms; nothing was sent, retry`,
    );
    this.name = 'NameEnquirySlotTimeout';
    this.connector = connector;
  }
}

const SEED = `insert into name_enquiry_slots (connector, slot)
    select $1, slot from generate_series(0, $2 - 1) as slot
    on conflict do nothing`;

// The rule and the free row in one statement: no row for a tenant while another tenant waiting
// for one holds fewer.
const TAKE = `with held as (
      select tenant_id, count(*) as n from name_enquiry_slots
       where connector = $1 and slot < $4 and expires_at > clock_timestamp()
       group by tenant_id
    ),
    ahead as (
      select 1 from (select distinct tenant_id from name_enquiry_waiters
                      where connector = $1 and tenant_id <> $2 and expires_at > clock_timestamp()) as waiting
       where coalesce((select n from held where held.tenant_id = waiting.tenant_id), 0)
           < coalesce((select n from held where held.tenant_id = $2), 0)
       limit 1
    )
    update name_enquiry_slots s
       set tenant_id = $2, holder = $3, expires_at = clock_timestamp() + $5 * interval '1 millisecond'
     where s.connector = $1 and s.slot = (
       select slot from name_enquiry_slots
        where connector = $1 and slot < $4 and (expires_at is null or expires_at <= clock_timestamp())
          and not exists (select 1 from ahead)
        order by slot limit 1 for update skip locked)
    returning s.slot`;

const RENEW = `update name_enquiry_slots set expires_at = clock_timestamp() + $4 * interval '1 millisecond'
     where connector = $1 and slot = $2 and holder = $3`;

const GIVE_BACK = `update name_enquiry_slots set tenant_id = null, holder = null, expires_at = null
     where connector = $1 and slot = $2 and holder = $3`;

// Waiting rows of processes that died are deleted a minute after they lapse (they stopped counting then).
const WAITING = `with lapsed as (
      delete from name_enquiry_waiters where connector = $2 and expires_at < clock_timestamp() - interval '1 minute'
    )
    insert into name_enquiry_waiters (id, connector, tenant_id, expires_at)
    values ($1, $2, $3, clock_timestamp() + $4 * interval '1 millisecond')
    on conflict (id) do update set expires_at = excluded.expires_at`;

const NOT_WAITING = 'delete from name_enquiry_waiters where id = $1';

/**
 * A process's places at the database for one connector: at most `size` enquiries hold or ask for a
 * slot at once; the others wait here, and a place given back goes to the waiting tenant holding
 * the fewest places (the longest-waiting of that tenant first).
 */
class LocalPlaces {
  private readonly size: number;
  private taken = 0;
  private readonly held = new Map<string, number>();
  private readonly waiting = new Map<string, { seq: number; grant: () => void }[]>();
  private seq = 0;

  constructor(size: number) {
    this.size = size;
  }

  /** Resolves once the tenant has a place; false if `deadline` came first (nothing held then). */
  take(tenantId: string, deadline: number): Promise<boolean> {
    if (this.taken < this.size && this.waiting.size === 0) {
      this.hold(tenantId);
      return Promise.resolve(true);
    }
    return new Promise((resolve) => {
      const entry = {
        seq: this.seq++,
        grant: () => {
          clearTimeout(timer);
          this.hold(tenantId);
          resolve(true);
        },
      };
      const queue = this.waiting.get(tenantId) ?? [];
      queue.push(entry);
      this.waiting.set(tenantId, queue);
      const timer = setTimeout(
        () => {
          const left = this.waiting.get(tenantId)!.filter((other) => other !== entry);
          if (left.length === 0) this.waiting.delete(tenantId);
          else this.waiting.set(tenantId, left);
          resolve(false);
        },
        Math.max(0, deadline - Date.now()),
      );
    });
  }

  give(tenantId: string): void {
    this.taken -= 1;
    const left = (this.held.get(tenantId) ?? 1) - 1;
    if (left === 0) this.held.delete(tenantId);
    else this.held.set(tenantId, left);
    let next: string | undefined;
    for (const [tenant, queue] of this.waiting) {
      if (
        next === undefined ||
        (this.held.get(tenant) ?? 0) < (this.held.get(next) ?? 0) ||
        ((this.held.get(tenant) ?? 0) === (this.held.get(next) ?? 0) && queue[0]!.seq < this.waiting.get(next)![0]!.seq)
      ) {
        next = tenant;
      }
    }
    if (next === undefined) return;
    const queue = this.waiting.get(next)!;
    const entry = queue.shift()!;
    if (queue.length === 0) this.waiting.delete(next);
    entry.grant();
  }

  private hold(tenantId: string): void {
    this.taken += 1;
    this.held.set(tenantId, (this.held.get(tenantId) ?? 0) + 1);
  }
}

interface Connector {
  places: LocalPlaces;
  seeded: Promise<unknown> | undefined;
  /** Enquiries of this process waiting for a slot, woken when one of its slots is given back. */
  wake: Set<() => void>;
}

export class NameEnquirySlots {
  private readonly orm: MikroORM;
  private readonly timings: SlotTimings;
  private readonly connectors = new Map<string, Connector>();

  constructor(orm: MikroORM, timings: Partial<SlotTimings> = {}) {
    this.orm = orm;
    this.timings = { ...SLOT_TIMINGS, ...timings };
  }

  /**
   * Runs `enquiry` holding one of `connector`'s slots for `tenantId`; throws NameEnquirySlotTimeout,
   * without running it, if no slot came free within `waitMs`.
   */
  async run<T>(connector: string, tenantId: string, enquiry: () => Promise<T>): Promise<T> {
    const started = Date.now();
    const deadline = started + this.timings.waitMs;
    const lane = this.connectorOf(connector);
    if (!(await lane.places.take(tenantId, deadline)))
      throw new NameEnquirySlotTimeout(connector, Date.now() - started);
    let slot: { slot: number; holder: string };
    try {
      slot = await this.takeSlot(lane, connector, tenantId, deadline, started);
    } catch (error) {
      lane.places.give(tenantId);
      throw error;
    }
    const renewal = setInterval(() => {
      // A renewal that fails leaves the lease to run out: at worst one more enquiry than the bound for a while.
      this.execute(RENEW, [connector, slot.slot, slot.holder, this.timings.leaseMs]).catch(() => undefined);
    }, this.timings.renewMs);
    renewal.unref();
    try {
      return await enquiry();
    } finally {
      clearInterval(renewal);
      // Not given back (the database away): the slot lapses with its lease.
      await this.execute(GIVE_BACK, [connector, slot.slot, slot.holder]).catch(() => undefined);
      lane.places.give(tenantId);
      for (const wake of lane.wake) wake();
    }
  }

  private connectorOf(name: string): Connector {
    let connector = this.connectors.get(name);
    if (!connector) {
      connector = { places: new LocalPlaces(NAME_ENQUIRY_SLOTS), seeded: undefined, wake: new Set() };
      this.connectors.set(name, connector);
    }
    return connector;
  }

  private async takeSlot(
    lane: Connector,
    connector: string,
    tenantId: string,
    deadline: number,
    started: number,
  ): Promise<{ slot: number; holder: string }> {
    // Once per process and connector; a failure is asked again by the next enquiry.
    lane.seeded ??= this.execute(SEED, [connector, NAME_ENQUIRY_SLOTS]).catch((error: unknown) => {
      lane.seeded = undefined;
      throw error;
    });
    await lane.seeded;
    const holder = randomUUID();
    let waitingSince: number | undefined;
    try {
      for (let pause = this.timings.pollMs; ; pause = Math.min(pause * 2, this.timings.pollMs * 10)) {
        const [taken] = await this.execute<{ slot: number }>(TAKE, [
          connector,
          tenantId,
          holder,
          NAME_ENQUIRY_SLOTS,
          this.timings.leaseMs,
        ]);
        if (taken) return { slot: Number(taken.slot), holder };
        const now = Date.now();
        if (now >= deadline) throw new NameEnquirySlotTimeout(connector, now - started);
        if (waitingSince === undefined || now - waitingSince > this.timings.waiterTtlMs / 3) {
          await this.execute(WAITING, [holder, connector, tenantId, this.timings.waiterTtlMs]);
          waitingSince = now;
        }
        await this.pause(lane, Math.min(pause, deadline - now));
      }
    } finally {
      if (waitingSince !== undefined) await this.execute(NOT_WAITING, [holder]).catch(() => undefined);
    }
  }

  /** Waits `ms`, or less if a slot of this process is given back meanwhile. */
  private pause(lane: Connector, ms: number): Promise<void> {
    return new Promise((resolve) => {
      const done = () => {
        clearTimeout(timer);
        lane.wake.delete(done);
        resolve();
      };
      const timer = setTimeout(done, ms);
      lane.wake.add(done);
    });
  }

  private execute<T extends Record<string, unknown>>(text: string, values: (string | number)[]): Promise<T[]> {
    return executeNumbered<T[]>(this.orm.em.fork(), text, values);
  }
}

const perOrm = new WeakMap<MikroORM, NameEnquirySlots>();

/** The process's slots on this database: one per ORM, shared by every caller that has it. */
export function nameEnquirySlotsFor(orm: MikroORM): NameEnquirySlots {
  let slots = perOrm.get(orm);
  if (!slots) {
    slots = new NameEnquirySlots(orm);
    perOrm.set(orm, slots);
  }
  return slots;
}
