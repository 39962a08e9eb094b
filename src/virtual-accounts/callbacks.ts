// Inbound-credit callbacks → one workflow per provider transaction reference, which applies the
// credit once (however often, or however concurrently, the bank sends it), with the provider's fee
// when it names one (decisions §18): never as much as the credit itself; and the sender's account,
// when it names one, where the credit can be returned to (decisions §21).
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
      // Where the credit can go back to (decisions §21): only a whole NUBAN and a bank code. A
      // provider that masks the number, or names the bank but not its code (Paystack), gives none.
      ...senderAccountOf(data),
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

/** The sender's account and bank code, when the callback carries both, well formed. */
function senderAccountOf(data: Record<string, unknown>): { senderAccountNumber?: string; senderBankCode?: string } {
  const account = data.sender_account_number;
  const bank = data.sender_bank_code;
  return typeof account === 'string' && /^\d{10}$/.test(account) && typeof bank === 'string' && /^\d{3,6}$/.test(bank)
    ? { senderAccountNumber: account, senderBankCode: bank }
    : {};
}
