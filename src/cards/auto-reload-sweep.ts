// Auto-reload fundings are recorded in the authorization's transaction and handed to the card's
// workflow after it commits, without delaying the processor's answer. A hand-over lost to a crash
// or to Temporal being away would leave the funding pending for ever; this sweep, in the worker,
// hands every auto-reload funding still pending after HAND_OVER_GRACE_MS to the workflow again.
// Repeats are harmless: the workflow applies an operation id once, and the funding's debit and
// load are idempotent on the funding id.
import type { MikroORM } from '@mikro-orm/postgresql';
import type { Client } from '@temporalio/client';
import { PollingLoop } from '../stack/polling-loop.ts';
import { requestCardOperation } from './service.ts';

/** How old a pending auto-reload funding must be before the sweep hands it over again. */
export const HAND_OVER_GRACE_MS = 30_000;
/** A funding handed over by the sweep is not handed over again before this (its workflow may be waiting on the processor). */
const RESEND_AFTER_MS = 10 * 60_000;

export class AutoReloadSweep {
  private readonly loop: PollingLoop;
  private readonly sent = new Map<string, number>();
  private readonly deps: {
    orm: MikroORM;
    client: Client;
    taskQueue: string;
    log: (message: string, fields?: Record<string, unknown>) => void;
  };

  constructor(deps: AutoReloadSweep['deps'] & { intervalMs?: number }) {
    this.deps = deps;
    this.loop = new PollingLoop(
      () => this.pass(),
      deps.intervalMs ?? 15_000,
      (error) => deps.log('auto-reload sweep failed', { err: (error as Error).message }),
    );
  }

  start(): void {
    this.loop.start();
  }

  stop(): Promise<void> {
    return this.loop.stop();
  }

  /** One pass; answers how many fundings it handed over. */
  async pass(now = Date.now()): Promise<number> {
    const rows = await this.deps.orm.em.fork().execute<
      {
        funding_id: string;
        operation_id: string;
        amount_minor: string;
        card_id: string;
        tenant_id: string;
        status: 'active' | 'locked';
      }[]
    >(
      `select f.id as funding_id, f.operation_id, f.amount_minor, c.id as card_id, c.tenant_id, c.status
         from card_fundings f
         join card_operations o on o.id = f.operation_id
         join cards c on c.id = f.card_id
        where f.source = 'auto_reload' and f.status = 'pending' and o.status = 'accepted'
          and f.created_at < now() - ? * interval '1 millisecond'
        order by f.created_at limit 100`,
      [HAND_OVER_GRACE_MS],
    );
    let handed = 0;
    for (const row of rows) {
      if (now - (this.sent.get(row.funding_id) ?? 0) < RESEND_AFTER_MS) continue;
      await requestCardOperation(
        this.deps,
        { id: row.card_id, tenant_id: row.tenant_id, status: row.status },
        {
          kind: 'fund',
          operationId: row.operation_id,
          fundingId: row.funding_id,
          amountMinor: Number(row.amount_minor),
        },
      );
      this.sent.set(row.funding_id, now);
      handed += 1;
    }
    // Forget what is no longer pending.
    const pending = new Set(rows.map((row) => row.funding_id));
    for (const id of this.sent.keys()) if (!pending.has(id)) this.sent.delete(id);
    if (handed > 0) this.deps.log('auto-reload fundings handed to their card workflows again', { handed });
    return handed;
  }
}
