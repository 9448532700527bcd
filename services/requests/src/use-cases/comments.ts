import {
  type AddCommentBody,
  DEFAULT_COMMENT_SORT,
  type ListCommentsQuery,
  newId,
  type Principal,
  REQUEST_LIMITS,
  type RequestComment,
} from '@support-desk/contracts';
import {
  buildEvent,
  conflict,
  contextFromPrincipal,
  eventEntry,
  forbidden,
  listPage,
  planList,
} from '@support-desk/platform/core';
import type { CommentRecord, RequestRecord } from '../store/requests.js';
import { type Deps } from './deps.js';
import { commentViews, loadVisible, seesInternal, visibleComments, withRequestSnapshot } from './queries.js';
import { computeSla, slaDueMinute } from './sla.js';

/** A comment's place in the comments list: its time, then its id. */
const keysOf = (c: CommentRecord) => ({ keys: [c.createdAt], id: c.id });
const compare = (a: CommentRecord, b: { keys: unknown[]; id: string }) => {
  const at = a.createdAt.getTime() - (b.keys[0] as Date).getTime();
  return at !== 0 ? at : a.id < b.id ? -1 : a.id > b.id ? 1 : 0;
};

/**
 * `GET /v1/requests/:id/comments`: the comments this caller may see (`visibleComments`, the rule
 * of the single read), in (createdAt, id) order, paged like every list: by page with a total, or
 * by cursor. The comments live in the request (at most 1,000), read by `_id` like a single read,
 * so the page is cut in memory: a cursor's seek is a comparison, not a query.
 */
export async function listComments(
  deps: Deps,
  principal: Principal,
  requestId: string,
  query: ListCommentsQuery,
) {
  const plan = planList<'createdAt'>(query, DEFAULT_COMMENT_SORT, () => ['date'], { request: requestId });
  const request = await loadVisible(deps, requestId);
  const direction = plan.sort.descending ? -1 : 1;
  const ordered = visibleComments(principal, request.comments).sort(
    (a, b) => direction * compare(a, keysOf(b)),
  );
  const { window } = plan;
  let read: CommentRecord[];
  if (window.mode === 'page') read = ordered.slice(plan.read.skip, plan.read.skip + plan.read.limit);
  else if (window.position.direction === 'next')
    read = ordered.filter((c) => direction * compare(c, window.position) > 0).slice(0, plan.read.limit);
  else
    read = ordered
      .filter((c) => direction * compare(c, window.position) < 0)
      .reverse()
      .slice(0, plan.read.limit);
  const page = listPage(read, window, plan.scope, keysOf, { total: ordered.length });
  return { comments: await commentViews(deps, page.items), pagination: page.pagination };
}

/** The first public reply by an agent or admin other than the requester. */
const isFirstResponse = (principal: Principal, request: RequestRecord, isInternal: boolean) =>
  !isInternal &&
  !request.firstResponseAt &&
  (principal.role === 'agent' || principal.role === 'admin') &&
  principal.userId !== request.requester.id;

export async function addComment(
  deps: Deps,
  principal: Principal,
  requestId: string,
  body: AddCommentBody,
): Promise<RequestComment> {
  const isInternal = body.isInternal ?? false;
  if (isInternal && !seesInternal(principal))
    throw forbidden('Only agents and admins may add internal notes');
  const ctx = contextFromPrincipal(principal);
  return deps.requests.update(requestId, async (current) => {
    if (!seesInternal(principal) && principal.userId !== current.requester.id) {
      throw forbidden('Only the requester, agents and admins may comment');
    }
    if (current.comments.length >= REQUEST_LIMITS.commentsPerRequestMax) {
      throw conflict(`A request holds at most ${REQUEST_LIMITS.commentsPerRequestMax} comments`);
    }
    const now = deps.clock();
    const comment: CommentRecord = {
      id: newId('comment', now.getTime()),
      content: body.content,
      authorId: principal.userId,
      authorName: principal.name,
      isInternal,
      createdAt: now,
    };
    const set: Record<string, unknown> = { updatedAt: now };
    if (isFirstResponse(principal, current, isInternal)) {
      set.firstResponseAt = now;
      const sla = computeSla(
        deps.sla,
        {
          before: current,
          after: { status: current.status, firstResponseAt: now, clockStoppedAt: current.clockStoppedAt },
          priority: current.priority,
          vip: current.sla.vip,
        },
        now,
      );
      set.sla = sla;
      set.slaDueMinute = slaDueMinute({ ...current, firstResponseAt: now, sla }, now);
    }
    // Internal notes are announced without their content: the audit log is readable more widely.
    const announced: Record<string, unknown> = { id: comment.id, authorId: comment.authorId, isInternal };
    if (!isInternal) announced.content = comment.content;
    const event = buildEvent(
      'request.comment_added',
      requestId,
      ctx,
      { comment: { from: null, to: announced } },
      now,
    );
    const after = { ...current, ...set, comments: [...current.comments, comment] } as RequestRecord;
    const events = await withRequestSnapshot(deps, [event], after, now);
    return {
      write: {
        set,
        append: { comments: [comment] },
        outbox: events.map((e) => eventEntry(deps.names, e)),
      },
      result: {
        id: comment.id,
        content: comment.content,
        author: { id: comment.authorId, name: comment.authorName },
        isInternal,
        createdAt: now.toISOString(),
      },
    };
  });
}
