import type { REQUEST_SORT_FIELDS } from '@support-desk/contracts';
import type { CursorKeyKind, CursorKeyValue, SortKey } from '@support-desk/platform';
import { PRIORITY_RANK, type RequestRecord } from './requests.js';

export type RequestSortField = (typeof REQUEST_SORT_FIELDS)[number];

/** One of the list's orders (`sort`): a field, ascending or descending. */
export interface RequestSort {
  field: RequestSortField;
  descending: boolean;
}

/**
 * The stored keys behind each `sort`, ties broken by the next key and finally by `_id`, all in
 * the same direction. `priority` sorts the stored rank (a number), not the word.
 */
const ORDER_KEYS: Record<RequestSortField, { fields: (keyof RequestRecord)[]; kinds: CursorKeyKind[] }> = {
  createdAt: { fields: ['createdAt'], kinds: ['date'] },
  updatedAt: { fields: ['updatedAt'], kinds: ['date'] },
  priority: { fields: ['priorityRank', 'createdAt'], kinds: ['number', 'date'] },
};

/** The kinds of a cursor's keys for this order. */
export const requestSortKinds = (sort: RequestSort) => ORDER_KEYS[sort.field].kinds;

export function requestOrder(sort: RequestSort): SortKey[] {
  return [...ORDER_KEYS[sort.field].fields, '_id'].map((field) => ({ field, descending: sort.descending }));
}

/** A request's position in this order (its cursor keys): never null. */
export function requestPosition(
  doc: RequestRecord,
  sort: RequestSort,
): { keys: CursorKeyValue[]; id: string } {
  const keys = ORDER_KEYS[sort.field].fields.map((field) =>
    // A request stored before the rank existed sorts as its priority says once ranked.
    field === 'priorityRank' ? (doc.priorityRank ?? PRIORITY_RANK[doc.priority]) : (doc[field] as Date),
  );
  return { keys, id: doc._id };
}
