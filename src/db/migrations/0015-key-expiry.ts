// API keys that are rolled keep working for an overlap window, then expire: `expires_at`, null
// for a key that does not expire.
import { sqlMigration } from './sql-migration.ts';

export const Migration0015KeyExpiry = sqlMigration('0015-key-expiry', [
  'alter table api_keys add column expires_at timestamptz',
]);
