// The sandbox bank's background work: completing accepted transfers when their time comes,
// reversing those planned to be reversed once they have succeeded (5555555555), and delivering
// queued callbacks to the gateway (Standard Webhooks, retried with backoff until a 2xx).
import { PollingLoop } from '../runtime/polling-loop.ts';
import { callbackHeaders } from '../connectors/generic/contract.ts';
import { NIP, NIP_MESSAGES, REVERSED_MESSAGE } from './app.ts';
import type { CallbackRow, SandboxStore } from './store.ts';

export interface RunnerOptions {
  store: SandboxStore;
  /** Full URL the callbacks are POSTed to, e.g. http://127.0.0.1:3000/provider-callbacks/sandbox */
  callbackUrl: string;
  callbackSecret: string;
  intervalMs?: number;
  log?: (message: string, fields?: Record<string, unknown>) => void;
}

const MAX_BACKOFF_MS = 60_000;

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

  async tick(): Promise<void> {
    await this.completeDueTransfers();
    await this.reverseDueTransfers();
    await this.deliverCallbacks();
  }

  async reverseDueTransfers(): Promise<void> {
    const { store } = this.options;
    for (const transfer of await store.dueReversals()) {
      await store.transaction((client) => store.reverseTransfer(client, transfer.reference, REVERSED_MESSAGE));
    }
  }

  async completeDueTransfers(): Promise<void> {
    const { store } = this.options;
    for (const transfer of await store.dueTransfers()) {
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
    }
  }

  /** Due callbacks, up to 20 a pass, each claimed, delivered and recorded in a transaction of its own. */
  async deliverCallbacks(): Promise<void> {
    const { store, callbackUrl, callbackSecret } = this.options;
    for (let delivered = 0; delivered < 20; delivered++) {
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
      if (!more) return;
    }
  }
}
