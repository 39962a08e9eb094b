// Runs a pass of background work, waits, and runs it again, until stopped; a failed pass is
// reported and the loop goes on. A pass that resolves `true` says more work is waiting (it took a
// full batch), so the next one starts at once instead of after the interval: a backlog drains at
// the speed of the work, not one batch per interval. `wake()` says new work has come (a database
// notification): a waiting loop runs now, a running one goes again as soon as its pass ends.
// `stop()` waits for the pass under way.
export class PollingLoop {
  private readonly pass: () => Promise<unknown>;
  private readonly intervalMs: number;
  private readonly onError: (error: unknown) => void;
  private timer: NodeJS.Timeout | undefined;
  private running: Promise<void> | undefined;
  private stopped = false;
  private woken = false;

  constructor(pass: () => Promise<unknown>, intervalMs: number, onError: (error: unknown) => void = () => {}) {
    this.pass = pass;
    this.intervalMs = intervalMs;
    this.onError = onError;
  }

  start(): void {
    if (this.stopped) return;
    this.timer = undefined;
    this.woken = false;
    let more = false;
    this.running = this.pass()
      .then(
        (result) => {
          more = result === true;
        },
        (error: unknown) => this.onError(error),
      )
      .finally(() => {
        this.running = undefined;
        if (!this.stopped) this.timer = setTimeout(() => this.start(), more || this.woken ? 0 : this.intervalMs);
      });
  }

  wake(): void {
    if (this.stopped) return;
    if (this.running) {
      this.woken = true;
      return;
    }
    clearTimeout(this.timer);
    this.start();
  }

  async stop(): Promise<void> {
    this.stopped = true;
    clearTimeout(this.timer);
    await this.running;
  }
}
