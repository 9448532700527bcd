import type { FilterQuery, Model } from 'mongoose';

/**
 * Time as equality, for background passes. FerretDB v1 pushes only equalities down to its
 * backend (on SQLite only `{_id}`; on PostgreSQL top-level scalars), never a range such as
 * `{expiresAt: {$lte: now}}`, so a pass asking for "what is due" decoded every document each
 * time. So each purged document also keeps the hour its due time falls in (`hourKey`, a string
 * field with an index), and a pass asks for the hours since its last pass by equality, with the
 * exact condition checked on what that returns: on PostgreSQL only those hours' documents are
 * read, on MongoDB an index answers, and a pass within an hour already read reads only that hour.
 */
export const HOUR_MS = 3_600_000;

/** The hour (UTC) `at` falls in, as stored in a bucket field: `2030-01-01T09`. */
export const hourKey = (at: Date | number): string => new Date(at).toISOString().slice(0, 13);

const hourStart = (ms: number) => ms - (((ms % HOUR_MS) + HOUR_MS) % HOUR_MS);

/** Hours a pass reads one by one; further behind (a first pass, a long pause) it reads in full. */
const MAX_HOURS = 48;
/**
 * How often a pass reads in full anyway (the exact condition without buckets): it catches the
 * documents no hour covers — written before the buckets existed, or due in an hour already read.
 */
export const FULL_PASS_EVERY_MS = 24 * HOUR_MS;

export interface PurgeBounds {
  batch: number;
  maxRounds: number;
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
  { batch, maxRounds }: PurgeBounds,
): Promise<number> {
  let deleted = 0;
  for (let round = 0; round < maxRounds; round++) {
    const found = (await model.find(filter, { _id: 1 }).limit(batch).lean()) as { _id: unknown }[];
    if (found.length === 0) break;
    const ids = found.map((d) => d._id);
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
  let sweptThrough: number | undefined;
  let fullAt = Number.NEGATIVE_INFINITY;
  return async (cutoff: Date, bounds: PurgeBounds): Promise<number> => {
    const at = cutoff.getTime();
    const current = hourStart(at);
    const behind = sweptThrough === undefined ? Infinity : (current - sweptThrough) / HOUR_MS;
    if (behind > MAX_HOURS || at - fullAt >= FULL_PASS_EVERY_MS) {
      const deleted = await deleteMatching(model, condition(cutoff), bounds);
      if (deleted < bounds.batch * bounds.maxRounds) {
        fullAt = at;
        sweptThrough = current - HOUR_MS;
      }
      return deleted;
    }
    let deleted = 0;
    // The hours after the last one read to its end, up to the cutoff's own (read again next
    // time: more of it comes due). An hour left unfinished by the bounds is read again next pass.
    for (let hour = sweptThrough! + HOUR_MS; hour <= current; hour += HOUR_MS) {
      const filter = { [field]: hourKey(hour), ...condition(cutoff) } as FilterQuery<D>;
      const inHour = await deleteMatching(model, filter, bounds);
      deleted += inHour;
      if (inHour >= bounds.batch * bounds.maxRounds) return deleted;
      if (hour < current) sweptThrough = hour;
    }
    return deleted;
  };
}
