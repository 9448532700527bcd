import {
  type ActorRole,
  type EventDetail,
  type EventList,
  type EventListItem,
  type EventType,
  type EventsQuery,
  isEventType,
  paginateEvents,
  pageWindow,
  REQUEST_EVENTS_MAX,
  type RequestEventItem,
  type RequestEventList,
} from '@support-desk/contracts';
import { notFound, validationError } from '@support-desk/platform';
import { fromStoredChanges, type StoredEvent } from '../store/event-model.js';
import type { EventFilter, EventQueries } from '../store/event-queries.js';

/** `a,b, c` → the distinct types; an unknown or empty entry is a 400 naming query.type. */
export function parseTypes(value: string): EventType[] {
  const types = new Set<EventType>();
  for (const raw of value.split(',')) {
    const t = raw.trim();
    if (!t) throw validationError('query.type', 'contains an empty event type');
    if (!isEventType(t)) throw validationError('query.type', `unknown event type "${t.slice(0, 60)}"`);
    types.add(t);
  }
  return [...types];
}

/** The query (already schema-validated) as a store filter; cross-field checks are 400s. */
export function toFilter(q: EventsQuery): EventFilter {
  const filter: EventFilter = {};
  if (q.type !== undefined) filter.types = parseTypes(q.type);
  if (q.resourceType) filter.resourceType = q.resourceType;
  if (q.resourceId) filter.resourceId = q.resourceId;
  if (q.userId) filter.actorId = q.userId;
  const dotted = q['actor.role'];
  if (dotted && q.actorRole && dotted !== q.actorRole) {
    throw validationError('query.actorRole', 'contradicts query.actor.role (send one of them)');
  }
  const role: ActorRole | undefined = dotted ?? q.actorRole;
  if (role) filter.actorRole = role;
  if (q.since) filter.since = new Date(q.since);
  if (q.until) filter.until = new Date(q.until);
  if (filter.since && filter.until && filter.until <= filter.since) {
    throw validationError('query.until', 'must be later than query.since');
  }
  return filter;
}

// The API documents the types, resource types, roles and sources this release knows; an event a
// newer producer filed under a new one is still served, as stored (audit keeps every event).
const known = <T extends string>(value: string) => value as T;

const summaryActor = (e: StoredEvent) => ({ id: e.actor.id, name: e.actor.name, email: e.actor.email });

export function toListItem(e: StoredEvent): EventListItem {
  const item: EventListItem = {
    id: e._id,
    type: known<EventListItem['type']>(e.type),
    resourceType: known<EventListItem['resourceType']>(e.resourceType),
    resourceId: e.resourceId,
    actor: summaryActor(e),
    timestamp: e.timestamp.toISOString(),
  };
  const changes = fromStoredChanges(e.changes);
  if (changes) item.changes = changes;
  if (e.ipAddress) item.ipAddress = e.ipAddress;
  return item;
}

export function toDetail(e: StoredEvent): EventDetail {
  return {
    ...toListItem(e),
    actor: { ...summaryActor(e), role: known<EventDetail['actor']['role']>(e.actor.role) },
    metadata: {
      userAgent: e.metadata?.userAgent ?? null,
      source: known<EventDetail['metadata']['source']>(e.metadata?.source ?? 'system'),
      requestId: e.metadata?.requestId ?? null,
      ...(e.metadata?.traceId ? { traceId: e.metadata.traceId } : {}),
    },
  };
}

export function toRequestItem(e: StoredEvent): RequestEventItem {
  const item: RequestEventItem = {
    id: e._id,
    type: known<RequestEventItem['type']>(e.type),
    timestamp: e.timestamp.toISOString(),
    actor: summaryActor(e),
  };
  const changes = fromStoredChanges(e.changes);
  if (changes) item.changes = changes;
  return item;
}

/** The events use cases: read-only, no HTTP. */
export function eventsService(store: EventQueries) {
  return {
    async list(query: EventsQuery): Promise<EventList> {
      const filter = toFilter(query);
      const window = pageWindow(query.page, query.limit);
      const { items, total } = await store.page(filter, window.skip, window.limit);
      return { events: items.map(toListItem), pagination: paginateEvents(window, total) };
    },

    async get(id: string): Promise<EventDetail> {
      const e = await store.byId(id);
      if (!e) throw notFound('Event');
      return toDetail(e);
    },

    /**
     * The history of one request, oldest first, at most REQUEST_EVENTS_MAX (the oldest); an
     * unknown request has none. A deleted request answers 404 like the request itself, except to
     * an admin: its history stays readable for audit. One read of the store (two when cut).
     */
    async ofRequest(
      requestId: string,
      reader: { admin: boolean },
    ): Promise<RequestEventList & { truncated: boolean }> {
      const items = await store.ofResource('request', requestId, REQUEST_EVENTS_MAX + 1);
      const truncated = items.length > REQUEST_EVENTS_MAX;
      // Every request has at least its request.created: a history with no event at all is of a
      // request that does not exist (or whose creation audit has not taken in yet, a moment).
      if (items.length === 0) throw notFound('Request');
      if (!reader.admin) {
        // The history read holds every event of the request unless it was cut: then ask the
        // store whether the deletion is among the rest.
        const deleted = truncated
          ? await store.hasEvent('request', requestId, 'request.deleted')
          : items.some((e) => e.type === 'request.deleted');
        if (deleted) throw notFound('Request');
      }
      return { events: items.slice(0, REQUEST_EVENTS_MAX).map(toRequestItem), truncated };
    },
  };
}

export type EventsService = ReturnType<typeof eventsService>;
