// Every page of the console, one module per area; each registers its routes on the console's scope.
import type { FastifyInstance } from 'fastify';
import type { ConsoleDeps } from '../plugin.ts';
import { approvalPages } from './approvals.ts';
import { auditPages } from './audit.ts';
import { batchPages } from './batches.ts';
import { cardPages } from './cards.ts';
import { eventPages } from './events.ts';
import { keyPages } from './keys.ts';
import { overviewPages } from './overview.ts';
import { recipientPages } from './recipients.ts';
import { teamPages } from './team.ts';
import { transferPages } from './transfers.ts';
import { virtualAccountPages } from './virtual-accounts.ts';
import { walletPages } from './wallet.ts';
import { webhookPages } from './webhooks.ts';

export function pageRoutes(scope: FastifyInstance, deps: ConsoleDeps): void {
  overviewPages(scope, deps);
  transferPages(scope, deps);
  batchPages(scope, deps);
  approvalPages(scope, deps);
  recipientPages(scope, deps);
  virtualAccountPages(scope, deps);
  cardPages(scope, deps);
  webhookPages(scope, deps);
  eventPages(scope, deps);
  keyPages(scope, deps);
  walletPages(scope, deps);
  teamPages(scope, deps);
  auditPages(scope, deps);
}
