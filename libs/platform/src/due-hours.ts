import type { FilterQuery, Model } from 'mongoose';
import { bucketStart, FULL_PASS_EVERY_MS, HOUR_MS, hourKey, TimeBucketCursor } from './time-buckets.js';

/*
 * Purges by due hour (see time-buckets.ts): each purged document also keeps the hour its due
 * time falls in (`hourKey`, a string field with an index), and a pass asks for the hours since
 * its last pass by equality, with the exact condition checked on what that returns.
 */

/** Hours a pass reads one by one; further behind (a first pass, a long pause) it reads in full. */
const MAX_HOURS = 48;
export interface PurgeBounds {
  batch: number;
  maxRounds: number;
  /**
   * Removes what depends on the documents about to be deleted (by their ids), before they go:
   * a crash between the two leaves the documents, which the next pass finds again.
   */
  beforeDelete?: (ids: unknown[]) => Promise<void>;
}

/**
 * Deletes what matches `filter` in bounded rounds (the first `batch` ids, then those of them that
 * still match), without a sort: FerretDB stops reading once it has `batch` matches, where a sort
 * would make it read and order them all. Every condition stays a top-level key, so a bucket
 * equality in `filter` reaches the backend. Returns how many were deleted.
 */
export async function deleteMatching<D>(
  model: Model<D>,
  filter: FilterQuery<D>,
  { batch, maxRounds, beforeDelete }: PurgeBounds,
): Promise<number> {
  let deleted = 0;
  for (let round = 0; round < maxRounds; round++) {
    const found = (await model.find(filter, { _id: 1 }).limit(batch).lean()) as { _id: unknown }[];
    if (found.length === 0) break;
    const ids = found.map((d) => d._id);
    await beforeDelete?.(ids);
    deleted += (await model.deleteMany({ ...filter, _id: { $in: ids } } as FilterQuery<D>)).deletedCount;
    if (found.length < batch) break;
  }
  return deleted;
}

/**
 * One collection's purge by due hour: `field` is the document's hour field, `condition(cutoff)`
 * the exact rule (what is due by the cutoff a pass is given). Remembers, in this process, the
 * hours it has read to their end; a pass that stops at its bounds leaves the rest to the next.
 */
export function purgeByDueHour<D>(
  model: Model<D>,
  field: string,
  condition: (cutoff: Date) => FilterQuery<D>,
) {
  const cursor = new TimeBucketCursor(HOUR_MS, MAX_HOURS, FULL_PASS_EVERY_MS);
  return async (cutoff: Date, bounds: PurgeBounds): Promise<number> => {
    const at = cutoff.getTime();
    const current = bucketStart(at, HOUR_MS);
    const plan = cursor.plan(at, current);
    if (plan.full) {
      const deleted = await deleteMatching(model, condition(cutoff), bounds);
      if (deleted < bounds.batch * bounds.maxRounds) cursor.fullDone(at, current - HOUR_MS);
      return deleted;
    }
    let deleted = 0;
    // The hours after the last one read to its end, up to the cutoff's own (read again next
    // time: more of it comes due). An hour left unfinished by the bounds is read again next pass.
    for (const hour of plan.buckets) {
      const filter = { [field]: hourKey(hour), ...condition(cutoff) } as FilterQuery<D>;
      const inHour = await deleteMatching(model, filter, bounds);
      deleted += inHour;
      if (inHour >= bounds.batch * bounds.maxRounds) return deleted;
      if (hour < current) cursor.bucketDone(hour);
    }
    return deleted;
  };
}
