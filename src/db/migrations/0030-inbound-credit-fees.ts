// Provider fees on inbound credits (decisions §18): what the provider kept of a credit (Paystack's
// `fees` on `charge.success`), booked in the credit's own journal entry, and subtracted to give the
// net amount reconciliation compares with the provider's settlement. 0 for the credits recorded
// before, and for providers that charge none (the generic contract's credits carry no fee).
import { sqlMigration } from './sql-migration.ts';

export const Migration0030InboundCreditFees = sqlMigration('0030-inbound-credit-fees', [
  'alter table inbound_credits add column fee_minor bigint not null default 0',
  'alter table inbound_credits add constraint inbound_credits_fee_minor check (fee_minor between 0 and amount_minor)',
]);
