// Pagination of the resource-style lists (virtual accounts, deliveries, events): `page` (default
// 1) or `offset` (wins when both are given), `limit` (default 20, at most 100), answered as
// `{page, limit, offset, total, pages, has_more}`. Wrapper payloads (`filters`, `params`) are
// refused: parameters are sent directly in the query string. No list is read past an offset of
// 100,000 (decisions §16): a deeper `offset`, or a `page` whose window starts deeper, → 400 naming
// it, so that nobody makes PostgreSQL step over millions of rows per request; filters narrow a list.
import type { FastifyRequest } from 'fastify';
import { z } from 'zod';
import { ApiError } from './errors.ts';

/** A bound on the page number itself; the window it opens is bounded by MAX_OFFSET below. */
export const MAX_PAGE = 1_000_000;
/** The deepest a list is read: rows skipped before the window, whether given as offset or page. */
export const MAX_OFFSET = 100_000;

/** The offset of `page` (1-based) at `limit`; 400 naming `page` when it is past MAX_OFFSET. */
export function pageOffset(page: number, limit: number): number {
  const offset = (page - 1) * limit;
  if (offset > MAX_OFFSET) {
    throw ApiError.validation([
      {
        path: 'page',
        message: `must open a window within the first ${MAX_OFFSET} rows: (page - 1) × limit is at most ${MAX_OFFSET}; narrow the list with its filters`,
      },
    ]);
  }
  return offset;
}

/** A whole number from the query string, within [min, max], each failure named in words. */
export function queryWholeNumber(min: number, max: number) {
  return z.coerce
    .number({ error: 'must be a whole number' })
    .int('must be a whole number')
    .min(min, `must be ${min} or more`)
    .max(max, `must be at most ${max}`);
}

export const PaginationQuery = z.object({
  page: queryWholeNumber(1, MAX_PAGE).optional(),
  limit: queryWholeNumber(1, 100).default(20),
  offset: queryWholeNumber(0, MAX_OFFSET).optional(),
  filters: z
    .never({ error: 'wrapper payloads are not accepted: send each filter as its own query parameter' })
    .optional(),
  params: z
    .never({ error: 'wrapper payloads are not accepted: send each parameter as its own query parameter' })
    .optional(),
});

import type { Window } from '../db/pages.ts';

export type { Window };

export function windowOf(query: { page?: number | undefined; limit: number; offset?: number | undefined }): Window {
  return { limit: query.limit, offset: query.offset ?? pageOffset(query.page ?? 1, query.limit) };
}

export function paginationView(window: Window, total: number) {
  return {
    page: Math.floor(window.offset / window.limit) + 1,
    limit: window.limit,
    offset: window.offset,
    total,
    pages: Math.ceil(total / window.limit),
    has_more: window.offset + window.limit < total,
  };
}

export const PaginationSchema = z.object({
  page: z.number(),
  limit: z.number(),
  offset: z.number(),
  total: z.number(),
  pages: z.number(),
  has_more: z.boolean(),
});

/** A page of a list: its items and where the page stands. */
export const listOf = <Item extends z.ZodType>(item: Item) =>
  z.object({ items: z.array(item), pagination: PaginationSchema });

/**
 * preValidation hook: refuses `filters`/`params` wrappers in any spelling the query parser keeps
 * as a key (`filters=…`, `filters[status]=…`, `params.page=…`).
 */
export function refuseWrapperPayloads(request: FastifyRequest, _reply: unknown, done: (error?: Error) => void): void {
  const keys = Object.keys((request.query ?? {}) as Record<string, unknown>).filter((key) =>
    /^(filters|params)(\[|\.|$)/.test(key),
  );
  if (keys.length === 0) return done();
  done(
    ApiError.validation(
      keys.map((key) => ({
        path: key,
        message: 'wrapper payloads are not accepted: send each parameter directly in the query string',
      })),
    ),
  );
}
