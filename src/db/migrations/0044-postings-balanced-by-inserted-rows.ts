// An entry's balance is checked from the rows the insert wrote alone, never by reading `postings`.
// 0043's check summed each touched entry's postings from the table; PL/pgSQL caches that query's
// plan for the life of the connection, and one planned while `postings` was small kept scanning the
// whole table as it grew (seen in the bench: 4.5 ms a card decision, three quarters of its database
// time, on a ledger of a few thousand postings). The rows inserted decide alone, with the same
// outcome: postings are append-only and never zero, so an entry that existed before the insert
// already summed to 0 over at least two lines, and after it sums to what the insert added to it.
import { sqlMigration } from './sql-migration.ts';

export const Migration0044PostingsBalancedByInsertedRows = sqlMigration('0044-postings-balanced-by-inserted-rows', [
  `
      create or replace function journal_entries_must_balance() returns trigger language plpgsql as $$
      declare
        unbalanced record;
      begin
        select i.entry_id, sum(i.amount_minor) as total, count(*) as lines into unbalanced
          from inserted i
         group by i.entry_id having sum(i.amount_minor) <> 0 or count(*) < 2
         limit 1;
        if found then
          raise exception 'journal entry % does not balance (sum %, % postings)',
            unbalanced.entry_id, unbalanced.total, unbalanced.lines using errcode = 'check_violation';
        end if;
        return null;
      end $$`,
]);
