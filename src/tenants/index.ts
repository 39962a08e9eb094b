// Tenants and their API keys (decisions §16), and their operator commands.
import type { Feature } from '../feature.ts';
import { tenantCommands } from './admin.ts';
import { ApiKey, ApiKeySecret, Tenant } from './entities.ts';

export const tenantsFeature: Feature = {
  name: 'tenants',
  entities: [Tenant, ApiKey, ApiKeySecret],
  commands: tenantCommands,
};
