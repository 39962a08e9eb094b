// The counts behind the rate limits (./rate-limits.ts), in PostgreSQL so that every API replica
// draws on one budget: a fixed window per budget, one row per budget and window
// (`rate_limit_windows`, unlogged: migration 0040). The only writer of that table.
//
// Each request is counted in the database before it is answered, as if by a statement of its own,
// but the requests of one process share statements: while a count is in flight, the requests that
// arrive wait for it to end and are then counted together, one row per budget raised by how many
// of them it has, and each is given the count it would have had alone (the row's new count less
// the ones counted after it in the same statement). So nothing is counted late and no budget can
// be overshot; what is saved is a statement, a round trip and a row lock per request under load
// (a request waits at most the statement in flight, then its own). A request alone is sent at once.
import type { MikroORM } from '@mikro-orm/postgresql';
import type pg from 'pg';

/** One request counted in its budget's current window. */
export interface WindowCount {
  /** Requests counted in this window, this one included. */
  count: number;
  /** When the window began (epoch ms). */
  windowStart: number;
  /** Milliseconds until it ends: more than 0, at most the window's length. */
  msLeft: number;
}

/** Where the rate limits count (PostgreSQL here; the unit tests give their own). */
export interface RateLimitCounter {
  /** Counts one request against `bucket` in the window of `windowMs` that is current now. */
  count(bucket: string, windowMs: number): Promise<WindowCount>;
  /** Deletes up to `limit` rows of windows that began before `before` (epoch ms): how many it deleted. */
  prune(before: number, limit: number): Promise<number>;
}

// Raw SQL because the statement is the rule: insert-or-increment is one atomic step however many
// replicas count the same budget at once, and the window comes from the database's clock (one
// clock for every replica), aligned on multiples of its length since the epoch. `now()` is the
// statement's start (it runs alone, outside any transaction), so the window and the time left
// are read from one instant. The budgets come sorted, and are locked in that order, so that two
// replicas counting the same budgets at once never wait on each other's rows in a cycle.
const COUNT = `insert into rate_limit_windows as w (window_start, bucket, count)
  select to_timestamp(floor(extract(epoch from now()) * 1000 / $3::int) * $3::int / 1000.0), t.bucket, t.n
  from unnest($1::text[], $2::int[]) with ordinality as t(bucket, n, i)
  order by t.i
  on conflict (window_start, bucket) do update set count = w.count + excluded.count
  returning w.bucket, w.count,
    (extract(epoch from w.window_start) * 1000)::float8 as window_start_ms,
    (extract(epoch from w.window_start - now()) * 1000 + $3::int)::float8 as ms_left`;

// Bounded, and skipping rows another replica's prune holds, so that replicas pruning at once do
// not queue behind each other.
const PRUNE = `delete from rate_limit_windows where ctid = any(array(
  select ctid from rate_limit_windows where window_start < to_timestamp($1::float8 / 1000)
  limit $2::int for update skip locked))`;

/** The counter on the ORM's own pool, each statement named and prepared once per connection. */
export function postgresRateLimitCounter(orm: MikroORM): RateLimitCounter {
  return rateLimitCounterOn(async () => orm.em.getConnection().getNativeClient());
}

interface Waiting {
  resolve(counted: WindowCount): void;
  reject(error: unknown): void;
}

/** The counter on a pg pool (the benchmark measures it on one of its own). */
export function rateLimitCounterOn(pool: () => Promise<Pick<pg.Pool, 'query'>>): RateLimitCounter {
  // The requests waiting for the next statement: by window length, then budget, in arrival order.
  let waiting = new Map<number, Map<string, Waiting[]>>();
  let inFlight = false;

  const countAll = async (windowMs: number, buckets: Map<string, Waiting[]>) => {
    const names = [...buckets.keys()].sort();
    try {
      const { rows } = await (
        await pool()
      ).query<{ bucket: string; count: number; window_start_ms: number; ms_left: number }>({
        name: 'rate-limit-count',
        text: COUNT,
        values: [names, names.map((name) => buckets.get(name)!.length), windowMs],
      });
      const byBucket = new Map(rows.map((row) => [row.bucket, row]));
      for (const [name, waiters] of buckets) {
        const row = byBucket.get(name);
        if (!row) {
          const error = new Error('the rate-limit count returned no row for a budget');
          for (const waiter of waiters) waiter.reject(error);
          continue;
        }
        // In arrival order: the first of them had the count before this statement, plus one.
        const before = row.count - waiters.length;
        waiters.forEach((waiter, index) =>
          waiter.resolve({ count: before + index + 1, windowStart: row.window_start_ms, msLeft: row.ms_left }),
        );
      }
    } catch (error) {
      for (const waiters of buckets.values()) for (const waiter of waiters) waiter.reject(error);
    }
  };

  const flush = async () => {
    inFlight = true;
    try {
      while (waiting.size > 0) {
        const batch = waiting;
        waiting = new Map();
        await Promise.all([...batch].map(([windowMs, buckets]) => countAll(windowMs, buckets)));
      }
    } finally {
      inFlight = false;
    }
  };

  return {
    count(bucket, windowMs) {
      return new Promise<WindowCount>((resolve, reject) => {
        let buckets = waiting.get(windowMs);
        if (!buckets) waiting.set(windowMs, (buckets = new Map<string, Waiting[]>()));
        let waiters = buckets.get(bucket);
        if (!waiters) buckets.set(bucket, (waiters = []));
        waiters.push({ resolve, reject });
        if (!inFlight) void flush();
      });
    },
    async prune(before, limit) {
      const result = await (await pool()).query({ name: 'rate-limit-prune', text: PRUNE, values: [before, limit] });
      return result.rowCount ?? 0;
    },
  };
}
