// Every feature of the gateway, one line each (each declares what it brings in its own index.ts;
// src/feature.ts says what that may be). The API registers their routes in this order, the ORM
// maps their entities, the event catalog lists their event types and the operator CLI their
// commands in this order. Adding a feature: docs/architecture.md#adding-a-feature.
import { apiKeysFeature } from './api-keys/index.ts';
import { auditFeature } from './audit/index.ts';
import { banksFeature } from './banks/index.ts';
import { cardsFeature } from './cards/index.ts';
import { consoleFeature } from './console/index.ts';
import { eventStreamFeature } from './event-stream/index.ts';
import { type EventType, declareEventTypes, eventTypes } from './events/catalog.ts';
import type { Feature } from './feature.ts';
import { healthFeature } from './health/index.ts';
import { identityFeature } from './identity/index.ts';
import { ledgerFeature } from './ledger/index.ts';
import { reconciliationFeature } from './reconciliation/index.ts';
import { recipientsFeature } from './recipients/index.ts';
import { tenantsFeature } from './tenants/index.ts';
import { transferPolicyFeature } from './transfer-policy/index.ts';
import { transfersFeature } from './transfers/index.ts';
import { virtualAccountsFeature } from './virtual-accounts/index.ts';
import { walletFeature } from './wallet/index.ts';
import { webhooksFeature } from './webhooks/index.ts';

// What reads the catalog, for code that loads no feature otherwise (the tests of single modules).
export { describeEventTypes, parseEventData, sampleData } from './events/catalog.ts';

export const FEATURES: readonly Feature[] = [
  tenantsFeature,
  healthFeature,
  walletFeature,
  transfersFeature,
  webhooksFeature,
  eventStreamFeature,
  virtualAccountsFeature,
  cardsFeature,
  identityFeature,
  reconciliationFeature,
  ledgerFeature,
  banksFeature,
  recipientsFeature,
  apiKeysFeature,
  transferPolicyFeature,
  auditFeature,
  consoleFeature,
];

/** Every entity the ORM maps: each feature's own. */
export const ENTITIES = FEATURES.flatMap((feature) => feature.entities ?? []);

// The event catalog holds every feature's event types before any of them is recorded: whatever
// records an event (the API, the workers, the operator CLI, a test) maps the entities above.
declareEventTypes(...FEATURES.map((feature) => feature.events ?? {}));

/** Every event type, in the catalog's order (GET /api/v1/event-types lists them so). */
export const EVENT_TYPES: readonly EventType[] = eventTypes();

/** Every feature's event types, by name: the catalog's entries. */
export const EVENT_CATALOG = Object.assign({}, ...FEATURES.map((feature) => feature.events ?? {})) as Readonly<
  Record<EventType, NonNullable<Feature['events']>[string]>
>;
