// The transfers feature's event types (decisions §7, §14), in the event catalog (src/events/catalog.ts).
import type { z } from 'zod';
import { type EventDataOf, eventType } from '../events/catalog.ts';
import { SAMPLE_AT, SAMPLE_LATER, SAMPLE_TRANSFER_ID } from '../events/samples.ts';

const SAMPLE_EXPIRES = '2026-11-26T09:30:00.000Z';
const SAMPLE_REVERSED = '2026-11-28T14:05:00.000Z';
const SAMPLE_KEY_ID = '7d9e1f2a-3b4c-4d5e-8f60-718293a4b5c6';
import { TransferBatchDetailView, TransferItemView } from './schemas.ts';

const transfer = (status: 'pending' | 'successful' | 'failed'): z.input<typeof TransferItemView> => ({
  id: SAMPLE_TRANSFER_ID,
  reference: 'inv-42',
  amount_minor: 1_500_000,
  currency: 'NGN',
  status,
  bankCode: '058',
  accountNumber: '0123456789',
  accountName: 'CHINEDU OLAWALE',
  createdAt: SAMPLE_AT,
  ...(status === 'pending' ? {} : { completedAt: SAMPLE_LATER }),
  ...(status === 'failed' ? { failure_reason: 'Beneficiary account is dormant' } : {}),
  approval: null,
  return_of: null,
});

/** A transfer the transfer policy held (decisions §20), as its approval stands. */
const held = (
  status: 'pending' | 'failed',
  approval: 'required' | 'approved' | 'rejected',
): z.input<typeof TransferItemView> => ({
  ...transfer(status),
  ...(status === 'failed' ? { failure_reason: 'rejected' } : {}),
  approval: {
    status: approval,
    expires_at: SAMPLE_EXPIRES,
    decided_by: approval === 'required' ? null : { type: 'key', id: SAMPLE_KEY_ID, name: 'finance approvals' },
    decided_at: approval === 'required' ? null : SAMPLE_LATER,
  },
});

export const TRANSFER_EVENT_TYPES = {
  'transfer.created': eventType(
    'A transfer was accepted: its amount and fee are reserved from the wallet and it is pending. ' +
      'Data: the transfer as GET /api/v1/transfers/{id} shows it.',
    TransferItemView,
    transfer('pending'),
  ),
  'transfer.settled': eventType(
    'The bank paid the transfer out: status successful, with completedAt.',
    TransferItemView,
    transfer('successful'),
  ),
  'transfer.failed': eventType(
    'The bank did not pay the transfer out: status failed, and its amount and fee are back in the wallet.',
    TransferItemView,
    transfer('failed'),
  ),
  'transfer.reversed': eventType(
    'The bank reversed a transfer it had paid out (decisions §21), and its status query confirmed it: ' +
      'status failed with failure_reason `reversed` and reversed_at, and its amount and fee are back in the ' +
      'wallet (statement line `transfer_reversal`). Sent once, after the transfer.settled it undoes.',
    TransferItemView,
    {
      ...transfer('failed'),
      failure_reason: 'reversed',
      reversed_at: SAMPLE_REVERSED,
    },
  ),
  'transfer.approval_required': eventType(
    'The transfer policy held a transfer (decisions §20): its amount and fee are reserved, and it reaches ' +
      'no bank until another key with transfers:approve (or a console approver) approves it before ' +
      'approval.expires_at. Data: the transfer as GET shows it, with approval.status required.',
    TransferItemView,
    held('pending', 'required'),
  ),
  'transfer.approved': eventType(
    'A held transfer was approved: it goes on to its bank. Data: the transfer with approval.decided_by.',
    TransferItemView,
    held('pending', 'approved'),
  ),
  'transfer.rejected': eventType(
    'A held transfer was rejected, or its approval expired undecided: it failed with failure_reason ' +
      '`rejected` or `approval_expired`, and its amount and fee are back in the wallet (transfer.failed follows).',
    TransferItemView,
    held('failed', 'rejected'),
  ),
  'transfer_batch.completed': eventType(
    'Every item of a bulk transfer request was refused or its transfer ended: the batch with its counts by outcome.',
    TransferBatchDetailView,
    {
      id: 'b1c2d3e4-f5a6-4b7c-8d9e-0f1a2b3c4d5e',
      batch_reference: 'payroll-2026-11',
      status: 'completed',
      total_count: 3,
      total_amount_minor: 4_500_000,
      total_fee_minor: 7_500,
      atomic: false,
      created_at: SAMPLE_AT,
      approval: null,
      counts: { refused: 1, pending: 0, successful: 1, failed: 1 },
      completed_at: SAMPLE_LATER,
    },
  ),
};

declare module '../events/catalog.ts' {
  interface EventDataByType extends EventDataOf<typeof TRANSFER_EVENT_TYPES> {}
}
