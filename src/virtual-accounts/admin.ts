// Operator commands for virtual accounts: `virtual-account freeze` and `unfreeze` (only operators
// freeze an account; the tenant may still close a frozen one), and the credits held in suspense
// (decisions §21): `credits held` lists them, `credits release` puts one in its tenant's wallet,
// `credits return` sends one to the account the operator names.
import type { OperatorCommand } from '../admin/command.ts';
import { withTemporal } from '../admin/command.ts';
import { OperatorRefusal, UsageError } from '../admin/errors.ts';
import { duration, flag, limit, limitFlag, uuid } from '../admin/flags.ts';
import { Refusal } from '../lib/refusal.ts';
import { recordEvent } from '../events/events.ts';
import { postMovement } from '../ledger/ledger.ts';
import { heldCreditRelease } from '../ledger/movements.ts';
import { returnedOfCredits } from '../transfers/service.ts';
import {
  HELD_CREDIT_RETURN_WORKFLOW_TYPE,
  type HeldCreditReturn,
  type HeldCreditReturnResult,
  heldCreditReturnWorkflowId,
} from '../../workflows/virtual-accounts/definitions.ts';
import { creditNetMinor, heldCreditReturnReference } from './domain.ts';
import {
  type HeldCreditRow,
  type InboundCreditRow,
  addToTotals,
  changeStatus,
  findAccount,
  findCredit,
  heldCredits,
  lockCredit,
  markReleased,
} from './store.ts';
import { virtualAccountView } from './views.ts';

function statusCommand(name: string, description: string, from: 'active' | 'frozen'): OperatorCommand {
  const to = from === 'active' ? 'frozen' : 'active';
  return {
    name,
    description,
    mutates: true,
    flags: { id: flag.required('ID', "the virtual account's id") },
    async run(em, flags) {
      const id = flags.get('id', uuid('a virtual account id'));
      const row = await changeStatus(em, id, { from: [from], to });
      if (row) return virtualAccountView(row);
      const current = await findAccount(em, id);
      if (!current) throw new OperatorRefusal('not_found', `no virtual account ${id}`);
      throw new OperatorRefusal('wrong_status', `virtual account ${id} is ${current.status}, not ${from}`);
    },
  };
}

/** A held credit's return was refused (its bank does not know the account, the bank is not one the gateway pays). */
class CreditReturnRefusal extends Refusal<'return_refused'> {
  override readonly name = 'CreditReturnRefusal';
}

/** A held credit as operators see it: where it came from, where it went, and what it holds. */
function heldView(credit: HeldCreditRow) {
  return {
    id: credit.id,
    tenant_id: credit.tenant_id,
    virtual_account_id: credit.virtual_account_id,
    account_number: credit.account_number,
    account_status: credit.account_status,
    amount_minor: credit.amount_minor,
    fee_minor: credit.fee_minor,
    held_minor: creditNetMinor({ amountMinor: credit.amount_minor, feeMinor: credit.fee_minor }),
    sender_name: credit.sender_name || null,
    sender_account_number: credit.sender_account_number ?? null,
    sender_bank_code: credit.sender_bank_code ?? null,
    provider: credit.provider,
    transaction_reference: credit.transaction_reference,
    reason: credit.refusal_reason,
    created_at: credit.created_at.toISOString(),
  };
}

/** The credit, refused unless it is held in suspense with no return of it on its way. */
function stillHeld(
  credit: (InboundCreditRow & { tenant_id: string }) | null,
  id: string,
  returning: number,
): asserts credit is InboundCreditRow & { tenant_id: string; account_number: string } {
  if (!credit) throw new OperatorRefusal('not_found', `no credit ${id}`);
  if (credit.status !== 'held') throw new OperatorRefusal('wrong_status', `credit ${id} is ${credit.status}, not held`);
  if (returning > 0) {
    throw new OperatorRefusal('wrong_status', `credit ${id} is on its way back to its sender (a return not failed)`);
  }
}

export const virtualAccountCommands: OperatorCommand[] = [
  statusCommand('virtual-account freeze', 'active → frozen (the tenant may still close it)', 'active'),
  statusCommand('virtual-account unfreeze', 'frozen → active', 'frozen'),
  {
    name: 'credits held',
    description:
      'Credits to closed or expired accounts held in suspense (their sender unknown, or their return refused or failed), oldest first',
    flags: { limit: limitFlag(100) },
    async run(em, flags) {
      const rows = await heldCredits(em, flags.get('limit', limit));
      // A held credit whose return is on its way is no longer waiting for an operator.
      const returning = await returnedOfCredits(
        em,
        rows.map((row) => row.id),
      );
      const items = rows.filter((row) => !returning.has(row.id)).map(heldView);
      return {
        count: items.length,
        held_minor: items.reduce((sum, item) => sum + item.held_minor, 0),
        items,
      };
    },
  },
  {
    name: 'credits release',
    description: "Puts a held credit in its account's tenant wallet (all of it), as if the account had been open",
    mutates: true,
    flags: { id: flag.required('ID', "the credit's id (credits held lists them)") },
    async run(em, flags) {
      const id = flags.get('id', uuid('a credit id'));
      return em.fork().transactional(async (tx) => {
        const credit = await lockCredit(tx, id);
        stillHeld(credit, id, (await returnedOfCredits(tx, [id])).get(id)?.returnedMinor ?? 0);
        await markReleased(tx, id);
        await postMovement(
          tx,
          credit.tenant_id,
          heldCreditRelease({
            provider: credit.provider,
            transactionReference: credit.transaction_reference,
            accountNumber: credit.account_number,
            senderName: credit.sender_name ?? '',
            amountMinor: credit.amount_minor,
            feeMinor: credit.fee_minor,
          }),
        );
        // Received after all: the account counts it, and its tenant hears of it as of any credit.
        const account = await addToTotals(tx, credit.virtual_account_id!, credit.amount_minor);
        await recordEvent(tx, {
          tenantId: credit.tenant_id,
          type: 'virtual_account.credited',
          sourceKey: `inbound-credit:${credit.provider}:${credit.transaction_reference}`,
          payload: {
            ...virtualAccountView(account),
            credit: {
              amount_minor: credit.amount_minor,
              fee_minor: credit.fee_minor,
              transaction_reference: credit.transaction_reference,
              sender_name: credit.sender_name ?? '',
              session_id: credit.session_id ?? '',
            },
          },
        });
        return {
          credit_id: id,
          tenant_id: credit.tenant_id,
          virtual_account_id: credit.virtual_account_id,
          released_minor: creditNetMinor({ amountMinor: credit.amount_minor, feeMinor: credit.fee_minor }),
          status: 'released',
        };
      });
    },
  },
  {
    name: 'credits return',
    description:
      'Sends a held credit (all of it, without a fee) to the account named, as a transfer paid from suspense; waits for its reservation',
    mutates: true,
    flags: {
      id: flag.required('ID', "the credit's id (credits held lists them)"),
      account: flag.required('N', 'the account to send it to (10 digits)'),
      'bank-code': flag.required('C', "that account's bank code"),
      wait: flag.optional('D', "how long to wait for the return's answer: 90s, 15m, 2h or 1d", '60s'),
    },
    async run(em, flags, config) {
      const id = flags.get('id', uuid('a credit id'));
      const accountNumber = flags.get('account', (raw, name) => {
        if (!/^\d{10}$/.test(raw)) throw new UsageError(`--${name} must be 10 digits`);
        return raw;
      });
      const bankCode = flags.get('bank-code', (raw, name) => {
        if (!/^\d{3,6}$/.test(raw)) throw new UsageError(`--${name} must be a bank code of 3 to 6 digits`);
        return raw;
      });
      const waitMs = flags.get('wait', duration);
      const credit = await findCredit(em, id);
      stillHeld(credit, id, (await returnedOfCredits(em, [id])).get(id)?.returnedMinor ?? 0);
      // One reference per command: the workflow's retries make the transfer once; another command is another return.
      const reference = heldCreditReturnReference(id, `op${Date.now().toString(36)}`);
      const input: HeldCreditReturn = { creditId: id, accountNumber, bankCode, reference };
      const workflowId = heldCreditReturnWorkflowId(id, reference);
      const waited = AbortSignal.timeout(waitMs);
      const result = await withTemporal(config, (client) =>
        client.withAbortSignal(waited, () =>
          client.workflow.execute<(input: HeldCreditReturn) => Promise<HeldCreditReturnResult>>(
            HELD_CREDIT_RETURN_WORKFLOW_TYPE,
            { workflowId, taskQueue: config.TEMPORAL_TASK_QUEUE, args: [input] },
          ),
        ),
      ).catch((error: unknown) => {
        if (waited.aborted) {
          throw new OperatorRefusal(
            'no_answer',
            `the workflow ${workflowId} did not answer within ${flags.optional('wait')}: is a worker running? ` +
              'The return may still be made once one runs; check with credits held',
            { cause: error },
          );
        }
        throw error;
      });
      if (result.status === 'held') throw new CreditReturnRefusal('return_refused', result.reason);
      return {
        credit_id: id,
        tenant_id: credit.tenant_id,
        transfer_id: result.transferId,
        reference: result.reference,
        amount_minor: creditNetMinor({ amountMinor: credit.amount_minor, feeMinor: credit.fee_minor }),
        recipient_account: accountNumber,
        recipient_bank_code: bankCode,
        workflow_id: workflowId,
      };
    },
  },
];
