// Virtual-account side effects: allocation (opening a create's sealed BVN for the provider, and
// nothing that holds it in what the workflow gets back), the row recorded (erasing that copy in the
// same transaction), expiry, and applying an inbound credit — the account's totals,
// the wallet credit (one journal entry from inbound clearing, with the provider's fee when it kept
// one: decisions §18) and virtual_account.credited, in one transaction, once per provider
// transaction reference. A credit to a closed or expired account is held in the tenant mode's
// suspense account (decisions §21), and sent back from there to its sender, or to the account an
// operator names, as a transfer made through the transfers' own create.
import type { MikroORM } from '@mikro-orm/postgresql';
import { Context } from '@temporalio/activity';
import { type Client, WorkflowExecutionAlreadyStartedError } from '@temporalio/client';
import { ApplicationFailure } from '@temporalio/common';
import { type BvnKeys, openBvn } from '../../src/identity/bvn.ts';
import { type Providers, callbacksServe } from '../../src/connectors/registry.ts';
import { modeOf } from '../../src/tenants/tenants.ts';
import type { AllocateVirtualAccountInput, AllocatedVirtualAccount } from '../../src/connectors/capabilities.ts';
import { providerFailure } from '../provider-failure.ts';
import { recordEvent } from '../../src/events/events.ts';
import { openSuspenseAccount, postMovement } from '../../src/ledger/ledger.ts';
import { inboundCredit, inboundCreditHeld } from '../../src/ledger/movements.ts';
import { banksOf } from '../../src/connectors/registry.ts';
import { ApiError, ERRORS } from '../../src/http/errors.ts';
import { TransferService } from '../../src/transfers/service.ts';
import { creditNetMinor } from '../../src/virtual-accounts/domain.ts';
import { virtualAccountView } from '../../src/virtual-accounts/views.ts';
import {
  type InboundCreditRow,
  addToTotals,
  changeStatus,
  creditByReference,
  findCredit,
  eraseSealedBvn,
  findAccount,
  findRecorded,
  insertAccount,
  lockAccountByNumber,
  providerReferenceOf,
  recordCredit,
  sealedBvnBinding,
  sealedBvnOf,
} from '../../src/virtual-accounts/store.ts';
import {
  type AppliedCredit,
  EXPIRY_WORKFLOW_TYPE,
  type HeldCreditReturn,
  type HeldCreditReturnResult,
  type InboundCredit,
  type VirtualAccountCreateInput,
  expiryWorkflowId,
} from '../../workflows/virtual-accounts/definitions.ts';
import type { virtualAccountExpiryWorkflow } from '../../workflows/virtual-accounts/virtual-accounts.ts';
import type { VirtualAccountActivities } from '../../workflows/virtual-accounts/definitions.ts';

export function createVirtualAccountActivities({
  orm,
  providers,
  client,
  bvnKeys,
}: {
  orm: MikroORM;
  providers: Providers;
  client: Client;
  bvnKeys: BvnKeys;
}): VirtualAccountActivities {
  const providerNamed = (name: string) => {
    const entry = providers.virtualAccounts.find((candidate) => candidate.provider.name === name);
    if (!entry) throw ApplicationFailure.nonRetryable(`no virtual-account provider ${name}`, 'provider_refused');
    return entry.provider;
  };
  return {
    /**
     * Allocates at one provider under our reference (a repeat allocates nothing new). With
     * `sealedBvnOf` (a create's account id) the provider gets the BVN sealed under it; a copy
     * already erased refuses the allocation rather than allocating without it.
     */
    async allocateVirtualAccount(
      input: AllocateVirtualAccountInput & { provider: string; sealedBvnOf?: string },
    ): Promise<AllocatedVirtualAccount> {
      const { provider, sealedBvnOf: accountId, ...allocation } = input;
      if (accountId !== undefined) {
        const sealed = await sealedBvnOf(orm.em.fork(), accountId);
        if (!sealed) {
          throw ApplicationFailure.create({
            type: 'bvn_erased',
            message: 'the BVN sent with this request is no longer held; send the request again',
            nonRetryable: true,
          });
        }
        allocation.bvn = openBvn(bvnKeys, sealedBvnBinding(accountId), sealed);
      }
      try {
        return await providerNamed(provider).allocate(allocation);
      } catch (error) {
        // Anything but a refusal lets the workflow try the next provider.
        return providerFailure(error, 'provider_refused');
      }
    },

    /**
     * The account's row and `virtual_account.created`, in one transaction, which also erases the
     * create's sealed BVN (the provider has the account). If another request with the same
     * request_id recorded one first, that one stands (created: false).
     */
    async recordVirtualAccount(
      input: VirtualAccountCreateInput & AllocatedVirtualAccount & { provider: string },
    ): Promise<{ accountId: string; accountNumber: string; created: boolean }> {
      return orm.em.fork().transactional(async (tx) => {
        await eraseSealedBvn(tx, input.accountId);
        const inserted = await insertAccount(tx, {
          id: input.accountId,
          tenant_id: input.tenantId,
          customer_id: input.customerId,
          account_number: input.accountNumber,
          account_name: input.accountName,
          bank_code: input.bankCode,
          bank_name: input.bankName,
          provider: input.provider,
          provider_reference: input.providerReference,
          status: 'active',
          account_type: input.accountType,
          metadata: input.metadata,
          request_id: input.requestId,
          expires_at: input.expiresAt ? new Date(input.expiresAt) : null,
        });
        if (inserted) {
          const row = (await findAccount(tx, input.accountId))!;
          await recordEvent(tx, {
            tenantId: input.tenantId,
            type: 'virtual_account.created',
            sourceKey: `virtual_account:${row.id}:created`,
            payload: virtualAccountView(row),
          });
          return { accountId: row.id, accountNumber: row.account_number, created: true };
        }
        // Recorded by an earlier attempt of this activity, or another request won the request_id.
        const existing = await findRecorded(tx, input.accountId, input.tenantId, input.requestId);
        if (!existing) throw new Error(`virtual account ${input.accountId} neither inserted nor found`);
        return {
          accountId: existing.id,
          accountNumber: existing.account_number,
          created: existing.id === input.accountId,
        };
      });
    },

    /**
     * Starts the account's expiry timer workflow, on this worker's task queue; a repeat finds it
     * started. (A workflow of its own, not a child: it outlives the create workflow by design.)
     */
    async startExpiry(input: { accountId: string; expiresAt: string }): Promise<void> {
      try {
        await client.workflow.start<typeof virtualAccountExpiryWorkflow>(EXPIRY_WORKFLOW_TYPE, {
          workflowId: expiryWorkflowId(input.accountId),
          taskQueue: Context.current().info.taskQueue,
          args: [input],
        });
      } catch (error) {
        if (!(error instanceof WorkflowExecutionAlreadyStartedError)) throw error;
      }
    },

    /** Closes the account at its provider (a provider closes a closed account again harmlessly). */
    async closeAtProvider(input: { provider: string; accountNumber: string; reason: string | null }): Promise<void> {
      try {
        const providerReference = await providerReferenceOf(orm.em.fork(), input.provider, input.accountNumber);
        await providerNamed(input.provider).close(input.accountNumber, input.reason ?? undefined, providerReference);
      } catch (error) {
        providerFailure(error, 'provider_refused');
      }
    },

    /** The row closed and `virtual_account.closed`, in one transaction; false if it had left active/frozen. */
    async recordClosure(input: {
      accountId: string;
      tenantId: string;
      reason: string | null;
    }): Promise<{ closed: boolean }> {
      return orm.em.fork().transactional(async (tx) => {
        const row = await changeStatus(tx, input.accountId, {
          from: ['active', 'frozen'],
          to: 'closed',
          tenantId: input.tenantId,
          closureReason: input.reason,
        });
        if (!row) {
          const current = await findAccount(tx, input.accountId);
          // Closed by an earlier attempt of this activity: that was this closure.
          return { closed: current?.status === 'closed' };
        }
        await recordEvent(tx, {
          tenantId: input.tenantId,
          type: 'virtual_account.closed',
          sourceKey: `virtual_account:${input.accountId}:closed`,
          payload: virtualAccountView(row),
        });
        return { closed: true };
      });
    },

    /** Erases a create's sealed BVN when no account will be recorded (its hash and last 4 stay). */
    async eraseVirtualAccountBvn(input: { accountId: string }): Promise<void> {
      await eraseSealedBvn(orm.em.fork(), input.accountId);
    },

    /** Gives an allocation nobody needs back to its provider. */
    async releaseVirtualAccount(input: { provider: string; accountNumber: string }): Promise<void> {
      await providerNamed(input.provider).close(input.accountNumber, 'allocation not needed');
    },

    async expireVirtualAccount(input: { accountId: string }): Promise<string> {
      const row = await changeStatus(orm.em.fork(), input.accountId, { from: ['active', 'frozen'], to: 'expired' });
      return row ? 'expired' : 'unchanged';
    },

    async applyInboundCredit(credit: InboundCredit): Promise<AppliedCredit> {
      return orm.em.fork().transactional(async (tx) => {
        const seen = await creditByReference(tx, credit.provider, credit.transactionReference);
        if (seen) return recordedCredit(seen);
        const account = await lockAccountByNumber(tx, credit.provider, credit.accountNumber);
        // A provider credits only the accounts of the key modes it serves, and a notice counts only
        // from a sender that serves them too: a sandbox provider's credit never reaches a live
        // wallet, whatever account number or provider name it gives (decisions §16).
        const mode = account ? await modeOf(tx, account.tenant_id) : undefined;
        const serves = (name: string) =>
          mode !== undefined &&
          providers.virtualAccounts.some((entry) => entry.provider.name === name && entry.modes.includes(mode));
        const refusal = !account
          ? 'no such virtual account'
          : !serves(credit.provider)
            ? `provider ${credit.provider} does not serve ${mode ?? 'unknown'}-mode accounts`
            : credit.sender !== undefined && !callbacksServe(providers, credit.sender, mode!)
              ? `${credit.sender} does not serve ${mode}-mode accounts`
              : undefined;
        // The bank took money for an account that is no longer open: it is the sender's, held in
        // suspense until it goes back (decisions §21), never "counted nowhere".
        const held = !refusal && (account?.status === 'closed' || account?.status === 'expired');
        const creditId = await recordCredit(tx, {
          provider: credit.provider,
          transaction_reference: credit.transactionReference,
          virtual_account_id: account?.id ?? null,
          amount_minor: credit.amountMinor,
          fee_minor: credit.feeMinor ?? 0,
          sender_name: credit.senderName,
          sender_account_number: credit.senderAccountNumber ?? null,
          sender_bank_code: credit.senderBankCode ?? null,
          status: refusal ? 'refused' : held ? 'held' : 'applied',
          refusal_reason: refusal ?? (held ? `the account is ${account.status}` : null),
          session_id: credit.sessionId || null,
        });
        if (!creditId) return { status: 'duplicate' };
        if (refusal || !account) return { status: 'refused', reason: refusal ?? 'no such virtual account' };
        if (held) {
          await openSuspenseAccount(tx, account.tenant_id);
          await postMovement(tx, account.tenant_id, inboundCreditHeld(credit));
          return heldCredit(
            creditId,
            `the account is ${account.status}`,
            credit.senderAccountNumber,
            credit.senderBankCode,
          );
        }

        const updated = await addToTotals(tx, account.id, credit.amountMinor);
        await postMovement(tx, account.tenant_id, inboundCredit(credit));
        await recordEvent(tx, {
          tenantId: account.tenant_id,
          type: 'virtual_account.credited',
          sourceKey: `inbound-credit:${credit.provider}:${credit.transactionReference}`,
          payload: {
            ...virtualAccountView(updated),
            credit: {
              amount_minor: credit.amountMinor,
              fee_minor: credit.feeMinor ?? 0,
              transaction_reference: credit.transactionReference,
              sender_name: credit.senderName,
              session_id: credit.sessionId,
            },
          },
        });
        return { status: 'applied' };
      });
    },

    async returnHeldCredit(input: HeldCreditReturn): Promise<HeldCreditReturnResult> {
      const em = orm.em.fork();
      const credit = await findCredit(em, input.creditId);
      if (!credit || credit.status !== 'held') {
        return {
          status: 'held',
          reason: `credit ${input.creditId} is not held (${credit?.status ?? 'no such credit'})`,
        };
      }
      const mode = await modeOf(em, credit.tenant_id);
      if (!mode) throw new Error(`credit ${credit.id} belongs to tenant ${credit.tenant_id}, which has no mode`);
      // Through the transfers' own create: name enquiry, reservation (from suspense, refused if the
      // credit is no longer held or another return of it is on its way), workflow and events are a
      // transfer's. The worker's own task queue is the main one, which the create maps to its lanes.
      const transfers = new TransferService({
        orm,
        client,
        taskQueue: Context.current().info.taskQueue,
        banks: (keyMode) => banksOf(providers, keyMode),
      });
      try {
        const created = await transfers.create(
          credit.tenant_id,
          {
            amount_minor: creditNetMinor({ amountMinor: credit.amount_minor, feeMinor: credit.fee_minor }),
            recipient_account: input.accountNumber,
            recipient_bank_code: input.bankCode,
            narration: `Return of ${credit.transaction_reference}`.slice(0, 100),
            reference: input.reference,
          },
          undefined,
          mode,
          undefined,
          { returnOf: { creditId: credit.id, fundedFrom: 'suspense' } },
        );
        return { status: 'returning', transferId: created.body.data.id, reference: input.reference };
      } catch (error) {
        // Refused for good (an account its bank does not know, a bank the gateway does not pay, a
        // credit no longer held): the money stays in suspense, for operators. Anything else retries.
        if (error instanceof ApiError && error.status < 500) {
          return { status: 'held', reason: `${ERRORS[error.kind].resource}: ${error.message}` };
        }
        throw error;
      }
    },
  };
}

/** A held credit as the credit workflow goes on with it: to its sender, when its account is known. */
function heldCredit(
  creditId: string,
  reason: string,
  accountNumber?: string | null,
  bankCode?: string | null,
): AppliedCredit {
  return {
    status: 'held',
    reason,
    creditId,
    ...(accountNumber && bankCode ? { returnTo: { accountNumber, bankCode } } : {}),
  };
}

/**
 * A credit recorded already (an attempt of this activity whose answer was lost): answered as it
 * was recorded, so a held one still goes back to its sender (its return is made once, under its
 * reference).
 */
function recordedCredit(credit: InboundCreditRow): AppliedCredit {
  if (credit.status !== 'held') return { status: 'duplicate' };
  return heldCredit(credit.id, credit.refusal_reason ?? 'held', credit.sender_account_number, credit.sender_bank_code);
}

export type { VirtualAccountActivities };
