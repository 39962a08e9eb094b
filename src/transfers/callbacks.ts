// Bank callbacks about transfers → the transfer workflow's `bankConfirmed` signal. The bank
// knows our transfer by its id (we submit under it); the projection gives the workflow id.
import type { MikroORM } from '@mikro-orm/postgresql';
import { type Client, WorkflowNotFoundError } from '@temporalio/client';
import type { CallbackDispatcher, ProviderCallback } from '../provider-callbacks/dispatcher.ts';
import { bankConfirmedSignal, transferWorkflowId } from '../../workflows/transfer-definitions.ts';

export function registerTransferCallbacks(dispatcher: CallbackDispatcher, deps: { orm: MikroORM; client: Client }) {
  const handle = async (callback: ProviderCallback): Promise<string> => {
    const transferId = typeof callback.data.reference === 'string' ? callback.data.reference : '';
    const [row] = /^[0-9a-f-]{36}$/i.test(transferId)
      ? await deps.orm.em
          .fork()
          .execute<{ tenant_id: string; reference: string }[]>(
            'select tenant_id, reference from transfers where id = ?',
            [transferId],
          )
      : [];
    if (!row) return `ignored: no transfer ${transferId}`;
    const workflowId = transferWorkflowId(row.tenant_id, row.reference);
    const status = callback.type === 'transfer.successful' ? 'successful' : 'failed';
    try {
      await deps.client.workflow.getHandle(workflowId).signal(bankConfirmedSignal, {
        status,
        source: 'callback',
        ...(typeof callback.data.session_id === 'string' ? { sessionId: callback.data.session_id } : {}),
        ...(typeof callback.data.response_code === 'string' ? { providerCode: callback.data.response_code } : {}),
        ...(typeof callback.data.message === 'string' ? { message: callback.data.message } : {}),
      });
    } catch (error) {
      // Already settled and closed: the workflow learnt the outcome another way.
      if (error instanceof WorkflowNotFoundError) return `ignored: ${workflowId} has finished`;
      throw error;
    }
    return `signalled ${workflowId}: ${status}`;
  };
  dispatcher.on('transfer.successful', handle).on('transfer.failed', handle);
}
