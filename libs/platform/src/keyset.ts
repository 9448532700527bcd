import type { CursorKeyKind, CursorKeyValue } from './cursor.js';

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

/** The stored keys behind one `sort` field of a list (before the `_id` tie-break) and their kinds. */
export interface OrderKeys {
  fields: string[];
  kinds: CursorKeyKind[];
}

/** One of a list's orders: a field of its table, ascending or descending. */
export interface ListSort<F extends string> {
  field: F;
  descending: boolean;
}

/**
 * A list's orders, from the table of each `sort` field's stored keys: the store's sort keys
 * (ties broken by the next key, then `_id`, all in one direction), a cursor's key kinds, and an
 * item's position. `valueOf` reads a key off a document (default: the field itself).
 */
export function listOrders<F extends string, D extends { _id: string }>(
  table: Record<F, OrderKeys>,
  valueOf: (doc: D, field: string) => CursorKeyValue = (doc, field) =>
    (doc as unknown as Record<string, CursorKeyValue>)[field]!,
) {
  return {
    kinds: (sort: ListSort<F>) => table[sort.field].kinds,
    keys: (sort: ListSort<F>): SortKey[] =>
      [...table[sort.field].fields, '_id'].map((field) => ({ field, descending: sort.descending })),
    position: (doc: D, sort: ListSort<F>) => ({
      keys: table[sort.field].fields.map((field) => valueOf(doc, field)),
      id: doc._id,
    }),
  };
}

/**
 * The condition of a multi-value filter: one value is an equality (FerretDB on PostgreSQL pushes
 * it down), several an `$in` (pushed down nowhere on FerretDB; one index range each on MongoDB).
 */
export const oneOf = <T>(values: T[]) => (values.length === 1 ? values[0] : { $in: values });

/**
 * A list's filter with a seek's condition beside it: the filter's top-level equalities stay at
 * the top, where FerretDB on PostgreSQL pushes them down (under an `$and` it pushes nothing down
 * and reads the whole collection, issue 31). Only the filter's fields the condition also names
 * (a search's `$or`, a range on a sort key) move into an `$and` with the condition.
 */
export function besideSeek<Q extends Record<string, unknown>>(
  query: Q,
  condition?: Record<string, unknown>,
): Q {
  if (!condition) return query;
  const shared = Object.keys(condition).filter((field) => field in query);
  if (shared.length === 0) return { ...query, ...condition };
  const rest: Record<string, unknown> = { ...query };
  const moved: Record<string, unknown> = {};
  for (const field of shared) {
    moved[field] = rest[field];
    delete rest[field];
  }
  const and = (rest.$and as unknown[] | undefined) ?? [];
  return { ...rest, $and: [...and, moved, condition] } as unknown as Q;
}
