// The cards feature's event types (decisions §7, §11), in the event catalog (src/events/catalog.ts).
import { z } from 'zod';
import { type EventDataOf, eventType } from '../events/catalog.ts';
import { SAMPLE_AT, SAMPLE_CARD_ID, SAMPLE_CUSTOMER_REFERENCE, SAMPLE_LATER } from '../events/samples.ts';
import { AuthorizationView, CardView, FundingView, SecuritySettings } from './schemas.ts';

const int = () => z.number().int();

const CardFundingData = FundingView.extend({ card_id: z.string() });

const CardSecuritySettingsData = z.object({
  card_id: z.string(),
  security_settings: SecuritySettings,
  previous: SecuritySettings,
});

const CardAutoReloadedData = z.object({ card_id: z.string(), threshold_minor: int(), funding: FundingView });

const card = (status: 'active' | 'locked'): z.input<typeof CardView> => ({
  id: SAMPLE_CARD_ID,
  customer_id: SAMPLE_CUSTOMER_REFERENCE,
  status,
  jit_funding: false,
  last4: '4242',
  currency: 'NGN',
  metadata: { team: 'ops' },
  created_at: SAMPLE_AT,
  updated_at: SAMPLE_LATER,
});

const funding = (status: 'succeeded' | 'failed'): z.input<typeof FundingView> => ({
  id: 'c4d5e6f7-a8b9-4c0d-9e1f-2a3b4c5d6e7f',
  amount_minor: 500_000,
  currency: 'NGN',
  status,
  transaction_reference: 'fund-7',
  idempotency_key: null,
  failure_reason: status === 'failed' ? 'insufficient_balance' : null,
  created_at: SAMPLE_AT,
  completed_at: SAMPLE_LATER,
});

const authorization = (
  decision: 'approved' | 'declined',
  status: 'pending' | 'cleared' | 'reversed' | 'declined',
): z.input<typeof AuthorizationView> => ({
  id: 'auth_8f3k2j',
  card_id: SAMPLE_CARD_ID,
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
  created_at: SAMPLE_AT,
  updated_at: status === 'pending' || status === 'declined' ? SAMPLE_AT : SAMPLE_LATER,
});

const securitySettings = (atm: boolean): z.input<typeof SecuritySettings> => ({
  per_transaction_limit_minor: 5_000_000,
  daily_limit_minor: null,
  channels: { pos: true, web: true, atm },
  blocked_merchant_categories: ['7995'],
});

export const CARD_EVENT_TYPES = {
  'card.created': eventType('A card was issued: the card as the API shows it.', CardView, card('active')),
  'card.locked': eventType('A card was locked: it declines every purchase until unlocked.', CardView, card('locked')),
  'card.unlocked': eventType('A locked card was unlocked.', CardView, card('active')),
  'card.funded': eventType(
    "Money moved from the wallet to a card (a funding, JIT funding or auto-reload): the funding and the card's id.",
    CardFundingData,
    { card_id: SAMPLE_CARD_ID, ...funding('succeeded') },
  ),
  'card.funding_failed': eventType(
    "A card funding failed and moved nothing: the funding, its failure_reason and the card's id.",
    CardFundingData,
    { card_id: SAMPLE_CARD_ID, ...funding('failed') },
  ),
  'card.security_settings.updated': eventType(
    "A card's security settings changed: the settings now and before.",
    CardSecuritySettingsData,
    { card_id: SAMPLE_CARD_ID, security_settings: securitySettings(false), previous: securitySettings(true) },
  ),
  'card.authorization.approved': eventType(
    'A card purchase was approved and its amount is held on the card.',
    AuthorizationView,
    authorization('approved', 'pending'),
  ),
  'card.authorization.declined': eventType(
    'A card purchase was declined, with the reason.',
    AuthorizationView,
    authorization('declined', 'declined'),
  ),
  'card.authorization.cleared': eventType(
    'The processor cleared an approved authorization: cleared_minor was spent, the rest of the hold released.',
    AuthorizationView,
    authorization('approved', 'cleared'),
  ),
  'card.authorization.reversed': eventType(
    'The processor reversed an approved authorization: its hold is released.',
    AuthorizationView,
    authorization('approved', 'reversed'),
  ),
  'card.auto_reloaded': eventType(
    "A card's balance fell below its auto-reload threshold and the reload is on the card: the threshold and the funding.",
    CardAutoReloadedData,
    {
      card_id: SAMPLE_CARD_ID,
      threshold_minor: 100_000,
      funding: { ...funding('succeeded'), transaction_reference: null, idempotency_key: 'auto-reload:auth_8f3k2j' },
    },
  ),
};

declare module '../events/catalog.ts' {
  interface EventDataByType extends EventDataOf<typeof CARD_EVENT_TYPES> {}
}
