// The rate limits' fields (IETF httpapi draft RateLimit and RateLimit-Policy beside X-RateLimit-*)
// and what the API does when its shared counter does not answer: it lets requests through
// uncounted, stops asking for PAUSE_MS, and prunes the windows that have ended once per window.
// The counter here is a stand-in; test/integration/rate-limit-replicas.test.ts counts in PostgreSQL.
import { describe, expect, it } from 'vitest';
import pino from 'pino';
import { PAUSE_MS, SharedBudgets, rateLimitHeaders } from '../../src/http/rate-limits.ts';
import type { RateLimitCounter, WindowCount } from '../../src/http/rate-limit-windows.ts';

describe('rateLimitHeaders', () => {
  const policy = { name: 'per-key', quota: 600 } as const;

  it.each([
    // count, ms left → RateLimit, X-RateLimit-Remaining, X-RateLimit-Reset, Retry-After
    [1, 60_000, '"per-key";r=599;t=60', '599', '60', undefined],
    [2, 40_001, '"per-key";r=598;t=41', '598', '41', undefined],
    [600, 1, '"per-key";r=0;t=1', '0', '1', undefined],
    [601, 12_500, '"per-key";r=0;t=13', '0', '13', '13'],
    [900, 59_999, '"per-key";r=0;t=60', '0', '60', '60'],
  ])('counts %i with %i ms left as %s', (count, msLeft, field, remaining, reset, retryAfter) => {
    const headers = rateLimitHeaders(policy, { count, msLeft, windowStart: 0 });
    expect(headers).toEqual({
      'ratelimit-policy': '"per-key";q=600;w=60',
      ratelimit: field,
      'x-ratelimit-limit': '600',
      'x-ratelimit-remaining': remaining,
      'x-ratelimit-reset': reset,
      ...(retryAfter ? { 'retry-after': retryAfter } : {}),
    });
  });

  it('says only the policy when the request could not be counted', () => {
    expect(rateLimitHeaders({ name: 'per-address', quota: 120 })).toEqual({
      'ratelimit-policy': '"per-address";q=120;w=60',
      'x-ratelimit-limit': '120',
    });
  });
});

/** A counter that answers from a list of outcomes, recording what it was asked. */
function scriptedCounter(outcomes: (WindowCount | Error | 'hang')[]) {
  const asked: string[] = [];
  const pruned: number[] = [];
  const pruneAnswers: number[] = [];
  const counter: RateLimitCounter = {
    count(bucket) {
      asked.push(bucket);
      const outcome = outcomes.shift();
      if (outcome === undefined) throw new Error('no outcome left');
      if (outcome === 'hang') return new Promise<never>(() => {});
      return outcome instanceof Error ? Promise.reject(outcome) : Promise.resolve(outcome);
    },
    prune(before) {
      pruned.push(before);
      return Promise.resolve(pruneAnswers.shift() ?? 0);
    },
  };
  return {
    counter,
    asked,
    pruned,
    pruneAnswers,
  };
}

function capturedLog() {
  const lines: { level: number; msg: string }[] = [];
  const log = pino(
    {},
    {
      write(line: string) {
        lines.push(JSON.parse(line) as { level: number; msg: string });
      },
    },
  );
  return { log, lines };
}

describe('SharedBudgets', () => {
  const window = (count: number, windowStart = 60_000): WindowCount => ({ count, windowStart, msLeft: 30_000 });

  it('lets a request through uncounted when the counter fails, asks nothing for PAUSE_MS, then counts again', async () => {
    let now = 1_000_000;
    const { counter, asked } = scriptedCounter([new Error('connect ECONNREFUSED'), window(3)]);
    const { log, lines } = capturedLog();
    const budgets = new SharedBudgets({ counter, log, now: () => now });

    expect(await budgets.count('per-key:a', 2_000)).toBeUndefined();
    now += PAUSE_MS - 1;
    expect(await budgets.count('per-key:a', 2_000)).toBeUndefined();
    expect(asked).toEqual(['per-key:a']);
    now += 1;
    expect(await budgets.count('per-key:a', 2_000)).toEqual(window(3));
    expect(asked).toEqual(['per-key:a', 'per-key:a']);
    expect(lines.map((line) => [line.level, line.msg])).toEqual([
      [40, 'rate-limit counter unavailable: requests go on uncounted (gateway_rate_limit_uncounted_total)'],
      [30, 'rate-limit counter answers again: requests are counted'],
    ]);
    await budgets.settle();
  });

  it('waits for the counter no longer than it is given', async () => {
    const { counter } = scriptedCounter(['hang']);
    const budgets = new SharedBudgets({ counter, log: capturedLog().log });
    const started = performance.now();
    expect(await budgets.count('public:198.51.100.1', 50)).toBeUndefined();
    expect(performance.now() - started).toBeLessThan(1_000);
  });

  it('prunes the ended windows once per window, in batches until one is short', async () => {
    const { counter, pruned, pruneAnswers } = scriptedCounter([
      window(1, 60_000),
      window(2, 60_000),
      window(1, 120_000),
    ]);
    pruneAnswers.push(0, 5_000, 5_000, 12);
    const budgets = new SharedBudgets({ counter, log: capturedLog().log });
    await budgets.count('per-key:a', 2_000);
    await budgets.count('per-key:a', 2_000);
    await budgets.settle();
    expect(pruned).toEqual([60_000]);
    await budgets.count('per-key:a', 2_000);
    await budgets.settle();
    // Full batches go on; the short one ends the pass.
    expect(pruned).toEqual([60_000, 120_000, 120_000, 120_000]);
  });
});
