// Health: whether the API reaches its database and Temporal.
import type { Feature } from '../feature.ts';
import { healthRoutes } from './routes.ts';

export const healthFeature: Feature = {
  name: 'health',
  api(app, { config, orm, temporal }) {
    healthRoutes(app, { orm, temporal, namespace: config.TEMPORAL_NAMESPACE });
  },
};
