// Cards and fundings as the API shows them (decisions §6).
import type { AutoReloadView, CardView, FundingView, SecuritySettings } from './schemas.ts';
import type { CardRow, FundingRow } from './store.ts';

export function cardView(row: CardRow): CardView {
  return {
    id: row.id,
    customer_id: row.customer_id,
    status: row.status,
    jit_funding: row.jit_funding,
    last4: row.last4,
    currency: row.currency,
    metadata: row.metadata ?? null,
    created_at: row.created_at.toISOString(),
    updated_at: row.updated_at.toISOString(),
  };
}

export function fundingView(row: FundingRow): FundingView {
  return {
    id: row.id,
    amount_minor: row.amount_minor,
    currency: row.currency,
    status: row.status,
    transaction_reference: row.transaction_reference ?? null,
    idempotency_key: row.idempotency_key ?? null,
    failure_reason: row.failure_reason ?? null,
    created_at: row.created_at.toISOString(),
    completed_at: row.completed_at?.toISOString() ?? null,
  };
}

export function securitySettingsView(row: CardRow): SecuritySettings {
  return {
    per_transaction_limit_minor: row.per_transaction_limit_minor ?? null,
    daily_limit_minor: row.daily_limit_minor ?? null,
    channels: { pos: row.channel_pos, web: row.channel_web, atm: row.channel_atm },
    blocked_merchant_categories: [...row.blocked_merchant_categories],
  };
}

/** A card that never set auto-reload shows it off, with a threshold of 0 and no amount. */
export function autoReloadView(row: CardRow): AutoReloadView {
  return {
    enabled: row.auto_reload_enabled,
    threshold_minor: row.auto_reload_threshold_minor,
    amount_minor: row.auto_reload_amount_minor ?? null,
  };
}
