// Reads on the hot paths as named prepared statements on the ORM's own connection pool: each
// connection parses and plans the statement once, and a read is then one round trip with no query
// building. The statement names the entity's columns (never `*`), so a migration that adds a
// column does not invalidate the plans of processes already running. Rows are typed through the
// entity's own conversions (its compiled column → property mapping, then each custom type's, e.g.
// bigint to number), with the values `findOne` gives, but as plain objects: no entity manager, no
// identity map and no managed entity, which cost the API's reads more than the rest of the read did
// (docs/performance.md). So a row read here is for reading: never persist, assign or flush it. Only
// for reads outside a transaction: a statement here runs on whichever pooled connection is free,
// never on the caller's transaction.
import { type EntityMetadata, type EntityName, ReferenceKind } from '@mikro-orm/core';
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
 * Lazy columns are left out, as `findOne` leaves them out (a transfer's `awaiting_word_token`).
 */
export function entityColumns<Entity extends object>(
  em: EntityManager,
  entity: EntityName<Entity>,
  alias?: string,
): string[] {
  const meta = em.getMetadata().find(entity);
  if (!meta) throw new Error('no entity metadata for a prepared statement');
  return meta.props
    .filter((prop) => !prop.lazy)
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

/** A database row to the entity's values: what `em.map` gives, without making a managed entity of it. */
type RowMapper = (row: Record<string, unknown>) => object;
const mappers = new Map<string, RowMapper>();

function rowMapper(em: EntityManager, entity: EntityName<object>, read: PreparedRead): RowMapper {
  let mapper = mappers.get(read.name);
  if (mapper === undefined) {
    const meta: EntityMetadata = em.getMetadata().get(entity);
    const platform = em.getPlatform();
    const driver = em.getDriver();
    const custom = meta.props.filter((prop) => prop.kind === ReferenceKind.SCALAR && prop.customType);
    // Only scalar columns: a relation would need the ORM's references, which plain rows cannot give.
    if (meta.props.some((prop) => prop.kind !== ReferenceKind.SCALAR)) {
      throw new Error(`prepared reads map scalar columns only; ${meta.className} has relations`);
    }
    mapper = (row) => {
      const data = driver.mapResult(row, meta) as Record<string, unknown>;
      for (const prop of custom) {
        const value = data[prop.name];
        if (value !== null && value !== undefined) data[prop.name] = prop.customType!.convertToJSValue(value, platform);
      }
      return data;
    };
    mappers.set(read.name, mapper);
  }
  return mapper;
}

/** The one row the statement finds, with the entity's values (as `findOne` gives them), or null. */
export async function readOne<Entity extends object>(
  orm: MikroORM,
  entity: EntityName<Entity>,
  read: PreparedRead,
  values: unknown[],
): Promise<Entity | null> {
  // The global entity manager only for its metadata, platform and pool: nothing is loaded into it.
  const em: EntityManager = orm.em;
  const pool = await em.getConnection().getNativeClient();
  const text = statementText(em, entity as EntityName<object>, read);
  const { rows } = await pool.query<Record<string, unknown>>({ name: read.name, text, values });
  return rows[0] ? (rowMapper(em, entity as EntityName<object>, read)(rows[0]) as Entity) : null;
}
