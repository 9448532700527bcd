import {
  type ListRequestsQuery,
  type Principal,
  paginate,
  pageWindow,
  type RequestDetail,
  type RequestListItem,
} from '@support-desk/contracts';
import { notFound } from '@support-desk/platform';
import type { FilterQuery } from 'mongoose';
import type { UserEntry } from '../store/directory.js';
import { type RequestRecord, visible } from '../store/requests.js';
import type { Core } from './core.js';
import { statusAt } from './sla.js';

const LIST_FIELDS = {
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
};

/** Viewers never see internal notes; agents and admins do. */
export const seesInternal = (principal: Principal) =>
  principal.role === 'agent' || principal.role === 'admin';

export async function listRequests(core: Core, query: ListRequestsQuery) {
  const window = pageWindow(query.page, query.limit);
  const filter: FilterQuery<RequestRecord> = { ...visible };
  if (query.status) filter.status = query.status;
  if (query.priority) filter.priority = query.priority;
  if (query.assignedTo) filter.assignedTo = query.assignedTo;
  if (query.groupId) filter.assignedGroup = query.groupId;
  if (query.createdAfter || query.createdBefore) {
    filter.createdAt = {
      ...(query.createdAfter ? { $gte: new Date(query.createdAfter) } : {}),
      ...(query.createdBefore ? { $lt: new Date(query.createdBefore) } : {}),
    };
  }
  const [docs, total] = await Promise.all([
    core.requests
      .find(filter, LIST_FIELDS)
      .sort({ createdAt: -1, _id: -1 })
      .skip(window.skip)
      .limit(window.limit)
      .lean<RequestRecord[]>(),
    core.requests.countDocuments(filter),
  ]);
  const people = await core.directory.knownUsers(docs.map((d) => d.requester.id));
  const requests: RequestListItem[] = docs.map((d) => ({
    ...sharedFields(d),
    assignedTo: d.assignedTo ?? null,
    assignedGroup: d.assignedGroup ?? null,
    requester: person(d.requester, people.get(d.requester.id)),
  }));
  return { requests, pagination: paginate(window, total) };
}

/** The fields a list item and a single read show alike. */
function sharedFields(d: RequestRecord) {
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

function person(snapshot: { id: string; email: string; name: string }, known: UserEntry | undefined) {
  return { id: snapshot.id, email: known?.email ?? snapshot.email, name: known?.name ?? snapshot.name };
}

export async function loadVisible(core: Core, id: string): Promise<RequestRecord> {
  const doc = await core.requests.findOne({ _id: id, ...visible }).lean<RequestRecord>();
  if (!doc) throw notFound('Request');
  return doc;
}

export const attachmentUrl = (core: Core, id: string) =>
  `${core.publicBaseUrl.replace(/\/+$/, '')}/attachments/${id}`;

export async function getRequest(core: Core, principal: Principal, id: string): Promise<RequestDetail> {
  const d = await loadVisible(core, id);
  const now = core.now();
  const comments = seesInternal(principal) ? d.comments : d.comments.filter((c) => !c.isInternal);
  const [requester, assignee, group, authors] = await Promise.all([
    core.directory.userOrNull(d.requester.id),
    d.assignedTo ? core.directory.userOrNull(d.assignedTo) : null,
    d.assignedGroup ? core.directory.groupOrNull(d.assignedGroup) : null,
    core.directory.knownUsers(comments.map((c) => c.authorId)),
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
    comments: comments.map((c) => ({
      id: c.id,
      content: c.content,
      author: { id: c.authorId, name: authors.get(c.authorId)?.name ?? c.authorName },
      isInternal: c.isInternal,
      createdAt: c.createdAt.toISOString(),
    })),
    attachments: d.attachments.map((a) => ({
      id: a.id,
      filename: a.filename,
      size: a.size,
      contentType: a.contentType,
      uploadedAt: a.uploadedAt.toISOString(),
      url: attachmentUrl(core, a.id),
    })),
  };
  if (d.status === 'resolved' || d.status === 'closed') detail.resolution = d.resolution ?? null;
  return detail;
}
