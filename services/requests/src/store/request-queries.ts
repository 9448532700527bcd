import type { Priority, RequestStatus } from '@support-desk/contracts';
import { escapeRegex, type KeysetSeek, oneOf } from '@support-desk/platform/store';
import type { FilterQuery } from 'mongoose';
import type { RequestRecord } from './requests.js';

/** The list queries' conditions: filters, search, the changes feed's order. */

/** The soft-delete rule as a query condition, for the queries that select many requests. */
export const VISIBLE = { deletedAt: null };

/** What a list item shows (and the sort keys its cursor needs). */
export const LIST_FIELDS = {
  title: 1,
  description: 1,
  status: 1,
  priority: 1,
  category: 1,
  createdAt: 1,
  updatedAt: 1,
  assignedTo: 1,
  assignedGroup: 1,
  requester: 1,
  priorityRank: 1,
};

/** The list's filters, each optional (already validated); a list of values matches any of them. */
export interface RequestListFilter {
  status?: RequestStatus[];
  priority?: Priority[];
  assignedTo?: string;
  assignedGroup?: string;
  /** The requester's user id. */
  requester?: string;
  /** Requests holding any of these tags (as stored). */
  tags?: string[];
  createdAfter?: Date;
  createdBefore?: Date;
  /** Plain text found in the title, the description or a tag, case-insensitively. */
  search?: string;
}

/** What one list call reads: a page by skip (and the count), or by keyset seek. */
export interface RequestListWindow {
  skip: number;
  limit: number;
  seek?: KeysetSeek;
  count: boolean;
  /** The store's time budget for the query (a search), in ms. */
  maxTimeMs?: number;
}

export function listQuery(filter: RequestListFilter): FilterQuery<RequestRecord> {
  const query: FilterQuery<RequestRecord> = { ...VISIBLE };
  if (filter.status) query.status = oneOf(filter.status);
  if (filter.priority) query.priority = oneOf(filter.priority);
  if (filter.assignedTo) query.assignedTo = filter.assignedTo;
  if (filter.assignedGroup) query.assignedGroup = filter.assignedGroup;
  // Top-level equalities on scalars (one tag: an element of the array), pushed down by FerretDB on
  // PostgreSQL and served by its GIN indexes; several tags are an `$in`, which it is not.
  if (filter.requester) query.requesterId = filter.requester;
  if (filter.tags) query.tags = oneOf(filter.tags);
  if (filter.createdAfter || filter.createdBefore) {
    query.createdAt = {
      ...(filter.createdAfter ? { $gte: filter.createdAfter } : {}),
      ...(filter.createdBefore ? { $lt: filter.createdBefore } : {}),
    };
  }
  if (filter.search) {
    // The client's text as a literal (escaped), anywhere in the field; a tag matches element-wise.
    const text = new RegExp(escapeRegex(filter.search), 'i');
    query.$or = [{ title: text }, { description: text }, { tags: text }];
  }
  return query;
}

/** The changes feed's order: the change time, then the id (a request's `updatedAt` moves on every write). */
export const CHANGE_ORDER = [
  { field: 'updatedAt', descending: false },
  { field: '_id', descending: false },
];

/** A position in the changes feed: after this change time and id. */
export interface ChangePosition {
  at: Date;
  id: string;
}
