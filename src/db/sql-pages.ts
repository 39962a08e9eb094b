// (Being replaced by pages.ts) Every list query, built one way: a filter (conditions joined by `and`, with their
// parameters; the tenant's id always first) and one statement that returns the page's rows with
// the total beside them (`count(*) over ()`). Only a page past the end, which has no row to carry
// the total, costs a second, counting statement.
import type { EntityManager } from '@mikro-orm/postgresql';

export interface Window {
  limit: number;
  offset: number;
}

/** SQL conditions joined by `and`, and their parameters in order. Column names are the caller's constants. */
export class Filter {
  private readonly conditions: string[] = [];
  private readonly values: unknown[] = [];

  constructor(condition: string, ...values: unknown[]) {
    this.where(condition, ...values);
  }

  /** Adds a condition with its `?` parameters. */
  where(condition: string, ...values: unknown[]): this {
    this.conditions.push(condition);
    this.values.push(...values);
    return this;
  }

  /** Adds `column = ?` when the value is given. */
  equals(column: string, value: unknown): this {
    return value === undefined ? this : this.where(`${column} = ?`, value);
  }

  get sql(): string {
    return this.conditions.join(' and ');
  }

  get params(): unknown[] {
    return [...this.values];
  }
}

/**
 * One page: `select <columns> from <from> where <filter> order by <orderBy> limit offset`, and the
 * total of rows matching the filter.
 */
export async function pageOf<Row extends object>(
  em: EntityManager,
  query: { columns?: string; from: string; filter: Filter; orderBy: string; window: Window },
): Promise<{ rows: Row[]; total: number }> {
  const columns = query.columns ?? '*';
  const found = await em.execute<(Row & { page_total: string })[]>(
    `select ${columns}, count(*) over () as page_total from ${query.from} where ${query.filter.sql}
      order by ${query.orderBy} limit ? offset ?`,
    [...query.filter.params, query.window.limit, query.window.offset],
  );
  if (found.length > 0) {
    const total = Number(found[0]!.page_total);
    return { rows: found.map(({ page_total: _total, ...row }) => row as unknown as Row), total };
  }
  if (query.window.offset === 0) return { rows: [], total: 0 };
  const [count] = await em.execute<{ n: string }[]>(
    `select count(*)::text as n from ${query.from} where ${query.filter.sql}`,
    query.filter.params,
  );
  return { rows: [], total: Number(count!.n) };
}
