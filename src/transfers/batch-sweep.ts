// A bulk request is recorded in PostgreSQL first and then handed to its batch workflow
// (./batches.ts). An API that dies between the two (or a Temporal away at that moment) leaves the
// batch `processing` with no run, an atomic one with its money reserved: a client that repeats the
// request starts it, one that never does would leave it there. This sweep, run by the worker,
// starts the workflow of every batch still untouched after START_GRACE_MS — none of its items
// enquired or decided, which a running batch does within seconds. A start is once for good (the id
// is the batch's), so a batch whose run is there already is left as it is.
import type { MikroORM } from '@mikro-orm/postgresql';
import type { Client } from '@temporalio/client';
import { Sweep, type SweepLog } from '../runtime/sweep.ts';
import { startBatchWorkflow } from './batches.ts';

/** How old an untouched batch must be before the sweep starts its workflow. */
export const START_GRACE_MS = 30_000;
/** A batch the sweep found is not looked at again before this (its run may be waiting on the bank). */
const LOOK_AGAIN_AFTER_MS = 10 * 60_000;

interface UntouchedBatch {
  id: string;
  tenant_id: string;
  batch_reference: string;
  total_count: number;
  created_by_key_id: string | null;
  approval_expires_at: Date | string | null;
}

export class TransferBatchSweep extends Sweep<UntouchedBatch> {
  private readonly deps: {
    orm: MikroORM;
    client: Client;
    /** TEMPORAL_TASK_QUEUE: a batch started here runs on its batches lane beside it. */
    taskQueue: string;
    log: SweepLog;
  };

  constructor(deps: TransferBatchSweep['deps'] & { intervalMs?: number }) {
    // A batch is not looked at again for a while even when starting it failed.
    super({
      intervalMs: deps.intervalMs ?? 15_000,
      againAfterMs: LOOK_AGAIN_AFTER_MS,
      waitAfterFailure: true,
      failure: 'transfer batch sweep failed',
      log: deps.log,
    });
    this.deps = deps;
  }

  /** One pass; answers how many batches' workflows it started. */
  async pass(now = Date.now(), graceMs = START_GRACE_MS): Promise<number> {
    const rows = await this.deps.orm.em.fork().execute<UntouchedBatch[]>(
      `select b.id, b.tenant_id, b.batch_reference, b.total_count, b.created_by_key_id, b.approval_expires_at
         from transfer_batches b
        where b.status = 'processing' and b.created_at < now() - ? * interval '1 millisecond'
          and not exists (select 1 from transfer_batch_items i
                           where i.batch_id = b.id and (i.status <> 'queued' or i.recipient_name is not null)
                             -- refused by the API with the batch (decisions §20), not by its run
                             and i.error_code is distinct from 'recipient_not_allowed')
        order by b.created_at, b.id limit 100`,
      [graceMs],
    );
    const started = await this.handOverEach(
      rows,
      now,
      (row) => row.id,
      async (row) =>
        (await startBatchWorkflow(this.deps, {
          ...row,
          approval_expires_at: row.approval_expires_at === null ? null : new Date(row.approval_expires_at),
        })) === 'started',
    );
    if (started > 0) this.deps.log('transfer batches handed to their workflows by the sweep', { started });
    return started;
  }
}
