// PostgreSQL's own check of a composed write's counts (src/db/write-statement.ts): each step's rows
// written against the rows it declared, so that a count that differs fails the statement itself.
// The card decision sends its write and its `commit` in one round trip; a failed statement stops
// the commit, where a check made after the answer would come too late.
import { sqlMigration } from './sql-migration.ts';

export const Migration0047RowsWritten = sqlMigration('0047-rows-written', [
  `
      create function gateway_rows_written(what text, step text, written bigint, expected integer) returns integer
        language plpgsql as $$
        begin
          if written is distinct from expected then
            raise exception '%: wrote % %, expected %', what, written, step, expected
              using errcode = 'P0001';
          end if;
          return written;
        end $$`,
]);
