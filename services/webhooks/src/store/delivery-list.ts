import { idFloorAt, timeOfId } from '@support-desk/contracts';
import { type CursorKeyValue, dayKey, hourKey } from '@support-desk/platform/core';
import {
  AFTER_EVERY_ID,
  createListTotals,
  hourWalk,
  type HourWalkOrder,
  type HourWalkReads,
  type HourWalkStep,
  type KeysetSeek,
  keysetQuery,
  oneOf,
  readsByValue,
  walkBounds,
  totalKeyOf,
  walkWithKeptTotal,
  WALK_STEPS_PER_CALL,
} from '@support-desk/platform/store';
import type { DeliveryStatus } from '@support-desk/contracts';
import type { FilterQuery, Model } from 'mongoose';

/**
 * A subscription's delivery log, newest first (by id: ids sort in the time of the event they
 * deliver, or of the ping), read an hour or a day at a time (issue 31, `hourWalk`): each delivery
 * keeps the hour and day of its id's time (`idHour`, `idDay`), and a page is read with one of
 * them as a top-level equality beside the subscription and the filter's (GIN lookups on
 * FerretDB/PostgreSQL, which decode only the rows matching all of them; on MongoDB the
 * subscription's index over that hour's or day's range of ids), not by reading and sorting every
 * delivery of the subscription. The walk's span is the subscription's in `listBounds`.
 */

export interface DeliveryFilter {
  statuses?: DeliveryStatus[];
  eventTypes?: string[];
}

/** What a list call reads: skip and limit, a seek (cursor mode), whether to count (page mode). */
export interface DeliveryWindow {
  skip: number;
  limit: number;
  seek?: KeysetSeek;
  count: boolean;
}

/** What the log reads of a delivery (deliveries.ts has the whole document). */
interface ListedDelivery {
  _id: string;
  subscriptionId: string;
  status: string;
  eventType: string;
  idHour?: string;
  idDay?: string;
}

const NEWEST_FIRST = [{ field: '_id', descending: true }];
const WALK: HourWalkOrder = { time: '_id', hour: 'idHour', day: 'idDay' };

/** The list keys of a delivery (its id's hour and day), set at insert. */
export function deliveryListKeys(id: string): { idHour: string; idDay: string } {
  const ms = timeOfId(id);
  return ms === undefined ? { idHour: '', idDay: '' } : { idHour: hourKey(ms), idDay: dayKey(ms) };
}

/**
 * A position in id order as the walk reads it (its time, then the id) and back. A walk that
 * stops ends on the edge of an hour or day (`HourWalkStep['past']`): before every id made from
 * that time on (the ids' time part alone), or after every id made at that millisecond (the time
 * part and a character above every id's).
 */
function walkPosition(id: string): CursorKeyValue[] {
  const at = new Date(timeOfId(id) ?? 0);
  if (id === idFloorAt('delivery', at.getTime())) return [at, ''];
  if (id.endsWith(AFTER_EVERY_ID)) return [at, AFTER_EVERY_ID];
  return [at, id];
}
const idOfPosition = ({ keys, id }: HourWalkStep['past']) => {
  const floor = idFloorAt('delivery', (keys[0] as Date).getTime());
  return id === AFTER_EVERY_ID ? `${floor}${AFTER_EVERY_ID}` : floor;
};

export function deliveryList<D extends ListedDelivery>(
  model: Model<D>,
  conn: Parameters<typeof walkBounds>[0],
  totalsTtlMs = 0,
) {
  const bounds = walkBounds(conn);
  /** Capped page-mode counts, kept per subscription and filter (`createListTotals`). */
  const totals = createListTotals(totalsTtlMs);

  /** The first or last id's time of a subscription's deliveries (its deliveries sorted, once). */
  const edge = async (subscriptionId: string, direction: 1 | -1) => {
    const [doc] = await model
      .find({ subscriptionId }, { _id: 1 })
      .sort({ _id: direction })
      .limit(1)
      .lean<Pick<ListedDelivery, '_id'>[]>()
      .exec();
    return doc && timeOfId(doc._id);
  };
  const spanOf = (subscriptionId: string) =>
    bounds.read(subscriptionId, async () => {
      const [oldest, newest] = await Promise.all([edge(subscriptionId, 1), edge(subscriptionId, -1)]);
      return oldest === undefined || newest === undefined ? undefined : { oldest, newest };
    });

  return {
    /** Deliveries of these subscriptions are about to be stored (their spans widened first). */
    async storing(docs: Pick<ListedDelivery, '_id' | 'subscriptionId'>[]): Promise<void> {
      const times = new Map<string, number[]>();
      for (const d of docs) {
        const ms = timeOfId(d._id);
        if (ms !== undefined) times.set(d.subscriptionId, [...(times.get(d.subscriptionId) ?? []), ms]);
      }
      await Promise.all([...times].map(([subscriptionId, ms]) => bounds.stored(subscriptionId, ms)));
    },

    /**
     * A page of one subscription's deliveries, newest first (or, reading back, oldest first from
     * the position), and in page mode the total (counted up to the cap), read an hour or a day at
     * a time, at most `WALK_STEPS_PER_CALL` of them: past them `stoppedAt` says where to go on.
     */
    async page(subscriptionId: string, filter: DeliveryFilter, read: DeliveryWindow) {
      const query: FilterQuery<ListedDelivery> = { subscriptionId };
      if (filter.statuses?.length) query.status = oneOf(filter.statuses);
      if (filter.eventTypes?.length) query.eventType = oneOf(filter.eventTypes);
      const { sort, condition } = keysetQuery(NEWEST_FIRST, read.seek);
      const span = await spanOf(subscriptionId);
      if (!span) return { items: [] as D[], total: 0 };
      const seekId = read.seek?.values[0] as string | undefined;
      const steps = hourWalk(
        WALK,
        sort._id === 1,
        span,
        seekId === undefined ? undefined : walkPosition(seekId),
      );
      // The step's range of ids, the seek's bound within it (one condition on `_id`, no `$and`).
      const seek = condition?._id as { $lt?: string; $gt?: string } | undefined;
      const inStep = (
        step: HourWalkStep,
        withSeek: boolean,
        q: FilterQuery<ListedDelivery>,
      ): FilterQuery<D> => {
        const ids: Record<string, string> = {
          $gte: idFloorAt('delivery', step.from.getTime()),
          $lt: idFloorAt('delivery', step.to.getTime()),
        };
        if (withSeek && seek?.$lt !== undefined && seek.$lt < ids.$lt!) ids.$lt = seek.$lt;
        if (withSeek && seek?.$gt !== undefined) ids.$gt = seek.$gt;
        return { ...q, ...step.where, _id: ids } as FilterQuery<D>;
      };
      const readsOf = (q: FilterQuery<ListedDelivery>): HourWalkReads<D> => ({
        find: (step, skip, limit) =>
          model
            .find(inStep(step, true, q))
            .sort(sort)
            .skip(skip)
            .limit(limit)
            .lean<D[]>()
            .exec(),
        count: (step, limit) => model.countDocuments(inStep(step, false, q), { limit }).exec(),
      });
      // Several statuses (or else event types): an equality each, which the local store pushes down.
      const split = (['statuses', 'eventTypes'] as const).find((f) => (filter[f]?.length ?? 0) > 1);
      const field = split === 'statuses' ? 'status' : 'eventType';
      const reads = split
        ? readsByValue(filter[split]!, sort, (value: string) => readsOf({ ...query, [field]: value }))
        : readsOf(query);
      const totalKey = totalKeyOf({ subscriptionId, ...filter });
      const { docs, total, stoppedAt, countStopped } = await walkWithKeptTotal(
        totals,
        totalKey,
        steps,
        read,
        reads,
        {
          maxSteps: WALK_STEPS_PER_CALL,
        },
      );
      return {
        items: docs,
        total,
        ...(countStopped ? { countStopped } : {}),
        ...(stoppedAt ? { stoppedAt: { keys: [], id: idOfPosition(stoppedAt) } } : {}),
      };
    },
  };
}
