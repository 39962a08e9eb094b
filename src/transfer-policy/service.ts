// The transfer policy's use cases (decisions §20): read it, or replace it whole and record the
// change (the policy before and after) in the audit log, in one transaction. Other features read a
// tenant mode's policy with readTransferPolicy, re-exported here (a feature's store is its own).
import type { MikroORM } from '@mikro-orm/postgresql';
import { type RequestActor, recordAuditEntry } from '../audit/log.ts';
import type { ResolvedKey } from '../http/auth.ts';
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
