import { newId } from '@support-desk/contracts';
import { conflict, type EventContext, notFound, validationError } from '@support-desk/platform/core';
import type { GroupDoc } from '../store/index.js';
import type { Deps } from './deps.js';
import { createGroup, deleteGroup, updateGroup } from './groups.js';
import { type Connection, findProvisionedUser, setUserGroups } from './provisioning.js';

/**
 * The groups an identity provider connection owns: created, renamed, deleted and their members
 * set through the same use cases as /v1 (`system.config_changed` for the group, `user.updated` per
 * member whose membership changes, `user.role_changed` when a group → role rule applies).
 */

/** At most this many members are read or changed for one group in one call (bounded work). */
export const MAX_GROUP_MEMBERS = 10_000;

export async function findProvisionedGroup(
  deps: Deps,
  connection: Connection,
  id: string,
): Promise<GroupDoc | null> {
  const group = await deps.groups.findLive(id);
  return group?.identityProvider === connection._id ? group : null;
}

async function requireProvisionedGroup(deps: Deps, connection: Connection, id: string): Promise<GroupDoc> {
  const group = await findProvisionedGroup(deps, connection, id);
  if (!group) throw notFound('Group');
  return group;
}

export async function findGroupByExternalId(deps: Deps, connection: Connection, externalId: string) {
  const id = await deps.identityProviders.resolveExternal('group', connection._id, externalId);
  return id ? findProvisionedGroup(deps, connection, id) : null;
}

export interface ProvisionedGroup {
  externalId: string | null;
  displayName: string;
  /** The input is the whole group (SCIM PUT, or after a PATCH): a null `externalId` removes it. */
  wholeGroup?: boolean;
}

function checkInput(input: ProvisionedGroup) {
  const name = input.displayName.trim();
  if (name.length === 0 || name.length > 100)
    throw validationError('displayName', 'must be 1..100 characters');
  if (input.externalId !== null && (input.externalId.length === 0 || input.externalId.length > 200)) {
    throw validationError('externalId', 'must be 1..200 characters');
  }
}

/** Creates or renames a group of the connection: by `id`, else by external id, else a new group. */
export async function provisionGroup(
  deps: Deps,
  connection: Connection,
  ctx: EventContext,
  input: ProvisionedGroup,
  id?: string,
): Promise<{ group: GroupDoc; created: boolean }> {
  checkInput(input);
  let existing: GroupDoc | null = null;
  if (id) existing = await requireProvisionedGroup(deps, connection, id);
  else if (input.externalId) existing = await findGroupByExternalId(deps, connection, input.externalId);
  if (existing) {
    const before = existing.externalId ?? null;
    const externalId = input.externalId ?? (input.wholeGroup ? null : before);
    if (externalId && externalId !== before) {
      const isStale = async (holder: string) =>
        (await findProvisionedGroup(deps, connection, holder)) === null;
      if (
        !(await deps.identityProviders.claimExternal(
          'group',
          connection._id,
          externalId,
          existing._id,
          isStale,
        ))
      ) {
        throw conflict(`A group with externalId ${externalId} already exists`);
      }
    }
    try {
      await updateGroup(
        deps,
        ctx,
        existing._id,
        { name: input.displayName, externalId },
        {
          byProvider: true,
        },
      );
    } catch (err) {
      if (externalId && externalId !== before)
        await deps.identityProviders.releaseExternal('group', connection._id, externalId, existing._id);
      throw err;
    }
    if (before && before !== externalId)
      await deps.identityProviders.releaseExternal('group', connection._id, before, existing._id);
    // Group → role rules name groups by external id: a new one may give its members another role.
    if (externalId !== before && (connection.groupRoles ?? []).length > 0) {
      for (const member of await groupMemberIds(deps, existing._id)) {
        if (await findProvisionedUser(deps, connection, member)) {
          await setUserGroups(deps, connection, ctx, member, (groups) => groups);
        }
      }
    }
    return { group: (await deps.groups.findLive(existing._id))!, created: false };
  }
  const newGroupId = newId('group', deps.clock().getTime());
  const { externalId } = input;
  if (externalId) {
    const isStale = async (holder: string) => (await findProvisionedGroup(deps, connection, holder)) === null;
    if (
      !(await deps.identityProviders.claimExternal('group', connection._id, externalId, newGroupId, isStale))
    ) {
      throw conflict(`A group with externalId ${externalId} already exists`);
    }
  }
  try {
    await createGroup(
      deps,
      ctx,
      { name: input.displayName },
      { id: newGroupId, identityProvider: connection._id, externalId },
    );
  } catch (err) {
    if (externalId)
      await deps.identityProviders.releaseExternal('group', connection._id, externalId, newGroupId);
    throw err;
  }
  return { group: (await deps.groups.findLive(newGroupId))!, created: true };
}

/** Ids of the group's members (whatever their status), up to MAX_GROUP_MEMBERS. */
const groupMemberIds = (deps: Deps, groupId: string) => deps.users.memberIds(groupId, MAX_GROUP_MEMBERS);

export interface MemberChange {
  add?: string[];
  remove?: string[];
  /** The whole membership (SCIM replace); `add`/`remove` are ignored with it. */
  replace?: string[];
}

/**
 * Changes a group's members: each member is a user of this connection (else 400 naming the id),
 * and each user whose membership changes is one write with its events (a user already in, or not
 * in, is left alone). Returns the ids whose membership changed.
 */
export async function changeGroupMembers(
  deps: Deps,
  connection: Connection,
  ctx: EventContext,
  groupId: string,
  change: MemberChange,
): Promise<string[]> {
  await requireProvisionedGroup(deps, connection, groupId);
  const current = new Set(await groupMemberIds(deps, groupId));
  let add = change.add ?? [];
  let remove = change.remove ?? [];
  if (change.replace) {
    const wanted = new Set(change.replace);
    add = [...wanted].filter((id) => !current.has(id));
    remove = [...current].filter((id) => !wanted.has(id));
  } else {
    add = add.filter((id) => !current.has(id));
    remove = remove.filter((id) => current.has(id));
  }
  if (add.length + remove.length > MAX_GROUP_MEMBERS) {
    throw validationError('members', `at most ${MAX_GROUP_MEMBERS} members change in one call`);
  }
  const unknown: string[] = [];
  for (const id of new Set(add)) if (!(await findProvisionedUser(deps, connection, id))) unknown.push(id);
  if (unknown.length > 0)
    throw validationError('members', `unknown user id(s): ${unknown.slice(0, 10).join(', ')}`);
  const changed: string[] = [];
  for (const id of new Set(add)) {
    await setUserGroups(deps, connection, ctx, id, (groups) => [...groups, groupId]);
    changed.push(id);
  }
  for (const id of new Set(remove)) {
    // A member that is no longer this connection's (its connection was re-pointed) is left alone.
    if (!(await findProvisionedUser(deps, connection, id))) continue;
    await setUserGroups(deps, connection, ctx, id, (groups) => groups.filter((g) => g !== groupId));
    changed.push(id);
  }
  return changed;
}

/**
 * Deletes a group of the connection: its members leave it first (so their roles follow the
 * group → role rules), then the group is soft-deleted and its external id freed.
 */
export async function removeProvisionedGroup(
  deps: Deps,
  connection: Connection,
  ctx: EventContext,
  id: string,
) {
  const group = await requireProvisionedGroup(deps, connection, id);
  await changeGroupMembers(deps, connection, ctx, id, { replace: [] });
  await deleteGroup(deps, ctx, id, { byProvider: true });
  if (group.externalId)
    await deps.identityProviders.releaseExternal('group', connection._id, group.externalId, id);
}
