import type {
  Changes,
  CreateRequestBody,
  Principal,
  RequestStatus,
  UpdateRequestBody,
} from '@support-desk/contracts';
import { newId } from '@support-desk/contracts';
import {
  buildEvent,
  contextFromPrincipal,
  conflict,
  diffChanges,
  type EventContext,
  eventEntry,
  type IfMatch,
  requireRevision,
  revisionAfter,
  validationError,
  withEntityTag,
} from '@support-desk/platform/core';
import { BULK_MARKS_KEPT } from '../store/bulk-jobs.js';
import { trashKeys } from '../store/request-trash.js';
import type { RequestRecord } from '../store/requests.js';
import { type Deps, requireAssignee, requireGroup, uniqueTags } from './deps.js';
import { requestDetail, withRequestSnapshot } from './queries.js';
import { computeSla, type PickedPolicy, pickPolicy, slaDueMinute } from './sla.js';
import { checkTransition, isStopped } from './workflow.js';

export async function createRequest(deps: Deps, principal: Principal, body: CreateRequestBody) {
  if (body.assignedTo) await requireAssignee(deps, body.assignedTo, 'body.assignedTo');
  if (body.assignedGroup) await requireGroup(deps, body.assignedGroup, 'body.assignedGroup');
  // VIP decides the SLA tier; if identity cannot say, the standard tier applies.
  const requester = await deps.directory.userOrNull(principal.userId);
  const now = deps.clock();
  const id = newId('request', now.getTime());
  const status: RequestStatus = body.assignedTo ? 'assigned' : 'open';
  const vip = requester?.isVip ?? false;
  const policy = pickPolicy(deps.sla, await deps.slaPolicies.forPicking(), {
    priority: body.priority,
    groupId: body.assignedGroup ?? null,
    vip,
  });
  const sla = computeSla(
    deps.sla,
    { after: { status, firstResponseAt: null, clockStoppedAt: null }, policy, priority: body.priority, vip },
    now,
  );
  const record: RequestRecord = {
    _id: id,
    title: body.title,
    description: body.description,
    status,
    priority: body.priority,
    category: body.category ?? null,
    tags: uniqueTags(body.tags ?? []),
    requester: { id: principal.userId, email: principal.email, name: principal.name },
    assignedTo: body.assignedTo ?? null,
    assignedGroup: body.assignedGroup ?? null,
    resolution: null,
    resolvedAt: null,
    firstResponseAt: null,
    clockStoppedAt: null,
    comments: [],
    attachments: [],
    sla,
    slaDueMinute: slaDueMinute({ status, firstResponseAt: null, clockStoppedAt: null, sla }, now),
    deletedAt: null,
    deletedBy: null,
    createdAt: now,
    updatedAt: now,
    rev: 0,
  };
  const ctx = contextFromPrincipal(principal);
  const created: Changes = {
    title: { from: null, to: record.title },
    status: { from: null, to: status },
    priority: { from: null, to: record.priority },
  };
  if (record.category) created.category = { from: null, to: record.category };
  if (record.tags.length > 0) created.tags = { from: null, to: record.tags };
  const events = [buildEvent('request.created', id, ctx, created, now)];
  const assignment = diffChanges({}, { assignedTo: record.assignedTo, assignedGroup: record.assignedGroup }, [
    'assignedTo',
    'assignedGroup',
  ]);
  if (Object.keys(assignment).length > 0)
    events.push(buildEvent('request.assigned', id, ctx, assignment, now));
  const announced = await withRequestSnapshot(deps, events, record, now, requester);
  await deps.requests.insert(
    record,
    announced.map((e) => eventEntry(deps.names, e)),
  );
  return { id, title: record.title, status, createdAt: now.toISOString() };
}

interface UpdatePlan {
  set: Record<string, unknown>;
  events: ReturnType<typeof buildEvent>[];
  status: RequestStatus;
}

/** What a PATCH changes on `current`, and the events it emits: one per kind of change. */
function planUpdate(
  deps: Deps,
  current: RequestRecord,
  body: UpdateRequestBody,
  principal: Principal,
  ctx: EventContext,
  now: Date,
  /** The policy picked again, when the facts it is picked on (priority, group) changed. */
  policy?: PickedPolicy,
): UpdatePlan {
  const after: Partial<RequestRecord> = {};
  if (body.title !== undefined) after.title = body.title;
  if (body.description !== undefined) after.description = body.description;
  if (body.category !== undefined) after.category = body.category;
  if (body.tags !== undefined) after.tags = uniqueTags(body.tags);
  if (body.assignedTo !== undefined) after.assignedTo = body.assignedTo;
  if (body.assignedGroup !== undefined) after.assignedGroup = body.assignedGroup;
  if (body.priority !== undefined) after.priority = body.priority;
  const before = current as unknown as Record<string, unknown>;
  const content = diffChanges(before, after, ['title', 'description', 'category', 'tags']);
  const assignment = diffChanges(before, after, ['assignedTo', 'assignedGroup']);
  const priority = diffChanges(before, after, ['priority']);

  // The status asked for, or the implied one: assigning an open request makes it assigned,
  // unassigning an assigned one reopens it.
  let target: RequestStatus = body.status ?? current.status;
  if (body.status === undefined && assignment.assignedTo) {
    if (current.status === 'open' && after.assignedTo) target = 'assigned';
    if (current.status === 'assigned' && !after.assignedTo) target = 'open';
  }
  const assignee = after.assignedTo !== undefined ? after.assignedTo : current.assignedTo;
  if (body.status === 'assigned' && body.status !== current.status && !assignee) {
    throw validationError('body.status', 'assigned requires an assignee (body.assignedTo)');
  }
  if (body.resolution !== undefined && body.status !== 'resolved') {
    throw validationError('body.resolution', 'is accepted only together with status resolved');
  }
  const moving = target !== current.status;
  if (moving) {
    const verdict = checkTransition(current.status, target, principal.role);
    if (!verdict.ok) throw conflict(verdict.reason);
  }

  const set: Record<string, unknown> = { ...after, updatedAt: now };
  let firstResponseAt = current.firstResponseAt;
  let clockStoppedAt = current.clockStoppedAt;
  const statusChanges: Changes = {};
  if (moving) {
    set.status = target;
    statusChanges.status = { from: current.status, to: target };
    if (target === 'resolved') {
      set.resolvedAt = now;
      set.resolution = body.resolution ?? null;
    }
    if (isStopped(target) && !isStopped(current.status)) {
      clockStoppedAt = now;
      // Resolving or closing before any reply: the resolution is the response.
      if (!firstResponseAt) firstResponseAt = now;
    }
    if (!isStopped(target) && isStopped(current.status)) {
      // Reopen: the resolution clock resumes; time spent stopped is not counted.
      clockStoppedAt = null;
      set.resolution = null;
      set.resolvedAt = null;
    }
    if ((set.resolution ?? null) !== (current.resolution ?? null) && set.resolution !== undefined) {
      statusChanges.resolution = { from: current.resolution ?? null, to: set.resolution };
    }
  } else if (body.resolution !== undefined && body.resolution !== current.resolution) {
    // Already resolved: the resolution text is edited like any other content.
    set.resolution = body.resolution;
    content.resolution = { from: current.resolution ?? null, to: body.resolution };
  }
  set.firstResponseAt = firstResponseAt;
  set.clockStoppedAt = clockStoppedAt;
  const sla = computeSla(
    deps.sla,
    {
      before: current,
      after: { status: target, firstResponseAt, clockStoppedAt },
      ...(policy ? { policy } : {}),
      priority: after.priority ?? current.priority,
      vip: current.sla.vip,
    },
    now,
  );
  set.sla = sla;
  set.slaDueMinute = slaDueMinute({ status: target, firstResponseAt, clockStoppedAt, sla }, now);

  const id = current._id;
  const events: ReturnType<typeof buildEvent>[] = [];
  if (Object.keys(content).length > 0) events.push(buildEvent('request.updated', id, ctx, content, now));
  if (Object.keys(assignment).length > 0)
    events.push(buildEvent('request.assigned', id, ctx, assignment, now));
  if (Object.keys(priority).length > 0)
    events.push(buildEvent('request.priority_changed', id, ctx, priority, now));
  if (moving) events.push(buildEvent('request.status_changed', id, ctx, statusChanges, now));
  return { set, events, status: target };
}

/**
 * The policy for the request when a PATCH changes what policies are picked on (its priority or
 * group): the policies as they are now apply. Otherwise none, and the request keeps its own.
 */
async function repickedPolicy(deps: Deps, current: RequestRecord, body: UpdateRequestBody) {
  const priority = body.priority ?? current.priority;
  const groupId = body.assignedGroup !== undefined ? body.assignedGroup : current.assignedGroup;
  if (priority === current.priority && groupId === current.assignedGroup) return undefined;
  return pickPolicy(deps.sla, await deps.slaPolicies.forPicking(), {
    priority,
    groupId,
    vip: current.sla.vip,
  });
}

/**
 * What a bulk-job item's write leaves on the request beside its change (the same write): its key
 * among the newest few, so a replay finds the effect landed (store/bulk-jobs.ts).
 */
const withMark = (current: RequestRecord, mark: string | undefined) =>
  mark ? { bulkMarks: [...(current.bulkMarks ?? []).slice(1 - BULK_MARKS_KEPT), mark] } : {};

/**
 * `ifMatch`: the revisions an `If-Match` header accepts (undefined: no precondition); `mark`: the
 * key of the bulk-job item making this change, if one is.
 */
export async function updateRequest(
  deps: Deps,
  principal: Principal,
  id: string,
  body: UpdateRequestBody,
  ifMatch?: IfMatch,
  mark?: string,
) {
  const ctx = contextFromPrincipal(principal);
  const verified = new Set<string>();
  const { answer, after } = await deps.requests.update(id, async (current) => {
    // A bulk item whose change already landed (a replay): nothing more, the same answer.
    if (mark && current.bulkMarks?.includes(mark))
      return {
        write: null,
        result: {
          answer: { id, status: current.status, updatedAt: current.updatedAt.toISOString() },
          after: current,
        },
      };
    requireRevision(current, ifMatch, 'Request');
    // References are checked only when they change (keeping a since-deactivated assignee is fine).
    if (body.assignedTo && body.assignedTo !== current.assignedTo && !verified.has(body.assignedTo)) {
      await requireAssignee(deps, body.assignedTo, 'body.assignedTo');
      verified.add(body.assignedTo);
    }
    if (
      body.assignedGroup &&
      body.assignedGroup !== current.assignedGroup &&
      !verified.has(body.assignedGroup)
    ) {
      await requireGroup(deps, body.assignedGroup, 'body.assignedGroup');
      verified.add(body.assignedGroup);
    }
    const now = deps.clock();
    const plan = planUpdate(
      deps,
      current,
      body,
      principal,
      ctx,
      now,
      await repickedPolicy(deps, current, body),
    );
    if (plan.events.length === 0) {
      // Nothing changed: no write, no event, updatedAt kept.
      return {
        write: null,
        result: {
          answer: { id, status: current.status, updatedAt: current.updatedAt.toISOString() },
          after: current,
        },
      };
    }
    const after = { ...current, ...plan.set } as RequestRecord;
    const events = await withRequestSnapshot(deps, plan.events, after, now);
    return {
      write: {
        set: { ...plan.set, ...withMark(current, mark) },
        outbox: events.map((e) => eventEntry(deps.names, e)),
      },
      result: {
        answer: { id, status: plan.status, updatedAt: now.toISOString() },
        after: { ...after, rev: revisionAfter(current, true) },
      },
    };
  });
  // The ETag a read now gives, so the next conditional write needs no read first.
  return withEntityTag(answer, after.rev ?? 0, await requestDetail(deps, principal, after));
}

export async function deleteRequest(
  deps: Deps,
  principal: Principal,
  id: string,
  ifMatch?: IfMatch,
  mark?: string,
) {
  return deps.requests.update(id, async (current) => {
    requireRevision(current, ifMatch, 'Request');
    const now = deps.clock();
    const event = buildEvent(
      'request.deleted',
      id,
      contextFromPrincipal(principal),
      { deletedAt: { from: null, to: now.toISOString() } },
      now,
    );
    // The request as it was when deleted (what a mirror drops, and what it was).
    const [announced] = await withRequestSnapshot(deps, [event], { ...current, updatedAt: now }, now);
    return {
      write: {
        set: {
          deletedAt: now,
          deletedBy: principal.userId,
          ...trashKeys(now),
          ...withMark(current, mark),
          updatedAt: now,
        },
        outbox: [eventEntry(deps.names, announced!)],
      },
      result: { deleted: true as const },
    };
  });
}
