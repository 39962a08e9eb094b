// Decisions on held payouts over HTTP (decisions §20): POST /api/v1/transfers/{id}/approve|reject
// and POST /api/v1/transfers/bulk/{id}/approve|reject. The decision is the payout's workflow's
// `decideApproval` update: its validator lets exactly one decision through (whichever reaches the
// workflow first), refuses the key that made the payout, and the update answers once the decision
// is recorded with its events and audit entry. What the row already says is answered here without
// Temporal (another tenant's or mode's id: 404; not held: 422; decided or expired: 409
// already_decided; the maker's key: 403), and identical decisions racing in one process share one
// update, so a burst of clicks or retries never spends the workflow's 10 in-flight updates.
import { actorOf } from '../audit/log.ts';
import type { MikroORM } from '@mikro-orm/postgresql';
import { type Client, WorkflowNotFoundError, WorkflowUpdateFailedError } from '@temporalio/client';
import { ApplicationFailure } from '@temporalio/common';
import type { ResolvedKey } from '../http/auth.ts';
import { ApiError } from '../http/errors.ts';
import { isUuid } from '../http/ids.ts';
import {
  type ApprovalDecision,
  decideApprovalUpdate,
  transferBatchWorkflowId,
  transferWorkflowId,
} from '../../workflows/transfers/definitions.ts';
import type { ApprovalStatus } from './approvals.ts';
import { findBatch, isBatchItem } from './batch-store.ts';
import { readTransfer } from './store.ts';

/** What a decision needs of the payout's row. */
interface Held {
  workflowId: string;
  approvalStatus: ApprovalStatus | null;
  expiresAt: Date | null;
  createdByKeyId: string | null;
}

export interface DecisionRequest {
  decision: 'approve' | 'reject';
  reason?: string;
  ip: string;
  requestId: string;
}

const KIND = { transfer: 'transfer', batch: 'batch' } as const;

export class ApprovalService {
  private readonly inFlight = new Map<string, Promise<unknown>>();
  private readonly deps: { orm: MikroORM; client: Client };

  constructor(deps: { orm: MikroORM; client: Client }) {
    this.deps = deps;
  }

  /** A held transfer's decision; answers once it is recorded. 404 for anything not the caller's. */
  async decideTransfer(key: ResolvedKey, id: string, request: DecisionRequest): Promise<void> {
    await this.decide(key, 'transfer', id, request, async () => {
      const row = isUuid(id) ? await readTransfer(this.deps.orm, id, key.tenantId) : null;
      if (!row) throw new ApiError('not_found', `no transfer ${id}`);
      // A held batch's items carry its approval, and are decided with it, never one by one.
      if (row.approval_status === 'required' && (await isBatchItem(this.deps.orm.em.fork(), row.id))) {
        throw new ApiError(
          'failed_precondition',
          `transfer ${id} is an item of a held batch: approve or reject the batch (POST /api/v1/transfers/bulk/{id}/approve)`,
        );
      }
      return {
        workflowId: transferWorkflowId(key.tenantId, row.reference),
        approvalStatus: row.approval_status ?? null,
        expiresAt: row.approval_expires_at ?? null,
        createdByKeyId: row.created_by_key_id ?? null,
      };
    });
  }

  /** A held batch's decision, for every item at once. */
  async decideBatch(key: ResolvedKey, id: string, request: DecisionRequest): Promise<void> {
    await this.decide(key, 'batch', id, request, async () => {
      const row = isUuid(id) ? await findBatch(this.deps.orm.em.fork(), id, key.tenantId) : null;
      if (!row) throw new ApiError('not_found', `no transfer batch ${id}`);
      return {
        workflowId: transferBatchWorkflowId(key.tenantId, row.batch_reference),
        approvalStatus: row.approval_status ?? null,
        expiresAt: row.approval_expires_at ?? null,
        createdByKeyId: row.created_by_key_id ?? null,
      };
    });
  }

  private async decide(
    key: ResolvedKey,
    kind: keyof typeof KIND,
    id: string,
    request: DecisionRequest,
    read: () => Promise<Held>,
  ): Promise<void> {
    const what = `${KIND[kind]} ${id}`;
    for (;;) {
      const held = await read();
      if (held.approvalStatus === null) {
        throw new ApiError('failed_precondition', `${what} was not held for approval`);
      }
      if (held.approvalStatus !== 'required') {
        throw new ApiError('already_decided', `${what} is already ${held.approvalStatus}`, {
          status: held.approvalStatus,
        });
      }
      if (held.createdByKeyId === key.keyId) {
        throw new ApiError('forbidden', `a ${KIND[kind]} cannot be approved by the key that made it`);
      }
      if (held.expiresAt && held.expiresAt.getTime() <= Date.now()) {
        throw new ApiError('already_decided', `${what}'s approval expired at ${held.expiresAt.toISOString()}`, {
          status: 'expired',
        });
      }
      // Another decision on it is on its way from this process: wait for it, then read again.
      const flight = this.inFlight.get(held.workflowId);
      if (flight) {
        await flight.catch(() => undefined);
        continue;
      }
      const decision: ApprovalDecision = {
        decision: request.decision,
        actor: actorOf(key),
        ...(request.reason !== undefined ? { reason: request.reason } : {}),
        ip: request.ip,
        requestId: request.requestId,
      };
      const update = this.deps.client.workflow
        .getHandle(held.workflowId)
        .executeUpdate(decideApprovalUpdate, { args: [decision] });
      this.inFlight.set(held.workflowId, update);
      try {
        await update;
        return;
      } catch (error) {
        throw refusal(error, what);
      } finally {
        this.inFlight.delete(held.workflowId);
      }
    }
  }
}

/** The workflow's refusal of a decision, as the API answers it. */
function refusal(error: unknown, what: string): ApiError {
  const cause = error instanceof WorkflowUpdateFailedError ? error.cause : undefined;
  if (cause instanceof ApplicationFailure) {
    if (cause.type === 'already_decided') {
      return new ApiError('already_decided', cause.message, (cause.details?.[0] as Record<string, unknown>) ?? null);
    }
    if (cause.type === 'forbidden') return new ApiError('forbidden', cause.message);
    if (cause.type === 'not_held') return new ApiError('failed_precondition', cause.message);
    if (cause.type === 'invalid_decision') return ApiError.validation([{ path: 'body', message: cause.message }]);
  }
  if (error instanceof WorkflowNotFoundError) {
    return new ApiError('already_decided', `${what} is no longer awaiting a decision`, null, { cause: error });
  }
  return new ApiError('unavailable', `the decision on ${what} could not be recorded right now; retry`, null, {
    cause: error,
    headers: { 'retry-after': '1' },
  });
}
