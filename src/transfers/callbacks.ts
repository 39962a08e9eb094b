// Bank callbacks about transfers → the transfer workflow's `bankConfirmed` signal. The bank
// knows our transfer by its id (we submit under it); the projection gives the workflow id. An
// answer about a transfer already final in our books is not signalled: if it contradicts them it
// is kept as a discrepancy for operators (decisions §12), and it never moves money by itself. An
// answer from a connector that does not hold the transfer (it failed over from there, or never
// went there) is kept as a connector conflict with both named (decisions §17): never applied,
// never dropped.
import type { MikroORM } from '@mikro-orm/postgresql';
import { type Client, WorkflowNotFoundError } from '@temporalio/client';
import type { CallbackDispatcher, ProviderCallback } from '../provider-callbacks/dispatcher.ts';
import { type BankOutcome, bankConfirmedSignal, transferWorkflowId } from '../../workflows/transfers/definitions.ts';
import { type TransferStatus, contradictsBooks, isFinal } from './domain.ts';
import { recordDiscrepancy } from './discrepancies.ts';
import { recordConnectorConflict } from './conflicts.ts';
import { isUuid } from '../http/ids.ts';
import { connectorOf, findTransfer } from './store.ts';
import { isBatchItem } from './batch-store.ts';
import { type Providers, callbacksServe } from '../connectors/registry.ts';
import { modeOf } from '../tenants/tenants.ts';

export function registerTransferCallbacks(
  dispatcher: CallbackDispatcher,
  deps: { orm: MikroORM; client: Client; providers: Pick<Providers, 'callbackModes'> },
) {
  const readStatus = async (transferId: string) => {
    return isUuid(transferId) ? findTransfer(deps.orm.em.fork(), transferId) : null;
  };

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

  const handle = async (callback: ProviderCallback): Promise<string> => {
    const transferId = typeof callback.data.reference === 'string' ? callback.data.reference : '';
    const row = await readStatus(transferId);
    if (!row) return `ignored: no transfer ${transferId}`;
    // A sender answers only for transfers of the modes it serves: the sandbox bank's word never
    // settles or refunds a live transfer (decisions §16).
    const mode = await modeOf(deps.orm.em.fork(), row.tenant_id);
    if (!mode || !callbacksServe(deps.providers, callback.provider, mode)) {
      callback.log.warn(
        { transferId, provider: callback.provider, mode },
        'callback about a transfer of a mode its sender does not serve: ignored',
      );
      return `ignored: ${callback.provider} does not serve ${mode}-mode transfers`;
    }
    const sender = callback.provider;
    const workflowId = transferWorkflowId(row.tenant_id, row.reference);
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
    if (isFinal(row.status)) {
      return judgeLate(callback, { id: transferId, workflowId, status: row.status }, bank);
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
        // A batch's item its batch submitted before starting its run (decisions §14): not applied
        // yet, so the bank delivers it again shortly, by when the run is there to take it.
        if (now && (await isBatchItem(deps.orm.em.fork(), transferId))) {
          throw new Error(`${workflowId} is a batch item whose run has not started yet`, { cause: error });
        }
        return `ignored: ${workflowId} has finished`;
      }
      throw error;
    }
    return `signalled ${workflowId}: ${bank.status}`;
  };
  dispatcher.on('transfer.successful', handle).on('transfer.failed', handle);
}
