// The rate limits' windows as a test sees them: fixed 60-second windows on the database's clock
// (src/http/rate-limits.ts), shared by every app on one database. A test that counts a small
// budget down starts when the current window has room left for all its requests, so that no
// window ends in the middle of its count; that is a wait for a known instant, read from the same
// clock the counter uses, not a sleep hoping a race is over.
import type { MikroORM } from '../../src/orm.ts';
import { RATE_LIMIT_WINDOW_MS } from '../../src/http/rate-limits.ts';

/** Milliseconds until the current rate-limit window ends, by the database's clock. */
export async function windowMsLeft(orm: MikroORM): Promise<number> {
  const [row] = await orm.em
    .fork()
    .execute<{ ms_left: number }[]>(
      `select (? - mod((extract(epoch from clock_timestamp()) * 1000)::numeric, ?))::float8 as ms_left`,
      [RATE_LIMIT_WINDOW_MS, RATE_LIMIT_WINDOW_MS],
    );
  return Number(row?.ms_left);
}

/** Returns once the current window has at least `roomMs` left: at once, or just after the next one began. */
export async function roomInWindow(orm: MikroORM, roomMs: number): Promise<void> {
  const left = await windowMsLeft(orm);
  if (left >= roomMs) return;
  await new Promise((resolve) => setTimeout(resolve, left + 100));
  const after = await windowMsLeft(orm);
  if (after < roomMs) throw new Error(`the next rate-limit window has only ${after} ms left after waiting ${left} ms`);
}

/** `"name";k=v;k=v` (a RateLimit or RateLimit-Policy field of one item) as its name and numbers. */
export function rateLimitItem(field: string | string[] | number | undefined): {
  name: string;
  [parameter: string]: string | number;
} {
  const text = String(field ?? '');
  const match = /^"([^"]+)"((?:;[a-z]+=\d+)*)$/.exec(text);
  if (!match) throw new Error(`not one rate-limit item: ${JSON.stringify(field)}`);
  const item: { name: string; [parameter: string]: string | number } = { name: match[1]! };
  for (const pair of match[2]!.split(';').slice(1)) {
    const [key, value] = pair.split('=');
    item[key!] = Number(value);
  }
  return item;
}
