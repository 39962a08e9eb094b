// Transfer creation and reads. Create is one Update-with-Start round trip: the transfer workflow
// enquires the name and reserves the funds, then answers; reads come from the PostgreSQL
// projection that the workflow's activities keep.
import { randomUUID } from 'node:crypto';
import type { MikroORM } from '@mikro-orm/postgresql';
import {
  type Client,
  WithStartWorkflowOperation,
  WorkflowExecutionAlreadyStartedError,
  WorkflowUpdateFailedError,
} from '@temporalio/client';
import { ApplicationFailure } from '@temporalio/common';
import { laneTaskQueues } from '../config.ts';
import { ApiError, type ErrorKind } from '../http/errors.ts';
import { pageOffset } from '../http/pagination.ts';
import type { Banks } from '../connectors/registry.ts';
import type { KeyMode } from '../connectors/types.ts';
import {
  type CreateResult,
  type TransferRequest,
  type TransferWorkflowInput,
  TRANSFER_WORKFLOW_TYPE,
  createUpdate,
  transferWorkflowId,
} from '../../workflows/transfers/definitions.ts';
import type { transferWorkflow } from '../../workflows/transfers/transfer.ts';
import { transferStartAttributes } from '../../workflows/search-attributes.ts';
import { type PublicTransferStatus, internalStatuses, failureDetails, isCreateRefusal, transferFee } from './domain.ts';
import { referenceFromIdempotencyKey, transferFingerprint } from './fingerprints.ts';
import { createView, expandedView, itemView } from './views.ts';
import { savedPayees, savedRecipients } from '../recipients/service.ts';
import {
  RECIPIENT_NOT_ALLOWED,
  holdReasons,
  isNewPayee,
  isSavedPayee,
  newPayees,
  readTransferPolicy,
  type ApprovalStatus,
} from './approvals.ts';

const HOUR_MS = 3_600_000;
import {
  type CreateTransferBody,
  type CreatedTransferResponse,
  NOT_A_SAVED_RECIPIENT,
  NOT_A_SUPPORTED_BANK,
  recipientBankGone,
} from './schemas.ts';
import { findBank } from '../banks/resolve.ts';
import type { Bank } from '../connectors/capabilities.ts';
import { isUuid } from '../http/ids.ts';
import { type TransferRow, listTransfers, readByReference, readTransfer } from './store.ts';
import { batchIdsOf } from './batch-store.ts';

export interface TransferServiceDeps {
  orm: MikroORM;
  client: Client;
  /** TEMPORAL_TASK_QUEUE: live transfers run there, sandbox ones on its sandbox lane. */
  taskQueue: string;
  /** A key mode's bank list: the first of its transfers connectors that answers (decisions §13). */
  banks: (mode: KeyMode) => Banks;
  /** How long an approval's hour lasts (tests make it short); an hour. */
  approvalHourMs?: number;
}

/** The workflow's refusal of a create, if the update was refused. */
function updateRefusal(error: unknown): ApplicationFailure | undefined {
  const cause = error instanceof WorkflowUpdateFailedError ? error.cause : undefined;
  return cause instanceof ApplicationFailure ? cause : undefined;
}

export class TransferService {
  private readonly deps: TransferServiceDeps;
  /**
   * Identical creates in flight in this process share one Update: Temporal admits at most 10
   * in-flight Updates per workflow, and a burst of client retries must not spend them.
   */
  private readonly inFlight = new Map<string, Promise<CreateResult>>();

  constructor(deps: TransferServiceDeps) {
    this.deps = deps;
  }

  /**
   * `idempotencyKey`: the request's Idempotency-Key header. Without a `reference`, the reference is
   * derived from it, so a client retrying after an uncertain answer (a 503, a lost response) meets
   * the same transfer instead of making a second one.
   */
  async create(
    tenantId: string,
    body: CreateTransferBody,
    idempotencyKey?: string,
    mode: KeyMode = 'test',
    /** The key making it (decisions §19): it may not approve it, if the policy holds it. */
    keyId?: string,
    /**
     * A credit's return (decisions §21): the credit it sends back, and what pays it. From the wallet
     * it is an ordinary transfer (fee, limit, policy); from suspense (a held credit, sent back by
     * the gateway or an operator) it has no fee and no policy applies: no tenant asked for it.
     */
    options: { returnOf?: NonNullable<TransferRequest['returnOf']> } = {},
  ): Promise<{ status: 200 | 201; body: CreatedTransferResponse }> {
    const reference =
      body.reference ??
      (idempotencyKey
        ? referenceFromIdempotencyKey(tenantId, idempotencyKey)
        : `ref_${randomUUID().replaceAll('-', '')}`);
    const metadata = body.metadata ?? {};
    // The body as given: a saved recipient's transfer is fingerprinted by its recipient_id.
    const requestHash = transferFingerprint({ ...body, metadata, return_of: options.returnOf?.creditId });
    const fromSuspense = options.returnOf?.fundedFrom === 'suspense';
    // An account's bank is checked first, as it always was; a saved recipient after the repeat
    // check, so a repeat is still answered once the recipient it paid is deleted.
    const accountPayee = body.recipient_id === undefined ? await this.payee(tenantId, mode, body) : undefined;

    // A repeat of a transfer that exists answers from the projection, without Temporal.
    const existing = await this.findByReference(tenantId, reference);
    if (existing) return this.repeat(existing, requestHash);
    const payee = accountPayee ?? (await this.payee(tenantId, mode, body));
    const approval = fromSuspense ? undefined : await this.approvalFor(tenantId, body, payee);

    const request: TransferRequest = {
      tenantId,
      reference,
      requestHash,
      amountMinor: body.amount_minor,
      feeMinor: fromSuspense ? 0 : transferFee(body.amount_minor),
      currency: 'NGN',
      recipientAccount: payee.account,
      recipientBankCode: payee.bank.code,
      recipientBankName: payee.bank.name,
      narration: body.narration,
      metadata,
      mode,
      ...(payee.savedName !== undefined ? { savedName: payee.savedName } : {}),
      ...(keyId !== undefined ? { createdByKeyId: keyId } : {}),
      ...(approval ? { approval } : {}),
      ...(options.returnOf ? { returnOf: options.returnOf } : {}),
    };
    const workflowId = transferWorkflowId(tenantId, reference);
    const startWorkflowOperation = new WithStartWorkflowOperation<typeof transferWorkflow>(TRANSFER_WORKFLOW_TYPE, {
      workflowId,
      // Sandbox transfers on worker slots of their own (decisions §18): they never delay live ones.
      taskQueue: mode === 'live' ? this.deps.taskQueue : laneTaskQueues(this.deps.taskQueue).sandbox,
      args: [{ request, shape: 'lean' } satisfies TransferWorkflowInput],
      workflowIdConflictPolicy: 'USE_EXISTING',
      // A closed run that created the transfer is never started again (its repeat is answered from
      // the projection below); a run that refused it may be, so the reference can be retried.
      workflowIdReusePolicy: 'ALLOW_DUPLICATE_FAILED_ONLY',
      memo: { tenantId, reference },
      typedSearchAttributes: transferStartAttributes(request),
    });
    const flightKey = `${workflowId}:${requestHash}`;
    let flight = this.inFlight.get(flightKey);
    const leader = flight === undefined;
    if (!flight) {
      flight = this.deps.client.workflow.executeUpdateWithStart(createUpdate, {
        args: [request],
        startWorkflowOperation,
      });
      this.inFlight.set(flightKey, flight);
      void flight.then(
        () => this.inFlight.delete(flightKey),
        () => this.inFlight.delete(flightKey),
      );
    }
    try {
      const result = await flight;
      // The money is reserved and the row written before the update answers: render it.
      const row = await readTransfer(this.deps.orm, result.transferId);
      if (!row) throw new Error(`transfer ${result.transferId} answered created but has no row`);
      // Only the request that made the transfer answers 201; every repeat is a 200.
      return { status: result.created && leader ? 201 : 200, body: { success: true, data: createView(row) } };
    } catch (error) {
      if (
        error instanceof WorkflowExecutionAlreadyStartedError ||
        updateRefusal(error)?.type === 'duplicate_reference'
      ) {
        // The transfer's workflow finished between our projection read and the start, or another
        // run holds the reference: the transfer that holds it answers (200, or 409 if it differs).
        const holder = await this.findByReference(tenantId, reference);
        if (holder) return this.repeat(holder, requestHash);
      }
      throw this.refusal(error, tenantId, reference);
    }
  }

  /**
   * Who the transfer pays: the account and bank the body names, or its saved recipient's (decisions
   * §20), with the name it was saved under. 400 naming the field for a bank code that is not
   * supported, or a recipient_id that is not one of this tenant's saved recipients.
   */
  private async payee(
    tenantId: string,
    mode: KeyMode,
    body: CreateTransferBody,
  ): Promise<{ account: string; bank: Bank; savedName?: string }> {
    if (body.recipient_id !== undefined) {
      const saved = (await savedRecipients(this.deps.orm.em.fork(), tenantId, [body.recipient_id])).get(
        body.recipient_id,
      );
      if (!saved) throw ApiError.validation([{ path: 'recipient_id', message: NOT_A_SAVED_RECIPIENT }]);
      const bank = await this.bank(mode, saved.bankCode, 'recipient_id');
      return { account: saved.accountNumber, bank, savedName: saved.accountName };
    }
    // The schema lets neither through without the other (namesOnePayee).
    const bank = await this.bank(mode, body.recipient_bank_code!, 'recipient_bank_code');
    return { account: body.recipient_account!, bank };
  }

  /**
   * What the tenant's transfer policy says of this payout (decisions §20): refused 422
   * recipient_not_allowed when only saved recipients may be paid and the account is not one; held
   * (the approval's length and why) when it is above the threshold, to a payee never paid, or when
   * every transfer is; undefined when it goes straight to its bank.
   */
  private async approvalFor(
    tenantId: string,
    body: CreateTransferBody,
    payee: { account: string; bank: Bank },
  ): Promise<TransferRequest['approval']> {
    const em = this.deps.orm.em.fork();
    const policy = await readTransferPolicy(em, tenantId);
    const account = { bankCode: payee.bank.code, account: payee.account };
    if (policy.saved_recipients_only && body.recipient_id === undefined) {
      if (!isSavedPayee(await savedPayees(em, tenantId, [account]), account)) {
        throw new ApiError('recipient_not_allowed', RECIPIENT_NOT_ALLOWED, {
          recipient_account: payee.account,
          recipient_bank_code: payee.bank.code,
        });
      }
    }
    const newRecipient = policy.approval.new_recipient && isNewPayee(await newPayees(em, tenantId, [account]), account);
    const reasons = holdReasons(policy, { amountMinor: body.amount_minor, newRecipient });
    if (reasons.length === 0) return undefined;
    return { expiresInMs: policy.approval_expires_in_hours * (this.deps.approvalHourMs ?? HOUR_MS), reasons };
  }

  /** The mode's bank of this code; 400 naming `field` when the bank list has none, 503 when it cannot be read. */
  private async bank(mode: KeyMode, code: string, field: 'recipient_id' | 'recipient_bank_code'): Promise<Bank> {
    const bank = await findBank(this.deps.banks(mode), code);
    if (!bank) {
      const message = field === 'recipient_id' ? recipientBankGone(code) : NOT_A_SUPPORTED_BANK;
      throw ApiError.validation([{ path: field, message }]);
    }
    return bank;
  }

  private repeat(existing: TransferRow, requestHash: string): { status: 200; body: CreatedTransferResponse } {
    if (existing.request_hash !== requestHash) {
      throw new ApiError(
        'duplicate_reference',
        `reference ${existing.reference} was already used for a different transfer`,
        { transfer_id: existing.id },
      );
    }
    return { status: 200, body: { success: true, data: createView(existing) } };
  }

  private refusal(error: unknown, tenantId: string, reference: string): ApiError {
    const cause = updateRefusal(error);
    if (cause && isCreateRefusal(cause.type)) {
      const details = failureDetails(cause, cause.type) ?? null;
      const kind: ErrorKind = cause.type;
      // invalid_account carries {saved_name, current_name} for a saved recipient, nothing otherwise.
      return new ApiError(kind, cause.message, kind === 'unavailable' ? null : details, { cause: error });
    }
    return new ApiError(
      'unavailable',
      `transfer ${reference} for ${tenantId} could not be created right now; retry`,
      null,
      {
        cause: error,
      },
    );
  }

  private async findByReference(tenantId: string, reference: string): Promise<TransferRow | null> {
    return readByReference(this.deps.orm, tenantId, reference);
  }

  /** One transfer; `expand: 'details'` adds fee, total, bank name, narration, metadata and creator. */
  async get(tenantId: string, id: string, expand?: 'details') {
    const row = isUuid(id) ? await readTransfer(this.deps.orm, id, tenantId) : null;
    if (!row) throw new ApiError('not_found', `no transfer ${id}`);
    if (!expand) return itemView(row, { withCompletedAt: true });
    const batches = await batchIdsOf(this.deps.orm.em.fork(), [row.id]);
    return expandedView(row, { withCompletedAt: true, batchId: batches.get(row.id) ?? null });
  }

  async list(
    tenantId: string,
    query: {
      page: number;
      limit: number;
      status?: PublicTransferStatus;
      from?: string;
      to?: string;
      reference?: string;
      recipient_account?: string;
      approval?: ApprovalStatus;
      expand?: 'details';
    },
  ) {
    // Inclusive: a date alone covers that whole day (UTC), an instant is itself the end.
    const dayOnly = query.to !== undefined && /^\d{4}-\d{2}-\d{2}$/.test(query.to);
    const { rows, total } = await listTransfers(
      this.deps.orm.em.fork(),
      tenantId,
      {
        reference: query.reference,
        recipientAccount: query.recipient_account,
        approval: query.approval,
        statuses: query.status ? internalStatuses(query.status) : undefined,
        createdFrom: query.from ? new Date(query.from) : undefined,
        createdBefore: query.to && dayOnly ? new Date(Date.parse(query.to) + 24 * 60 * 60 * 1000) : undefined,
        createdUntil: query.to && !dayOnly ? new Date(query.to) : undefined,
      },
      { limit: query.limit, offset: pageOffset(query.page, query.limit) },
    );
    const batches = query.expand
      ? await batchIdsOf(
          this.deps.orm.em.fork(),
          rows.map((row) => row.id),
        )
      : new Map<string, string>();
    return {
      items: rows.map((row) =>
        query.expand
          ? expandedView(row, { withCompletedAt: false, batchId: batches.get(row.id) ?? null })
          : itemView(row, { withCompletedAt: false }),
      ),
      pagination: { page: query.page, limit: query.limit, total, totalPages: Math.ceil(total / query.limit) },
    };
  }
}

// What other features read of transfers (reconciliation): this feature's store stays its own.
export {
  type ConnectorScope,
  type TransferRow,
  discrepancyCounts,
  returnedOfCredits,
  transfersByIdOrSession,
  transfersEndedBetween,
} from './store.ts';
