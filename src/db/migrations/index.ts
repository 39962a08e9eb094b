// Every migration, in order. Listed explicitly rather than discovered from disk, so the same
// list runs under `npm start`, the tests and a production deploy.
import { Migration0001Platform } from './0001-platform.ts';
import { Migration0002ProviderCallbacks } from './0002-provider-callbacks.ts';
import { Migration0003Transfers } from './0003-transfers.ts';
import { Migration0004Webhooks } from './0004-webhooks.ts';
import { Migration0005VirtualAccounts } from './0005-virtual-accounts.ts';
import { Migration0006Cards } from './0006-cards.ts';

export const migrations = [
  Migration0001Platform,
  Migration0002ProviderCallbacks,
  Migration0003Transfers,
  Migration0004Webhooks,
  Migration0005VirtualAccounts,
  Migration0006Cards,
];
