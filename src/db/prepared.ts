// Reads on the hot paths as named prepared statements on the ORM's own connection pool: each
// connection parses and plans the statement once, and a read is then one round trip with no query
// building. The statement names the entity's columns (never `*`), so a migration that adds a
// column does not invalidate the plans of processes already running. Rows are typed through the
// entity (`em.map`), exactly as `findOne` gives them. Only for reads outside a transaction: a
// statement here runs on whichever pooled connection is free, never on the caller's transaction.
import type { EntityName } from '@mikro-orm/core';
import type { EntityManager, MikroORM } from '@mikro-orm/postgresql';

export interface PreparedRead {
  /** The statement's name on every connection: one name, one condition, for the life of the process. */
  name: string;
  /** The condition after `where`, with $1, $2… for the values. */
  where: string;
}

const statements = new Map<string, string>();

/**
 * The entity's columns by name, quoted, for a prepared statement's select list (never `*`): a
 * migration that adds a column leaves the plans of running processes valid. `alias` qualifies them.
 */
export function entityColumns<Entity extends object>(
  em: EntityManager,
  entity: EntityName<Entity>,
  alias?: string,
): string[] {
  const meta = em.getMetadata().find(entity);
  if (!meta) throw new Error('no entity metadata for a prepared statement');
  return meta.props
    .flatMap((prop) => prop.fieldNames ?? [])
    .map((column) => (alias ? `${alias}."${column}"` : `"${column}"`));
}

function statementText(em: EntityManager, entity: EntityName<object>, read: PreparedRead): string {
  let text = statements.get(read.name);
  if (text === undefined) {
    const table = em.getMetadata().find(entity)?.tableName;
    text = `select ${entityColumns(em, entity).join(', ')} from "${table}" where ${read.where}`;
    statements.set(read.name, text);
  }
  return text;
}

/** The one row the statement finds, typed as the entity, or null. */
export async function readOne<Entity extends object>(
  orm: MikroORM,
  entity: EntityName<Entity>,
  read: PreparedRead,
  values: unknown[],
): Promise<Entity | null> {
  const em: EntityManager = orm.em.fork();
  const pool = await em.getConnection().getNativeClient();
  const text = statementText(em, entity as EntityName<object>, read);
  const { rows } = await pool.query<Record<string, unknown>>({ name: read.name, text, values });
  return rows[0] ? em.map(entity, rows[0] as never) : null;
}
