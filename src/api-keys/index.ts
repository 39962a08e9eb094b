// Keys the tenant manages through the API (decisions §19). Their table is the tenants feature's
// (src/tenants/tenants.ts writes api_keys and api_key_secrets); this feature is their routes.
import type { Feature } from '../feature.ts';
import { apiKeyRoutes } from './routes.ts';
import { ApiKeyService } from './service.ts';

export const apiKeysFeature: Feature = {
  name: 'api-keys',
  api(app, { orm }) {
    apiKeyRoutes(app, { keys: new ApiKeyService(orm) });
  },
};
