// BVN verification side effects: the lookup at the identity provider (it opens the sealed BVN on
// the verification row and hands the workflow only the outcome), and the outcome recorded with its
// event in one transaction, once. Nothing here throws or returns anything that holds the BVN or
// the holder's names: activity inputs, results and failures are kept in the workflow's history.
import type { MikroORM } from '@mikro-orm/postgresql';
import { ApplicationFailure } from '@temporalio/common';
import { recordEvent } from '../../src/events/events.ts';
import { type BvnKeys, bvnOutcome, openBvn } from '../../src/identity/bvn.ts';
import { completeVerification, customerById, findVerification } from '../../src/identity/store.ts';
import { customerView } from '../../src/identity/views.ts';
import { type Providers, identityFor } from '../../src/connectors/registry.ts';
import { modeOf } from '../../src/tenants/tenants.ts';
import type { BvnLookupOutcome } from '../../workflows/identity/definitions.ts';
import { providerFailure } from '../provider-failure.ts';
import type { IdentityActivities } from '../../workflows/identity/definitions.ts';

export function createIdentityActivities({
  orm,
  providers,
  bvnKeys,
}: {
  orm: MikroORM;
  providers: Providers;
  bvnKeys: BvnKeys;
}): IdentityActivities {
  return {
    /** Asks the provider who holds the verification's BVN and compares the names; transient faults retry. */
    async lookUpBvn(input: { verificationId: string }): Promise<BvnLookupOutcome> {
      const em = orm.em.fork();
      const verification = await findVerification(em, input.verificationId);
      if (!verification || verification.status !== 'pending' || !verification.bvn_ciphertext) {
        throw ApplicationFailure.create({
          type: 'verification_ended',
          message: `BVN verification ${input.verificationId} is not pending`,
          nonRetryable: true,
        });
      }
      const customer = await customerById(em, verification.tenant_id, verification.customer_id);
      if (!customer) throw new Error(`customer of BVN verification ${input.verificationId} not found`);
      const bvn = openBvn(bvnKeys, verification.id, verification.bvn_ciphertext);
      let holder;
      try {
        holder = await identityFor(providers, (await modeOf(em, verification.tenant_id)) ?? 'test').lookUpBvn({
          bvn,
          firstName: customer.first_name,
          lastName: customer.last_name,
        });
      } catch (error) {
        return providerFailure(error, 'bvn_lookup_refused');
      }
      return bvnOutcome(holder, { firstName: customer.first_name, lastName: customer.last_name });
    },

    /**
     * The verification's outcome, the customer's kyc_status and (for an answer) its
     * identity.customer.* event, in one transaction; a repeat finds it ended and does nothing.
     */
    async recordBvnOutcome(input: {
      verificationId: string;
      outcome: BvnLookupOutcome | 'abandoned';
    }): Promise<{ recorded: boolean }> {
      return orm.em.fork().transactional(async (tx) => {
        const ended = await completeVerification(tx, input.verificationId, input.outcome);
        if (!ended) return { recorded: false };
        if (input.outcome !== 'abandoned') {
          const type =
            input.outcome === 'verified' ? 'identity.customer.verified' : 'identity.customer.verification_failed';
          await recordEvent(tx, {
            tenantId: ended.customer.tenant_id,
            type,
            sourceKey: `bvn_verification:${input.verificationId}:${ended.verification.status}`,
            payload: { ...customerView(ended.customer), verification_id: input.verificationId },
          });
        }
        return { recorded: true };
      });
    },
  };
}

export type { IdentityActivities };
