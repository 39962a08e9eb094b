// Card operations (lock, unlock, fund, and auto-reload's fundings) are recorded in PostgreSQL
// first and then handed to the card's workflow by a signal. A hand-over lost to a crash or to
// Temporal being away would leave the operation `accepted` for ever: the API answered 503 and a
// client that never retries never sends it again, and auto-reload has no client at all (found by
// `npm run chaos`). This sweep, run by the worker, hands every operation still accepted after
// HAND_OVER_GRACE_MS to its card's workflow again. Repeats are harmless: the workflow applies an
// operation id once, a lock or unlock that is already so changes nothing, and a funding's debit and
// load are idempotent on the funding id.
import type { MikroORM } from '@mikro-orm/postgresql';
import type { Client } from '@temporalio/client';
import { Sweep, type SweepLog } from '../runtime/sweep.ts';
import type { CardOperation } from '../../workflows/cards/definitions.ts';
import { requestCardOperation } from './service.ts';

/** How old an accepted operation must be before the sweep hands it over again. */
export const HAND_OVER_GRACE_MS = 30_000;
/** An operation handed over by the sweep is not handed over again before this (its workflow may be waiting on the processor). */
const RESEND_AFTER_MS = 10 * 60_000;

interface WaitingOperation {
  operation_id: string;
  action: 'lock' | 'unlock' | 'fund';
  funding_id: string | null;
  amount_minor: string | null;
  card_id: string;
  tenant_id: string;
  status: 'active' | 'locked';
}

export class CardOperationSweep extends Sweep<WaitingOperation> {
  private readonly deps: { orm: MikroORM; client: Client; taskQueue: string; log: SweepLog };

  constructor(deps: CardOperationSweep['deps'] & { intervalMs?: number }) {
    // A hand-over that failed is tried again at the next pass.
    super({
      intervalMs: deps.intervalMs ?? 15_000,
      againAfterMs: RESEND_AFTER_MS,
      waitAfterFailure: false,
      failure: 'card operation sweep failed',
      log: deps.log,
    });
    this.deps = deps;
  }

  /** One pass; answers how many operations it handed over. */
  async pass(now = Date.now()): Promise<number> {
    const rows = await this.deps.orm.em.fork().execute<WaitingOperation[]>(
      `select o.id as operation_id, o.action, f.id as funding_id, f.amount_minor, c.id as card_id, c.tenant_id, c.status
         from card_operations o
         join cards c on c.id = o.card_id
         left join card_fundings f on f.operation_id = o.id
        where o.status = 'accepted' and (o.action <> 'fund' or f.status = 'pending')
          and o.created_at < now() - ? * interval '1 millisecond'
        order by o.created_at, o.id limit 100`,
      [HAND_OVER_GRACE_MS],
    );
    const handed = await this.handOverEach(
      rows,
      now,
      (row) => row.operation_id,
      async (row) => {
        const operation: CardOperation =
          row.action === 'fund'
            ? {
                kind: 'fund',
                operationId: row.operation_id,
                fundingId: row.funding_id!,
                amountMinor: Number(row.amount_minor),
              }
            : { kind: row.action, operationId: row.operation_id };
        await requestCardOperation(
          this.deps,
          { id: row.card_id, tenant_id: row.tenant_id, status: row.status },
          operation,
        );
        return true;
      },
    );
    if (handed > 0) this.deps.log('card operations handed to their card workflows again', { handed });
    return handed;
  }
}
