// Which connector took each transfer (decisions §13): the one whose name enquiry answered, or the
// next one after a definitive "not taken"; status queries go there and nowhere else. Live keys had
// no connector before this, so every transfer made until now was the sandbox bank's.
import { sqlMigration } from './sql-migration.ts';

export const Migration0023TransferConnectors = sqlMigration('0023-transfer-connectors', [
  'alter table transfers add column connector text',
  // Placeholders the create path left for abandoned reservations never had a name enquiry.
  `update transfers set connector = 'sandbox' where name_enquiry_session_id is not null`,
  'create index transfers_connector_idx on transfers (connector, created_at) where connector is not null',
]);
