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

/** The page number a query asks for: 1 for anything but digits. */
export function pageNumber(value: string | undefined): number {
  return Number(pageParam(value) ?? 1);
}

/**
 * Every list's Newer/Older links: `path` with the page's other parameters and `param` (the page
 * number's name: `page`, or `auth_page`… where a page has two lists) one less or one more.
 */
export function pageLinks(
  path: string,
  query: Record<string, string | number | undefined>,
  page: number,
  hasMore: boolean,
  param = 'page',
): { newer: string | undefined; older: string | undefined } {
  return {
    newer: page > 1 ? withQuery(path, { ...query, [param]: page - 1 }) : undefined,
    older: hasMore ? withQuery(path, { ...query, [param]: page + 1 }) : undefined,
  };
}

/** The Newer/Older links of a page of `path` with these filters. */
export function pagerOf(path: string, filters: Record<string, string | undefined>, pagination: Pagination) {
  return {
    page: pagination.page,
    pages: pagination.pages,
    total: pagination.total,
    ...pageLinks(path, filters, pagination.page, pagination.has_more),
  };
}
