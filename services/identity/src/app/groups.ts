import { type CreateGroupBody, type GroupDetail, newId, type UpdateGroupBody } from '@support-desk/contracts';
import {
  buildEvent,
  conflict,
  diffChanges,
  type EventContext,
  eventEntry,
  isDuplicateKeyError,
  notFound,
  pushOutbox,
} from '@support-desk/platform';
import { type GroupDoc, groupNameKey, type UserDoc } from '../store/index.js';
import type { Deps } from './context.js';
import { applyUserPatch } from './userChanges.js';
import { findUser, listUsers } from './users.js';

async function findGroup(deps: Deps, id: string): Promise<GroupDoc> {
  const group = await deps.store.groups.findOne({ _id: id, deletedAt: null }).lean<GroupDoc>();
  if (!group) throw notFound('Group');
  return group;
}

/** Members are counted whatever their status: an inactive member is still a member. */
const memberCount = (deps: Deps, id: string) => deps.store.users.countDocuments({ groups: id });

function toDetail(g: GroupDoc, count: number): GroupDetail {
  return {
    id: g._id,
    name: g.name,
    description: g.description ?? '',
    memberCount: count,
    createdAt: new Date(g.createdAt).toISOString(),
    updatedAt: new Date(g.updatedAt).toISOString(),
  };
}

export async function listGroups(deps: Deps) {
  const groups = await deps.store.groups.find({ deletedAt: null }).sort({ nameKey: 1 }).lean<GroupDoc[]>();
  const counts = await deps.store.users
    .aggregate<{ _id: string; n: number }>([
      { $match: { groups: { $in: groups.map((g) => g._id) } } },
      { $unwind: '$groups' },
      { $group: { _id: '$groups', n: { $sum: 1 } } },
    ])
    .exec();
  const byId = new Map(counts.map((c) => [c._id, c.n]));
  return {
    groups: groups.map((g) => ({
      id: g._id,
      name: g.name,
      description: g.description ?? '',
      memberCount: byId.get(g._id) ?? 0,
    })),
  };
}

export async function getGroup(deps: Deps, id: string) {
  const group = await findGroup(deps, id);
  return toDetail(group, await memberCount(deps, id));
}

const duplicateName = (name: string) => conflict(`A group named "${name}" already exists`);

export async function createGroup(deps: Deps, ctx: EventContext, body: CreateGroupBody) {
  const now = deps.clock();
  const id = newId('group', now.getTime());
  const name = body.name.trim();
  const description = body.description ?? '';
  const changes = diffChanges({}, { name, description }, ['name', 'description']);
  const event = buildEvent('system.config_changed', id, ctx, changes, now);
  try {
    const doc = await deps.store.groups.create({
      _id: id,
      name,
      nameKey: groupNameKey(name),
      description,
      deletedAt: null,
      createdAt: now,
      updatedAt: now,
      outbox: [eventEntry(deps.names, event)],
    });
    deps.kick();
    return toDetail(doc.toObject(), 0);
  } catch (err) {
    if (isDuplicateKeyError(err)) throw duplicateName(name);
    throw err;
  }
}

export async function updateGroup(deps: Deps, ctx: EventContext, id: string, body: UpdateGroupBody) {
  const before = await findGroup(deps, id);
  const after: Record<string, unknown> = {};
  if (body.name !== undefined) after.name = body.name.trim();
  if (body.description !== undefined) after.description = body.description;
  const changes = diffChanges(before as unknown as Record<string, unknown>, after, ['name', 'description']);
  if (Object.keys(changes).length === 0) return toDetail(before, await memberCount(deps, id));
  const now = deps.clock();
  const set: Record<string, unknown> = { ...after, updatedAt: now };
  if (changes.name) set.nameKey = groupNameKey(after.name as string);
  const event = buildEvent('system.config_changed', id, ctx, changes, now);
  try {
    const res = await deps.store.groups.updateOne(
      { _id: id, deletedAt: null },
      { $set: set, $push: pushOutbox([eventEntry(deps.names, event)]) },
    );
    if (res.modifiedCount === 0) throw notFound('Group');
    deps.kick();
    return getGroup(deps, id);
  } catch (err) {
    if (isDuplicateKeyError(err)) throw duplicateName(after.name as string);
    throw err;
  }
}

/**
 * Soft-deletes the group (its snapshot answers `deleted: true` for read models), frees its name,
 * then removes it from every member, each removal a `user.updated` with `changes.groups`.
 */
export async function deleteGroup(deps: Deps, ctx: EventContext, id: string) {
  const before = await findGroup(deps, id);
  const now = deps.clock();
  const event = buildEvent('system.config_changed', id, ctx, { deleted: { from: false, to: true } }, now);
  const res = await deps.store.groups.updateOne(
    { _id: id, deletedAt: null },
    {
      $set: { deletedAt: now, updatedAt: now, nameKey: `deleted:${id}` },
      $push: pushOutbox([eventEntry(deps.names, event)]),
    },
  );
  if (res.modifiedCount === 0) throw notFound('Group');
  deps.kick();
  await removeGroupFromMembers(deps, ctx, before._id);
  return { id, deleted: true as const };
}

/** Bounded by the number of members; idempotent, so a retry after a crash finishes the job. */
async function removeGroupFromMembers(deps: Deps, ctx: EventContext, groupId: string) {
  for (let round = 0; round < 1000; round++) {
    const members = await deps.store.users.find({ groups: groupId }, { _id: 1 }).limit(100).lean<UserDoc[]>();
    if (members.length === 0) return;
    for (const m of members) {
      await applyUserPatch(deps, ctx, m._id, (u) => ({ groups: u.groups.filter((g) => g !== groupId) }));
    }
  }
}

export async function listMembers(deps: Deps, id: string, page?: number, limit?: number) {
  await findGroup(deps, id);
  return listUsers(deps, { groupId: id, page, limit });
}

async function membership(deps: Deps, group: GroupDoc) {
  return { id: group._id, name: group.name, memberCount: await memberCount(deps, group._id) };
}

export async function addMember(deps: Deps, ctx: EventContext, id: string, userId: string) {
  const group = await findGroup(deps, id);
  await findUser(deps, userId);
  await applyUserPatch(deps, ctx, userId, (u) =>
    u.groups.includes(id) ? {} : { groups: [...u.groups, id] },
  );
  return membership(deps, group);
}

export async function removeMember(deps: Deps, ctx: EventContext, id: string, userId: string) {
  const group = await findGroup(deps, id);
  await findUser(deps, userId);
  await applyUserPatch(deps, ctx, userId, (u) =>
    u.groups.includes(id) ? { groups: u.groups.filter((g) => g !== id) } : {},
  );
  return membership(deps, group);
}
