// The sandbox bank's background work: completing accepted transfers when their time comes,
// reversing those planned to be reversed once they have succeeded (5555555555), and delivering
// queued callbacks to the gateway (Standard Webhooks, retried with backoff until a 2xx).
import { PollingLoop } from '../runtime/polling-loop.ts';
import { callbackHeaders } from '../connectors/generic/contract.ts';
import { NIP, NIP_MESSAGES, REVERSED_MESSAGE } from './app.ts';
import { type CallbackRow, REVERSAL_DELAY_MS, type SandboxStore } from './store.ts';

export interface RunnerOptions {
  store: SandboxStore;
  /** Full URL the callbacks are POSTed to, e.g. http://127.0.0.1:3000/provider-callbacks/sandbox */
  callbackUrl: string;
  callbackSecret: string;
  intervalMs?: number;
  log?: (message: string, fields?: Record<string, unknown>) => void;
}

const MAX_BACKOFF_MS = 60_000;
/**
 * Callbacks in flight at once, as a bank's notifier sends them: a batch's thousand answers reach the
 * gateway in seconds, not one after another (each lane holds one of the store's 10 connections).
 */
const CALLBACK_LANES = 4;

export function backoffMs(attempts: number): number {
  return Math.min(MAX_BACKOFF_MS, 500 * 2 ** Math.max(0, attempts - 1));
}

/**
 * The callback's body as the contract has it. Rows queued before the bank spoke the contract
 * (`{event_id, type, occurred_at, data}`, types `transfer.successful|failed` and
 * `virtual_account.credit`) are sent in its words, so an upgrade loses none of them.
 */
export function contractBody(row: CallbackRow): { id: string; type: string; data: Record<string, unknown> } {
  const data = (row.payload.data ?? {}) as Record<string, unknown>;
  if (row.type === 'transfer.successful' || row.type === 'transfer.failed') {
    return {
      id: row.event_id,
      type: 'transfer.completed',
      data: {
        reference: data.reference,
        status: row.type === 'transfer.successful' ? 'successful' : 'failed',
        session_id: data.session_id,
        code: data.response_code,
        message: data.message,
      },
    };
  }
  if (row.type === 'virtual_account.credit') {
    const { provider_reference: _reference, currency: _currency, ...credit } = data;
    return { id: row.event_id, type: 'virtual_account.credited', data: credit };
  }
  return { id: row.event_id, type: row.type, data };
}

export class SandboxRunner {
  private readonly options: RunnerOptions;
  private readonly loop: PollingLoop;

  constructor(options: RunnerOptions) {
    this.options = options;
    this.loop = new PollingLoop(
      () => this.tick(),
      options.intervalMs ?? 200,
      (error) => options.log?.('sandbox runner tick failed', { error: String(error) }),
    );
  }

  start(): void {
    this.loop.start();
  }

  stop(): Promise<void> {
    return this.loop.stop();
  }

  /**
   * Work falls due in `inMs` (a transfer accepted, a callback queued): a pass runs then, so that a
   * transfer completes and its callback leaves when due rather than up to a poll interval later.
   */
  dueIn(inMs: number): void {
    setTimeout(() => this.loop.wake(), inMs).unref();
  }

  /** True when callbacks may still be due (a lane delivered its whole pass): the loop runs again at once. */
  async tick(): Promise<boolean> {
    await this.completeDueTransfers();
    await this.reverseDueTransfers();
    return this.deliverCallbacks();
  }

  async reverseDueTransfers(): Promise<void> {
    const { store } = this.options;
    for (const transfer of await store.dueReversals()) {
      await store.transaction((client) => store.reverseTransfer(client, transfer.reference, REVERSED_MESSAGE));
    }
  }

  /**
   * The transfers due by now, 50 to a read and up to 1,000 a pass: a batch's thousand due at once
   * complete together, not 50 between each pass of callbacks.
   */
  async completeDueTransfers(): Promise<void> {
    const { store } = this.options;
    for (let reads = 0; reads < 20; reads++) {
      const due = await store.dueTransfers();
      if (due.length === 0) return;
      await this.complete(due);
    }
  }

  private async complete(due: Awaited<ReturnType<SandboxStore['dueTransfers']>>): Promise<void> {
    const { store } = this.options;
    for (const transfer of due) {
      // One planned to be reversed succeeds first.
      const failed = transfer.planned_outcome === 'failed';
      await store.transaction((client) =>
        store.settleTransfer(
          client,
          transfer.reference,
          failed ? 'failed' : 'successful',
          failed ? NIP.notPermitted : NIP.success,
          NIP_MESSAGES[failed ? NIP.notPermitted : NIP.success]!,
        ),
      );
      if (transfer.planned_outcome === 'reversed') this.dueIn(REVERSAL_DELAY_MS);
    }
  }

  /**
   * Due callbacks, CALLBACK_LANES at once (each lane up to 20 a pass), each claimed (skipping those
   * another lane holds), delivered and recorded in a transaction of its own. True when a lane
   * delivered its whole pass, so more may be due.
   */
  async deliverCallbacks(): Promise<boolean> {
    const passes = await Promise.all(Array.from({ length: CALLBACK_LANES }, () => this.deliverLane(20)));
    return passes.some(Boolean);
  }

  private async deliverLane(pass: number): Promise<boolean> {
    const { store, callbackUrl, callbackSecret } = this.options;
    for (let delivered = 0; delivered < pass; delivered++) {
      const more = await store.transaction(async (client) => {
        const callback = await store.claimDueCallback(client);
        if (!callback) return false;
        const body = JSON.stringify(contractBody(callback));
        let error: string | undefined;
        try {
          const response = await fetch(callbackUrl, {
            method: 'POST',
            headers: callbackHeaders(callbackSecret, callback.event_id, body),
            body,
            signal: AbortSignal.timeout(5_000),
          });
          if (!response.ok) error = `HTTP ${response.status}: ${(await response.text()).slice(0, 200)}`;
        } catch (cause) {
          error = cause instanceof Error ? cause.message : String(cause);
        }
        if (error === undefined) {
          await store.markCallbackDelivered(client, callback.event_id);
        } else {
          const attempts = callback.attempts + 1;
          await store.postponeCallback(client, callback.event_id, { attempts, error, retryInMs: backoffMs(attempts) });
          this.options.log?.('callback delivery failed', { event_id: callback.event_id, attempts, error });
        }
        return true;
      });
      if (!more) return false;
    }
    return true;
  }
}
