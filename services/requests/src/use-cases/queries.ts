import type { Principal, RequestComment, RequestDetail } from '@support-desk/contracts';
import { notFound, withRevision } from '@support-desk/platform';
import type { UserEntry } from '../store/directory.js';
import type { CommentRecord, RequestRecord } from '../store/requests.js';
import type { Deps } from './deps.js';
import { statusAt } from './sla.js';

/** Viewers never see internal notes; agents and admins do. */
export const seesInternal = (principal: Principal) =>
  principal.role === 'agent' || principal.role === 'admin';

/** The fields a list item and a single read show alike. */
export function sharedFields(d: RequestRecord) {
  return {
    id: d._id,
    title: d.title,
    description: d.description,
    status: d.status,
    priority: d.priority,
    category: d.category ?? null,
    createdAt: d.createdAt.toISOString(),
    updatedAt: d.updatedAt.toISOString(),
  };
}

export function person(snapshot: { id: string; email: string; name: string }, known: UserEntry | undefined) {
  return { id: snapshot.id, email: known?.email ?? snapshot.email, name: known?.name ?? snapshot.name };
}

export async function loadVisible(deps: Deps, id: string): Promise<RequestRecord> {
  const doc = await deps.requests.findVisible(id);
  if (!doc) throw notFound('Request');
  return doc;
}

export const attachmentUrl = (deps: Deps, id: string) =>
  `${deps.publicBaseUrl.replace(/\/+$/, '')}/attachments/${id}`;

export async function getRequest(deps: Deps, principal: Principal, id: string): Promise<RequestDetail> {
  return requestDetail(deps, principal, await loadVisible(deps, id));
}

/** The comments this caller may see: internal notes for agents and admins only. */
export const visibleComments = (principal: Principal, comments: CommentRecord[]) =>
  seesInternal(principal) ? comments : comments.filter((c) => !c.isInternal);

/** Comments as a single read (and the comments list) shows them, authors' names from the directory. */
export async function commentViews(deps: Deps, comments: CommentRecord[]): Promise<RequestComment[]> {
  const authors = await deps.directory.knownUsers(comments.map((c) => c.authorId));
  return comments.map((c) => ({
    id: c.id,
    content: c.content,
    author: { id: c.authorId, name: authors.get(c.authorId)?.name ?? c.authorName },
    isInternal: c.isInternal,
    createdAt: c.createdAt.toISOString(),
  }));
}

/** A request as a single read shows it to this caller (internal notes for agents and admins only). */
export async function requestDetail(
  deps: Deps,
  principal: Principal,
  d: RequestRecord,
): Promise<RequestDetail> {
  const now = deps.clock();
  const [requester, assignee, group, comments] = await Promise.all([
    deps.directory.userOrNull(d.requester.id),
    d.assignedTo ? deps.directory.userOrNull(d.assignedTo) : null,
    d.assignedGroup ? deps.directory.groupOrNull(d.assignedGroup) : null,
    commentViews(deps, visibleComments(principal, d.comments)),
  ]);
  const detail: RequestDetail = {
    ...sharedFields(d),
    tags: d.tags ?? [],
    assignedTo: d.assignedTo
      ? { id: d.assignedTo, email: assignee?.email ?? '', name: assignee?.name ?? '' }
      : null,
    assignedGroup: d.assignedGroup ? { id: d.assignedGroup, name: group?.name ?? '' } : null,
    requester: { ...person(d.requester, requester ?? undefined), isVip: requester?.isVip ?? d.sla.vip },
    sla: {
      tier: d.sla.tier,
      responseTarget: d.sla.responseTarget.toISOString(),
      resolutionTarget: d.sla.resolutionTarget.toISOString(),
      // Computed as of now so a read is exact between two monitor passes.
      responseStatus: statusAt(d.sla.responseTarget, d.sla.responseWarnAt, d.firstResponseAt, now),
      resolutionStatus: statusAt(d.sla.resolutionTarget, d.sla.resolutionWarnAt, d.clockStoppedAt, now),
    },
    comments,
    attachments: d.attachments.map((a) => ({
      id: a.id,
      filename: a.filename,
      size: a.size,
      contentType: a.contentType,
      uploadedAt: a.uploadedAt.toISOString(),
      url: attachmentUrl(deps, a.id),
    })),
  };
  if (d.status === 'resolved' || d.status === 'closed') detail.resolution = d.resolution ?? null;
  return withRevision(detail, d.rev);
}
