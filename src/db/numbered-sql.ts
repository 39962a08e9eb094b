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
 * Each round trip a transaction makes waits its turn on this process's event loop, with the
 * transaction's locks held, so the hot path sends its statements in as few as it can (`sendTogether`):
 * `opening` goes with the `begin`, and `work` gets their results (one per part); `work` may end the
 * transaction itself with `commitWith`, which sends its last statements and the `commit` together.
 * A statement that fails stops everything after it in its round trip, the `commit` included, and
 * the throw closes the connection.
 */
export async function inPooledTransaction<T>(
  orm: MikroORM,
  work: (
    client: pg.PoolClient,
    em: EntityManager,
    opened: Answered[],
    commitWith: (parts: readonly Part[]) => Promise<Answered[]>,
  ) => Promise<T>,
  options: { timing?: PooledTiming; opening?: (client: pg.PoolClient) => readonly Part[] } = {},
): Promise<T> {
  const { timing } = options;
  const em = orm.em.fork();
  const pool = await em.getConnection().getNativeClient();
  const asked = performance.now();
  const client = await pool.connect();
  const connected = performance.now();
  try {
    let opened: Answered[] = [];
    if (options.opening) {
      opened = (await sendTogether(client, ['begin', ...options.opening(client)])).slice(1);
    } else {
      await client.query('begin');
    }
    let committed = false;
    const commitWith = async (parts: readonly Part[]) => {
      if (committed) throw new Error('this transaction is already committed');
      committed = true;
      return (await sendTogether(client, [...parts, 'commit'])).slice(0, -1);
    };
    const result = await work(client, em, opened, commitWith);
    if (!committed) await client.query('commit');
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

/**
 * A statement sent by name, so that it can share one query (one round trip) with others: prepared
 * once per connection with SQL `prepare` (parsed and planned as a protocol-level prepared statement
 * is), then `execute`d with its values written as quoted literals, which PostgreSQL reads as it
 * reads the protocol's text parameters (each becomes the type its parameter was inferred to be).
 */
export interface NamedStatement {
  /** One name, one text, for the life of the process: lower case, digits and dashes. */
  name: string;
  text: string;
  values: readonly SqlValue[];
}

/** What one statement of a round trip answered. */
export type Answered = pg.QueryResult<Record<string, unknown>>;

/** A part of a round trip: a single SQL statement written out (its values quoted), or a named one. */
export type Part = string | NamedStatement;

/** The named statements each connection has prepared (a closed connection's go with it). */
const preparedOn = new WeakMap<object, Set<string>>();

/**
 * Sends the parts as one query, one round trip, and answers one result per part. PostgreSQL runs
 * them in order, each with a snapshot of its own (so one after a lock sees what the lock waited
 * for), all timed from the query's arrival (`statement_timestamp()`); the first that fails stops the
 * rest and fails the whole. A named statement this connection has not prepared is prepared in the
 * same query, just before it.
 */
export async function sendTogether(
  client: Pick<pg.ClientBase, 'query' | 'escapeLiteral'>,
  parts: readonly Part[],
): Promise<Answered[]> {
  const known = preparedOn.get(client) ?? new Set<string>();
  const preparing = new Set<string>();
  const texts: string[] = [];
  const ours: boolean[] = [];
  for (const part of parts) {
    if (typeof part === 'string') {
      texts.push(part);
      ours.push(true);
      continue;
    }
    if (!/^[a-z0-9-]+$/.test(part.name)) throw new Error(`statement name ${part.name} is not a name`);
    const name = `"sql:${part.name}"`;
    if (!known.has(part.name) && !preparing.has(part.name)) {
      preparing.add(part.name);
      texts.push(`prepare ${name} as ${part.text}`);
      ours.push(false);
    }
    const values = part.values.map((value) => literalOf(client, value));
    texts.push(values.length > 0 ? `execute ${name}(${values.join(', ')})` : `execute ${name}`);
    ours.push(true);
  }
  const answered = (await client.query(texts.join(';\n'))) as unknown as Answered | Answered[];
  const results = Array.isArray(answered) ? answered : [answered];
  if (results.length !== texts.length) {
    throw new Error(`${texts.length} statements sent together answered ${results.length} results`);
  }
  for (const name of preparing) known.add(name);
  preparedOn.set(client, known);
  return results.filter((_, i) => ours[i]);
}

/** A value as a quoted SQL literal (an array as an array literal), or `null`. */
export function literalOf(client: Pick<pg.ClientBase, 'escapeLiteral'>, value: SqlValue): string {
  if (value === null) return 'null';
  return client.escapeLiteral(Array.isArray(value) ? arrayLiteral(value) : String(value));
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
