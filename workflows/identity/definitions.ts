// What the API, the activities and the BVN verification workflow share: its type, its id and its
// input. The input carries ids only: the BVN stays in PostgreSQL (sealed), never in a history.
import { defineQuery } from '@temporalio/workflow';
export { BVN_VERIFICATION_WORKFLOW_TYPE, bvnVerificationWorkflowId } from '../workflow-names.ts';

export interface BvnVerificationInput {
  verificationId: string;
  customerId: string;
  tenantId: string;
}

/** The lookup's outcome as the workflow carries it: no name, no digit of the BVN. */
export type BvnLookupOutcome = 'verified' | 'bvn_not_found' | 'name_mismatch';

export interface BvnVerificationState {
  verificationId: string;
  /** `looking_up` at the provider, `recording`, then the outcome (or `abandoned`: the provider never answered). */
  status: 'looking_up' | 'recording' | BvnLookupOutcome | 'abandoned';
}

export const bvnVerificationStatusQuery = defineQuery<BvnVerificationState>('status');

/** What the BVN verification workflow asks of its activities (activities/identity/identity.ts). */
export type IdentityActivities = {
  /** Asks the provider who holds the verification's BVN and compares the names; transient faults retry. */
  lookUpBvn(input: { verificationId: string }): Promise<BvnLookupOutcome>;
  /**
   * The verification's outcome, the customer's kyc_status and (for an answer) its
   * identity.customer.* event, in one transaction; a repeat finds it ended and does nothing.
   */
  recordBvnOutcome(input: { verificationId: string; outcome: BvnLookupOutcome | 'abandoned' }): Promise<{
    recorded: boolean;
  }>;
};
