// The identity feature (decisions §12): identity customers and their BVN verification.
import type { Feature } from '../feature.ts';
import { IDENTITY_EVENT_TYPES } from './event-types.ts';
import { bvnKeysFrom } from './bvn.ts';
import { identityRoutes } from './routes.ts';
import { IdentityService } from './service.ts';
import { BvnVerification, IdentityCustomer } from './store.ts';

export const identityFeature: Feature = {
  name: 'identity',
  entities: [IdentityCustomer, BvnVerification],
  events: IDENTITY_EVENT_TYPES,
  api(app, { config, orm, client }) {
    identityRoutes(app, {
      identity: new IdentityService({
        orm,
        client,
        taskQueue: config.TEMPORAL_TASK_QUEUE,
        bvnKeys: bvnKeysFrom(config.bvnSecretKey),
      }),
    });
  },
};
