// A sweep: the loop that finishes a hand-over a process lost. What is recorded in PostgreSQL first
// and handed to Temporal next (a card operation to its card's workflow, a bulk request to its batch
// workflow) stays waiting if the process dies, or Temporal is away, in between; a sweep finds such
// rows every interval and hands each over again. A row handed over is not handed over again before
// `againAfterMs` (what it went to may be at work on it), and what is no longer waiting is forgotten.
// Each feature's sweep says which rows wait and what handing one over is (src/cards/sweep.ts,
// src/transfers/batch-sweep.ts); the worker runs them.
import { PollingLoop } from './polling-loop.ts';

export type SweepLog = (message: string, fields?: Record<string, unknown>) => void;

export interface SweepSettings {
  /** How long the loop waits between passes. */
  intervalMs: number;
  /** A row handed over is left alone for this long. */
  againAfterMs: number;
  /** Whether a row whose hand-over failed is left alone for as long too (else the next pass tries it again). */
  waitAfterFailure: boolean;
  /** What a failed pass logs, with the error's message. */
  failure: string;
  log: SweepLog;
}

export abstract class Sweep<Row> {
  // Private to the helper (#), so that no name a feature's sweep gives its own members can clash.
  readonly #loop: PollingLoop;
  readonly #handed = new Map<string, number>();
  readonly #settings: SweepSettings;

  constructor(settings: SweepSettings) {
    this.#settings = settings;
    this.#loop = new PollingLoop(
      () => this.pass(),
      settings.intervalMs,
      (error) => settings.log(settings.failure, { err: (error as Error).message }),
    );
  }

  start(): void {
    this.#loop.start();
  }

  stop(): Promise<void> {
    return this.#loop.stop();
  }

  /** One pass; answers how many rows it handed over. */
  abstract pass(now?: number): Promise<number>;

  /**
   * Hands over each of `rows` (those waiting, as the pass found them) not handed over within
   * `againAfterMs` of `now`, in order, and forgets the rows no longer waiting; answers how many
   * hand-overs `handOver` counted.
   */
  protected async handOverEach(
    rows: readonly Row[],
    now: number,
    id: (row: Row) => string,
    handOver: (row: Row) => Promise<boolean>,
  ): Promise<number> {
    let counted = 0;
    for (const row of rows) {
      const key = id(row);
      if (now - (this.#handed.get(key) ?? 0) < this.#settings.againAfterMs) continue;
      if (this.#settings.waitAfterFailure) this.#handed.set(key, now);
      if (await handOver(row)) counted += 1;
      this.#handed.set(key, now);
    }
    // Forget what is no longer waiting.
    const waiting = new Set(rows.map(id));
    for (const key of this.#handed.keys()) if (!waiting.has(key)) this.#handed.delete(key);
    return counted;
  }
}
