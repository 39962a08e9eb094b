// The counts behind the rate limits (./rate-limits.ts), in PostgreSQL so that every API replica
// draws on one budget: a fixed window per budget, one row per budget and window
// (`rate_limit_windows`, unlogged: migration 0040), raised by one statement per request. The only
// writer of that table.
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
// are read from one instant.
const COUNT = `insert into rate_limit_windows as w (window_start, bucket, count)
  values (to_timestamp(floor(extract(epoch from now()) * 1000 / $2::int) * $2::int / 1000.0), $1::text, 1)
  on conflict (window_start, bucket) do update set count = w.count + 1
  returning w.count,
    (extract(epoch from w.window_start) * 1000)::float8 as window_start_ms,
    (extract(epoch from w.window_start - now()) * 1000 + $2::int)::float8 as ms_left`;

// Bounded, and skipping rows another replica's prune holds, so that replicas pruning at once do
// not queue behind each other.
const PRUNE = `delete from rate_limit_windows where ctid = any(array(
  select ctid from rate_limit_windows where window_start < to_timestamp($1::float8 / 1000)
  limit $2::int for update skip locked))`;

/** The counter on the ORM's own pool, each statement named and prepared once per connection. */
export function postgresRateLimitCounter(orm: MikroORM): RateLimitCounter {
  return rateLimitCounterOn(async () => orm.em.getConnection().getNativeClient());
}

/** The counter on a pg pool (the benchmark measures it on one of its own). */
export function rateLimitCounterOn(pool: () => Promise<Pick<pg.Pool, 'query'>>): RateLimitCounter {
  return {
    async count(bucket, windowMs) {
      const { rows } = await (
        await pool()
      ).query<{ count: number; window_start_ms: number; ms_left: number }>({
        name: 'rate-limit-count',
        text: COUNT,
        values: [bucket, windowMs],
      });
      const row = rows[0];
      if (!row) throw new Error('the rate-limit count returned no row');
      return { count: row.count, windowStart: row.window_start_ms, msLeft: row.ms_left };
    },
    async prune(before, limit) {
      const result = await (await pool()).query({ name: 'rate-limit-prune', text: PRUNE, values: [before, limit] });
      return result.rowCount ?? 0;
    },
  };
}
