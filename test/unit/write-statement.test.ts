// The pure pieces under the card decision's one write statement: composing owners' steps into one
// statement (src/db/write-statement.ts), and running a numbered statement through the ORM
// (src/db/numbered-sql.ts). Run against PostgreSQL by the card and ledger integration tests.
import { describe, expect, it } from 'vitest';
import { arrayLiteral, toQuestionMarks } from '../../src/db/numbered-sql.ts';
import { type WriteStep, composeWrite } from '../../src/db/write-statement.ts';

const step = (name: string, text: string, values: WriteStep['values']): WriteStep => ({ name, text, values, rows: 1 });

describe('composeWrite', () => {
  it('chains the steps as CTEs, each one’s placeholders after those of the steps before it, and counts each', () => {
    const { text, values } = composeWrite([
      step('first', 'insert into a (x, y) values ($1, $2) returning 1', ['x', 1]),
      step('second', 'update b set n = n + $2 where id = $1 and m = $2 returning 1', ['id', 5]),
      step('third', 'insert into c select * from unnest($1::text[]) returning 1', [['p', 'q']]),
    ]);
    expect(text).toBe(
      [
        'with',
        '  first as (',
        'insert into a (x, y) values ($1, $2) returning 1),',
        '  second as (',
        'update b set n = n + $4 where id = $3 and m = $4 returning 1),',
        '  third as (',
        'insert into c select * from unnest($5::text[]) returning 1)',
        'select (select count(*) from first)::int as "first",',
        '       (select count(*) from second)::int as "second",',
        '       (select count(*) from third)::int as "third"',
      ].join('\n'),
    );
    expect(values).toEqual(['x', 1, 'id', 5, ['p', 'q']]);
  });

  it('gives the same text whatever the values, so it stays one named prepared statement', () => {
    const steps = (rows: string[]) => [
      step('only', 'insert into a select * from unnest($1::text[]) returning 1', [rows]),
    ];
    expect(composeWrite(steps([])).text).toBe(composeWrite(steps(['a', 'b', 'c'])).text);
  });

  it('refuses a step naming a placeholder it has no value for, and two steps of one name', () => {
    expect(() => composeWrite([step('one', 'insert into a values ($1, $2) returning 1', ['x'])])).toThrow(
      'write step one names $2 and has 1 values',
    );
    expect(() =>
      composeWrite([step('one', 'delete from a returning 1', []), step('one', 'delete from b returning 1', [])]),
    ).toThrow('write step name one is taken or not a name');
  });
});

describe('toQuestionMarks (a numbered statement through the ORM)', () => {
  it('puts each value where its number stands, repeats and arrays included', () => {
    expect(toQuestionMarks('select $2, $1, $2, $3::text[]', ['a', 2, ['x', null]])).toEqual({
      sql: 'select ?, ?, ?, ?::text[]',
      params: [2, 'a', 2, '{"x",NULL}'],
    });
  });

  it('refuses a number with no value and a text holding `?`', () => {
    expect(() => toQuestionMarks('select $2', ['a'])).toThrow('no value for $2 (1 given)');
    expect(() => toQuestionMarks("select '{}'::jsonb ? 'a'", [])).toThrow('cannot hold `?`');
  });

  it('writes array literals: each element quoted, its quotes and backslashes escaped, NULL bare', () => {
    expect(arrayLiteral(['a"b', 'c\\d', '{"k":"v,w"}', null, 7, 'NULL'])).toBe(
      '{"a\\"b","c\\\\d","{\\"k\\":\\"v,w\\"}",NULL,"7","NULL"}',
    );
    expect(arrayLiteral([])).toBe('{}');
  });
});
