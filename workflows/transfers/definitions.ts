// The transfer workflow's Temporal handles, shared by the workflow, its activities and the API: its
// type and id, its input, the `create` update that answers the transfer's id once its money is
// reserved, the bank's signal and the operator's `resolve` update that settle it, the `status`
// query, and the payloads they carry. The transfer's rules (statuses, refusals, fees, limits) live
// in src/transfers/domain.ts. Nothing here is a response shape: the API renders responses from the
// projection.
import { defineQuery, defineSignal, defineUpdate } from '@temporalio/workflow';
import type { TransferStatus } from '../../src/transfers/domain.ts';
export {
  TRANSFER_BATCH_WORKFLOW_TYPE,
  TRANSFER_WORKFLOW_TYPE,
  transferBatchWorkflowId,
  transferWorkflowId,
} from '../workflow-names.ts';

/** What the API validated and computed; the workflow's input and the `create` update's argument. */
export interface TransferRequest {
  tenantId: string;
  reference: string;
  /** SHA-256 of the canonical request body: a repeat with another body is a duplicate_reference. */
  requestHash: string;
  amountMinor: number;
  feeMinor: number;
  currency: 'NGN';
  recipientAccount: string;
  recipientBankCode: string;
  recipientBankName: string;
  narration: string;
  metadata: Record<string, unknown>;
  /** The key's mode, which picks the connectors. */
  mode: 'test' | 'live';
}

/** What the transfer's activities report of its projection row. */
export interface TransferRecord {
  id: string;
  status: TransferStatus;
  /** The name enquiry's answer kept with the transfer. */
  recipientName: string;
  /** The connector that took the transfer, whose bank is asked about it. */
  connector: string;
}

/** The `create` update's answer. */
export interface CreateResult {
  transferId: string;
  /** True only for the update call that created the transfer (201); repeats get false (200). */
  created: boolean;
}

/** What the bank said about the transfer, from its callback or a status query. */
export interface BankOutcome {
  status: 'successful' | 'failed';
  sessionId?: string;
  providerCode?: string;
  message?: string;
  source: 'callback' | 'status_query' | 'submission';
  /** The connector that said it (a callback's sender): the run applies only the holder's word. */
  connector?: string;
}

/**
 * A transfer whose submission may have been taken by its connector (decisions §17): it is never
 * submitted elsewhere nor failed on a refusal; only that connector's status query decides, and its
 * "not found" counts only 2 minutes after the last ambiguous attempt, confirmed a minute later.
 */
export interface PossiblyTaken {
  connector: string;
  /** The last ambiguous attempt, in epoch ms. */
  lastAttemptAt: number;
  /**
   * `lost`: no answer (a timeout, a 5xx, a connection lost, a process that died mid-request);
   * `refused`: a refusal that proves nothing (unrecognised, or after an ambiguous attempt).
   */
  kind: 'lost' | 'refused';
  reason: string;
  /** The first "not found" that counts (epoch ms), until a second one a minute later proves it. */
  notFoundAt?: number;
  /** When the next status query is due to weigh a "not found" (epoch ms), before the usual schedule. */
  recheckAt?: number;
}

/** What a submission answers: the bank's word on the transfer, or that it may hold it. */
export type SubmissionAnswer =
  | { status: 'pending' | 'successful' | 'failed'; sessionId: string; providerCode: string }
  | { status: 'possibly_taken'; possiblyTaken: PossiblyTaken };

export interface OperatorResolution {
  outcome: 'successful' | 'failed';
  note: string;
  operator: string;
}

/** The `resolve` update's answer, once the transfer is settled or reversed: who decided it. */
export interface ResolveResult {
  transferId: string;
  status: 'completed' | 'failed';
  decidedBy: 'bank' | 'operator';
  /** The resolution the transfer holds: the first one sent (a repeat of its outcome shares it). */
  resolution: OperatorResolution;
}

export interface TransferState {
  transferId: string | undefined;
  status: TransferStatus | 'refused';
  sessionId: string | undefined;
  stuck: boolean;
  bankOutcome: BankOutcome | undefined;
  resolution: OperatorResolution | undefined;
  statusChecks: number;
  /** The connector that took the transfer (undefined until its name enquiry answers). */
  connector?: string | undefined;
  /** Set while the connector may hold the transfer without having said so (decisions §17). */
  possiblyTaken?: PossiblyTaken | undefined;
  /** Connectors that refused the transfer before processing: never offered it again. */
  triedConnectors?: string[];
}

/** Carried across continue-as-new while a transfer waits for its bank. */
export interface TransferResume {
  transferId: string;
  recipientName: string;
  sessionId: string;
  waitedMs: number;
  stuck: boolean;
  statusChecks: number;
  connector: string;
  /** What the bank answered at once when its batch submitted it (a batch's item, decisions §14). */
  bankOutcome?: BankOutcome;
  /** The transfer may be held by its connector without having said so (decisions §17). */
  possiblyTaken?: PossiblyTaken;
  triedConnectors?: string[];
}

/**
 * A batch's item (decisions §14) whose money its batch already reserved and whose transfer row it
 * already made: its run starts at the submit phase.
 */
export interface ReservedTransfer {
  transferId: string;
  recipientName: string;
  connector: string;
  nameEnquirySessionId: string;
}

export interface TransferWorkflowInput {
  request: TransferRequest;
  resume?: TransferResume;
  reserved?: ReservedTransfer;
}

export const createUpdate = defineUpdate<CreateResult, [TransferRequest]>('create');
export const bankConfirmedSignal = defineSignal<[BankOutcome]>('bankConfirmed');
/** An operator's decision on a transfer the bank is silent on; answered once it is settled or reversed. */
export const resolveUpdate = defineUpdate<ResolveResult, [OperatorResolution]>('resolve');
export const statusQuery = defineQuery<TransferState>('status');

// The transfer batch workflow's handles (decisions §14): its input, what it hands each item's
// transfer run, and the `status` query. The batch's rules live in src/transfers/domain.ts.
export interface TransferBatchInput {
  batchId: string;
  tenantId: string;
  batchReference: string;
  totalCount: number;
}

/** An accepted item, for its own transfer run: the request (without metadata: its row has it) and its reservation. */
export interface BatchItemStart {
  index: number;
  request: TransferRequest;
  reserved: ReservedTransfer;
}

/**
 * What the batch's submission learned of an item its bank took or may hold: the session, what the
 * bank said at once, or that its connector may hold it (decisions §17).
 */
export interface BatchItemSubmission {
  sessionId: string;
  outcome?: BankOutcome;
  possiblyTaken?: PossiblyTaken;
}

/** What the `status` query answers: where the batch is, and its items by outcome so far. */
export interface BatchProgress {
  phase: 'enquiring' | 'reserving' | 'submitting' | 'settling' | 'completed';
  total: number;
  refused: number;
  accepted: number;
  /** Items whose transfer run has started (each submits to the bank at once). */
  started: number;
  successful: number;
  failed: number;
}

export const batchStatusQuery = defineQuery<BatchProgress>('status');
