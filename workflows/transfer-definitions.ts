// The transfer workflow's contract, shared by the workflow, its activities and the API: input,
// the `create` update that returns the create response, the signals that settle it, and the
// `status` query. Types and definitions only; safe to import anywhere.
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
}

/** The transfer as the create endpoint returns it (interface §2.3). */
export interface TransferCreateView {
  id: string;
  amount_minor: number;
  fee_minor: number;
  total_minor: number;
  recipient_account: string;
  recipient_name: string;
  recipient_bank: string;
  recipient_bank_code: string;
  status: TransferStatus;
  reference: string;
  narration: string;
  session_id: string;
  currency: string;
  metadata: Record<string, unknown>;
  created_at: string;
}

export type TransferStatus = 'pending' | 'processing' | 'completed' | 'failed';

export interface CreateResult {
  transfer: TransferCreateView;
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

export interface TransferState {
  transferId: string | undefined;
  status: TransferStatus | 'refused';
  sessionId: string | undefined;
  stuck: boolean;
  bankOutcome: BankOutcome | undefined;
  resolution: OperatorResolution | undefined;
  statusChecks: number;
}

/** Carried across continue-as-new while a transfer waits for its bank. */
export interface TransferResume {
  transfer: TransferCreateView;
  sessionId: string;
  waitedMs: number;
  stuck: boolean;
  statusChecks: number;
}

export interface TransferWorkflowInput {
  request: TransferRequest;
  resume?: TransferResume;
}

export const createUpdate = defineUpdate<CreateResult, [TransferRequest]>('create');
export const bankConfirmedSignal = defineSignal<[BankOutcome]>('bankConfirmed');
export const resolveSignal = defineSignal<[OperatorResolution]>('resolve');
export const statusQuery = defineQuery<TransferState>('status');

/** Failure types the workflow raises for business refusals; the API maps them to error codes. */
export const REFUSALS = ['insufficient_balance', 'invalid_account', 'limit_exceeded', 'duplicate_reference'] as const;
export type RefusalType = (typeof REFUSALS)[number];
