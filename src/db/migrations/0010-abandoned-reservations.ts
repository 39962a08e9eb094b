// A transfer id whose reservation the create path gave up on (its attempt timed out, or a later
// attempt was refused) is written here under the tenant's lock, so that a reservation attempt
// still on its way finds it and reserves nothing. It does not hold the transfer's reference: a
// retry of the request with the same reference creates the transfer under a new id.
import { TENANT_ID } from './columns.ts';
import { sqlMigration } from './sql-migration.ts';

export const Migration0010AbandonedReservations = sqlMigration('0010-abandoned-reservations', [
  `
      create table abandoned_reservations (
        transfer_id uuid primary key,
        ${TENANT_ID},
        reference text not null,
        abandoned_at timestamptz not null default now()
      )`,
]);
