import {
  DEFAULT_REQUEST_SORT,
  type ListRequestsQuery,
  pageWindow,
  PRIORITIES,
  type Principal,
  REQUEST_STATUSES,
  type RequestChange,
  type RequestChangesQuery,
  type RequestListItem,
} from '@support-desk/contracts';
import {
  completeInBatches,
  type CursorPosition,
  type CursorScope,
  decodeCursor,
  encodeCursor,
  listPage,
  parseEnumList,
  planList,
  searchText,
  validationError,
} from '@support-desk/platform/core';
import { requestOrders, type RequestSort } from '../store/request-order.js';
import type { RequestListFilter } from '../store/requests-repository.js';
import type { Deps } from './deps.js';
import { person, requestDetail, sharedFields } from './queries.js';

/** `tags=a,b` (checked by the schema) as its distinct tags, sorted: equal sets, equal cursors. */
const tagList = (raw: string | undefined) =>
  raw === undefined ? undefined : [...new Set(raw.split(','))].sort();

/**
 * `GET /v1/requests`: filters (several values of an enum or several tags separated by commas),
 * search, sort, and paging by page (with a count) or by cursor (a keyset seek, no count); one
 * find either way.
 */
export async function listRequests(deps: Deps, query: ListRequestsQuery) {
  const filter: RequestListFilter = {
    status: parseEnumList('query.status', query.status, REQUEST_STATUSES),
    priority: parseEnumList('query.priority', query.priority, PRIORITIES),
    assignedTo: query.assignedTo,
    assignedGroup: query.groupId,
    requester: query.requester,
    tags: tagList(query.tags),
    createdAfter: query.createdAfter ? new Date(query.createdAfter) : undefined,
    createdBefore: query.createdBefore ? new Date(query.createdBefore) : undefined,
    search: searchText(query),
  };
  const plan = planList<RequestSort['field']>(query, DEFAULT_REQUEST_SORT, requestOrders.kinds, {
    ...filter,
  });
  const found = await deps.requests.list(filter, plan.sort, {
    ...plan.read,
    maxTimeMs: filter.search ? deps.lists.searchMaxTimeMs : undefined,
  });
  const page = listPage(
    found.docs,
    plan.window,
    plan.scope,
    (d) => requestOrders.position(d, plan.sort),
    found,
  );
  const people = await deps.directory.knownUsers(page.items.map((d) => d.requester.id));
  const requests: RequestListItem[] = page.items.map((d) => ({
    ...sharedFields(d),
    assignedTo: d.assignedTo ?? null,
    assignedGroup: d.assignedGroup ?? null,
    requester: person(d.requester, people.get(d.requester.id)),
  }));
  return { requests, pagination: page.pagination };
}

/** The changes feed's cursors: a position in (updatedAt, id) order, valid for no other list. */
const CHANGES_SCOPE: CursorScope = { sort: 'changes', kinds: ['date'], filters: {} };
/** Where the feed starts: before every change. */
const FEED_START: CursorPosition = { keys: [new Date(0)], id: '', direction: 'next' };

/**
 * `GET /v1/requests/changes`: the requests changed after the cursor, oldest change first, each
 * at its current state (as `GET /v1/requests/:id` shows it to this caller) or as a tombstone.
 * Only changes older than the settle delay are served, so a write another replica stamped
 * earlier but committed later is not passed over (README: the feed's guarantee).
 */
export async function listRequestChanges(deps: Deps, principal: Principal, query: RequestChangesQuery) {
  const { limit } = pageWindow(1, query.limit);
  const from = query.cursor ? decodeCursor(query.cursor, CHANGES_SCOPE) : FEED_START;
  if (from.direction !== 'next') throw validationError('query.cursor', 'is not a cursor of the changes feed');
  const settled = new Date(deps.clock().getTime() - deps.lists.changesSettleMs);
  const docs = await deps.requests.changes({ at: from.keys[0] as Date, id: from.id }, settled, limit + 1);
  const page = docs.slice(0, limit);
  const changes: RequestChange[] = await Promise.all(
    page.map(async (d): Promise<RequestChange> =>
      d.deletedAt
        ? { id: d._id, deleted: true, deletedAt: d.deletedAt.toISOString() }
        : { id: d._id, deleted: false, request: await requestDetail(deps, principal, d) },
    ),
  );
  const last = page.at(-1);
  const next = last ? { keys: [last.updatedAt], id: last._id, direction: 'next' as const } : from;
  return {
    changes,
    pagination: { limit, nextCursor: encodeCursor(CHANGES_SCOPE, next), hasMore: docs.length > limit },
  };
}

/**
 * Gives the requests stored before a list key existed that key, at start: the severity rank of
 * `sort=priority` (without it a request sorts as if it had the lowest), the top-level requester
 * id of the `requester` filter (without it the filter does not find the request) and the hours
 * the lists walk (without them no list finds the request), after finding the lists' bounds. Logged, never
 * fatal: the lists still answer, and the next start goes on.
 */
export async function completeStoredRequests(deps: Deps): Promise<void> {
  try {
    await deps.requests.ensureListBounds();
    const completed = await completeInBatches((n) => deps.requests.completeDerivedKeys(n));
    if (completed > 0) deps.logger.info({ completed }, 'stored requests given their list keys');
  } catch (err) {
    deps.logger.warn({ err }, 'giving stored requests their list keys failed; retried at the next start');
  }
}
