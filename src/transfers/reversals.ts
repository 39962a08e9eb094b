// Reversals after success (decisions §21): a completed transfer its bank reversed, once the bank's
// status query has confirmed it (workflows/transfers/transfer-reversal.ts), is applied here in one
// transaction under the transfer's row lock: the settlement undone with amount and fee back to the
// wallet (one journal entry, `transfer:<id>:reversal`), the row failed as `reversed` with
// reversed_at, the event transfer.reversed, and an open discrepancy it answers (a reversal word that
// an earlier status query had not confirmed) settled by it. A transfer not completed is left as
// it is: the journal key and the status together make a repeat apply nothing.
import type { EntityManager } from '@mikro-orm/postgresql';
import { recordEvent } from '../events/events.ts';
import { postMovement } from '../ledger/ledger.ts';
import { transferReversal } from '../ledger/movements.ts';
import { itemView } from './views.ts';
import { findOpenDiscrepancy, findTransfer, markDiscrepancySettled, markReversed, recordResolution } from './store.ts';

/** Who settles, in the discrepancy's record, one that a confirmed reversal answered. */
export const REVERSAL_SETTLER = 'system:transfer-reversal';

export type ReversalApplication =
  | { outcome: 'applied'; reversedAt: Date; entryId: string; eventId: string; settledDiscrepancyId: string | null }
  | { outcome: 'already_reversed' | 'already_failed' | 'in_flight' }
  | { outcome: 'unknown_transfer' };

export async function applyReversal(
  em: EntityManager,
  input: { transferId: string; providerCode?: string | undefined },
): Promise<ReversalApplication> {
  return em.transactional(async (tx) => {
    const transfer = await findTransfer(tx, input.transferId, { lock: true });
    if (!transfer) return { outcome: 'unknown_transfer' };
    if (transfer.status === 'failed') return { outcome: transfer.reversed_at ? 'already_reversed' : 'already_failed' };
    if (transfer.status !== 'completed') return { outcome: 'in_flight' };
    const movement = transferReversal({
      transferId: transfer.id,
      reference: transfer.reference,
      amountMinor: transfer.amount_minor,
      feeMinor: transfer.fee_minor,
      fundedFrom: transfer.funded_from,
    });
    const { entryId } = await postMovement(tx, transfer.tenant_id, movement);
    const reversed = await markReversed(tx, transfer.id, input.providerCode ?? null);
    // A word the status query did not confirm before (kept as ours completed, bank failed): the
    // books now say what the bank says, by this entry.
    const open = await findOpenDiscrepancy(tx, transfer.id, { lock: true });
    if (open) {
      const note = 'answered by the bank reversal its status query confirmed';
      await markDiscrepancySettled(tx, open.id, {
        operator: REVERSAL_SETTLER,
        note,
        entryId,
        idempotencyKey: movement.idempotencyKey,
      });
      await recordResolution(tx, transfer.id, {
        outcome: 'failed',
        note: `discrepancy settled: ${note}`,
        operator: REVERSAL_SETTLER,
      });
    }
    const eventId = await recordEvent(tx, {
      tenantId: transfer.tenant_id,
      type: 'transfer.reversed',
      sourceKey: `transfer:${transfer.id}:transfer.reversed`,
      payload: { ...itemView(reversed, { withCompletedAt: true }) },
    });
    return {
      outcome: 'applied',
      reversedAt: reversed.reversed_at!,
      entryId,
      eventId,
      settledDiscrepancyId: open?.id ?? null,
    };
  });
}
