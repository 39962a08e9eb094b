// Deliveries waiting for their disabled endpoint (decisions §21) are woken when it is enabled again:
// the API signals each of them after the enable commits (src/webhooks/service.ts). A wake-up lost
// to a crash, or to Temporal being away, would leave a delivery asleep until its own recheck hours
// later; this sweep, run by the worker, signals again every delivery still marked waiting whose
// endpoint has listened again for WAKE_GRACE_MS. Repeats are harmless: a delivery that is not
// waiting ignores the signal, and one that finds its endpoint disabled again waits again.
import type { MikroORM } from '@mikro-orm/postgresql';
import type { Client } from '@temporalio/client';
import { Sweep, type SweepLog } from '../runtime/sweep.ts';
import { signalWaitingDelivery } from './service.ts';
import { pausedDeliveriesOfListeningEndpoints } from './store.ts';

/** How long after its endpoint was enabled a delivery still waiting is woken by the sweep. */
export const WAKE_GRACE_MS = 30_000;
/** A delivery woken by the sweep is not woken again before this (its attempt may be waiting for a slot). */
const WAKE_AGAIN_AFTER_MS = 5 * 60_000;

interface WaitingDelivery {
  id: string;
  event_id: string;
  endpoint_id: string;
}

export class PausedDeliverySweep extends Sweep<WaitingDelivery> {
  private readonly deps: { orm: MikroORM; client: Client; log: SweepLog; graceMs: number };

  constructor(deps: { orm: MikroORM; client: Client; log: SweepLog; intervalMs?: number; graceMs?: number }) {
    super({
      intervalMs: deps.intervalMs ?? 15_000,
      againAfterMs: WAKE_AGAIN_AFTER_MS,
      waitAfterFailure: false,
      failure: 'paused webhook delivery sweep failed',
      log: deps.log,
    });
    this.deps = { ...deps, graceMs: deps.graceMs ?? WAKE_GRACE_MS };
  }

  /** One pass; answers how many deliveries it woke. */
  async pass(now = Date.now()): Promise<number> {
    const rows = await pausedDeliveriesOfListeningEndpoints(this.deps.orm.em.fork(), {
      graceMs: this.deps.graceMs,
      limit: 500,
    });
    const woken = await this.handOverEach(
      rows,
      now,
      (row) => row.id,
      (row) => signalWaitingDelivery(this.deps, row),
    );
    if (woken > 0) this.deps.log('webhook deliveries woken for their enabled endpoints again', { woken });
    return woken;
  }
}
