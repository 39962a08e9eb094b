// The virtual accounts feature (decisions §8): accounts at providers, their inbound credits
// through provider callbacks, and their operator commands.
import type { Feature } from '../feature.ts';
import { VIRTUAL_ACCOUNT_EVENT_TYPES } from './event-types.ts';
import { bvnKeysFrom } from '../identity/bvn.ts';
import { virtualAccountCommands } from './admin.ts';
import { registerCreditCallbacks } from './callbacks.ts';
import { virtualAccountRoutes } from './routes.ts';
import { VirtualAccountService } from './service.ts';
import { virtualAccountEntities } from './store.ts';
import { banksOf } from '../connectors/registry.ts';
import { TransferService } from '../transfers/service.ts';

export const virtualAccountsFeature: Feature = {
  name: 'virtual-accounts',
  entities: virtualAccountEntities,
  events: VIRTUAL_ACCOUNT_EVENT_TYPES,
  commands: virtualAccountCommands,
  api(app, { config, orm, client, providers, dispatcher, approvalHourMs }) {
    // A credit's return is a transfer, made through the transfers' own create (decisions §21).
    const transfers = new TransferService({
      orm,
      client,
      taskQueue: config.TEMPORAL_TASK_QUEUE,
      banks: (mode) => banksOf(providers, mode),
      ...(approvalHourMs ? { approvalHourMs } : {}),
    });
    const accounts = new VirtualAccountService({
      orm,
      client,
      taskQueue: config.TEMPORAL_TASK_QUEUE,
      providers,
      bvnKeys: bvnKeysFrom(config.bvnSecretKey),
      transfers,
    });
    virtualAccountRoutes(app, { orm, accounts });
    registerCreditCallbacks(dispatcher, { client, taskQueue: config.TEMPORAL_TASK_QUEUE });
  },
};
