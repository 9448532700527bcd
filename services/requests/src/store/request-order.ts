import type { REQUEST_SORT_FIELDS } from '@support-desk/contracts';
import { type HourWalkOrder, type ListSort, listOrders } from '@support-desk/platform/store';
import { PRIORITY_RANK, type RequestRecord } from './requests.js';

export type RequestSort = ListSort<(typeof REQUEST_SORT_FIELDS)[number]>;

/**
 * The stored keys behind each `sort` of the requests list. `priority` sorts the stored rank (a
 * number), not the word, and breaks ties by `createdAt`.
 */
export const requestOrders = listOrders<RequestSort['field'], RequestRecord>(
  {
    createdAt: { fields: ['createdAt'], kinds: ['date'] },
    updatedAt: { fields: ['updatedAt'], kinds: ['date'] },
    priority: { fields: ['priorityRank', 'createdAt'], kinds: ['number', 'date'] },
  },
  // A request stored before the rank existed has the position its priority gives it.
  (doc, field) =>
    field === 'priorityRank'
      ? (doc.priorityRank ?? PRIORITY_RANK[doc.priority])
      : (doc[field as 'createdAt' | 'updatedAt'] as Date),
);

/** How each `sort` walks the hours and days (`hourWalk`): of creation or change, ranks in turn. */
export const requestWalks: Record<RequestSort['field'], HourWalkOrder> = {
  createdAt: { time: 'createdAt', hour: 'createdHour', day: 'createdDay' },
  updatedAt: { time: 'updatedAt', hour: 'updatedHour', day: 'updatedDay' },
  priority: {
    time: 'createdAt',
    hour: 'createdHour',
    day: 'createdDay',
    lead: { field: 'priorityRank', values: Object.values(PRIORITY_RANK).sort((a, b) => a - b) },
  },
};
