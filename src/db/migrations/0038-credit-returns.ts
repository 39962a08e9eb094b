// Credits and their returns (decisions §21). A credit keeps its sender's account and bank when the
// provider gives them (the account a return is sent to). A credit to a closed or expired account is
// no longer refused and counted nowhere: it is `held` in the tenant mode's suspense account (the
// ledger's `suspense`, opened at the first one), returned to its sender from there, or `released`
// to the wallet by an operator. A return is a transfer linked to its credit (`return_of`), paid
// from the wallet (`funded_from = 'wallet'`, an ordinary transfer) or, for a held credit, from the
// suspense account (`'suspense'`, without a fee). Credits refused before this migration stay as
// they were.
import { sqlMigration } from './sql-migration.ts';

export const Migration0038CreditReturns = sqlMigration('0038-credit-returns', [
  'alter table inbound_credits add column sender_account_number text',
  'alter table inbound_credits add column sender_bank_code text',
  'alter table inbound_credits drop constraint inbound_credits_status_check',
  `alter table inbound_credits add constraint inbound_credits_status_check
     check (status in ('applied', 'refused', 'held', 'released'))`,
  'alter table inbound_credits add column released_at timestamptz',
  // An account's credits, newest first (GET /api/v1/virtual-accounts/{id}/credits).
  'create index inbound_credits_account_idx on inbound_credits (virtual_account_id, created_at desc, id desc)',
  // Operators list the held ones (admin credits held).
  `create index inbound_credits_held_idx on inbound_credits (created_at) where status = 'held'`,
  'alter table transfers add column return_of uuid references inbound_credits (id)',
  `alter table transfers add column funded_from text not null default 'wallet'
     check (funded_from in ('wallet', 'suspense'))`,
  `alter table transfers add constraint transfers_suspense_returns check (funded_from = 'wallet' or return_of is not null)`,
  'create index transfers_return_of_idx on transfers (return_of) where return_of is not null',
]);
