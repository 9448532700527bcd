import type { CursorKeyValue } from './cursor.js';

/**
 * Keyset ("seek") paging for the stores: the page after an item is the items whose sort keys
 * come after the item's, a condition on values rather than a skip, so its cost does not grow
 * with the depth and an insert before the position shifts nothing.
 */

/** One key of a list's order; the last one is the unique id (`_id`) that breaks every tie. */
export interface SortKey {
  field: string;
  descending: boolean;
}

/** Read from `values` (one per key, the id last) towards `direction`. */
export interface KeysetSeek {
  values: CursorKeyValue[];
  direction: 'next' | 'prev';
}

/**
 * The MongoDB sort and, with a seek, the condition selecting the items strictly after (`next`)
 * or before (`prev`) the position: `(k1 > v1) or (k1 = v1 and k2 > v2) or …`, each comparison
 * flipped for a descending key. `prev` reads in the reverse order (the caller reverses the
 * page). Plain operators ($or, $lt/$gt, equality) that MongoDB 7 and FerretDB both answer; the
 * keys must never be null or missing (a null compares with nothing).
 */
export function keysetQuery(order: readonly SortKey[], seek?: KeysetSeek) {
  const reverse = seek?.direction === 'prev';
  const sort: Record<string, 1 | -1> = {};
  for (const key of order) sort[key.field] = key.descending !== reverse ? -1 : 1;
  if (!seek) return { sort, condition: undefined };
  if (seek.values.length !== order.length) throw new Error('keyset: one value per sort key is needed');
  const branches = order.map((key, n) => {
    const branch: Record<string, unknown> = {};
    for (let m = 0; m < n; m++) branch[order[m]!.field] = seek.values[m];
    const operator = key.descending !== reverse ? '$lt' : '$gt';
    branch[key.field] = { [operator]: seek.values[n] };
    return branch;
  });
  return { sort, condition: branches.length === 1 ? branches[0]! : { $or: branches } };
}
