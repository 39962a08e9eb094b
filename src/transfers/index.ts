// The transfers feature (decisions §5, §14, §17): single and bulk naira transfers, their operator
// commands, and the bank's word on them through provider callbacks.
import type { Feature } from '../feature.ts';
import { TRANSFER_EVENT_TYPES } from './event-types.ts';
import { banksOf } from '../connectors/registry.ts';
import { transferCommands } from './admin.ts';
import { TransferBatchService } from './batches.ts';
import { transferBatchEntities } from './batch-store.ts';
import { TransferBatchSweep } from './batch-sweep.ts';
import { registerTransferCallbacks } from './callbacks.ts';
import { transferRoutes } from './routes.ts';
import { TransferService } from './service.ts';
import { ApprovalService } from './approval-service.ts';
import { transferEntities } from './store.ts';

export const transfersFeature: Feature = {
  name: 'transfers',
  entities: [...transferEntities, ...transferBatchEntities],
  events: TRANSFER_EVENT_TYPES,
  commands: transferCommands,
  sweeps: (context) => [new TransferBatchSweep(context)],
  api(app, { config, orm, client, providers, dispatcher, approvalHourMs }) {
    const banks = (mode: 'test' | 'live') => banksOf(providers, mode);
    const transfers = new TransferService({
      orm,
      client,
      taskQueue: config.TEMPORAL_TASK_QUEUE,
      banks,
      ...(approvalHourMs ? { approvalHourMs } : {}),
    });
    const batches = new TransferBatchService({
      orm,
      client,
      taskQueue: config.TEMPORAL_TASK_QUEUE,
      banks,
      itemsPerMinute: config.BULK_ITEMS_PER_MINUTE,
      ...(approvalHourMs ? { approvalHourMs } : {}),
    });
    const approvals = new ApprovalService({ orm, client });
    transferRoutes(app, { orm, transfers, batches, approvals });
    registerTransferCallbacks(dispatcher, { orm, client, providers, taskQueue: config.TEMPORAL_TASK_QUEUE });
  },
};
