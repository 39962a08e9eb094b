// The transfer batch workflow's Temporal handles (decisions §14): its input, what it hands each
// item's transfer run, and the `status` query. The batch's rules live in src/transfers/domain.ts.
import { defineQuery } from '@temporalio/workflow';
import type { BankOutcome, PossiblyTaken, ReservedTransfer, TransferRequest } from './transfer-definitions.ts';
export { TRANSFER_BATCH_WORKFLOW_TYPE, transferBatchWorkflowId } from './workflow-names.ts';

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
