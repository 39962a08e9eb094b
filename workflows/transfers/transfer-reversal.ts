// A bank's word that it reversed a transfer it had paid out (decisions §21), made one more durable
// step of the transfer rather than an operator's edit. One run per transfer at a time (id
// `transfer-reversal:<tenant>:<reference>`), started by the callback of the connector that holds it:
//   confirm — that connector's status query, asked again with backoff while it cannot be had; only
//             `reversed` confirms the word. Anything else (still successful, failed, not found, or
//             no answer at all) keeps it as a discrepancy for operators, as any late contradicting
//             word is (decisions §12), and moves nothing;
//   apply   — once, under the transfer's row lock: amount and fee back to the wallet, the transfer
//             failed as `reversed` with reversed_at, the event transfer.reversed. A transfer still
//             in flight in our books (the bank's success not yet applied) is told so by the signal
//             its own run waits for, and this run waits until it is final: failed there (it ends
//             `reversed`, its money returned by its run) or completed (reversed here).
import {
  getExternalWorkflowHandle,
  log,
  proxyActivities,
  setHandler,
  sleep,
  upsertSearchAttributes,
} from '@temporalio/workflow';
import { UNTIL_RECORDED } from '../activity-options.ts';
import {
  type BankOutcome,
  type ReversalCheck,
  type TransferReversalActivities,
  type TransferReversalInput,
  type TransferReversalState,
  bankConfirmedSignal,
  itemWordSignal,
  reversalStatusQuery,
  transferWorkflowId,
} from './definitions.ts';
import { TenantIdKey, TransferReferenceKey } from '../search-attributes.ts';

// A status query that cannot be had (the bank down, an answer that cannot be read) is asked again
// for about four minutes; after that the word stands unconfirmed, kept for operators.
const confirm = proxyActivities<TransferReversalActivities>({
  startToCloseTimeout: '30s',
  retry: { initialInterval: '2s', backoffCoefficient: 2, maximumInterval: '2m', maximumAttempts: 8 },
});
const ledger = proxyActivities<TransferReversalActivities>(UNTIL_RECORDED);

/** How long to wait for a transfer still in flight to be final, after `waits` waits. */
export function inFlightWaitMs(waits: number): number {
  return Math.min(5_000 * 2 ** waits, 10 * 60_000);
}

export async function transferReversalWorkflow(input: TransferReversalInput): Promise<TransferReversalState> {
  const state: TransferReversalState = { phase: 'confirming' };
  setHandler(reversalStatusQuery, () => state);
  upsertSearchAttributes([
    { key: TenantIdKey, value: input.tenantId },
    { key: TransferReferenceKey, value: input.reference },
  ]);
  const { transferId, connector } = input;

  let check: ReversalCheck | undefined;
  let fault: string | undefined;
  try {
    check = await confirm.reversalStatus({ transferId, connector });
  } catch (error) {
    fault = String(error instanceof Error && error.cause instanceof Error ? error.cause.message : error);
  }
  state.bankSays = check?.status ?? 'no answer';
  if (check?.status !== 'reversed') {
    // Not confirmed: the word is kept as what the bank said (failed), beside what its status query said.
    const bank: BankOutcome = {
      status: 'failed',
      source: 'callback',
      connector,
      ...(input.word.sessionId ? { sessionId: input.word.sessionId } : {}),
      ...(input.word.providerCode ? { providerCode: input.word.providerCode } : {}),
      message:
        `${connector} said it reversed the transfer, but its status query ` +
        (check ? `says ${check.status}` : `could not be had (${fault ?? 'no answer'})`) +
        (input.word.message ? `: ${input.word.message}` : ''),
    };
    const kept = await ledger.recordDiscrepancy({ transferId, bank });
    if (!kept) log.warn('a reversal its status query did not confirm, about a transfer not completed', { transferId });
    state.outcome = kept ? 'discrepancy' : 'unchanged';
    state.phase = 'done';
    return state;
  }

  state.phase = 'applying';
  let signalled = false;
  for (let waits = 0; ; waits += 1) {
    const applied = await ledger.applyReversal({
      transferId,
      ...(check.providerCode ? { providerCode: check.providerCode } : {}),
    });
    if (applied.outcome !== 'in_flight') {
      state.outcome =
        applied.outcome === 'applied'
          ? 'applied'
          : applied.outcome === 'already_failed' && signalled
            ? 'failed'
            : 'unchanged';
      break;
    }
    state.phase = 'waiting_for_transfer';
    if (!signalled) {
      signalled = true;
      // Its run takes the first word it gets: a success it already has wins, and this run then
      // reverses the transfer once it is completed.
      const outcome: BankOutcome = {
        status: 'failed',
        reversed: true,
        source: 'status_query',
        connector,
        ...(check.sessionId ? { sessionId: check.sessionId } : {}),
        ...(check.providerCode ? { providerCode: check.providerCode } : {}),
        ...(check.message ? { message: check.message } : {}),
      };
      try {
        if (input.awaitedBy) {
          await getExternalWorkflowHandle(input.awaitedBy).signal(itemWordSignal, { transferId, outcome });
        } else {
          await getExternalWorkflowHandle(transferWorkflowId(input.tenantId, input.reference)).signal(
            bankConfirmedSignal,
            outcome,
          );
        }
      } catch (error) {
        log.warn('the transfer run could not be told of its reversal; waiting for it to end', {
          transferId,
          error: String(error),
        });
      }
    }
    // A durable wait, not a condition: nothing signals this run.
    await sleep(inFlightWaitMs(waits));
  }
  state.phase = 'done';
  return state;
}
