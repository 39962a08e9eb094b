// Sends the callbacks the bank owes the gateway, one at a time in the order they were queued:
// `POST <callbackUrl>` with `{id, type, data}`, signed as Standard Webhooks. Anything but a 2xx
// within the timeout is tried again after a doubling wait, with the same `id` (the gateway applies
// each id once), up to a bounded number of tries; each try is signed afresh, since the gateway
// refuses a timestamp more than 5 minutes off. Tries are journaled, so a restarted bank neither
// resends what was delivered nor tries a callback more often than the bound.
import { Webhook } from 'standardwebhooks';
import type { Bank, Callback } from './bank.ts';

export interface CallbackSenderOptions {
  bank: Bank;
  callbackUrl: string | undefined;
  webhookSecret: string;
  /** The wait after the first failed try; it doubles after each, up to a minute. */
  retryBaseMs: number;
  maxAttempts: number;
  timeoutMs: number;
  log: (line: string) => void;
}

const MAX_WAIT_MS = 60_000;

export class CallbackSender {
  private readonly options: CallbackSenderOptions;
  private readonly signer: Webhook;
  /** Wall-clock time before which a callback is not tried again; not kept across restarts. */
  private readonly notBefore = new Map<string, number>();
  private timer: NodeJS.Timeout | undefined;
  private running = false;
  private stopped = false;
  private inFlight: AbortController | undefined;
  private pass: Promise<void> = Promise.resolve();

  constructor(options: CallbackSenderOptions) {
    this.options = options;
    // Throws at start on a secret that is not `whsec_<base64>` or raw bytes the library accepts.
    this.signer = new Webhook(options.webhookSecret);
  }

  start(): void {
    this.options.bank.onCallbackQueued = () => this.kick();
    this.kick();
  }

  /** Stops sending; a try in flight is abandoned (it is tried again after a restart). */
  async stop(): Promise<void> {
    this.stopped = true;
    if (this.timer) clearTimeout(this.timer);
    this.inFlight?.abort();
    await this.pass;
  }

  private kick(): void {
    if (this.stopped || this.running) return;
    if (this.timer) clearTimeout(this.timer);
    this.timer = undefined;
    this.running = true;
    this.pass = this.sendDue()
      .catch((error: unknown) => this.options.log(`callback sender: ${String(error)}`))
      .finally(() => {
        this.running = false;
        this.plan();
      });
  }

  /** Sets the timer for the next callback that will be due, if any. */
  private plan(): void {
    if (this.stopped) return;
    let next: number | undefined;
    for (const callback of this.options.bank.callbacks.values()) {
      if (callback.state !== 'queued') continue;
      const at = this.notBefore.get(callback.id) ?? 0;
      next = next === undefined ? at : Math.min(next, at);
    }
    if (next === undefined || this.options.callbackUrl === undefined) return;
    this.timer = setTimeout(() => this.kick(), Math.max(0, next - Date.now()));
  }

  private async sendDue(): Promise<void> {
    const { bank, callbackUrl } = this.options;
    if (callbackUrl === undefined) return;
    for (const callback of bank.callbacks.values()) {
      if (this.stopped) return;
      if (callback.state !== 'queued' || (this.notBefore.get(callback.id) ?? 0) > Date.now()) continue;
      const error = await this.deliver(callbackUrl, callback);
      if (this.stopped) return;
      const gaveUp = error !== null && callback.attempts + 1 >= this.options.maxAttempts;
      bank.recordAttempt(callback.id, error === null, error, gaveUp);
      if (error === null) {
        this.notBefore.delete(callback.id);
        continue;
      }
      this.options.log(
        `callback ${callback.id} (${callback.type}) try ${callback.attempts} failed: ${error}${gaveUp ? '; giving up' : ''}`,
      );
      const wait = Math.min(MAX_WAIT_MS, this.options.retryBaseMs * 2 ** (callback.attempts - 1));
      this.notBefore.set(callback.id, Date.now() + wait);
    }
  }

  /** One try; null when the gateway answered 2xx, else what went wrong. */
  private async deliver(url: string, callback: Callback): Promise<string | null> {
    const body = JSON.stringify({ id: callback.id, type: callback.type, data: callback.data });
    const sentAt = new Date();
    const controller = new AbortController();
    this.inFlight = controller;
    const timeout = setTimeout(
      () => controller.abort(new Error(`no answer within ${this.options.timeoutMs} ms`)),
      this.options.timeoutMs,
    );
    try {
      const response = await fetch(url, {
        method: 'POST',
        headers: {
          'content-type': 'application/json',
          'user-agent': 'generic-test-bank/1',
          'webhook-id': callback.id,
          'webhook-timestamp': String(Math.floor(sentAt.getTime() / 1000)),
          'webhook-signature': this.signer.sign(callback.id, sentAt, body),
        },
        body,
        signal: controller.signal,
      });
      // Read (and bound) the answer so the connection can be reused.
      const text = (await response.text()).slice(0, 200);
      return response.ok ? null : `HTTP ${response.status}: ${text}`;
    } catch (cause) {
      const reason = controller.signal.aborted ? controller.signal.reason : cause;
      // fetch says only "fetch failed"; the network's own word (ECONNREFUSED…) is in its cause.
      const code = (reason as { cause?: { code?: unknown } }).cause?.code;
      const message = reason instanceof Error ? reason.message : String(reason);
      return typeof code === 'string' ? `${message} (${code})` : message;
    } finally {
      clearTimeout(timeout);
      this.inFlight = undefined;
    }
  }
}
