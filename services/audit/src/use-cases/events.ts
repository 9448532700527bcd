import {
  ACTOR_ROLES,
  type CursorPagination,
  type PagePagination,
  type EventDetail,
  type EventList,
  type EventListItem,
  type EventType,
  type EventsQuery,
  isEventType,
  paginateEvents,
  RESOURCE_TYPES,
  type RequestEventItem,
} from '@support-desk/contracts';
import {
  backfillAtStart,
  type CursorScope,
  listPage,
  listWindow,
  type Logger,
  notFound,
  parseEnumList,
  type PresentableEvent,
  toEventDetail,
  toEventListItem,
  toRequestEventItem,
  readLimit,
  seekOf,
  validationError,
} from '@support-desk/platform/core';
import { fromStoredChanges, type StoredEvent } from '../store/event-model.js';
import type { EventFilter, EventQueries } from '../store/event-queries.js';

/** `a,b, c` → the distinct types, sorted; an unknown or empty entry is a 400 naming query.type. */
function parseTypes(value: string): EventType[] {
  const types = new Set<EventType>();
  for (const raw of value.split(',')) {
    const t = raw.trim();
    if (!t) throw validationError('query.type', 'contains an empty event type');
    if (!isEventType(t)) throw validationError('query.type', `unknown event type "${t.slice(0, 60)}"`);
    types.add(t);
  }
  // Sorted, so the same set gives the same cursor fingerprint whatever order it was sent in.
  return [...types].sort();
}

/** The query (already schema-validated) as a store filter; cross-field checks are 400s. */
export function toFilter(q: Omit<EventsQuery, 'page' | 'limit' | 'cursor'>): EventFilter {
  const filter: EventFilter = {};
  if (q.type !== undefined) filter.types = parseTypes(q.type);
  const resourceTypes = parseEnumList('query.resourceType', q.resourceType, RESOURCE_TYPES);
  if (resourceTypes) filter.resourceTypes = resourceTypes;
  if (q.resourceId) filter.resourceId = q.resourceId;
  if (q.userId) filter.actorId = q.userId;
  const dotted = parseEnumList('query.actor.role', q['actor.role'], ACTOR_ROLES);
  const alias = parseEnumList('query.actorRole', q.actorRole, ACTOR_ROLES);
  if (dotted && alias && dotted.join() !== alias.join()) {
    throw validationError('query.actorRole', 'contradicts query.actor.role (send one of them)');
  }
  const roles = dotted ?? alias;
  if (roles) filter.actorRoles = roles;
  if (q.since) filter.since = new Date(q.since);
  if (q.until) filter.until = new Date(q.until);
  if (filter.since && filter.until && filter.until <= filter.since) {
    throw validationError('query.until', 'must be later than query.since');
  }
  return filter;
}

/** The stored event in the shape the shared presenter reads (`_id` → `id`, changes as an object). */
const presentable = (e: StoredEvent): PresentableEvent => ({
  ...e,
  id: e._id,
  changes: fromStoredChanges(e.changes),
});

export const toListItem = (e: StoredEvent): EventListItem => toEventListItem(presentable(e));
const toDetail = (e: StoredEvent): EventDetail => toEventDetail(presentable(e));
export const toRequestItem = (e: StoredEvent): RequestEventItem => toRequestEventItem(presentable(e));

/** An event's place in either order: its timestamp, then its id. */
export const positionOf = (e: StoredEvent) => ({ keys: [e.timestamp], id: e._id });

/** What a `GET /v1/events` cursor is valid for: the newest-first order of these filters. */
const listScope = (filter: EventFilter): CursorScope => ({
  sort: '-timestamp',
  kinds: ['date'],
  filters: { ...filter },
});

/**
 * At start, before ingestion: the log's span for the lists (found once by reading every event
 * when it was never kept), then the list keys of events stored before they existed (without them
 * no list finds the event).
 */
export async function completeStoredEvents(store: EventQueries, logger: Logger): Promise<void> {
  let spanKnown = false;
  await backfillAtStart(logger, 'stored events given their list keys', async (limit) => {
    // The span before any key is written: found from the events as they are.
    if (!spanKnown) {
      await store.ensureListBounds();
      spanKnown = true;
    }
    return store.completeListKeys(limit);
  });
}

/** The events use cases: read-only, no HTTP. */
export function eventsService(store: EventQueries) {
  return {
    /**
     * Page mode (skip and count, as the spec says, plus `nextCursor`) or cursor mode (a keyset
     * seek of `limit + 1` events, no count: no depth limit, stable under inserts).
     */
    async list(query: EventsQuery): Promise<EventList> {
      const filter = toFilter(query);
      const scope = listScope(filter);
      const window = listWindow(query, scope);
      const found = await store.list(filter, {
        skip: window.mode === 'page' ? window.skip : 0,
        limit: readLimit(window),
        seek: seekOf(window),
        count: window.mode === 'page',
      });
      const { items, pagination } = listPage(found.docs, window, scope, positionOf, found);
      if (window.mode === 'page') {
        // A call that stopped at its step budget, or whose count did, may have more after it
        // (its count is a lower bound).
        const hasMore =
          paginateEvents(window, found.total).hasMore ||
          found.stoppedAt !== undefined ||
          found.countStopped === true;
        return { events: items.map(toListItem), pagination: { ...(pagination as PagePagination), hasMore } };
      }
      return { events: items.map(toListItem), pagination: pagination as CursorPagination };
    },

    async get(id: string): Promise<EventDetail> {
      const e = await store.byId(id);
      if (!e) throw notFound('Event');
      return toDetail(e);
    },
  };
}

export type EventsService = ReturnType<typeof eventsService>;
