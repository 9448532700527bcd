import type { ActorRole, EventType, ResourceType } from '@support-desk/contracts';
import type { Connection, FilterQuery } from 'mongoose';
import { eventModel, type StoredEvent } from './event-model.js';

export interface EventFilter {
  types?: EventType[];
  resourceType?: ResourceType;
  resourceId?: string;
  actorId?: string;
  actorRole?: ActorRole;
  /** Inclusive lower bound. */
  since?: Date;
  /** Exclusive upper bound. */
  until?: Date;
}

const NEWEST_FIRST = { timestamp: -1, _id: -1 } as const;
const OLDEST_FIRST = { timestamp: 1, _id: 1 } as const;

function toQuery(f: EventFilter): FilterQuery<StoredEvent> {
  const q: FilterQuery<StoredEvent> = {};
  if (f.types?.length === 1) q.type = f.types[0];
  else if (f.types && f.types.length > 1) q.type = { $in: f.types };
  if (f.resourceType) q.resourceType = f.resourceType;
  if (f.resourceId) q.resourceId = f.resourceId;
  if (f.actorId) q['actor.id'] = f.actorId;
  if (f.actorRole) q['actor.role'] = f.actorRole;
  if (f.since || f.until) {
    q.timestamp = {};
    if (f.since) q.timestamp.$gte = f.since;
    if (f.until) q.timestamp.$lt = f.until;
  }
  return q;
}

/** Read side of the events collection. */
export function eventQueries(conn: Connection) {
  const model = eventModel(conn);
  return {
    /** One page, newest first, and the total matching. */
    async page(filter: EventFilter, skip: number, limit: number) {
      const q = toQuery(filter);
      const [items, total] = await Promise.all([
        model.find(q).sort(NEWEST_FIRST).skip(skip).limit(limit).lean<StoredEvent[]>(),
        model.countDocuments(q),
      ]);
      return { items, total };
    },

    async byId(id: string) {
      return model.findById(id).lean<StoredEvent>();
    },

    /** Whether an event of this type was recorded for the resource (e.g. its deletion). */
    async hasEvent(resourceType: ResourceType, resourceId: string, type: EventType): Promise<boolean> {
      return (await model.exists({ resourceType, resourceId, type })) !== null;
    },

    /** Events of one resource, oldest first, at most `max`. */
    async ofResource(resourceType: ResourceType, resourceId: string, max: number) {
      return model.find({ resourceType, resourceId }).sort(OLDEST_FIRST).limit(max).lean<StoredEvent[]>();
    },
  };
}

export type EventQueries = ReturnType<typeof eventQueries>;
