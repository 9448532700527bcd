import {
  type CursorPagination,
  LIST_TOTAL_CAP,
  type PagePagination,
  paginate,
  pageWindow,
} from '@support-desk/contracts';
import {
  type CursorKeyKind,
  type CursorKeyValue,
  type CursorPosition,
  type CursorScope,
  decodeCursor,
  encodeCursor,
  linkHeader,
  type PageLink,
} from './cursor.js';
import { AppError, validationError } from './errors.js';
import type { ListSort } from './keyset.js';

/**
 * The use-case side of a list that pages both ways (issue 17): which mode a call is in, the
 * store window it needs, and the `pagination` and `Link` header of its answer.
 */

/**
 * A comma-separated filter (`status=open,pending`) as its distinct values, in the order of
 * `allowed` (so equal sets give equal cursors); an unknown or empty value is a 400 naming the
 * allowed ones.
 */
export function parseEnumList<T extends string>(
  field: string,
  raw: string | undefined,
  allowed: readonly T[],
): T[] | undefined {
  if (raw === undefined) return undefined;
  const values = raw.split(',').map((v) => v.trim());
  const unknown = values.filter((v) => !(allowed as readonly string[]).includes(v));
  if (unknown.length > 0) {
    const shown = unknown.map((v) => (v === '' ? '(empty)' : `'${v.slice(0, 40)}'`)).join(', ');
    throw validationError(
      field,
      `has unknown value ${shown}: each value must be one of ${allowed.join(', ')}`,
    );
  }
  return allowed.filter((v) => values.includes(v));
}

/**
 * The search text of a list: `q`, or `search`, its alias (`SearchQuery` in the contracts). Both
 * with different values is a 400 naming `query.search`; the same value twice is one search.
 */
export function searchText(query: { q?: string; search?: string }): string | undefined {
  if (query.q !== undefined && query.search !== undefined && query.q !== query.search)
    throw validationError('query.search', 'contradicts query.q (it is its alias: send one of them)');
  return query.q ?? query.search;
}

/** `-field` → the field and descending. */
export function parseSort(sort: string): { field: string; descending: boolean } {
  return sort.startsWith('-')
    ? { field: sort.slice(1), descending: true }
    : { field: sort, descending: false };
}

/** What a list's query says about paging. */
export interface PagingQuery {
  page?: number;
  limit?: number;
  cursor?: string;
}

/** The window a store reads: page mode (skip and count) or cursor mode (seek, no count). */
export type ListWindow =
  | { mode: 'page'; page: number; limit: number; skip: number }
  | { mode: 'cursor'; limit: number; position: CursorPosition };

/** The call's window; `page` with `cursor` and a bad cursor are 400s. */
export function listWindow(query: PagingQuery, scope: CursorScope): ListWindow {
  if (query.cursor !== undefined && query.page !== undefined) {
    const message = 'cannot be combined with cursor: a cursor already names the position (omit page)';
    throw new AppError('VALIDATION_ERROR', `query.page ${message}`, {}, [{ field: 'query.page', message }]);
  }
  const window = pageWindow(query.page, query.limit);
  if (query.cursor === undefined) return { mode: 'page', ...window };
  return { mode: 'cursor', limit: window.limit, position: decodeCursor(query.cursor, scope) };
}

/** How many items the store reads: one more than the page in cursor mode, to know `hasMore`. */
export const readLimit = (window: ListWindow) => (window.mode === 'cursor' ? window.limit + 1 : window.limit);

/** The seek a store applies in cursor mode (undefined in page mode). */
export const seekOf = (window: ListWindow) =>
  window.mode === 'cursor'
    ? { values: [...window.position.keys, window.position.id], direction: window.position.direction }
    : undefined;

/** A list item's position: its sort key values (without the id) and its id. */
export type KeysOf<D> = (doc: D) => { keys: CursorKeyValue[]; id: string };

/** What a store's read says beside its documents (`walkHours`' result has these fields). */
export interface ReadOutcome {
  /** The page mode's count. */
  total?: number;
  /** Where the read stopped at its budget before the page was full. */
  stoppedAt?: { keys: CursorKeyValue[]; id: string };
  /** The count stopped at its own budget before the list's end: `total` is a lower bound. */
  countStopped?: boolean;
}

/**
 * The page's items in list order and its `pagination`. `docs` are what the store read with
 * `readLimit` and `seekOf` (in reverse order for a `prev` cursor); `read` what the read says
 * beside them (a `walkHours` result can be passed as it is).
 */
export function listPage<D>(
  docs: D[],
  window: ListWindow,
  scope: CursorScope,
  keysOf: KeysOf<D>,
  { total = 0, stoppedAt, countStopped = false }: ReadOutcome = {},
): { items: D[]; pagination: PagePagination | CursorPagination } {
  const cursorAt = (doc: D | undefined, direction: 'next' | 'prev') =>
    doc === undefined ? null : encodeCursor(scope, { ...keysOf(doc), direction });
  // A store that stopped reading early (`walkHours`' budget) before the page was full: the
  // answer goes on from where it stopped, not from its last item.
  const stopped = (direction: 'next' | 'prev') =>
    stoppedAt ? encodeCursor(scope, { ...stoppedAt, direction }) : null;
  if (window.mode === 'page') {
    // Past a capped count (`totalCapped`) a full page may have more after it.
    const full = docs.length === window.limit;
    const lowerBound = total > LIST_TOTAL_CAP || countStopped;
    const more = window.skip + docs.length < total || (lowerBound && full);
    const pagination = {
      ...paginate(window, total),
      ...(countStopped ? { totalCapped: true as const } : {}),
    };
    if (stoppedAt)
      // The count stopped with the read: what it says is a lower bound, as past the cap.
      return {
        items: docs,
        pagination: {
          ...pagination,
          totalCapped: true,
          nextCursor: full ? cursorAt(docs.at(-1), 'next') : stopped('next'),
        },
      };
    return {
      items: docs,
      pagination: { ...pagination, nextCursor: more ? cursorAt(docs.at(-1), 'next') : null },
    };
  }
  const extra = docs.length > window.limit;
  const page = docs.slice(0, window.limit);
  if (window.position.direction === 'prev') {
    page.reverse();
    // Reading backwards: the extra item says there is more before; after, there is the item
    // the cursor was issued from.
    return {
      items: page,
      pagination: {
        limit: window.limit,
        nextCursor: cursorAt(page.at(-1), 'next'),
        prevCursor: extra ? cursorAt(page[0], 'prev') : stopped('prev'),
        hasMore: page.length > 0,
      },
    };
  }
  return {
    items: page,
    pagination: {
      limit: window.limit,
      nextCursor: extra ? cursorAt(page.at(-1), 'next') : stopped('next'),
      // Reached with a cursor, so something came before (cheap: no query to prove it).
      prevCursor: cursorAt(page[0], 'prev'),
      hasMore: extra || stoppedAt !== undefined,
    },
  };
}

/**
 * The `Link` header of a list answer (`request.url` is the call's own URL): `next`/`prev` by
 * page number in page mode, by cursor in cursor mode; undefined when there is neither.
 */
export function paginationLinks(
  url: string,
  pagination: PagePagination | CursorPagination,
): string | undefined {
  const links: PageLink[] = [];
  if ('page' in pagination) {
    if (pagination.page < pagination.pages) links.push({ rel: 'next', set: { page: pagination.page + 1 } });
    if (pagination.page > 1 && pagination.page <= pagination.pages + 1)
      links.push({ rel: 'prev', set: { page: pagination.page - 1 } });
  } else {
    if (pagination.hasMore && pagination.nextCursor)
      links.push({ rel: 'next', set: { cursor: pagination.nextCursor, page: undefined } });
    if (pagination.prevCursor)
      links.push({ rel: 'prev', set: { cursor: pagination.prevCursor, page: undefined } });
  }
  return linkHeader(url, links);
}

/** Sets the `Link` header of a list answer on the reply and hands the answer back. */
export function withPageLinks<T extends { pagination: PagePagination | CursorPagination }>(
  request: { url: string },
  reply: { header(name: string, value: string): unknown },
  answer: T,
): T {
  const links = paginationLinks(request.url, answer.pagination);
  if (links) reply.header('link', links);
  return answer;
}

/**
 * Everything a list call decides before reading: its order (`sort` or the default), the scope
 * its cursors are valid for, its window (page or cursor mode) and what the store reads
 * (`read`: skip, limit, seek, whether to count).
 */
export function planList<F extends string>(
  query: PagingQuery & { sort?: string },
  defaultSort: string,
  kinds: (sort: ListSort<F>) => CursorKeyKind[],
  filters: Record<string, unknown>,
) {
  const spec = query.sort ?? defaultSort;
  const sort = parseSort(spec) as ListSort<F>;
  const scope: CursorScope = { sort: spec, kinds: kinds(sort), filters };
  const window = listWindow(query, scope);
  const read = {
    skip: window.mode === 'page' ? window.skip : 0,
    limit: readLimit(window),
    seek: seekOf(window),
    count: window.mode === 'page',
  };
  return { sort, scope, window, read };
}
