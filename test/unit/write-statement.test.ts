// The pure pieces under the card decision's one write statement: composing owners' steps into one
// statement (src/db/write-statement.ts), the steps the decision composes, and running a numbered
// statement through the ORM (src/db/numbered-sql.ts). Run against PostgreSQL by the card and
// ledger integration tests (test/integration/ledger-plan-parity.test.ts among them).
import { describe, expect, it } from 'vitest';
import { type AuthorizationRow, insertAuthorizationStep } from '../../src/cards/authorizations.ts';
import { type FundingRow, insertFundingsSteps } from '../../src/cards/store.ts';
import type pg from 'pg';
import { arrayLiteral, literalOf, sendTogether, toQuestionMarks } from '../../src/db/numbered-sql.ts';
import { type WriteStep, composeWrite, writePart } from '../../src/db/write-statement.ts';
import { recordEventsStep } from '../../src/events/events.ts';
import { sampleData } from '../../src/features.ts';
import { planEntriesOnLockedAccounts, postPlanSteps } from '../../src/ledger/ledger.ts';
import { cardAuthorizationHold, cardFunding } from '../../src/ledger/movements.ts';

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

describe('composeWrite, checked by PostgreSQL', () => {
  it("asks gateway_rows_written for each step's count, with what the write is and the counts as its last values", () => {
    const { text, values } = composeWrite(
      [
        { name: 'first', text: 'insert into a (x) values ($1) returning 1', values: ['x'], rows: 1 },
        { name: 'second', text: 'delete from b where id = any($1::text[]) returning 1', values: [['p', 'q']], rows: 2 },
      ],
      { what: 'authorization auth_1' },
    );
    expect(text).toBe(
      [
        'with',
        '  first as (',
        'insert into a (x) values ($1) returning 1),',
        '  second as (',
        'delete from b where id = any($2::text[]) returning 1)',
        'select gateway_rows_written($3::text, \'first\', (select count(*) from first), $4::int) as "first",',
        '       gateway_rows_written($3::text, \'second\', (select count(*) from second), $5::int) as "second"',
      ].join('\n'),
    );
    expect(values).toEqual(['x', ['p', 'q'], 'authorization auth_1', 1, 2]);
  });
});

describe('sendTogether (several statements, one round trip)', () => {
  // A connection that answers each statement of the query with a result naming it, and keeps what was sent.
  function recording() {
    const sent: string[] = [];
    const client = {
      escapeLiteral: (text: string) => `'${text.replace(/'/g, "''")}'`,
      query: (text: string) => {
        sent.push(text);
        const results = text.split(';\n').map((statement) => ({ command: statement.split(' ')[0], rows: [] }));
        return Promise.resolve(results.length === 1 ? results[0] : results);
      },
    };
    return { sent, client: client as unknown as Pick<pg.ClientBase, 'query' | 'escapeLiteral'> };
  }
  const statement = {
    name: 'together-test',
    text: 'select $1::text, $2::int[], $3::text',
    values: ["it's", [1, 2], null],
  };

  it('prepares a named statement once per connection, in the same query, and answers one result per part', async () => {
    const { sent, client } = recording();
    const first = await sendTogether(client, ['begin', statement, statement, 'commit']);
    expect(sent[0]).toBe(
      [
        'begin',
        'prepare "sql:together-test" as select $1::text, $2::int[], $3::text',
        `execute "sql:together-test"('it''s', '{"1","2"}', null)`,
        `execute "sql:together-test"('it''s', '{"1","2"}', null)`,
        'commit',
      ].join(';\n'),
    );
    expect(first.map((result) => result.command)).toEqual(['begin', 'execute', 'execute', 'commit']);
    await sendTogether(client, [statement]);
    expect(sent[1]).toBe(`execute "sql:together-test"('it''s', '{"1","2"}', null)`);
    // Another connection has not prepared it.
    const other = recording();
    await sendTogether(other.client, [statement]);
    expect(other.sent[0]).toMatch(/^prepare "sql:together-test" as /);
  });

  it('refuses a part that is two statements, by the count of what came back, and a name that is not one', async () => {
    const { client } = recording();
    await expect(sendTogether(client, ['select 1;\nselect 2'])).rejects.toThrow(
      '1 statements sent together answered 2 results',
    );
    await expect(sendTogether(client, [{ ...statement, name: 'x"; drop table t; --' }])).rejects.toThrow(
      'is not a name',
    );
  });

  it('writes values as literals PostgreSQL reads as it reads text parameters', () => {
    const { client } = recording();
    expect(literalOf(client, null)).toBe('null');
    expect(literalOf(client, 12_345)).toBe("'12345'");
    expect(literalOf(client, true)).toBe("'true'");
    expect(literalOf(client, ['a"b', null])).toBe(`'{"a\\"b",NULL}'`);
  });
});

describe('writePart', () => {
  it('refuses a name asked for other steps, or another number of values, than it was composed of', () => {
    const first = [step('only', 'delete from a where id = $1 returning 1', ['x'])];
    expect(writePart('write-test', 'test', first)).toMatchObject({ name: 'write-test', values: ['x', 'test', 1] });
    expect(writePart('write-test', 'other', first).values).toEqual(['x', 'other', 1]);
    // The values a composed name is given are those composeWrite numbers, in its order.
    const two = [
      step('one', 'delete from a where id = $1 returning 1', ['x']),
      step('two', 'delete from b returning 1', []),
    ];
    expect(writePart('write-test-two', 'w', two)).toEqual({
      name: 'write-test-two',
      ...composeWrite(two, { what: 'w' }),
    });
    expect(() =>
      writePart('write-test', 'test', [step('only', 'delete from b where id = $1 returning 1', ['x'])]),
    ).toThrow('prepared write write-test was composed of other steps than these');
    expect(() =>
      writePart('write-test', 'test', [step('only', 'delete from a where id = $1 returning 1', ['x', 'y'])]),
    ).toThrow('prepared write write-test was composed of other steps than these');
  });
});

describe('toQuestionMarks (a numbered statement through the ORM)', () => {
  it('puts each value where its number stands, repeats and arrays included', () => {
    expect(toQuestionMarks('select $2, $1, $2, $3::text[]', ['a', 2, ['x', null]])).toEqual({
      sql: 'select ?, ?, ?, ?::text[]',
      params: [2, 'a', 2, '{"x",NULL}'],
    });
  });

  it('refuses placeholders the ORM would misread: two in a row, after a backslash, or a bare `$`', () => {
    for (const text of ['select $1$2', "select E'\\$1'", 'select $$a$$']) {
      expect(() => toQuestionMarks(text, ['a', 'b']), text).toThrow(
        'a numbered statement holds `$` only as $n, never two in a row or after a backslash',
      );
    }
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

describe("the card decision's write, as its owners' steps compose it", () => {
  const card = { id: 'c-1', currency: 'NGN' };
  const locked = new Map([
    ['card:c-1', { id: 'a-card', balanceMinor: 1_000, allowNegative: false }],
    ['card-hold:c-1', { id: 'a-hold', balanceMinor: 0, allowNegative: false }],
    ['wallet', { id: 'a-wallet', balanceMinor: 5_000, allowNegative: false }],
  ]);
  const authorization = { id: 'auth-1', tenant_id: 't-1', card_id: 'c-1', reason: null } as AuthorizationRow;
  const jit = { id: 'f-1', operation_id: 'o-1', status: 'succeeded', transaction_reference: 'authorization:auth-1' };
  const steps = (approved: boolean) => {
    const movements = approved
      ? [
          cardFunding({ fundingId: 'f-1', cardId: 'c-1', amountMinor: 500 }),
          cardAuthorizationHold({ authorizationId: 'auth-1', cardId: 'c-1', amountMinor: 1_500 }),
        ]
      : [];
    return [
      insertAuthorizationStep(authorization),
      ...postPlanSteps('t-1', planEntriesOnLockedAccounts(movements, locked)),
      ...insertFundingsSteps(card, approved ? [jit as FundingRow] : []),
      recordEventsStep('t-1', [
        { type: 'card.authorization.declined', sourceKey: 'k', payload: sampleData('card.authorization.declined') },
      ]),
    ];
  };

  it('is one text for a decline and a JIT approval alike, so one named prepared statement serves both', () => {
    expect(composeWrite(steps(true)).text).toBe(composeWrite(steps(false)).text);
  });

  it('declares, step by step, as many rows as the decision writes', () => {
    expect(steps(true).map((step) => [step.name, step.rows])).toEqual([
      ['authorization_row', 1],
      ['entries', 2],
      ['moved', 3],
      ['posted', 4],
      ['operations', 1],
      ['fundings', 1],
      ['recorded', 1],
    ]);
    expect(steps(false).map((step) => step.rows)).toEqual([1, 0, 0, 0, 0, 0, 1]);
  });
});
