import { type Static, Type } from '@sinclair/typebox';

const DEFAULT_PAGE_LIMIT = 20;
const MAX_PAGE_LIMIT = 100;
/**
 * The highest page number accepted. Numbers such as `1e300` are integers to JSON Schema; without
 * a bound they reached the store as a skip it cannot represent (a 500). 1,000,000 pages of 100
 * is far past any list the API serves.
 */
const MAX_PAGE = 1_000_000;

export const Pagination = Type.Object(
  {
    page: Type.Integer({ minimum: 1 }),
    limit: Type.Integer({ minimum: 1, maximum: MAX_PAGE_LIMIT }),
    total: Type.Integer({ minimum: 0 }),
    pages: Type.Integer({ minimum: 0 }),
  },
  { additionalProperties: false },
);
export type Pagination = Static<typeof Pagination>;

export const EventPagination = Type.Object(
  { ...Pagination.properties, hasMore: Type.Boolean() },
  { additionalProperties: false },
);
export type EventPagination = Static<typeof EventPagination>;

/**
 * `page` and `limit` query parameters. Values below 1, non-numeric, or a page above `MAX_PAGE` are
 * refused by the schema (400); a `limit` above the maximum is accepted and clamped by `pageWindow`.
 */
export const PageQuery = {
  page: Type.Integer({
    minimum: 1,
    maximum: MAX_PAGE,
    default: 1,
    description: `Page number, from 1 (at most ${MAX_PAGE}).`,
  }),
  limit: Type.Integer({
    minimum: 1,
    default: DEFAULT_PAGE_LIMIT,
    description: `Items per page (default ${DEFAULT_PAGE_LIMIT}); values above ${MAX_PAGE_LIMIT} are clamped to ${MAX_PAGE_LIMIT}.`,
  }),
};

interface PageWindow {
  page: number;
  limit: number;
  skip: number;
}

export function pageWindow(page = 1, limit = DEFAULT_PAGE_LIMIT): PageWindow {
  const clamped = Math.min(Math.max(1, Math.trunc(limit)), MAX_PAGE_LIMIT);
  const p = Math.max(1, Math.trunc(page));
  return { page: p, limit: clamped, skip: (p - 1) * clamped };
}

export function paginate(window: PageWindow, total: number): Pagination {
  return { page: window.page, limit: window.limit, total, pages: Math.ceil(total / window.limit) };
}

export function paginateEvents(window: PageWindow, total: number): EventPagination {
  return { ...paginate(window, total), hasMore: window.skip + window.limit < total };
}
