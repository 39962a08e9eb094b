// Identity customers (decisions §7): behind the tenant feature `identity_customers` (403
// FORBIDDEN otherwise), replay-safe by external_reference, event identity.customer.created. BVN
// verification (decisions §11): the request is recorded (keyed hash, last 4, sealed copy) under the
// customer's row lock, then handed to its workflow, which answers through the customer's
// kyc_status and the identity.customer.verified / verification_failed events.
import { randomUUID } from 'node:crypto';
import type { MikroORM } from '@mikro-orm/postgresql';
import { type Client, WorkflowExecutionAlreadyStartedError } from '@temporalio/client';
import { recordEvent } from '../events/events.ts';
import { ApiError } from '../http/errors.ts';
import type { ResolvedKey } from '../tenants/tenants.ts';
import {
  BVN_VERIFICATION_WORKFLOW_TYPE,
  type BvnVerificationInput,
  bvnVerificationWorkflowId,
} from '../../workflows/identity/definitions.ts';
import type { bvnVerificationWorkflow } from '../../workflows/identity/bvn-verification.ts';
import { type BvnKeys, bvnHash, bvnLast4, sealBvn } from './bvn.ts';
import type { BvnVerificationAccepted, BvnVerificationBody, CreateCustomerBody, CustomerView } from './schemas.ts';
import {
  customerById,
  customerByReference,
  insertCustomer,
  insertVerification,
  lockCustomer,
  pendingVerificationOf,
} from './store.ts';
import { customerView } from './views.ts';
import { isUuid } from '../http/ids.ts';

export interface IdentityServiceDeps {
  orm: MikroORM;
  client: Client;
  taskQueue: string;
  bvnKeys: BvnKeys;
}

export class IdentityService {
  private readonly deps: IdentityServiceDeps;

  constructor(deps: IdentityServiceDeps) {
    this.deps = deps;
  }

  /** 201 with the new customer, or 200 with the one this external_reference already made. */
  async create(tenant: ResolvedKey, body: CreateCustomerBody): Promise<{ status: 200 | 201; customer: CustomerView }> {
    requireFeature(tenant);
    return this.deps.orm.em.fork().transactional(async (tx) => {
      const inserted = await insertCustomer(tx, tenant.tenantId, body);
      if (!inserted) {
        const existing = await customerByReference(tx, tenant.tenantId, body.external_reference);
        return { status: 200 as const, customer: customerView(existing!) };
      }
      await recordEvent(tx, {
        tenantId: tenant.tenantId,
        type: 'identity.customer.created',
        sourceKey: `identity_customer:${inserted.id}:created`,
        payload: customerView(inserted),
      });
      return { status: 201 as const, customer: customerView(inserted) };
    });
  }

  async get(tenant: ResolvedKey, id: string): Promise<CustomerView> {
    requireFeature(tenant);
    const customer = isUuid(id) ? await customerById(this.deps.orm.em.fork(), tenant.tenantId, id) : null;
    if (!customer) throw ApiError.notFound(`identity customer ${id}`);
    return customerView(customer);
  }

  /** The fingerprint of a BVN that idempotency records and comparisons may keep (never the BVN). */
  bvnFingerprint(bvn: string): string {
    return bvnHash(this.deps.bvnKeys, bvn);
  }

  /**
   * 202 with the verification now pending. While one is pending, the same BVN answers that one
   * again (a retry) and another BVN 409 CONFLICT naming it; a verified customer is not verified
   * again (422 FAILED_PRECONDITION). Either way the pending verification's workflow is (re)started,
   * so one whose start was lost to an outage runs at the next request.
   */
  async requestBvnVerification(
    tenant: ResolvedKey,
    customerId: string,
    body: BvnVerificationBody,
  ): Promise<BvnVerificationAccepted> {
    requireFeature(tenant);
    if (!isUuid(customerId)) throw ApiError.notFound(`identity customer ${customerId}`);
    const hash = this.bvnFingerprint(body.bvn);
    const decided = await this.deps.orm.em.fork().transactional(async (tx) => {
      const customer = await lockCustomer(tx, tenant.tenantId, customerId);
      if (!customer) throw ApiError.notFound(`identity customer ${customerId}`);
      const pending = await pendingVerificationOf(tx, customer.id);
      if (pending) return { verificationId: pending.id, sameBvn: pending.bvn_hash === hash };
      if (customer.kyc_status === 'verified') {
        throw new ApiError(
          'failed_precondition',
          `identity customer ${customerId} is already verified (BVN ending ${customer.bvn_last4 ?? '????'})`,
          { kyc_status: 'verified', bvn_last4: customer.bvn_last4 ?? null },
        );
      }
      const verificationId = randomUUID();
      await insertVerification(tx, {
        id: verificationId,
        tenantId: tenant.tenantId,
        customerId: customer.id,
        bvnHash: hash,
        bvnLast4: bvnLast4(body.bvn),
        sealedBvn: sealBvn(this.deps.bvnKeys, verificationId, body.bvn),
      });
      return { verificationId, sameBvn: true };
    });
    await this.start({ verificationId: decided.verificationId, customerId, tenantId: tenant.tenantId });
    if (!decided.sameBvn) {
      throw new ApiError(
        'conflict',
        `identity customer ${customerId} has a BVN verification pending for another BVN; retry once it has ended`,
        { verification_id: decided.verificationId },
      );
    }
    return { customer_id: customerId, verification_id: decided.verificationId, status: 'pending' };
  }

  /** Starts the verification's workflow; one that has started (or ended) already stands. */
  private async start(input: BvnVerificationInput): Promise<void> {
    try {
      await this.deps.client.workflow.start<typeof bvnVerificationWorkflow>(BVN_VERIFICATION_WORKFLOW_TYPE, {
        workflowId: bvnVerificationWorkflowId(input.customerId, input.verificationId),
        taskQueue: this.deps.taskQueue,
        args: [input],
        workflowIdReusePolicy: 'REJECT_DUPLICATE',
      });
    } catch (error) {
      if (!(error instanceof WorkflowExecutionAlreadyStartedError)) throw error;
    }
  }
}

function requireFeature(tenant: ResolvedKey): void {
  if (!tenant.features.includes('identity_customers')) {
    throw new ApiError('forbidden', 'identity customers are not enabled for this tenant');
  }
}
