// Operator commands for wallets: `wallet fund`.
import { randomUUID } from 'node:crypto';
import type { OperatorCommand } from '../admin/command.ts';
import { flag, kobo } from '../admin/flags.ts';
import { TENANT, tenantModeOf } from '../tenants/admin.ts';
import { fundWallet, walletView } from './service.ts';

export const walletCommands: OperatorCommand[] = [
  {
    name: 'wallet fund',
    description: "Credits the tenant's test wallet (or with --live its live one) from external_funding",
    mutates: true,
    flags: {
      tenant: TENANT,
      'amount-minor': flag.required('N', 'kobo to credit'),
      reference: flag.optional('R', 'the same reference funds once (default: a new one)'),
      live: flag.boolean("the tenant's live wallet (refused before it has a live key)"),
    },
    async run(em, flags) {
      const amount = flags.get('amount-minor', kobo({ min: 1 }));
      const mode = await tenantModeOf(em, flags);
      const reference = flags.optional('reference') ?? `cli-${randomUUID()}`;
      const posted = await fundWallet(em, mode.id, amount, reference);
      return {
        tenant_id: mode.ownerId,
        mode: mode.mode,
        mode_tenant_id: mode.id,
        entry_id: posted.entryId,
        reference,
        amount_minor: amount,
        applied: posted.created,
        wallet: await walletView(em, mode.id),
      };
    },
  },
];
