// Every feature of the gateway, one line each (each declares what it brings in its own index.ts;
// src/feature.ts says what that may be). The API registers their routes in this order, the ORM
// maps their entities, and the operator CLI lists their commands in this order. Adding a feature:
// docs/architecture.md#adding-a-feature.
import { adminFeature } from './admin/index.ts';
import { banksFeature } from './banks/index.ts';
import { cardsFeature } from './cards/index.ts';
import { eventsFeature } from './events/index.ts';
import type { Feature } from './feature.ts';
import { healthFeature } from './health/index.ts';
import { identityFeature } from './identity/index.ts';
import { ledgerFeature } from './ledger/index.ts';
import { reconciliationFeature } from './reconciliation/index.ts';
import { recipientsFeature } from './recipients/index.ts';
import { tenantsFeature } from './tenants/index.ts';
import { transfersFeature } from './transfers/index.ts';
import { virtualAccountsFeature } from './virtual-accounts/index.ts';
import { walletFeature } from './wallet/index.ts';
import { webhooksFeature } from './webhooks/index.ts';

export const FEATURES: readonly Feature[] = [
  tenantsFeature,
  healthFeature,
  walletFeature,
  transfersFeature,
  webhooksFeature,
  eventsFeature,
  virtualAccountsFeature,
  identityFeature,
  reconciliationFeature,
  cardsFeature,
  ledgerFeature,
  banksFeature,
  recipientsFeature,
  adminFeature,
];

/** Every entity the ORM maps: each feature's own. */
export const ENTITIES = FEATURES.flatMap((feature) => feature.entities ?? []);
