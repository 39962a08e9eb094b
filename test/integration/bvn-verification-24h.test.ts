// A BVN lookup that never gets an answer, under Temporal's time-skipping test server: the bank's
// BVN service is down for the whole day of retries, after which the verification ends as
// abandoned — the customer back to unverified, the sealed BVN erased, no verified/failed event —
// instead of leaving the customer pending for ever. A later request starts afresh.
import type { TestWorkflowEnvironment } from '@temporalio/testing';
import { describe, expect, it } from 'vitest';
import { bvnKeysFrom } from '../../src/identity/bvn.ts';
import { IdentityService } from '../../src/identity/service.ts';
import { bvnVerificationWorkflowId } from '../../workflows/identity/definitions.ts';
import { TEST_BVN_SECRET, createFundedTenant, resolvedTestKey } from '../support/app.ts';
import type { TestDatabase } from '../support/database.ts';
import type { TestSandboxBank } from '../support/sandbox-bank.ts';
import { resultOrWhereItStands, useTimeSkippingStack } from '../support/time-skipping.ts';

const TASK_QUEUE = 'bvn-verification-24h';

let env: TestWorkflowEnvironment;
let db: TestDatabase;
let bank: TestSandboxBank;
let identity: IdentityService;

useTimeSkippingStack({ taskQueue: TASK_QUEUE, bank: true, providerTimeoutMs: 2_000 }, (stack) => {
  ({ env, db } = stack);
  bank = stack.bank!;
  identity = new IdentityService({ ...stack.services, bvnKeys: bvnKeysFrom(TEST_BVN_SECRET) });
});

describe('a BVN lookup the bank never answers', () => {
  it('is retried for a day, then abandoned: the customer unverified again, the sealed BVN erased, no outcome event', async () => {
    const { tenantId } = await createFundedTenant(db.orm);
    const tenant = { ...resolvedTestKey(tenantId, []), features: ['identity_customers'] };
    const { customer } = await identity.create(tenant, {
      external_reference: 'never-answered',
      first_name: 'Ada',
      last_name: 'Obi',
    });
    await bank.store.setDown('bvn', true);
    try {
      const accepted = await identity.requestBvnVerification(tenant, customer.id, { bvn: '12345678901' });
      const handle = env.client.workflow.getHandle(bvnVerificationWorkflowId(customer.id, accepted.verification_id));
      expect(await resultOrWhereItStands(env, handle)).toEqual({ status: 'abandoned' });
      const attempts = (await handle.fetchHistory()).events?.filter(
        (event) => event.activityTaskStartedEventAttributes,
      );
      expect(attempts?.[0]?.activityTaskStartedEventAttributes?.attempt).toBeGreaterThan(20);

      expect(await identity.get(tenant, customer.id)).toMatchObject({
        kyc_status: 'unverified',
        kyc_failure_reason: null,
        bvn_last4: '8901',
      });
      const em = db.orm.em.fork();
      expect(
        await em.execute('select status, bvn_ciphertext is null as erased from bvn_verifications where id = ?', [
          accepted.verification_id,
        ]),
      ).toEqual([{ status: 'abandoned', erased: true }]);
      expect(await em.execute(`select type from events where type like 'identity.customer.verif%'`, [])).toEqual([]);
    } finally {
      await bank.store.setDown('bvn', false);
    }
    // Nothing is pending any more: the next request is a new verification, which now gets its answer.
    const again = await identity.requestBvnVerification(tenant, customer.id, { bvn: '12345678901' });
    const handle = env.client.workflow.getHandle(bvnVerificationWorkflowId(customer.id, again.verification_id));
    expect(await resultOrWhereItStands(env, handle)).toEqual({ status: 'verified' });
    expect((await identity.get(tenant, customer.id)).kyc_status).toBe('verified');
  });
});
