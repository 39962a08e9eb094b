// The transfer workflow's contract, shared by the workflow, its activities and the API: input,
// the `create` update that answers the transfer's id once its money is reserved, the bank's signal
// and the operator's `resolve` update that settle it, and the `status` query. Types and definitions only; safe to import anywhere. Nothing
// here is a response shape: the API renders responses from the projection.
import { defineQuery, defineSignal, defineUpdate } from '@temporalio/workflow';

export const TRANSFER_WORKFLOW_TYPE = 'transferWorkflow';

export function transferWorkflowId(tenantId: string, reference: string): string {
  return `transfer:${tenantId}:${reference}`;
}

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

export type TransferStatus = 'pending' | 'processing' | 'completed' | 'failed';

/** What the transfer's activities report of its projection row. */
export interface TransferRecord {
  id: string;
  status: TransferStatus;
  /** The name enquiry's answer kept with the transfer. */
  recipientName: string;
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
}

/**
 * Whether the bank's answer contradicts our books (decisions §12): only a final status can be
 * contradicted, and only by the opposite answer. Pure, so the workflow and the API decide alike.
 */
export function contradictsBooks(ours: TransferStatus | 'refused', bank: BankOutcome['status']): boolean {
  return (ours === 'completed' && bank === 'failed') || (ours === 'failed' && bank === 'successful');
}

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
}

/** Carried across continue-as-new while a transfer waits for its bank. */
export interface TransferResume {
  transferId: string;
  recipientName: string;
  sessionId: string;
  waitedMs: number;
  stuck: boolean;
  statusChecks: number;
  connector?: string | undefined;
}

export interface TransferWorkflowInput {
  request: TransferRequest;
  resume?: TransferResume;
}

export const createUpdate = defineUpdate<CreateResult, [TransferRequest]>('create');
export const bankConfirmedSignal = defineSignal<[BankOutcome]>('bankConfirmed');
/** An operator's decision on a transfer the bank is silent on; answered once it is settled or reversed. */
export const resolveUpdate = defineUpdate<ResolveResult, [OperatorResolution]>('resolve');
export const statusQuery = defineQuery<TransferState>('status');

/** Failure types the workflow raises for business refusals; each is also the API's error kind. */
export const REFUSALS = ['insufficient_balance', 'invalid_account', 'limit_exceeded', 'duplicate_reference'] as const;
/** What a refused `create` update may say: a business refusal, or `unavailable` (retry later). */
export const CREATE_REFUSALS = [...REFUSALS, 'unavailable'] as const;
export type CreateRefusal = (typeof CREATE_REFUSALS)[number];
