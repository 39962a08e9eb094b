// Virtual-account side effects: expiry, and applying an inbound credit — the account's totals,
// the wallet credit (one journal entry from inbound clearing) and virtual_account.credited, in one
// transaction, once per provider transaction reference. Credits to closed or expired accounts are
// recorded as refused and counted nowhere.
import { randomUUID } from 'node:crypto';
import type { MikroORM } from '@mikro-orm/postgresql';
import { recordEvent } from '../src/events/events.ts';
import { postMovement } from '../src/ledger/ledger.ts';
import { inboundCredit } from '../src/ledger/movements.ts';
import { type VirtualAccountRow, virtualAccountView } from '../src/virtual-accounts/views.ts';
import type { InboundCredit } from '../workflows/virtual-accounts-definitions.ts';

export function createVirtualAccountActivities({ orm }: { orm: MikroORM }) {
  return {
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
