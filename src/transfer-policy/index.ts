// The transfer policy (decisions §20): per tenant and key mode, which transfers wait for approval
// and what live keys must have. readTransferPolicy (./store.ts) is what the transfer paths read.
import type { Feature } from '../feature.ts';
import { transferPolicyRoutes } from './routes.ts';
import { TransferPolicyService } from './service.ts';
import { TransferPolicyRow } from './store.ts';

export const transferPolicyFeature: Feature = {
  name: 'transfer-policy',
  entities: [TransferPolicyRow],
  api(app, { orm }) {
    transferPolicyRoutes(app, { policies: new TransferPolicyService(orm) });
  },
};
