// An entry's postings must balance: checked once per insert into postings, over every entry it
// touched, instead of once per posting row at commit. The ledger writes an entry's postings in one
// statement (src/ledger/ledger.ts), so the check sees each entry whole; a writer around it that
// splits an entry over statements is refused at the first, as an unbalanced one always was. Each
// posting row had cost a deferred trigger's query (five a transfer), now one query per insert.
import { sqlMigration } from './sql-migration.ts';

export const Migration0043PostingsBalancedPerStatement = sqlMigration('0043-postings-balanced-per-statement', [
  'drop trigger postings_balanced on postings',
  'drop function journal_entry_must_balance()',
  `
      create function journal_entries_must_balance() returns trigger language plpgsql as $$
      declare
        unbalanced record;
      begin
        select p.entry_id, coalesce(sum(p.amount_minor), 0) as total, count(*) as lines into unbalanced
          from postings p where p.entry_id in (select distinct entry_id from inserted)
         group by p.entry_id having coalesce(sum(p.amount_minor), 0) <> 0 or count(*) < 2
         limit 1;
        if found then
          raise exception 'journal entry % does not balance (sum %, % postings)',
            unbalanced.entry_id, unbalanced.total, unbalanced.lines using errcode = 'check_violation';
        end if;
        return null;
      end $$`,
  `
      create trigger postings_balanced after insert on postings referencing new table as inserted
        for each statement execute function journal_entries_must_balance()`,
]);
