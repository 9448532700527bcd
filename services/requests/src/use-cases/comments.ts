import {
  type AddCommentBody,
  newId,
  type Principal,
  REQUEST_LIMITS,
  type RequestComment,
} from '@support-desk/contracts';
import { buildEvent, conflict, contextFromPrincipal, eventEntry, forbidden } from '@support-desk/platform';
import type { CommentRecord, RequestRecord } from '../store/requests.js';
import { type Deps } from './deps.js';
import { seesInternal } from './queries.js';
import { computeSla, slaDueMinute } from './sla.js';

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
  return deps.requests.update(requestId, (current) => {
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
          priority: current.priority,
          createdAt: current.createdAt,
          firstResponseAt: now,
          clockStoppedAt: current.clockStoppedAt,
        },
        current.sla.vip,
        now,
        current.sla,
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
    return {
      write: { set, append: { comments: [comment] }, outbox: [eventEntry(deps.names, event)] },
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
