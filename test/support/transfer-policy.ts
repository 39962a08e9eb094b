// A tenant mode's transfer policy (decisions §20) written straight into its table, for tests of
// what the policy does before the API that sets it is theirs to call. Anything not given is off
// (the defaults), as a policy never set reads.
import type { EntityManager } from '@mikro-orm/postgresql';
import { DEFAULT_TRANSFER_POLICY, type TransferPolicy } from '../../src/transfers/approvals.ts';

export interface PolicyPatch {
  approval?: Partial<TransferPolicy['approval']>;
  approval_expires_in_hours?: number;
  saved_recipients_only?: boolean;
  live_keys_need_ip_allow_list?: boolean;
}

/** Sets the policy of the tenant's mode (`tenantId`: the mode's id), replacing any it had. */
export async function setTransferPolicy(em: EntityManager, tenantId: string, patch: PolicyPatch): Promise<void> {
  const policy: TransferPolicy = {
    ...DEFAULT_TRANSFER_POLICY,
    ...patch,
    approval: { ...DEFAULT_TRANSFER_POLICY.approval, ...patch.approval },
  };
  await em.execute(
    `insert into transfer_policies (tenant_id, above_minor, new_recipient, every_transfer, approval_expires_in_hours,
                                    saved_recipients_only, live_keys_need_ip_allow_list, updated_at)
     values (?, ?, ?, ?, ?, ?, ?, now())
     on conflict (tenant_id) do update set
       above_minor = excluded.above_minor, new_recipient = excluded.new_recipient,
       every_transfer = excluded.every_transfer, approval_expires_in_hours = excluded.approval_expires_in_hours,
       saved_recipients_only = excluded.saved_recipients_only,
       live_keys_need_ip_allow_list = excluded.live_keys_need_ip_allow_list, updated_at = now()`,
    [
      tenantId,
      policy.approval.above_minor,
      policy.approval.new_recipient,
      policy.approval.every_transfer,
      policy.approval_expires_in_hours,
      policy.saved_recipients_only,
      policy.live_keys_need_ip_allow_list,
    ],
  );
}
