// The sweep helper (src/runtime/sweep.ts) the features' sweeps are built on: a row handed over is
// left alone for a while, a row no longer waiting is forgotten, and a failed hand-over is tried again
// at the next pass unless the sweep says it waits too. The features' sweeps themselves run against
// PostgreSQL and Temporal in test/integration (cards, transfer batches).
import { describe, expect, it } from 'vitest';
import { Sweep } from '../../src/runtime/sweep.ts';

const AGAIN_AFTER_MS = 60_000;
/** A moment to count from (the sweeps are given Date.now()). */
const T = Date.parse('2025-01-01T00:00:00Z');

class ListSweep extends Sweep<string> {
  waiting: string[] = [];
  failing = new Set<string>();
  given: string[] = [];

  constructor(waitAfterFailure: boolean) {
    super({ intervalMs: 1_000, againAfterMs: AGAIN_AFTER_MS, waitAfterFailure, failure: 'failed', log: () => {} });
  }

  pass(now = Date.now()): Promise<number> {
    return this.handOverEach(
      this.waiting,
      now,
      (row) => row,
      async (row) => {
        if (this.failing.has(row)) throw new Error(`${row} refused`);
        this.given.push(row);
        return row !== 'uncounted';
      },
    );
  }
}

describe('a sweep', () => {
  it('hands each waiting row over once until againAfterMs has passed, and counts what its hand-over counts', async () => {
    const sweep = new ListSweep(false);
    sweep.waiting = ['a', 'uncounted', 'b'];
    expect(await sweep.pass(T)).toBe(2);
    expect(sweep.given).toEqual(['a', 'uncounted', 'b']);
    expect(await sweep.pass(T + AGAIN_AFTER_MS - 1)).toBe(0);
    expect(await sweep.pass(T + AGAIN_AFTER_MS)).toBe(2);
    expect(sweep.given).toHaveLength(6);
  });

  it('forgets a row that stopped waiting, so that it is handed over at once if it waits again', async () => {
    const sweep = new ListSweep(false);
    sweep.waiting = ['a'];
    expect(await sweep.pass(T)).toBe(1);
    sweep.waiting = [];
    expect(await sweep.pass(T + 1)).toBe(0);
    sweep.waiting = ['a'];
    expect(await sweep.pass(T + 2)).toBe(1);
  });

  it('tries a failed hand-over again at the next pass, or after againAfterMs when it waits after failures', async () => {
    for (const [waitAfterFailure, retried] of [
      [false, 1],
      [true, 0],
    ] as const) {
      const sweep = new ListSweep(waitAfterFailure);
      sweep.waiting = ['a'];
      sweep.failing.add('a');
      await expect(sweep.pass(T)).rejects.toThrow('a refused');
      sweep.failing.clear();
      expect(await sweep.pass(T + 1)).toBe(retried);
      expect(await sweep.pass(T + AGAIN_AFTER_MS)).toBe(1 - retried);
    }
  });
});
