// The event catalog (decisions §15): for every event type, what it announces, the zod schema of its
// `data`, and a sample of it. The recording functions (events.ts) take each payload typed by its
// type's schema and record what the schema parses, so the catalog's schemas are the payloads' own:
// `GET /api/v1/event-types` shows them as JSON Schema, and test events send the samples. Most
// payloads are a resource as the API shows it, so their schemas are the views' own schemas.
import { z } from 'zod';
import { AuthorizationView, CardView, FundingView, SecuritySettings } from '../cards/schemas.ts';
import { CustomerView } from '../identity/schemas.ts';
import { OUTCOMES } from '../reconciliation/match.ts';
import { TransferBatchDetailView, TransferItemView } from '../transfers/schemas.ts';
import { VirtualAccountView } from '../virtual-accounts/schemas.ts';
import { EndpointView } from '../webhooks/schemas.ts';
import { EVENT_TYPES, type EventType } from './event-types.ts';

const int = () => z.number().int();

/** Which delivery a delivery event is about. */
const deliveryFields = () => ({
  delivery_id: z.string(),
  event_id: z.string(),
  endpoint_id: z.string(),
  /** The type of the event delivered (never an event.delivery.* one). */
  event_type: z.string(),
});

const DeliveryQueuedData = z.object(deliveryFields());

/** One attempt's outcome: the receiver's HTTP status, or null and why there was none. */
const DeliveryAttemptData = z.object({
  ...deliveryFields(),
  attempt: int(),
  status_code: int().nullable(),
  error: z.string().nullable(),
  /** Present when the attempt was a replay. */
  replay_id: z.string().optional(),
});

const CardFundingData = FundingView.extend({ card_id: z.string() });

const CardSecuritySettingsData = z.object({
  card_id: z.string(),
  security_settings: SecuritySettings,
  previous: SecuritySettings,
});

const CardAutoReloadedData = z.object({ card_id: z.string(), threshold_minor: int(), funding: FundingView });

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

const CustomerVerificationData = CustomerView.extend({ verification_id: z.string() });

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

// ---- samples: one consistent sandbox tenant's day ------------------------------------------------

const AT = '2026-11-25T09:30:00.000Z';
const LATER = '2026-11-25T09:30:02.000Z';
const TRANSFER_ID = '5f1c2a9e-3b7d-4c1e-9a2f-6d8e0b4c7a11';
const CARD_ID = '9b2e4f6a-1c3d-4e5f-8a7b-0c1d2e3f4a5b';
const FUNDING_ID = 'c4d5e6f7-a8b9-4c0d-9e1f-2a3b4c5d6e7f';
const CUSTOMER_ID = '1a2b3c4d-5e6f-4a7b-8c9d-0e1f2a3b4c5d';
const EVENT_ID = '7e8f9a0b-1c2d-4e3f-9a4b-5c6d7e8f9a0b';
const DELIVERY_ID = '3c4d5e6f-7a8b-4c9d-8e0f-1a2b3c4d5e6f';
const ENDPOINT_ID = 'e1f2a3b4-c5d6-4e7f-8a9b-0c1d2e3f4a5b';
const RUN_ID = 'f0e1d2c3-b4a5-4968-8776-655443322110';

const transfer = (status: 'pending' | 'successful' | 'failed'): z.input<typeof TransferItemView> => ({
  id: TRANSFER_ID,
  reference: 'inv-42',
  amount_minor: 1_500_000,
  currency: 'NGN',
  status,
  bankCode: '058',
  accountNumber: '0123456789',
  accountName: 'CHINEDU OLAWALE',
  createdAt: AT,
  ...(status === 'pending' ? {} : { completedAt: LATER }),
});

const virtualAccount = (
  status: 'active' | 'closed',
  received: { total: number; count: number },
): z.input<typeof VirtualAccountView> => ({
  id: 'a7b8c9d0-e1f2-4a3b-8c4d-5e6f7a8b9c0d',
  tenant_id: 'f8e423a0-5b6c-4d7e-8f9a-0b1c2d3e4f5a',
  customer_id: 'cus_1001',
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
  created_at: AT,
  updated_at: LATER,
});

const card = (status: 'active' | 'locked'): z.input<typeof CardView> => ({
  id: CARD_ID,
  customer_id: 'cus_1001',
  status,
  jit_funding: false,
  last4: '4242',
  currency: 'NGN',
  metadata: { team: 'ops' },
  created_at: AT,
  updated_at: LATER,
});

const funding = (status: 'succeeded' | 'failed'): z.input<typeof FundingView> => ({
  id: FUNDING_ID,
  amount_minor: 500_000,
  currency: 'NGN',
  status,
  transaction_reference: 'fund-7',
  idempotency_key: null,
  failure_reason: status === 'failed' ? 'insufficient_balance' : null,
  created_at: AT,
  completed_at: LATER,
});

const authorization = (
  decision: 'approved' | 'declined',
  status: 'pending' | 'cleared' | 'reversed' | 'declined',
): z.input<typeof AuthorizationView> => ({
  id: 'auth_8f3k2j',
  card_id: CARD_ID,
  amount_minor: 250_000,
  currency: 'NGN',
  merchant_name: 'SHOPRITE LEKKI',
  merchant_category: '5411',
  channel: 'pos',
  decision,
  reason: decision === 'declined' ? 'insufficient_funds' : null,
  status,
  cleared_minor: status === 'cleared' ? 250_000 : 0,
  jit_funded_minor: 0,
  created_at: AT,
  updated_at: status === 'pending' || status === 'declined' ? AT : LATER,
});

const securitySettings = (atm: boolean): z.input<typeof SecuritySettings> => ({
  per_transaction_limit_minor: 5_000_000,
  daily_limit_minor: null,
  channels: { pos: true, web: true, atm },
  blocked_merchant_categories: ['7995'],
});

const customer = (
  kyc: Pick<z.input<typeof CustomerView>, 'kyc_status' | 'kyc_failure_reason' | 'bvn_last4'>,
): z.input<typeof CustomerView> => ({
  id: CUSTOMER_ID,
  external_reference: 'user-1001',
  first_name: 'Ada',
  last_name: 'Obi',
  email: 'ada@example.com',
  phone: null,
  country: 'NG',
  metadata: null,
  ...kyc,
  created_at: AT,
  updated_at: LATER,
});

const delivery = {
  delivery_id: DELIVERY_ID,
  event_id: EVENT_ID,
  endpoint_id: ENDPOINT_ID,
  event_type: 'transfer.settled',
};

const run = { run_id: RUN_ID, connector: 'sandbox', date: '2026-11-24' };

// ---- the catalog -------------------------------------------------------------------------------------

/** One catalog entry; the sample is checked against the schema where it is written. */
function entry<Data extends z.ZodType>(description: string, data: Data, sample: z.input<Data>) {
  return { description, data, sample };
}

export const EVENT_CATALOG = {
  'transfer.created': entry(
    'A transfer was accepted: its amount and fee are reserved from the wallet and it is pending. ' +
      'Data: the transfer as GET /api/v1/transfers/{id} shows it.',
    TransferItemView,
    transfer('pending'),
  ),
  'transfer.settled': entry(
    'The bank paid the transfer out: status successful, with completedAt.',
    TransferItemView,
    transfer('successful'),
  ),
  'transfer.failed': entry(
    'The bank did not pay the transfer out: status failed, and its amount and fee are back in the wallet.',
    TransferItemView,
    transfer('failed'),
  ),
  'transfer_batch.completed': entry(
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
      created_at: AT,
      counts: { refused: 1, pending: 0, successful: 1, failed: 1 },
      completed_at: LATER,
    },
  ),
  'webhook.endpoint.created': entry('A webhook endpoint was registered (never its signing secret).', EndpointView, {
    id: ENDPOINT_ID,
    url: 'https://example.com/hooks',
    events: ['transfer.settled', 'transfer.failed'],
    status: 'listening',
    created_at: AT,
    updated_at: AT,
  }),
  'webhook.endpoint.test': entry(
    'A test event, sent only to the endpoint it was sent to (POST /api/v1/webhook-endpoints/{id}/test), with "test": true in the body.',
    z.object({ endpoint_id: z.string(), url: z.string(), message: z.string() }),
    {
      endpoint_id: ENDPOINT_ID,
      url: 'https://example.com/hooks',
      message: 'A test event: your endpoint received and verified it.',
    },
  ),
  'event.delivery.queued': entry(
    'A delivery of an event to an endpoint was created. Sent only to endpoints that name it.',
    DeliveryQueuedData,
    delivery,
  ),
  'event.delivery.failed': entry(
    "An attempt of a delivery failed: the receiver's status code, or null and the error. Sent only to endpoints that name it.",
    DeliveryAttemptData,
    { ...delivery, attempt: 1, status_code: 503, error: null },
  ),
  'event.delivery.succeeded': entry(
    'An attempt of a delivery succeeded (a 2xx within 15 s). Sent only to endpoints that name it.',
    DeliveryAttemptData,
    { ...delivery, attempt: 2, status_code: 200, error: null },
  ),
  'virtual_account.created': entry(
    'A virtual account was opened: the account as the API shows it.',
    VirtualAccountView,
    virtualAccount('active', { total: 0, count: 0 }),
  ),
  'virtual_account.credited': entry(
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
  'virtual_account.closed': entry(
    'A virtual account was closed: the account as the API shows it.',
    VirtualAccountView,
    virtualAccount('closed', { total: 2_000_000, count: 1 }),
  ),
  'card.created': entry('A card was issued: the card as the API shows it.', CardView, card('active')),
  'card.locked': entry('A card was locked: it declines every purchase until unlocked.', CardView, card('locked')),
  'card.unlocked': entry('A locked card was unlocked.', CardView, card('active')),
  'card.funded': entry(
    "Money moved from the wallet to a card (a funding, JIT funding or auto-reload): the funding and the card's id.",
    CardFundingData,
    { card_id: CARD_ID, ...funding('succeeded') },
  ),
  'card.funding_failed': entry(
    "A card funding failed and moved nothing: the funding, its failure_reason and the card's id.",
    CardFundingData,
    { card_id: CARD_ID, ...funding('failed') },
  ),
  'card.security_settings.updated': entry(
    "A card's security settings changed: the settings now and before.",
    CardSecuritySettingsData,
    { card_id: CARD_ID, security_settings: securitySettings(false), previous: securitySettings(true) },
  ),
  'card.authorization.approved': entry(
    'A card purchase was approved and its amount is held on the card.',
    AuthorizationView,
    authorization('approved', 'pending'),
  ),
  'card.authorization.declined': entry(
    'A card purchase was declined, with the reason.',
    AuthorizationView,
    authorization('declined', 'declined'),
  ),
  'card.authorization.cleared': entry(
    'The processor cleared an approved authorization: cleared_minor was spent, the rest of the hold released.',
    AuthorizationView,
    authorization('approved', 'cleared'),
  ),
  'card.authorization.reversed': entry(
    'The processor reversed an approved authorization: its hold is released.',
    AuthorizationView,
    authorization('approved', 'reversed'),
  ),
  'card.auto_reloaded': entry(
    "A card's balance fell below its auto-reload threshold and the reload is on the card: the threshold and the funding.",
    CardAutoReloadedData,
    {
      card_id: CARD_ID,
      threshold_minor: 100_000,
      funding: { ...funding('succeeded'), transaction_reference: null, idempotency_key: 'auto-reload:auth_8f3k2j' },
    },
  ),
  'identity.customer.created': entry(
    'An identity customer was created (never a BVN).',
    CustomerView,
    customer({ kyc_status: 'unverified', kyc_failure_reason: null, bvn_last4: null }),
  ),
  'identity.customer.verified': entry(
    "A customer's BVN verification succeeded: the customer and the verification's id.",
    CustomerVerificationData,
    {
      ...customer({ kyc_status: 'verified', kyc_failure_reason: null, bvn_last4: '5678' }),
      verification_id: 'd2e3f4a5-b6c7-4d8e-9f0a-1b2c3d4e5f6a',
    },
  ),
  'identity.customer.verification_failed': entry(
    "A customer's BVN verification failed (bvn_not_found or name_mismatch): the customer and the verification's id.",
    CustomerVerificationData,
    {
      ...customer({ kyc_status: 'verification_failed', kyc_failure_reason: 'name_mismatch', bvn_last4: '5678' }),
      verification_id: 'd2e3f4a5-b6c7-4d8e-9f0a-1b2c3d4e5f6a',
    },
  ),
  'reconciliation.completed': entry(
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
  'reconciliation.mismatch': entry(
    "One of the tenant's transactions does not match the bank's statement: what each side says.",
    ReconciliationMismatchData,
    {
      ...run,
      outcome: 'amount_differs',
      kind: 'transfer',
      transfer_id: TRANSFER_ID,
      reference: 'inv-42',
      session_id: '000015261124093000123456789012',
      bank_amount_minor: 1_400_000,
      our_amount_minor: 1_500_000,
      bank_status: 'successful',
      our_status: 'successful',
    },
  ),
} satisfies Record<EventType, { description: string; data: z.ZodType; sample: unknown }>;

type Catalog = typeof EVENT_CATALOG;

/** What a payload of event type T must be (what its schema accepts). */
export type EventData<T extends EventType> = z.input<Catalog[T]['data']>;

/** The payload as recorded: what the type's schema makes of it. Throws (a plain Error) when it does not fit. */
export function parseEventData(type: EventType, payload: unknown): Record<string, unknown> {
  const entry: { data: z.ZodType } | undefined = EVENT_CATALOG[type];
  if (!entry) throw new Error(`event type ${type} is not in the event catalog`);
  const parsed = entry.data.safeParse(payload);
  if (!parsed.success) {
    throw new Error(`a ${type} payload does not fit its catalog schema: ${z.prettifyError(parsed.error)}`, {
      cause: parsed.error,
    });
  }
  return parsed.data as Record<string, unknown>;
}

/** A sample `data` of the type, fitting its schema: a fresh copy each call. */
export function sampleData<T extends EventType>(type: T): EventData<T> {
  return structuredClone(EVENT_CATALOG[type].sample) as EventData<T>;
}

export interface EventTypeDescription {
  type: EventType;
  description: string;
  /** The JSON Schema (draft 2020-12) of the event's `data`. */
  schema: Record<string, unknown>;
}

let described: readonly EventTypeDescription[] | undefined;

/** Every event type, in EVENT_TYPES' order, with its description and the JSON Schema of its data. */
export function describeEventTypes(): readonly EventTypeDescription[] {
  described ??= EVENT_TYPES.map((type) => ({
    type,
    description: EVENT_CATALOG[type].description,
    schema: z.toJSONSchema(EVENT_CATALOG[type].data),
  }));
  return described;
}
