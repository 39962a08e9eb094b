// Every list endpoint's page, built one way: the feature's store gives its entity, a filter and an
// order; this answers the page's rows and the total of rows matching the filter (findAndCount).
import type { EntityName, FilterQuery, QueryOrderMap } from '@mikro-orm/core';
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
  const [rows, total] = await em.findAndCount(entity, where as FilterQuery<NoInfer<Row>>, {
    orderBy,
    limit: window.limit,
    offset: window.offset,
  });
  return { rows, total };
}
