import { type ActorRole, type EventType, LIST_COUNT_LIMIT, type ResourceType } from '@support-desk/contracts';
import { besideSeek, type KeysetSeek, keysetQuery, oneOf, type SortKey } from '@support-desk/platform/store';
import type { Connection, FilterQuery } from 'mongoose';
import { eventModel, type StoredEvent } from './event-model.js';

export interface EventFilter {
  types?: EventType[];
  resourceTypes?: ResourceType[];
  resourceId?: string;
  actorId?: string;
  actorRoles?: ActorRole[];
  /** Inclusive lower bound. */
  since?: Date;
  /** Exclusive upper bound. */
  until?: Date;
}

/** The lists' order: newest first, the id breaking ties (ids are unique, so the order is total). */
const NEWEST_FIRST: SortKey[] = [
  { field: 'timestamp', descending: true },
  { field: '_id', descending: true },
];
/** A request's history and the export: oldest first. */
const OLDEST_FIRST: SortKey[] = [
  { field: 'timestamp', descending: false },
  { field: '_id', descending: false },
];

function toQuery(f: EventFilter): FilterQuery<StoredEvent> {
  const q: FilterQuery<StoredEvent> = {};
  if (f.types?.length) q.type = oneOf(f.types);
  if (f.resourceTypes?.length) q.resourceType = oneOf(f.resourceTypes);
  if (f.resourceId) q.resourceId = f.resourceId;
  if (f.actorId) q['actor.id'] = f.actorId;
  if (f.actorRoles?.length) q['actor.role'] = oneOf(f.actorRoles);
  if (f.since || f.until) {
    q.timestamp = {};
    if (f.since) q.timestamp.$gte = f.since;
    if (f.until) q.timestamp.$lt = f.until;
  }
  return q;
}

/** The filter and the keyset condition of a seek, side by side (`besideSeek`). */
function withSeek(q: FilterQuery<StoredEvent>, order: SortKey[], seek?: KeysetSeek) {
  const { sort, condition } = keysetQuery(order, seek);
  return { filter: besideSeek(q, condition), sort };
}

/** Read side of the events collection. */
export function eventQueries(conn: Connection) {
  const model = eventModel(conn);
  return {
    /** One page, newest first, and the total matching. */
    async page(filter: EventFilter, skip: number, limit: number) {
      const q = toQuery(filter);
      const { sort } = keysetQuery(NEWEST_FIRST);
      const [items, total] = await Promise.all([
        model.find(q).sort(sort).skip(skip).limit(limit).lean<StoredEvent[]>(),
        model.countDocuments(q, { limit: LIST_COUNT_LIMIT }),
      ]);
      return { items, total };
    },

    /**
     * Up to `limit` events after (or, reading backwards, before) a position in the newest-first
     * order: a condition on values, so no skip and no count, whatever the depth.
     */
    async seek(filter: EventFilter, seek: KeysetSeek, limit: number) {
      const { filter: q, sort } = withSeek(toQuery(filter), NEWEST_FIRST, seek);
      return model.find(q).sort(sort).limit(limit).lean<StoredEvent[]>();
    },

    /**
     * Every matching event, oldest first, after a position when given, read lazily: one query,
     * then a batch of `batchSize` per `getMore` as the caller iterates (close it when done).
     */
    stream(filter: EventFilter, after: KeysetSeek | undefined, batchSize: number) {
      const { filter: q, sort } = withSeek(toQuery(filter), OLDEST_FIRST, after);
      return model.find(q).sort(sort).batchSize(batchSize).lean<StoredEvent>().cursor();
    },

    async byId(id: string) {
      return model.findById(id).lean<StoredEvent>();
    },

    /** The newest event of the resource among `types` (e.g. its deletion or restoration), if any. */
    async latestOf(resourceType: ResourceType, resourceId: string, types: EventType[]) {
      return model
        .findOne({ resourceType, resourceId, type: { $in: types } })
        .sort({ timestamp: -1, _id: -1 })
        .lean<StoredEvent>();
    },

    /** Events of one resource, oldest first (from a position when given), at most `max`. */
    async ofResource(resourceType: ResourceType, resourceId: string, max: number, seek?: KeysetSeek) {
      const { filter: q, sort } = withSeek({ resourceType, resourceId }, OLDEST_FIRST, seek);
      return model.find(q).sort(sort).limit(max).lean<StoredEvent[]>();
    },
  };
}

export type EventQueries = ReturnType<typeof eventQueries>;
