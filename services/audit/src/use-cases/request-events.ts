import {
  type CursorPagination,
  type EventType,
  pageWindow,
  REQUEST_EVENTS_MAX,
  type RequestEventItem,
  type RequestEventsQuery,
} from '@support-desk/contracts';
import {
  type CursorScope,
  decodeCursor,
  encodeCursor,
  type ListWindow,
  listPage,
  notFound,
  seekOf,
} from '@support-desk/platform/core';
import type { StoredEvent } from '../store/event-model.js';
import type { EventQueries } from '../store/event-queries.js';
import { positionOf, toRequestItem } from './events.js';

/** What a request-history cursor is valid for: the oldest-first history of that one request. */
const historyScope = (requestId: string): CursorScope => ({
  sort: 'timestamp',
  kinds: ['date'],
  filters: { resourceType: 'request', resourceId: requestId },
});

export interface RequestHistory {
  events: RequestEventItem[];
  /** Cursor mode only (`cursor` or `limit` given). */
  pagination?: CursorPagination;
  /** Spec mode: the history was cut at REQUEST_EVENTS_MAX; `nextCursor` continues after it. */
  truncated: boolean;
  nextCursor: string | null;
}

/** The events that move a request into or out of the trash, or purge it. */
const TRASH_EVENTS: EventType[] = ['request.deleted', 'request.restored', 'request.purged'];
/** Deleted (or purged) as of the newest of those events; restored or never deleted otherwise. */
const isDeleted = (latest: StoredEvent | null | undefined) =>
  latest != null && latest.type !== 'request.restored';

/**
 * The history of one request, oldest first; an unknown request is a 404, not an empty list. Without `cursor` and
 * `limit`, the spec's answer: every event up to REQUEST_EVENTS_MAX (the oldest), no pagination
 * (a cursor after the last one when cut). With either: one keyset page of `limit` (default 20,
 * at most 100) and a cursor `pagination`. A deleted request answers 404 like the request itself,
 * except to an admin: its history stays readable for audit (a purged one's too); a restored one is
 * readable again (the newest of its deletions, restorations and purge decides). One read of the
 * store, two when the page is not the whole history (non-admins only).
 */
export function requestHistory(store: EventQueries) {
  return async function ofRequest(
    requestId: string,
    reader: { admin: boolean },
    query: RequestEventsQuery = {},
  ): Promise<RequestHistory> {
    const scope = historyScope(requestId);
    const paged = query.cursor !== undefined || query.limit !== undefined;
    const position = query.cursor === undefined ? undefined : decodeCursor(query.cursor, scope);
    const limit = paged ? pageWindow(1, query.limit).limit : REQUEST_EVENTS_MAX;
    const window: ListWindow | undefined = position && { mode: 'cursor', limit, position };
    const docs = await store.ofResource('request', requestId, limit + 1, window && seekOf(window));
    const extra = docs.length > limit;
    // Every request has at least its request.created: a history with no event at all is of a
    // request that does not exist (or whose creation audit has not taken in yet, a moment).
    if (!position && docs.length === 0) throw notFound('Request');
    if (!reader.admin) {
      const whole = !position && !extra;
      const latest = whole
        ? docs.filter((e) => TRASH_EVENTS.includes(e.type as EventType)).at(-1)
        : await store.latestOf('request', requestId, TRASH_EVENTS);
      if (isDeleted(latest)) throw notFound('Request');
    }
    if (window) {
      const { items, pagination } = listPage(docs, window, scope, positionOf);
      return {
        events: items.map(toRequestItem),
        pagination: pagination as CursorPagination,
        truncated: false,
        nextCursor: null,
      };
    }
    const page = docs.slice(0, limit);
    const last = page.at(-1);
    const nextCursor = extra && last ? encodeCursor(scope, { ...positionOf(last), direction: 'next' }) : null;
    const events = page.map(toRequestItem);
    if (!paged) return { events, truncated: extra, nextCursor };
    // The first page of cursor mode: nothing before it.
    return {
      events,
      pagination: { limit, nextCursor, prevCursor: null, hasMore: extra },
      truncated: false,
      nextCursor,
    };
  };
}

export type RequestHistoryReader = ReturnType<typeof requestHistory>;
