// The only code that writes transfer_policies (migration 0034): a tenant mode's transfer policy
// (decisions §20), one row per mode row, all off when there is none.
//
// readTransferPolicy is what the transfer and batch paths call to decide whether to hold a transfer
// for approval (other features import it from ./service.ts, which re-exports it); it answers the policy in the API's own shape, snake_case (TransferPolicy below),
// the defaults when the tenant mode never saved one.
import { type InferEntity, p } from '@mikro-orm/core';
import type { EntityManager } from '@mikro-orm/postgresql';
import { tableEntity } from '../db/columns.ts';
import type { TransferPolicyView } from './schemas.ts';

export const TransferPolicyRow = tableEntity('TransferPolicyRow', 'transfer_policies', {
  tenant_id: p.uuid().primary(),
  above_minor: p.bigint('number').nullable(),
  new_recipient: p.boolean(),
  every_transfer: p.boolean(),
  approval_expires_in_hours: p.integer(),
  saved_recipients_only: p.boolean(),
  live_keys_need_ip_allow_list: p.boolean(),
  updated_at: p.datetime().defaultRaw('now()'),
});
type PolicyRow = InferEntity<typeof TransferPolicyRow>;

/**
 * `{approval: {above_minor: number | null, new_recipient, every_transfer}, approval_expires_in_hours,
 * saved_recipients_only, live_keys_need_ip_allow_list}`: amounts in kobo.
 */
export type TransferPolicy = TransferPolicyView;

/** A tenant mode's policy when it has saved none: nothing held, nothing required. */
export const DEFAULT_TRANSFER_POLICY: TransferPolicy = {
  approval: { above_minor: null, new_recipient: false, every_transfer: false },
  approval_expires_in_hours: 24,
  saved_recipients_only: false,
  live_keys_need_ip_allow_list: false,
};

function policyOf(row: PolicyRow | null): TransferPolicy {
  if (!row) return structuredClone(DEFAULT_TRANSFER_POLICY);
  return {
    approval: {
      above_minor: row.above_minor ?? null,
      new_recipient: row.new_recipient,
      every_transfer: row.every_transfer,
    },
    approval_expires_in_hours: row.approval_expires_in_hours,
    saved_recipients_only: row.saved_recipients_only,
    live_keys_need_ip_allow_list: row.live_keys_need_ip_allow_list,
  };
}

/** The tenant mode's policy (`tenantId`: the mode's row id, ResolvedKey.tenantId); works in a transaction. */
export async function readTransferPolicy(em: EntityManager, tenantId: string): Promise<TransferPolicy> {
  return policyOf(await em.findOne(TransferPolicyRow, { tenant_id: tenantId }, { refresh: true }));
}

/**
 * Replaces the tenant mode's policy, in the caller's transaction: the policy before (read under the
 * row's lock, so two changes at once record each other's) and after.
 */
export async function replaceTransferPolicy(
  em: EntityManager,
  tenantId: string,
  policy: TransferPolicy,
): Promise<{ before: TransferPolicy; after: TransferPolicy }> {
  // The row exists from here on (a first change inserts the defaults), so the lock has a row to hold.
  await em.execute('insert into transfer_policies (tenant_id) values (?) on conflict (tenant_id) do nothing', [
    tenantId,
  ]);
  await em.execute('select 1 from transfer_policies where tenant_id = ? for update', [tenantId]);
  const before = await readTransferPolicy(em, tenantId);
  await em.nativeUpdate(
    TransferPolicyRow,
    { tenant_id: tenantId },
    {
      above_minor: policy.approval.above_minor,
      new_recipient: policy.approval.new_recipient,
      every_transfer: policy.approval.every_transfer,
      approval_expires_in_hours: policy.approval_expires_in_hours,
      saved_recipients_only: policy.saved_recipients_only,
      live_keys_need_ip_allow_list: policy.live_keys_need_ip_allow_list,
      updated_at: new Date(),
    },
  );
  return { before, after: await readTransferPolicy(em, tenantId) };
}
