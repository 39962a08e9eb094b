// The reconciliation feature's event types (decisions §13), in the event catalog
// (src/events/catalog.ts): a tenant's day reconciled, and each of its mismatches.
import { z } from 'zod';
import { type EventDataOf, eventType } from '../events/catalog.ts';
import { SAMPLE_TRANSFER_ID } from '../events/samples.ts';
import { OUTCOMES } from './match.ts';

const int = () => z.number().int();

const ReconciliationMismatchData = z.object({
  run_id: z.string(),
  connector: z.string(),
  date: z.string(),
  outcome: z.enum(OUTCOMES),
  kind: z.enum(['transfer', 'inbound_credit']),
  transfer_id: z.string().nullable(),
  /** A transfer's own reference (the tenant's), else the bank's. */
  reference: z.string(),
  session_id: z.string().nullable(),
  /** Inbound credits only: the virtual account credited. */
  account_number: z.string().nullable().optional(),
  bank_amount_minor: int().nullable(),
  our_amount_minor: int().nullable(),
  bank_status: z.enum(['successful', 'failed']).nullable(),
  /** In the API's vocabulary: a transfer's `successful`, a credit's `applied`. */
  our_status: z.string().nullable(),
});

const ReconciliationCompletedData = z.object({
  run_id: z.string(),
  connector: z.string(),
  date: z.string(),
  items: int(),
  matched: int(),
  mismatched: int(),
  counts: z.object({
    matched: int(),
    missing_ours: int(),
    missing_at_bank: int(),
    amount_differs: int(),
    status_differs: int(),
  }),
});

const run = { run_id: 'f0e1d2c3-b4a5-4968-8776-655443322110', connector: 'sandbox', date: '2026-11-24' };

export const RECONCILIATION_EVENT_TYPES = {
  'reconciliation.completed': eventType(
    "A connector's day was reconciled against its bank statement: the tenant's items by outcome.",
    ReconciliationCompletedData,
    {
      ...run,
      items: 12,
      matched: 11,
      mismatched: 1,
      counts: { matched: 11, missing_ours: 0, missing_at_bank: 0, amount_differs: 1, status_differs: 0 },
    },
  ),
  'reconciliation.mismatch': eventType(
    "One of the tenant's transactions does not match the bank's statement: what each side says.",
    ReconciliationMismatchData,
    {
      ...run,
      outcome: 'amount_differs',
      kind: 'transfer',
      transfer_id: SAMPLE_TRANSFER_ID,
      reference: 'inv-42',
      session_id: '000015261124093000123456789012',
      bank_amount_minor: 1_400_000,
      our_amount_minor: 1_500_000,
      bank_status: 'successful',
      our_status: 'successful',
    },
  ),
};

declare module '../events/catalog.ts' {
  interface EventDataByType extends EventDataOf<typeof RECONCILIATION_EVENT_TYPES> {}
}
