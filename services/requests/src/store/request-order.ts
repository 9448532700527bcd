import type { REQUEST_SORT_FIELDS } from '@support-desk/contracts';
import { type ListSort, listOrders } from '@support-desk/platform/store';
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
