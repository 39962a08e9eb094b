// The virtual accounts feature's event types (decisions §7), in the event catalog (src/events/catalog.ts).
import { z } from 'zod';
import { type EventDataOf, eventType } from '../events/catalog.ts';
import { SAMPLE_AT, SAMPLE_CUSTOMER_REFERENCE, SAMPLE_LATER } from '../events/samples.ts';
import { VirtualAccountView } from './schemas.ts';

const int = () => z.number().int();

const VirtualAccountCreditedData = VirtualAccountView.extend({
  credit: z.object({
    /** What the sender paid: what the account's `total_received_minor` counts. */
    amount_minor: int(),
    /** What the provider kept of it (0 where it keeps nothing): the wallet was credited the rest. */
    fee_minor: int(),
    transaction_reference: z.string(),
    sender_name: z.string(),
    session_id: z.string(),
  }),
});

const virtualAccount = (
  status: 'active' | 'closed',
  received: { total: number; count: number },
): z.input<typeof VirtualAccountView> => ({
  id: 'a7b8c9d0-e1f2-4a3b-8c4d-5e6f7a8b9c0d',
  tenant_id: 'f8e423a0-5b6c-4d7e-8f9a-0b1c2d3e4f5a',
  customer_id: SAMPLE_CUSTOMER_REFERENCE,
  account_number: '9900123456',
  account_name: 'ADA OBI',
  bank_code: '035',
  bank_name: 'Wema Bank',
  provider: 'sandbox',
  status,
  account_type: 'static',
  total_received_minor: received.total,
  transaction_count: received.count,
  metadata: null,
  expires_at: null,
  created_at: SAMPLE_AT,
  updated_at: SAMPLE_LATER,
});

export const VIRTUAL_ACCOUNT_EVENT_TYPES = {
  'virtual_account.created': eventType(
    'A virtual account was opened: the account as the API shows it.',
    VirtualAccountView,
    virtualAccount('active', { total: 0, count: 0 }),
  ),
  'virtual_account.credited': eventType(
    'Money arrived in a virtual account and is in the wallet: the account with its new totals, and the credit.',
    VirtualAccountCreditedData,
    {
      ...virtualAccount('active', { total: 2_000_000, count: 1 }),
      credit: {
        amount_minor: 2_000_000,
        fee_minor: 0,
        transaction_reference: 'NIP-000123',
        sender_name: 'EMEKA NWOSU',
        session_id: '000015261125093000123456789012',
      },
    },
  ),
  'virtual_account.closed': eventType(
    'A virtual account was closed: the account as the API shows it.',
    VirtualAccountView,
    virtualAccount('closed', { total: 2_000_000, count: 1 }),
  ),
};

declare module '../events/catalog.ts' {
  interface EventDataByType extends EventDataOf<typeof VIRTUAL_ACCOUNT_EVENT_TYPES> {}
}
