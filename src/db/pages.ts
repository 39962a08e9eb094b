// Every list endpoint's page, built one way: the feature's store gives its entity, a filter and an
// order; this answers the page's rows and the total of rows matching the filter (findAndCount), both
// read from one snapshot: two statements each under its own would let a row committed between them
// be listed but not counted (a page of one item with a total of 0).
import { type EntityName, type FilterQuery, IsolationLevel, type QueryOrderMap } from '@mikro-orm/core';
import type { EntityManager } from '@mikro-orm/postgresql';

export interface Window {
  limit: number;
  offset: number;
}

export interface Page<Row> {
  rows: Row[];
  total: number;
}

export async function pageOf<Row extends object>(
  em: EntityManager,
  entity: EntityName<Row>,
  where: FilterQuery<Row>,
  orderBy: QueryOrderMap<Row>,
  window: Window,
): Promise<Page<Row>> {
  const [rows, total] = await em.transactional(
    (tx) =>
      tx.findAndCount(entity, where as FilterQuery<NoInfer<Row>>, {
        orderBy,
        limit: window.limit,
        offset: window.offset,
      }),
    oneSnapshot(),
  );
  return { rows, total };
}

/**
 * A read-only transaction whose statements all see one snapshot. Inside a transaction already begun
 * (a savepoint), the outer one's isolation holds: callers that read more than a page open theirs
 * with these same options. A new object each time: MikroORM writes the transaction it began into
 * the options it is given.
 */
export function oneSnapshot() {
  return { isolationLevel: IsolationLevel.REPEATABLE_READ, readOnly: true } as const;
}
