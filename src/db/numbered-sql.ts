// One SQL text, written with PostgreSQL's numbered parameters ($1, $2…), run two ways: on a raw
// pg client from the ORM's pool as a named prepared statement (`prepared`, in a transaction of
// `inPooledTransaction`: the card decision's, parsed and planned once per connection), or in the
// ORM's own transaction (`executeNumbered`). So an owner writes a statement once and serves both
// kinds of caller: the ledger's "open account", the events insert.
import type { EntityManager, MikroORM } from '@mikro-orm/postgresql';
import type pg from 'pg';

/** A connection the caller holds (inside its transaction): what `prepared` runs on. */
export type SqlClient = Pick<pg.ClientBase, 'query'>;

/** A value of a numbered parameter: a scalar, or an array of scalars (for `unnest($n::type[])`). */
export type SqlValue = string | number | boolean | null | readonly (string | number | boolean | null)[];

/**
 * Runs `work` in one transaction on a raw client of the ORM's own pool, with a fork of its entity
 * manager (to map rows). On a throw the connection is closed, not rolled back and reused: after a
 * statement timed out on our side, or a failed begin or commit, its state is unknown, and the next
 * borrower must never find itself inside this transaction. Closing it rolls back whatever is open.
 *
 * `opening` (literal SQL: its values quoted with the client's `escapeLiteral`) is sent with the
 * `begin`, in one round trip instead of two, and `work` gets its rows: each round trip a
 * transaction makes waits its turn on this process's event loop, with the transaction's locks held.
 */
export async function inPooledTransaction<T>(
  orm: MikroORM,
  work: (client: pg.PoolClient, em: EntityManager, opened: Record<string, unknown>[]) => Promise<T>,
  options: { timing?: PooledTiming; opening?: (client: pg.PoolClient) => string } = {},
): Promise<T> {
  const { timing } = options;
  const em = orm.em.fork();
  const pool = await em.getConnection().getNativeClient();
  const asked = performance.now();
  const client = await pool.connect();
  const connected = performance.now();
  try {
    let opened: Record<string, unknown>[] = [];
    if (options.opening) {
      // Several statements in one query answer one result each: the second is the opening's.
      const results = (await client.query(`begin; ${options.opening(client)}`)) as unknown as pg.QueryResult[];
      opened = results[1]!.rows as Record<string, unknown>[];
    } else {
      await client.query('begin');
    }
    const result = await work(client, em, opened);
    await client.query('commit');
    client.release();
    if (timing) {
      timing.connectionWaitMs = connected - asked;
      timing.transactionMs = performance.now() - connected;
    }
    return result;
  } catch (error) {
    client.release(error instanceof Error ? error : new Error(String(error)));
    throw error;
  }
}

/** Filled in by inPooledTransaction once it has committed: how long it waited for a connection, then held one. */
export interface PooledTiming {
  connectionWaitMs?: number;
  transactionMs?: number;
}

/** Runs `text` as the named prepared statement `name`: one name, one text, for the life of the process. */
export function prepared(client: SqlClient, name: string, text: string, values: readonly SqlValue[]) {
  return client.query<Record<string, unknown>>({ name, text, values: [...values] });
}

/**
 * Runs `text` in the entity manager's transaction (or on its pool). The ORM speaks `?` and quotes
 * each value into the text itself, an array as a comma list; so each `$n` becomes `?` with its
 * value (in the order they appear, repeats included), and an array goes as a PostgreSQL array
 * literal, which the statement casts (`$3::uuid[]`), as it must for a prepared statement too.
 * The text holds no `?` and no `$` but its parameters.
 */
export function executeNumbered<T extends Record<string, unknown>[] = Record<string, unknown>[]>(
  em: EntityManager,
  text: string,
  values: readonly SqlValue[],
): Promise<T> {
  const { sql, params } = toQuestionMarks(text, values);
  return em.execute<T>(sql, params);
}

/** Exported for unit tests. */
export function toQuestionMarks(text: string, values: readonly SqlValue[]): { sql: string; params: unknown[] } {
  // The ORM reads `??` as an identifier and a backslash before `?` as a literal `?`: a placeholder
  // right after another, or after a backslash, would shift every value after it.
  if (text.includes('?')) throw new Error('a numbered statement cannot hold `?`');
  if (/\$(?!\d)|\$\d+\$\d|\\\$\d/.test(text)) {
    throw new Error('a numbered statement holds `$` only as $n, never two in a row or after a backslash');
  }
  const params: unknown[] = [];
  const sql = text.replace(/\$(\d+)/g, (_, n: string) => {
    const index = Number(n) - 1;
    if (index < 0 || index >= values.length) throw new Error(`no value for $${n} (${values.length} given)`);
    const value = values[index]!;
    params.push(Array.isArray(value) ? arrayLiteral(value) : value);
    return '?';
  });
  return { sql, params };
}

/** `{"a","b",NULL}`: each element quoted, its backslashes and double quotes escaped. */
export function arrayLiteral(items: readonly (string | number | boolean | null)[]): string {
  const element = (item: string | number | boolean | null) =>
    item === null ? 'NULL' : `"${String(item).replace(/[\\"]/g, '\\$&')}"`;
  return `{${items.map(element).join(',')}}`;
}
