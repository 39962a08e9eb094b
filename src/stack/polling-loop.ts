// Runs a pass of background work, waits, and runs it again, until stopped; a failed pass is
// reported and the loop goes on. `stop()` waits for the pass under way.
export class PollingLoop {
  private readonly pass: () => Promise<unknown>;
  private readonly intervalMs: number;
  private readonly onError: (error: unknown) => void;
  private timer: NodeJS.Timeout | undefined;
  private running: Promise<void> | undefined;
  private stopped = false;

  constructor(pass: () => Promise<unknown>, intervalMs: number, onError: (error: unknown) => void = () => {}) {
    this.pass = pass;
    this.intervalMs = intervalMs;
    this.onError = onError;
  }

  start(): void {
    if (this.stopped) return;
    this.running = this.pass()
      .then(() => undefined, this.onError)
      .finally(() => {
        if (!this.stopped) this.timer = setTimeout(() => this.start(), this.intervalMs);
      });
  }

  async stop(): Promise<void> {
    this.stopped = true;
    clearTimeout(this.timer);
    await this.running;
  }
}
