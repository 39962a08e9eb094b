// Every page of the console, one module per area; each registers its routes on the console's scope.
import type { FastifyInstance } from 'fastify';
import type { ConsoleDeps } from '../plugin.ts';
import { approvalPages } from './approvals.ts';
import { batchPages } from './batches.ts';
import { overviewPages } from './overview.ts';
import { recipientPages } from './recipients.ts';
import { transferPages } from './transfers.ts';

export function pageRoutes(scope: FastifyInstance, deps: ConsoleDeps): void {
  overviewPages(scope, deps);
  approvalPages(scope, deps);
  batchPages(scope, deps);
  recipientPages(scope, deps);
  transferPages(scope, deps);
}
