// Inbound-credit callbacks → one workflow per provider transaction reference, which applies the
// credit once (however often, or however concurrently, the bank sends it), with the provider's fee
// when it names one (decisions §18): never as much as the credit itself.
import { type Client, WorkflowExecutionAlreadyStartedError } from '@temporalio/client';
import type { CallbackDispatcher } from '../provider-callbacks/dispatcher.ts';
import {
  INBOUND_CREDIT_WORKFLOW_TYPE,
  type InboundCredit,
  inboundCreditWorkflowId,
} from '../../workflows/virtual-accounts/definitions.ts';
import type { inboundCreditWorkflow } from '../../workflows/virtual-accounts/virtual-accounts.ts';

export function registerCreditCallbacks(dispatcher: CallbackDispatcher, deps: { client: Client; taskQueue: string }) {
  dispatcher.on('virtual_account.credit', async (callback) => {
    const data = callback.data;
    const text = (value: unknown) => (typeof value === 'string' ? value : '');
    // A connector whose provider keeps nothing of a credit (the generic contract's) names no fee.
    const feeMinor = data.fee_minor === undefined ? 0 : Number(data.fee_minor);
    const credit: InboundCredit = {
      // A connector with several virtual-account providers names which one (its receiver refuses a
      // name it does not have); one without names its credits after itself.
      provider: text(data.provider) || callback.provider,
      sender: callback.provider,
      accountNumber: text(data.account_number),
      amountMinor: Number(data.amount_minor),
      feeMinor,
      transactionReference: text(data.transaction_reference),
      senderName: typeof data.sender_name === 'string' ? data.sender_name : '',
      sessionId: typeof data.session_id === 'string' ? data.session_id : '',
    };
    if (
      !credit.provider ||
      !credit.accountNumber ||
      !credit.transactionReference ||
      !Number.isSafeInteger(credit.amountMinor) ||
      credit.amountMinor <= 0 ||
      !Number.isSafeInteger(feeMinor) ||
      feeMinor < 0 ||
      feeMinor >= credit.amountMinor
    ) {
      return 'ignored: malformed credit';
    }
    const workflowId = inboundCreditWorkflowId(credit.provider, credit.transactionReference);
    try {
      await deps.client.workflow.start<typeof inboundCreditWorkflow>(INBOUND_CREDIT_WORKFLOW_TYPE, {
        workflowId,
        taskQueue: deps.taskQueue,
        args: [credit],
        workflowIdReusePolicy: 'REJECT_DUPLICATE',
      });
    } catch (error) {
      if (error instanceof WorkflowExecutionAlreadyStartedError) return `already applying ${workflowId}`;
      throw error;
    }
    return `started ${workflowId}`;
  });
}
