// Activities: the side effects workflows ask for (database, banks, HTTP). Built with their
// dependencies injected, so tests run them against their own database and sandbox bank.
import type { MikroORM } from '@mikro-orm/postgresql';
import type { Client } from '@temporalio/client';
import type { Providers } from '../src/connectors/registry.ts';
import type { EgressPolicy } from '../src/webhooks/destinations.ts';
import type { BvnKeys } from '../src/identity/bvn.ts';
import { createCardActivities } from './cards/cards.ts';
import { createIdentityActivities } from './identity/identity.ts';
import { createReconciliationActivities } from './reconciliation/reconciliation.ts';
import { createTransferBatchActivities } from './transfers/bulk.ts';
import { createTransferReversalActivities } from './transfers/reversals.ts';
import { createTransferActivities } from './transfers/transfers.ts';
import { createVirtualAccountActivities } from './virtual-accounts/virtual-accounts.ts';
import { createWebhookActivities, slotLeaseMs } from './webhooks/webhooks.ts';

export interface ActivityDeps {
  orm: MikroORM;
  providers: Providers;
  /** For activities that start workflows of their own (a temporary account's expiry timer). */
  client: Client;
  /**
   * `tenantConcurrency`: WEBHOOK_TENANT_CONCURRENCY, a tenant's attempts in flight at once;
   * `disableAfterMs`: WEBHOOK_DISABLE_AFTER_HOURS, how long an endpoint may fail every attempt before it is disabled.
   */
  webhooks: {
    encryptionKey: Buffer;
    timeoutMs: number;
    egress: EgressPolicy;
    tenantConcurrency: number;
    disableAfterMs: number;
  };
  /** The keys BVNs are sealed under while their lookup runs (src/identity/bvn.ts). */
  bvnKeys: BvnKeys;
}

export function createActivities(deps: ActivityDeps) {
  return {
    ...createTransferActivities(deps),
    ...createTransferBatchActivities(deps),
    ...createTransferReversalActivities(deps),
    ...createWebhookActivities(webhookActivityDeps(deps)),
    ...createVirtualAccountActivities(deps),
    ...createCardActivities(deps),
    ...createReconciliationActivities(deps),
    ...createIdentityActivities(deps),
  };
}

/** What the webhook activities need, from the worker's dependencies. */
export function webhookActivityDeps(deps: Pick<ActivityDeps, 'orm' | 'client' | 'webhooks'>) {
  const { tenantConcurrency, ...webhooks } = deps.webhooks;
  return {
    orm: deps.orm,
    client: deps.client,
    ...webhooks,
    slots: { perTenant: tenantConcurrency, leaseMs: slotLeaseMs(webhooks.timeoutMs) },
  };
}

export type Activities = ReturnType<typeof createActivities>;
