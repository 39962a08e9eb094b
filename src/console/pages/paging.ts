// Paging and filters of the admin pages' lists (webhooks, events, keys, audit log): the page and
// filters go to the API's list as they are, and the API's pagination comes back as Newer/Older links.
import { withQuery } from '../api.ts';

export interface Pagination {
  page: number;
  limit: number;
  offset: number;
  total: number;
  pages: number;
  has_more: boolean;
}

export interface ApiList<T> {
  data: { items: T[]; pagination: Pagination };
}

/** A page number from the query: digits only (anything else is the first page). */
export function pageParam(value: string | undefined): string | undefined {
  return value && /^[1-9][0-9]{0,6}$/.test(value) ? value : undefined;
}

/** The Newer/Older links of a page of `path` with these filters. */
export function pagerOf(path: string, filters: Record<string, string | undefined>, pagination: Pagination) {
  const page = pagination.page;
  return {
    page,
    pages: pagination.pages,
    total: pagination.total,
    newer: page > 1 ? withQuery(path, { ...filters, page: page - 1 }) : undefined,
    older: pagination.has_more ? withQuery(path, { ...filters, page: page + 1 }) : undefined,
  };
}
