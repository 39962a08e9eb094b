// Bank callbacks about transfers → the transfer workflow's `bankConfirmed` signal, or for a
// batch's item its group's awaiting run's `itemWord` (the item's row names that run). The bank
// knows our transfer by its id (we submit under it); the projection gives the workflow id. An
// answer about a transfer already final in our books is not signalled: if it contradicts them it
// is kept as a discrepancy for operators (decisions §12), and it never moves money by itself. An
// answer from a connector that does not hold the transfer (it failed over from there, or never
// went there) is kept as a connector conflict with both named (decisions §17): never applied,
// never dropped. A word that it reversed a transfer (decisions §21) starts the transfer's reversal
// workflow, which confirms it by the holder's status query before anything moves.
import type { EntityManager, MikroORM } from '@mikro-orm/postgresql';
import {
  ActivityNotFoundError,
  type Client,
  WorkflowExecutionAlreadyStartedError,
  WorkflowNotFoundError,
} from '@temporalio/client';
import type { CallbackDispatcher, ProviderCallback } from '../provider-callbacks/dispatcher.ts';
import {
  type BankOutcome,
  type SubmissionAnswer,
  TRANSFER_REVERSAL_WORKFLOW_TYPE,
  type TransferReversalInput,
  type TransferReversalState,
  bankConfirmedSignal,
  itemWordSignal,
  transferReversalWorkflowId,
  transferWorkflowId,
} from '../../workflows/transfers/definitions.ts';
import { laneTaskQueues } from '../config.ts';
import { type TransferStatus, contradictsBooks, isFinal } from './domain.ts';
import { recordDiscrepancy } from './discrepancies.ts';
import { recordConnectorConflict } from './conflicts.ts';
import { isUuid } from '../http/ids.ts';
import { type TransferRow, connectorOf, findTransfer, findTransferWithMode } from './store.ts';
import type { KeyMode } from '../connectors/types.ts';
import { batchItemOf, keepItemBankWord } from './batch-store.ts';
import { type Providers, callbacksServe } from '../connectors/registry.ts';

export function registerTransferCallbacks(
  dispatcher: CallbackDispatcher,
  deps: {
    orm: MikroORM;
    client: Client;
    providers: Pick<Providers, 'callbackModes'>;
    /** TEMPORAL_TASK_QUEUE: a live transfer's reversal runs there, a sandbox one's on its sandbox lane. */
    taskQueue: string;
  },
) {
  /** A callback's reference is our transfer's id: anything else is no transfer of ours, and is never queried. */
  const ours = <T>(transferId: string, read: (em: EntityManager, id: string) => Promise<T | null>) =>
    isUuid(transferId) ? read(deps.orm.em.fork(), transferId) : Promise.resolve(null);
  const readStatus = (transferId: string) => ours(transferId, findTransfer);

  /** The answer about a transfer final in our books: kept if it contradicts them, else a repeat. */
  const judgeLate = async (
    callback: ProviderCallback,
    transfer: { id: string; workflowId: string; status: TransferStatus },
    bank: BankOutcome,
  ): Promise<string> => {
    const ignored = `ignored: ${transfer.workflowId} has finished as ${transfer.status}`;
    if (!contradictsBooks(transfer.status, bank.status)) return ignored;
    const kept = await recordDiscrepancy(deps.orm.em.fork(), {
      transferId: transfer.id,
      bank,
      detectedBy: 'callback',
      eventId: callback.eventId,
    });
    if (!kept) return ignored;
    const { discrepancy } = kept;
    const details = {
      transferId: discrepancy.transfer_id,
      tenantId: discrepancy.tenant_id,
      reference: discrepancy.reference,
      ours: discrepancy.ours,
      bank: discrepancy.bank,
      eventId: callback.eventId,
    };
    if (kept.created) {
      callback.log.error(details, 'late bank answer contradicts the books: recorded as a discrepancy');
    } else {
      callback.log.warn(details, 'late bank answer repeats an open discrepancy');
    }
    return `discrepancy: ${transfer.workflowId} is ${discrepancy.ours}, the bank says ${discrepancy.bank}`;
  };

  /**
   * The transfer a callback is about, of a mode its sender serves, and the bank's word as an
   * outcome: or what the dispatch answers instead (no such transfer, a mode the sender does not
   * serve, a word from a connector that does not hold it).
   */
  const weigh = async (
    callback: ProviderCallback,
  ): Promise<string | { row: TransferRow; mode: KeyMode; bank: BankOutcome & { connector: string } }> => {
    const transferId = typeof callback.data.reference === 'string' ? callback.data.reference : '';
    const found = await ours(transferId, findTransferWithMode);
    if (!found) return `ignored: no transfer ${transferId}`;
    const { row, mode } = found;
    // A sender answers only for transfers of the modes it serves: the sandbox bank's word never
    // settles or refunds a live transfer (decisions §16).
    if (!callbacksServe(deps.providers, callback.provider, mode)) {
      callback.log.warn(
        { transferId, provider: callback.provider, mode },
        'callback about a transfer of a mode its sender does not serve: ignored',
      );
      return `ignored: ${callback.provider} does not serve ${mode}-mode transfers`;
    }
    const sender = callback.provider;
    const bank: BankOutcome & { connector: string } = {
      status: callback.type === 'transfer.successful' ? 'successful' : 'failed',
      source: 'callback',
      connector: sender,
      ...(typeof callback.data.session_id === 'string' ? { sessionId: callback.data.session_id } : {}),
      ...(typeof callback.data.response_code === 'string' ? { providerCode: callback.data.response_code } : {}),
      ...(typeof callback.data.message === 'string' ? { message: callback.data.message } : {}),
    };
    // Only the connector that holds the transfer answers for it (decisions §17): another's word (a
    // late success after a failover, a payment twice over) is kept for operators, never applied.
    if (connectorOf(row) !== sender) {
      const kept = await recordConnectorConflict(deps.orm.em.fork(), {
        transferId,
        bank,
        detectedBy: 'callback',
        eventId: callback.eventId,
      });
      // The transfer moved to the sender between the two reads: its word is the holder's after all.
      if (kept) {
        const { conflict } = kept;
        const details = { ...conflict, eventId: callback.eventId };
        if (kept.created) callback.log.error(details, 'a connector that does not hold the transfer answered about it');
        else callback.log.warn(details, 'a connector that does not hold the transfer repeated its answer');
        return `conflict: ${transferId} is with ${conflict.holder}; ${sender} says ${bank.status}`;
      }
    }
    return { row, mode, bank };
  };

  /** The word told to the run awaiting the item's group; false when that run is not there (yet, or any more). */
  const signalGroup = async (runId: string, transferId: string, outcome: BankOutcome): Promise<boolean> => {
    try {
      await deps.client.workflow.getHandle(runId).signal(itemWordSignal, { transferId, outcome });
      return true;
    } catch (error) {
      if (error instanceof WorkflowNotFoundError) return false;
      throw error;
    }
  };

  /**
   * The holder's word completes the first submission that waits for it, or is still on its way
   * (its task token on the row, docs/workflows.md#the-banks-word-completes-the-submission): the run
   * takes the word as the submission's answer, in the task that settles it. False when none waits
   * any more (its wait ran out, a retry or its run ended it) or it cannot be told now: the signal
   * goes instead.
   */
  const completeWaitingSubmission = async (
    callback: ProviderCallback,
    row: TransferRow,
    bank: BankOutcome & { connector: string },
  ): Promise<boolean> => {
    // Not final (the caller's check): the attempt may still be on its way, or waiting after "pending".
    const token = row.awaiting_word_token;
    if (!token || connectorOf(row) !== bank.connector) return false;
    const answer: SubmissionAnswer = {
      status: bank.status,
      sessionId: bank.sessionId ?? row.session_id ?? '',
      providerCode: bank.providerCode ?? '',
      word: bank,
    };
    try {
      await deps.client.activity.complete(Buffer.from(token, 'base64'), answer);
      return true;
    } catch (error) {
      if (!(error instanceof ActivityNotFoundError)) {
        callback.log.warn({ transferId: row.id, error: String(error) }, 'could not complete the waiting submission');
      }
      return false;
    }
  };

  const handle = async (callback: ProviderCallback): Promise<string> => {
    const weighed = await weigh(callback);
    if (typeof weighed === 'string') return weighed;
    const { row, bank } = weighed;
    const transferId = row.id;
    const workflowId = transferWorkflowId(row.tenant_id, row.reference);
    if (isFinal(row.status)) {
      return judgeLate(callback, { id: transferId, workflowId, status: row.status }, bank);
    }
    if (await completeWaitingSubmission(callback, row, bank)) {
      return `completed the submission of ${workflowId} with the bank's word: ${bank.status}`;
    }
    try {
      await deps.client.workflow.getHandle(workflowId).signal(bankConfirmedSignal, bank);
    } catch (error) {
      if (error instanceof WorkflowNotFoundError) {
        // The workflow closed between our read and the signal: weigh the answer against its result.
        const now = await readStatus(transferId);
        if (now && isFinal(now.status)) {
          return judgeLate(callback, { id: transferId, workflowId, status: now.status }, bank);
        }
        // A batch's item its batch submitted before starting its run (decisions §14): the word is
        // kept on the item, for the run to take when it starts, and not applied yet, so the bank
        // also delivers it again (the run may have started between the signal and the keeping).
        // Kept only once the batch has marked it submitted: a word about an item not yet sent
        // (a held batch's) is no answer to a submission. An item its group's run awaits (the row
        // names it) is told to that run.
        const em = deps.orm.em.fork();
        const item = now ? await batchItemOf(em, transferId) : null;
        if (now && item) {
          if (item.awaitedBy && (await signalGroup(item.awaitedBy, transferId, bank))) {
            return `signalled ${item.awaitedBy}: ${bank.status}`;
          }
          const again = item.awaitedBy ? await readStatus(transferId) : now;
          if (again && isFinal(again.status)) {
            return judgeLate(callback, { id: transferId, workflowId, status: again.status }, bank);
          }
          if (now.status === 'processing') await keepItemBankWord(em, transferId, bank);
          throw new Error(`${item.awaitedBy ?? workflowId} awaiting batch item ${transferId} has not started yet`, {
            cause: error,
          });
        }
        return `ignored: ${workflowId} has finished`;
      }
      throw error;
    }
    return `signalled ${workflowId}: ${bank.status}`;
  };
  /**
   * The holder's word that it reversed the transfer (decisions §21): its reversal workflow confirms
   * it by the status query and applies it once. A transfer still in flight goes the same way (the
   * run tells the transfer's own run, and waits until it is final); one already failed, reversed or
   * not, agrees with the word and is left as it is. A repeated word finds the run going; a word
   * after a run ended (its reversal not confirmed then) starts another, which asks again.
   */
  const handleReversal = async (callback: ProviderCallback): Promise<string> => {
    const weighed = await weigh(callback);
    if (typeof weighed === 'string') return weighed;
    const { row, mode, bank } = weighed;
    if (row.status === 'failed') {
      return row.reversed_at
        ? `ignored: ${row.id} was reversed at ${row.reversed_at.toISOString()}`
        : `ignored: ${row.id} has failed; a reversal changes nothing`;
    }
    const workflowId = transferReversalWorkflowId(row.tenant_id, row.reference);
    // A batch's item still in flight is told through its group's run, which awaits it.
    const awaitedBy = row.status === 'processing' ? (await batchItemOf(deps.orm.em.fork(), row.id))?.awaitedBy : null;
    const input: TransferReversalInput = {
      transferId: row.id,
      tenantId: row.tenant_id,
      reference: row.reference,
      connector: bank.connector,
      word: {
        eventId: callback.eventId,
        ...(bank.sessionId ? { sessionId: bank.sessionId } : {}),
        ...(bank.providerCode ? { providerCode: bank.providerCode } : {}),
        ...(bank.message ? { message: bank.message } : {}),
      },
      ...(awaitedBy ? { awaitedBy } : {}),
    };
    try {
      const started = await deps.client.workflow.start<
        (input: TransferReversalInput) => Promise<TransferReversalState>
      >(TRANSFER_REVERSAL_WORKFLOW_TYPE, {
        workflowId,
        taskQueue: mode === 'live' ? deps.taskQueue : laneTaskQueues(deps.taskQueue).sandbox,
        args: [input],
        // A repeated word joins the run under way; one after it ended asks the bank again.
        workflowIdConflictPolicy: 'USE_EXISTING',
        workflowIdReusePolicy: 'ALLOW_DUPLICATE',
        memo: { transferId: row.id, eventId: callback.eventId },
      });
      callback.log.warn(
        { transferId: row.id, status: row.status, workflowId, runId: started.firstExecutionRunId },
        'the bank says it reversed a transfer: confirming it by its status query',
      );
    } catch (error) {
      if (error instanceof WorkflowExecutionAlreadyStartedError) return `already confirming ${workflowId}`;
      throw error;
    }
    return `confirming ${workflowId}: ${row.id} is ${row.status}`;
  };

  dispatcher.on('transfer.successful', handle).on('transfer.failed', handle).on('transfer.reversed', handleReversal);
}
