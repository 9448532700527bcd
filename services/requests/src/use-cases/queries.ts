import type {
  DomainEvent,
  Principal,
  RequestComment,
  RequestDetail,
  RequestEventSnapshot,
} from '@support-desk/contracts';
import { notFound, withRevision, withSnapshot } from '@support-desk/platform/core';
import type { UserEntry } from '../store/directory.js';
import type { CommentRecord, RequestRecord } from '../store/requests.js';
import type { Deps } from './deps.js';
import { slaTagBasis, slaView } from './sla.js';

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

/** What a single read and an event's snapshot show alike: everything but comments and attachments. */
type RequestFields = Omit<RequestDetail, 'comments' | 'attachments'>;

/**
 * The request's own fields as a single read shows them, people resolved through the directory and
 * the SLA statuses as of `now`. `requester`: the requester's entry when the caller already has it
 * (a create), so a lookup that just failed is not made again.
 */
async function requestFields(
  deps: Deps,
  d: RequestRecord,
  now: Date,
  requester?: UserEntry | null,
): Promise<RequestFields> {
  const [requesterEntry, assignee, group] = await Promise.all([
    requester !== undefined ? requester : deps.directory.userOrNull(d.requester.id),
    d.assignedTo ? deps.directory.userOrNull(d.assignedTo) : null,
    d.assignedGroup ? deps.directory.groupOrNull(d.assignedGroup) : null,
  ]);
  const fields: RequestFields = {
    ...sharedFields(d),
    tags: d.tags ?? [],
    assignedTo: d.assignedTo
      ? { id: d.assignedTo, email: assignee?.email ?? '', name: assignee?.name ?? '' }
      : null,
    assignedGroup: d.assignedGroup ? { id: d.assignedGroup, name: group?.name ?? '' } : null,
    requester: {
      ...person(d.requester, requesterEntry ?? undefined),
      isVip: requesterEntry?.isVip ?? d.sla.vip,
    },
    sla: slaView(deps.sla, d, now),
  };
  if (d.status === 'resolved' || d.status === 'closed') fields.resolution = d.resolution ?? null;
  return fields;
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
  const [fields, comments] = await Promise.all([
    requestFields(deps, d, deps.clock()),
    commentViews(deps, visibleComments(principal, d.comments)),
  ]);
  const detail: RequestDetail = {
    ...fields,
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
  return withRevision(detail, d.rev, { ...detail, sla: slaTagBasis(detail.sla) });
}

/**
 * The request as every event of a write carries it (`snapshot`): `d` is the request as the write
 * leaves it, shown as a single read shows it to an agent, with comments and attachments as counts
 * (public comments only: an internal note is neither shown nor counted).
 */
async function requestSnapshot(
  deps: Deps,
  d: RequestRecord,
  now: Date,
  requester?: UserEntry | null,
): Promise<RequestEventSnapshot> {
  return {
    ...(await requestFields(deps, d, now, requester)),
    commentCount: d.comments.filter((c) => !c.isInternal).length,
    attachmentCount: d.attachments.length,
  };
}

/** The events of one write, each carrying the request as the write leaves it. */
export async function withRequestSnapshot(
  deps: Deps,
  events: DomainEvent[],
  after: RequestRecord,
  now: Date,
  requester?: UserEntry | null,
): Promise<DomainEvent[]> {
  const snapshot = await requestSnapshot(deps, after, now, requester);
  return events.map((e) => withSnapshot(e, snapshot));
}
