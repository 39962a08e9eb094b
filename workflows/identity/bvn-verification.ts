// One workflow per BVN verification (id `bvn-verification:<customer_id>:<verification_id>`): the
// lookup at the identity provider, retried through its transient faults for up to a day, then the
// outcome recorded with its event in one transaction. A lookup that never gets an answer ends the
// verification as abandoned (the customer back to unverified) rather than leaving it pending.
import { ActivityFailure, proxyActivities, setHandler } from '@temporalio/workflow';
import type { IdentityActivities } from './definitions.ts';
import { UNTIL_RECORDED } from '../activity-options.ts';
import {
  type BvnLookupOutcome,
  type BvnVerificationInput,
  type BvnVerificationState,
  bvnVerificationStatusQuery,
} from './definitions.ts';

const { lookUpBvn } = proxyActivities<IdentityActivities>({
  startToCloseTimeout: '15s',
  scheduleToCloseTimeout: '24h',
  retry: { initialInterval: '1s', backoffCoefficient: 2, maximumInterval: '10 minutes' },
});
const { recordBvnOutcome } = proxyActivities<IdentityActivities>(UNTIL_RECORDED);

export async function bvnVerificationWorkflow(input: BvnVerificationInput): Promise<{ status: string }> {
  const state: BvnVerificationState = { verificationId: input.verificationId, status: 'looking_up' };
  setHandler(bvnVerificationStatusQuery, () => state);
  let outcome: BvnLookupOutcome | 'abandoned';
  try {
    outcome = await lookUpBvn({ verificationId: input.verificationId });
  } catch (error) {
    // Out of time, or refused for good (the activity's retries are over): nothing more will come of it.
    if (!(error instanceof ActivityFailure)) throw error;
    outcome = 'abandoned';
  }
  state.status = 'recording';
  await recordBvnOutcome({ verificationId: input.verificationId, outcome });
  state.status = outcome;
  return { status: outcome };
}
