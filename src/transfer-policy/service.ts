// The transfer policy's use cases (decisions §20): read it, or replace it whole and record the
// change (the policy before and after) in the audit log, in one transaction. Other features read a
// tenant mode's policy with readTransferPolicy, re-exported here (a feature's store is its own).
import type { MikroORM } from '@mikro-orm/postgresql';
import { type RequestActor, recordAuditEntry } from '../audit/log.ts';
import type { ResolvedKey } from '../http/auth.ts';
import { ApiError } from '../http/errors.ts';
import { listedKeyAdmins } from '../tenants/tenants.ts';
import type { TransferPolicyBody, TransferPolicyView } from './schemas.ts';
import { readTransferPolicy, replaceTransferPolicy } from './store.ts';

export { DEFAULT_TRANSFER_POLICY, type TransferPolicy, readTransferPolicy } from './store.ts';

export class TransferPolicyService {
  private readonly orm: MikroORM;

  constructor(orm: MikroORM) {
    this.orm = orm;
  }

  async get(key: ResolvedKey): Promise<TransferPolicyView> {
    return readTransferPolicy(this.orm.em.fork(), key.tenantId);
  }

  async replace(key: ResolvedKey, body: TransferPolicyBody, by: RequestActor): Promise<TransferPolicyView> {
    return this.orm.em.fork().transactional(async (tx) => {
      const { before, after } = await replaceTransferPolicy(tx, key.tenantId, body);
      // Requiring allow-lists of live keys stops every live key without one at once: the live mode
      // must keep a key that can still manage keys (and undo this), or the change is refused.
      const requiring = after.live_keys_need_ip_allow_list && !before.live_keys_need_ip_allow_list;
      if (key.mode === 'live' && requiring && (await listedKeyAdmins(tx, key.tenantId)) === 0) {
        throw new ApiError(
          'failed_precondition',
          'no live key holding keys:write has an IP allow-list: make one before requiring allow-lists, ' +
            'or every live key that can manage keys would stop working',
          { reason: 'no_listed_key_admin' },
        );
      }
      await recordAuditEntry(tx, {
        tenantId: key.tenantId,
        action: 'transfer_policy.updated',
        ...by,
        target: { type: 'transfer_policy', id: key.tenantId },
        details: { before, after },
      });
      return after;
    });
  }
}
