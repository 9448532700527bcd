import { type ActorRole, type EventType, type ResourceType } from '@support-desk/contracts';
import {
  besideSeek,
  createListTotals,
  hourWalk,
  inUpdateChunks,
  type HourWalkOrder,
  type HourWalkReads,
  type HourWalkStep,
  type KeysetSeek,
  keysetQuery,
  oneOf,
  rangeWithin,
  readsByValue,
  type SortKey,
  walkBounds,
  type WalkSpan,
  totalKeyOf,
  walkWithKeptTotal,
  WALK_STEPS_PER_CALL,
} from '@support-desk/platform/store';
import { HOUR_MS } from '@support-desk/platform/core';
import type { Connection, FilterQuery } from 'mongoose';
import { eventModel, listKeys, type StoredEvent } from './event-model.js';

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

/** The lists read the log an hour or a day at a time (`hourWalk`), by the stored keys of `timestamp`. */
const WALK: HourWalkOrder = { time: 'timestamp', hour: 'hour', day: 'day' };
/** The log's span in `listBounds` (`walkBounds`). */
export const EVENTS_SPAN = 'events';

/** Every filter as top-level keys: one value each is an equality FerretDB pushes down. */
function toQuery(f: EventFilter): FilterQuery<StoredEvent> {
  const q: FilterQuery<StoredEvent> = {};
  if (f.types?.length) q.type = oneOf(f.types);
  if (f.resourceTypes?.length) q.resourceType = oneOf(f.resourceTypes);
  if (f.resourceId) q.resourceId = f.resourceId;
  if (f.actorId) q.actorId = f.actorId;
  if (f.actorRoles?.length) q.actorRole = oneOf(f.actorRoles);
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

/** What a list call reads: skip and limit, a seek (cursor mode), whether to count (page mode). */
export interface EventWindow {
  skip: number;
  limit: number;
  seek?: KeysetSeek;
  count: boolean;
}

/** Read side of the events collection. */
export function eventQueries(conn: Connection, { totalsTtlMs = 0 }: { totalsTtlMs?: number } = {}) {
  const model = eventModel(conn);
  const bounds = walkBounds(conn);
  /** Capped page-mode counts, kept per filter (`createListTotals`). */
  const totals = createListTotals(totalsTtlMs);

  /** The oldest or newest stored time (a read of every event on FerretDB: once, see walkBounds). */
  const edge = async (direction: 1 | -1) => {
    const [doc] = await model
      .find({}, { timestamp: 1 })
      .sort({ timestamp: direction })
      .limit(1)
      .lean<Pick<StoredEvent, 'timestamp'>[]>()
      .exec();
    return doc?.timestamp.getTime();
  };
  const storedSpan = () =>
    bounds.read(EVENTS_SPAN, async () => {
      const [oldest, newest] = await Promise.all([edge(1), edge(-1)]);
      return oldest === undefined || newest === undefined ? undefined : { oldest, newest };
    });

  /** The stored span narrowed to the filter's time range (undefined: nothing to read). */
  async function spanOf(filter: EventFilter): Promise<WalkSpan | undefined> {
    const known = await storedSpan();
    if (!known) return undefined;
    return {
      oldest: Math.max(known.oldest, filter.since?.getTime() ?? -Infinity),
      // The stored newest is its hour's start: the walk reads that hour to its end.
      newest: filter.until ? Math.min(known.newest + HOUR_MS - 1, filter.until.getTime() - 1) : known.newest,
    };
  }

  /** One step of the walk: the filter, the step's hour or day beside it, its time range. */
  const inStep = (q: FilterQuery<StoredEvent>, step: HourWalkStep): FilterQuery<StoredEvent> => ({
    ...q,
    ...step.where,
    timestamp: rangeWithin(q.timestamp, step.from, step.to),
  });

  return {
    /** The log's span as kept, found once by reading every event when it is missing (at start). */
    ensureListBounds: storedSpan,

    /**
     * A page of the list, newest first (by skip, or after or before a keyset position), and in
     * page mode the total matching (counted up to the cap), read an hour or a day at a time:
     * never the whole collection. `stoppedAt`: the call read its `WALK_STEPS_PER_CALL` steps
     * before the page was full and the list ended.
     */
    async list(filter: EventFilter, window: EventWindow) {
      const query = toQuery(filter);
      const { sort, condition } = keysetQuery(NEWEST_FIRST, window.seek);
      const span = await spanOf(filter);
      if (!span) return { docs: [] as StoredEvent[], total: 0 };
      const steps = hourWalk(WALK, sort.timestamp === 1, span, window.seek?.values);
      const readsOf = (q: FilterQuery<StoredEvent>): HourWalkReads<StoredEvent> => ({
        find: (step, skip, limit) =>
          model
            .find(besideSeek(inStep(q, step), condition))
            .sort(sort)
            .skip(skip)
            .limit(limit)
            .lean<StoredEvent[]>()
            .exec(),
        count: (step, limit) => model.countDocuments(inStep(q, step), { limit }).exec(),
      });
      // Several types (or else resource types): an equality each, which the local store pushes down.
      const split = (['types', 'resourceTypes'] as const).find((f) => (filter[f]?.length ?? 0) > 1);
      const field = split === 'types' ? 'type' : 'resourceType';
      const reads = split
        ? readsByValue(filter[split]!, sort, (value: string) => readsOf({ ...query, [field]: value }))
        : readsOf(query);
      return walkWithKeptTotal(totals, totalKeyOf(filter), steps, window, reads, {
        maxSteps: WALK_STEPS_PER_CALL,
      });
    },

    /**
     * Every matching event, oldest first, after a position when given, read lazily an hour or a
     * day at a time (each step one query, then a batch of `batchSize` per `getMore` as the caller
     * iterates). `close` releases the store cursor in hand (call it when done).
     */
    stream(filter: EventFilter, after: KeysetSeek | undefined, batchSize: number) {
      const query = toQuery(filter);
      const { sort, condition } = keysetQuery(OLDEST_FIRST, after);
      async function* events(): AsyncGenerator<StoredEvent> {
        const span = await spanOf(filter);
        if (!span) return;
        // An export reads to the end: its cost is what it exports, plus a lookup per quiet day
        // (after its first hour, the walk is asked for whole days).
        const steps = hourWalk(WALK, true, span, after?.values);
        for (let next = steps.next(); !next.done; next = steps.next({ full: true, want: 0 })) {
          const step = next.value;
          const cursor = model
            .find(besideSeek(inStep(query, step), condition))
            .sort(sort)
            .batchSize(batchSize)
            .lean<StoredEvent>()
            .cursor();
          try {
            for await (const doc of cursor) yield doc as StoredEvent;
          } finally {
            await cursor.close();
          }
        }
      }
      const iterator = events();
      return {
        [Symbol.asyncIterator]: () => iterator,
        close: async () => void (await iterator.return(undefined)),
      };
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

    /**
     * Events of one resource, oldest first (from a position when given), at most `max`: the
     * resource's equalities (pushed down, a GIN lookup on its id), then its events sorted.
     */
    async ofResource(resourceType: ResourceType, resourceId: string, max: number, seek?: KeysetSeek) {
      const { filter: q, sort } = withSeek({ resourceType, resourceId }, OLDEST_FIRST, seek);
      return model.find(q).sort(sort).limit(max).lean<StoredEvent[]>();
    },

    /**
     * Gives at most `limit` events stored before the list keys existed those keys (`listKeys`);
     * how many it gave. Events never change, so a plain write by `_id` is safe.
     */
    async completeListKeys(limit: number): Promise<number> {
      const incomplete = await model
        .find({ day: null }, { _id: 1, timestamp: 1, actor: 1 })
        .limit(limit)
        .lean<Pick<StoredEvent, '_id' | 'timestamp' | 'actor'>[]>()
        .exec();
      if (incomplete.length === 0) return 0;
      await inUpdateChunks(
        incomplete.map((e) => ({
          updateOne: { filter: { _id: e._id }, update: { $set: listKeys(e) } },
        })),
        (chunk) => model.bulkWrite(chunk, { ordered: false }),
      );
      return incomplete.length;
    },
  };
}

export type EventQueries = ReturnType<typeof eventQueries>;
