// Virtual-account side effects: expiry, and applying an inbound credit — the account's totals,
// the wallet credit (one journal entry from inbound clearing) and virtual_account.credited, in one
// transaction, once per provider transaction reference. Credits to closed or expired accounts are
// recorded as refused and counted nowhere.
import { randomUUID } from 'node:crypto';
import type { MikroORM } from '@mikro-orm/postgresql';
import { Context } from '@temporalio/activity';
import { type Client, WorkflowExecutionAlreadyStartedError } from '@temporalio/client';
import { ApplicationFailure } from '@temporalio/common';
import type { Providers } from '../src/providers/registry.ts';
import type { AllocateVirtualAccountInput, AllocatedVirtualAccount } from '../src/providers/types.ts';
import { providerFailure } from './provider-failure.ts';
import { recordEvent } from '../src/events/events.ts';
import { postMovement } from '../src/ledger/ledger.ts';
import { inboundCredit } from '../src/ledger/movements.ts';
import { type VirtualAccountRow, virtualAccountView } from '../src/virtual-accounts/views.ts';
import {
  EXPIRY_WORKFLOW_TYPE,
  type InboundCredit,
  type VirtualAccountCreateInput,
  expiryWorkflowId,
} from '../workflows/virtual-accounts-definitions.ts';
import type { virtualAccountExpiryWorkflow } from '../workflows/virtual-accounts.ts';

export function createVirtualAccountActivities({
  orm,
  providers,
  client,
}: {
  orm: MikroORM;
  providers: Providers;
  client: Client;
}) {
  const providerNamed = (name: string) => {
    const entry = providers.virtualAccounts.find((candidate) => candidate.provider.name === name);
    if (!entry) throw ApplicationFailure.nonRetryable(`no virtual-account provider ${name}`, 'provider_refused');
    return entry.provider;
  };
  return {
    /** Allocates at one provider under our reference (a repeat allocates nothing new). */
    async allocateVirtualAccount(
      input: AllocateVirtualAccountInput & { provider: string },
    ): Promise<AllocatedVirtualAccount> {
      const { provider, ...allocation } = input;
      try {
        return await providerNamed(provider).allocate(allocation);
      } catch (error) {
        // Anything but a refusal lets the workflow try the next provider.
        return providerFailure(error, 'provider_refused');
      }
    },

    /**
     * The account's row and `virtual_account.created`, in one transaction. If another request
     * with the same request_id recorded one first, that one stands (created: false).
     */
    async recordVirtualAccount(
      input: VirtualAccountCreateInput & AllocatedVirtualAccount & { provider: string },
    ): Promise<{ accountId: string; accountNumber: string; created: boolean }> {
      return orm.em.fork().transactional(async (tx) => {
        const [inserted] = await tx.execute<VirtualAccountRow[]>(
          `insert into virtual_accounts
             (id, tenant_id, customer_id, account_number, account_name, bank_code, bank_name, provider,
              provider_reference, status, account_type, metadata, request_id, expires_at)
           values (?, ?, ?, ?, ?, ?, ?, ?, ?, 'active', ?, ?, ?, ?)
           on conflict do nothing returning *`,
          [
            input.accountId,
            input.tenantId,
            input.customerId,
            input.accountNumber,
            input.accountName,
            input.bankCode,
            input.bankName,
            input.provider,
            input.providerReference,
            input.accountType,
            input.metadata ? JSON.stringify(input.metadata) : null,
            input.requestId,
            input.expiresAt,
          ],
        );
        if (inserted) {
          await recordEvent(tx, {
            tenantId: input.tenantId,
            type: 'virtual_account.created',
            sourceKey: `virtual_account:${inserted.id}:created`,
            payload: virtualAccountView(inserted),
          });
          return { accountId: inserted.id, accountNumber: inserted.account_number, created: true };
        }
        // Recorded by an earlier attempt of this activity, or another request won the request_id.
        const [existing] = await tx.execute<VirtualAccountRow[]>(
          `select * from virtual_accounts where id = ? or (tenant_id = ? and request_id = ?) order by (id = ?) desc limit 1`,
          [input.accountId, input.tenantId, input.requestId, input.accountId],
        );
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
        await providerNamed(input.provider).close(input.accountNumber, input.reason ?? undefined);
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
        const [row] = await tx.execute<VirtualAccountRow[]>(
          `update virtual_accounts set status = 'closed', closure_reason = ?, closed_at = now(), updated_at = now()
            where id = ? and tenant_id = ? and status in ('active', 'frozen') returning *`,
          [input.reason, input.accountId, input.tenantId],
        );
        if (!row) {
          const [current] = await tx.execute<{ status: string }[]>('select status from virtual_accounts where id = ?', [
            input.accountId,
          ]);
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

    /** Gives an allocation nobody needs back to its provider. */
    async releaseVirtualAccount(input: { provider: string; accountNumber: string }): Promise<void> {
      await providerNamed(input.provider).close(input.accountNumber, 'allocation not needed');
    },

    async expireVirtualAccount(input: { accountId: string }): Promise<string> {
      const rows = await orm.em.fork().execute<{ id: string }[]>(
        `update virtual_accounts set status = 'expired', updated_at = now()
            where id = ? and status in ('active', 'frozen') returning id`,
        [input.accountId],
      );
      return rows.length ? 'expired' : 'unchanged';
    },

    async applyInboundCredit(credit: InboundCredit): Promise<{ status: string; reason?: string }> {
      return orm.em.fork().transactional(async (tx) => {
        const [seen] = await tx.execute<{ status: string }[]>(
          'select status from inbound_credits where provider = ? and transaction_reference = ?',
          [credit.provider, credit.transactionReference],
        );
        if (seen) return { status: 'duplicate' };
        const [account] = await tx.execute<VirtualAccountRow[]>(
          'select * from virtual_accounts where provider = ? and account_number = ? for update',
          [credit.provider, credit.accountNumber],
        );
        const refusal = !account
          ? 'no such virtual account'
          : account.status === 'closed' || account.status === 'expired'
            ? `the account is ${account.status}`
            : undefined;
        const inserted = await tx.execute<{ id: string }[]>(
          `insert into inbound_credits
             (id, provider, transaction_reference, virtual_account_id, amount_minor, sender_name, status, refusal_reason)
           values (?, ?, ?, ?, ?, ?, ?, ?) on conflict on constraint inbound_credits_reference do nothing returning id`,
          [
            randomUUID(),
            credit.provider,
            credit.transactionReference,
            account?.id ?? null,
            credit.amountMinor,
            credit.senderName,
            refusal ? 'refused' : 'applied',
            refusal ?? null,
          ],
        );
        if (inserted.length === 0) return { status: 'duplicate' };
        if (refusal || !account) return { status: 'refused', reason: refusal ?? 'no such virtual account' };

        const [updated] = await tx.execute<VirtualAccountRow[]>(
          `update virtual_accounts set total_received_minor = total_received_minor + ?,
                  transaction_count = transaction_count + 1, updated_at = now() where id = ? returning *`,
          [credit.amountMinor, account.id],
        );
        await postMovement(tx, account.tenant_id, inboundCredit(credit));
        await recordEvent(tx, {
          tenantId: account.tenant_id,
          type: 'virtual_account.credited',
          sourceKey: `inbound-credit:${credit.provider}:${credit.transactionReference}`,
          payload: {
            ...virtualAccountView(updated!),
            credit: {
              amount_minor: credit.amountMinor,
              transaction_reference: credit.transactionReference,
              sender_name: credit.senderName,
              session_id: credit.sessionId,
            },
          },
        });
        return { status: 'applied' };
      });
    },
  };
}

export type VirtualAccountActivities = ReturnType<typeof createVirtualAccountActivities>;
