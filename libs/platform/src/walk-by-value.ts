import type { HourWalkReads } from './hour-walk.js';

/**
 * A list order (`{createdAt: -1, _id: -1}`) as a comparison of two documents, as the store sorts
 * them (dates by time, numbers, strings by code unit: the ids and keys the lists sort are ASCII).
 */
function listOrder<D>(sort: Record<string, 1 | -1>): (a: D, b: D) => number {
  const keys = Object.entries(sort);
  const valueOf = (doc: D, field: string) => {
    const v = (doc as Record<string, unknown>)[field];
    return v instanceof Date ? v.getTime() : (v as number | string | undefined);
  };
  return (a, b) => {
    for (const [field, direction] of keys) {
      const [x, y] = [valueOf(a, field), valueOf(b, field)];
      if (x === y || x === undefined || y === undefined) continue;
      return (x < y ? -1 : 1) * direction;
    }
    return 0;
  };
}

/**
 * A walk's reads (`walkHours`) with a several-value filter on one scalar field
 * (`status=open,pending`) split into one read per value, each that value's equality. FerretDB on
 * PostgreSQL pushes an equality down (a GIN lookup beside the hour's or day's) but not an `$in`:
 * with the `$in` a step decodes every document of its hour or day (a busy day: all of them), with
 * the equalities only their matches. Each value's find reads the window from the step's start,
 * the finds are merged in list order and the window cut from them; the counts add up (a scalar
 * field holds one value: the values' matches are disjoint). On MongoDB each is an index range.
 */
export function readsByValue<D, V>(
  values: readonly V[],
  sort: Record<string, 1 | -1>,
  readsOf: (value: V) => HourWalkReads<D>,
): HourWalkReads<D> {
  // A value given twice is read once (its matches would count twice).
  const parts = [...new Set(values)].map(readsOf);
  const before = listOrder<D>(sort);
  return {
    async find(step, skip, limit) {
      const found = await Promise.all(parts.map((p) => p.find(step, 0, skip + limit)));
      return found
        .flat()
        .sort(before)
        .slice(skip, skip + limit);
    },
    async count(step, limit) {
      const counts = await Promise.all(parts.map((p) => p.count(step, limit)));
      return counts.reduce((sum, n) => sum + n, 0);
    },
  };
}
