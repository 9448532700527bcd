import {
  type CreateGroupBody,
  type GroupDetail,
  type MembersQuery,
  newId,
  type UpdateGroupBody,
} from '@support-desk/contracts';
import {
  buildEvent,
  conflict,
  diffChanges,
  type EventContext,
  eventEntry,
  isDuplicateKeyError,
  notFound,
  requireRevision,
  type IfMatch,
  revisionAfter,
  withEntityTag,
  withRevision,
} from '@support-desk/platform/core';
import { type GroupDoc, groupNameKey } from '../store/index.js';
import { assertMayManageAdmins, type CallerScopes } from './admin-authority.js';
import type { Deps } from './deps.js';
import { assertGroupChangeAllowed } from './provider-ownership.js';
import { applyUserPatch } from './user-changes.js';
import { listUsers } from './users.js';

async function findGroup(deps: Deps, id: string): Promise<GroupDoc> {
  const group = await deps.groups.findLive(id);
  if (!group) throw notFound('Group');
  return group;
}

function toDetail(g: GroupDoc, count: number): GroupDetail {
  return {
    id: g._id,
    name: g.name,
    description: g.description ?? '',
    memberCount: count,
    createdAt: new Date(g.createdAt).toISOString(),
    updatedAt: new Date(g.updatedAt).toISOString(),
    // Only on provisioned groups: a local group's answer is as it always was.
    ...(g.identityProvider && g.identityProvider !== 'local'
      ? { identityProvider: g.identityProvider, externalId: g.externalId ?? null }
      : {}),
  };
}

export async function listGroups(deps: Deps) {
  const groups = await deps.groups.listLive();
  const counts = await deps.users.memberCounts(groups.map((g) => g._id));
  return {
    groups: groups.map((g) => ({
      id: g._id,
      name: g.name,
      description: g.description ?? '',
      memberCount: counts.get(g._id) ?? 0,
    })),
  };
}

export async function getGroup(deps: Deps, id: string) {
  const group = await findGroup(deps, id);
  return withRevision(toDetail(group, await deps.users.countMembers(id)), group.rev);
}

const duplicateName = (name: string) => conflict(`A group named "${name}" already exists`);

/**
 * Creates a group (`system.config_changed`). `provisioned`: made by an identity provider
 * connection, which owns it (`identityProvider`, `externalId`).
 */
export async function createGroup(
  deps: Deps,
  ctx: EventContext,
  body: CreateGroupBody,
  provisioned?: { id: string; identityProvider: string; externalId: string | null },
) {
  const now = deps.clock();
  const id = provisioned?.id ?? newId('group', now.getTime());
  const name = body.name.trim();
  const description = body.description ?? '';
  const owner = provisioned ? { identityProvider: provisioned.identityProvider } : {};
  const changes = diffChanges({}, { name, description, ...owner }, [
    'name',
    'description',
    'identityProvider',
  ]);
  const event = buildEvent('system.config_changed', id, ctx, changes, now);
  const group: GroupDoc = {
    _id: id,
    name,
    nameKey: groupNameKey(name),
    description,
    identityProvider: provisioned?.identityProvider ?? 'local',
    externalId: provisioned?.externalId ?? null,
    deletedAt: null,
    createdAt: now,
    updatedAt: now,
  };
  try {
    await deps.groups.insert(group, [eventEntry(deps.names, event)]);
  } catch (err) {
    if (isDuplicateKeyError(err)) throw duplicateName(name);
    throw err;
  }
  return toDetail(group, 0);
}

/** How a group write is made: by its identity provider (SCIM, LDAP), and under an `If-Match`. */
export interface GroupWriteOptions {
  /** The provider that owns the group writes it: its own fields, and no ownership check. */
  byProvider?: boolean;
  /** The revisions an `If-Match` header accepts (undefined: no precondition). */
  ifMatch?: IfMatch;
}

/** `byProvider`: the owning identity provider's change (else a provider-owned name is refused). */
export async function updateGroup(
  deps: Deps,
  ctx: EventContext,
  id: string,
  body: UpdateGroupBody & { externalId?: string | null },
  { byProvider = false, ifMatch }: GroupWriteOptions = {},
) {
  const after: Record<string, unknown> = {};
  if (body.name !== undefined) after.name = body.name.trim();
  if (body.description !== undefined) after.description = body.description;
  // The provider's id of the group changes only by its provider (claimed by the caller first).
  if (byProvider && body.externalId !== undefined) after.externalId = body.externalId;
  let updated: GroupDoc;
  try {
    // The answer is the group as written: no read after the write.
    updated = await deps.groups.update(id, async (before) => {
      requireRevision(before, ifMatch, 'Group');
      const changes = diffChanges(before as unknown as Record<string, unknown>, after, [
        'name',
        'description',
        'externalId',
      ]);
      if (!byProvider) await assertGroupChangeAllowed(deps, before, changes.name ? ['name'] : []);
      if (Object.keys(changes).length === 0) return { write: null, result: before };
      const now = deps.clock();
      const set: Record<string, unknown> = { ...after, updatedAt: now };
      if (changes.name) set.nameKey = groupNameKey(after.name as string);
      const event = buildEvent('system.config_changed', id, ctx, changes, now);
      return {
        write: { set, outbox: [eventEntry(deps.names, event)] },
        result: { ...before, ...set, rev: revisionAfter(before, true) } as GroupDoc,
      };
    });
  } catch (err) {
    if (isDuplicateKeyError(err)) throw duplicateName(after.name as string);
    throw err;
  }
  const detail = toDetail(updated, await deps.users.countMembers(id));
  // The answer is the single read's view: its ETag is the one a read now gives.
  return withEntityTag(detail, updated.rev ?? 0, detail);
}

/**
 * Soft-deletes the group (its snapshot answers `deleted: true` for read models), frees its name,
 * then removes it from every member, each removal a `user.updated` with `changes.groups`.
 */
export async function deleteGroup(
  deps: Deps,
  ctx: EventContext,
  id: string,
  { byProvider = false, ifMatch }: GroupWriteOptions = {},
) {
  await deps.groups.update(id, async (before) => {
    requireRevision(before, ifMatch, 'Group');
    if (!byProvider) await assertGroupChangeAllowed(deps, before, ['existence']);
    const now = deps.clock();
    const event = buildEvent('system.config_changed', id, ctx, { deleted: { from: false, to: true } }, now);
    return {
      write: {
        set: { deletedAt: now, updatedAt: now, nameKey: `deleted:${id}` },
        outbox: [eventEntry(deps.names, event)],
      },
      result: undefined,
    };
  });
  await removeGroupFromMembers(deps, ctx, id);
  return { id, deleted: true as const };
}

/** Bounded by the number of members; idempotent, so a retry after a crash finishes the job. */
async function removeGroupFromMembers(deps: Deps, ctx: EventContext, groupId: string) {
  for (let round = 0; round < 1000; round++) {
    const members = await deps.users.memberIds(groupId, 100);
    if (members.length === 0) return;
    for (const memberId of members) {
      await applyUserPatch(deps, ctx, memberId, (u) => ({ groups: u.groups.filter((g) => g !== groupId) }));
    }
  }
}

export async function listMembers(deps: Deps, id: string, query: MembersQuery) {
  await findGroup(deps, id);
  return listUsers(deps, { ...query, groupId: id });
}

async function membership(deps: Deps, group: GroupDoc) {
  return { id: group._id, name: group.name, memberCount: await deps.users.countMembers(group._id) };
}

// The user's update answers 404 "User not found" itself: no read of the user before it.
export async function addMember(
  deps: Deps,
  ctx: EventContext,
  id: string,
  userId: string,
  caller: CallerScopes = {},
) {
  const group = await findGroup(deps, id);
  await assertGroupChangeAllowed(deps, group, ['members']);
  await applyUserPatch(deps, ctx, userId, (u) => {
    if (u.role === 'admin') assertMayManageAdmins(caller, "Changing an admin's groups");
    return u.groups.includes(id) ? {} : { groups: [...u.groups, id] };
  });
  return membership(deps, group);
}

export async function removeMember(
  deps: Deps,
  ctx: EventContext,
  id: string,
  userId: string,
  caller: CallerScopes = {},
) {
  const group = await findGroup(deps, id);
  await assertGroupChangeAllowed(deps, group, ['members']);
  await applyUserPatch(deps, ctx, userId, (u) => {
    if (u.role === 'admin') assertMayManageAdmins(caller, "Changing an admin's groups");
    return u.groups.includes(id) ? { groups: u.groups.filter((g) => g !== id) } : {};
  });
  return membership(deps, group);
}

/** What identity tells other services about one group (RPC `getGroup`); deleted ones say so. */
export async function groupSnapshot(deps: Deps, id: string) {
  const group = await deps.groups.findAny(id);
  return group ? { id: group._id, name: group.name, deleted: group.deletedAt !== null } : null;
}
