import type { GroupDoc } from '../../store/index.js';
import type { Deps } from '../deps.js';
import {
  changeGroupMembers,
  findGroupByExternalId,
  findProvisionedGroup,
  MAX_GROUP_MEMBERS,
  provisionGroup,
  removeProvisionedGroup,
} from '../provisioning-groups.js';
import { type ListParams, listResponse, pageOf, project, type ScimCall } from './calls.js';
import { ScimError, scimNotFound } from './errors.js';
import { equalityOf, matches, parseFilter } from './filter.js';
import { assertKept } from './kept.js';
import { applyPatch } from './patch.js';
import { externalIdOf, groupName, groupResource, memberIds } from './resources.js';
import { GROUP_RESOURCE } from './schema.js';

/** A filter without an equality the store can look up reads at most this many of the connection's groups. */
const MAX_SCANNED_GROUPS = 10_000;

const withoutMembers = (params: ListParams) => {
  const excluded = (params.excludedAttributes ?? '')
    .toLowerCase()
    .split(',')
    .map((s) => s.trim());
  const only = (params.attributes ?? '')
    .toLowerCase()
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean);
  return excluded.includes('members') || (only.length > 0 && !only.some((a) => a.startsWith('members')));
};

/** The group's resource; its members (read from the store, at most MAX_GROUP_MEMBERS) unless excluded. */
async function resourceOf(deps: Deps, call: ScimCall, group: GroupDoc, params: ListParams = {}) {
  if (withoutMembers(params)) return groupResource(group, null, call.at);
  const members = await deps.users.membersOf(group._id, MAX_GROUP_MEMBERS);
  return groupResource(
    group,
    members.map((u) => ({ id: u._id, name: u.name })),
    call.at,
  );
}

async function requireGroup(deps: Deps, call: ScimCall, id: string) {
  const group = await findProvisionedGroup(deps, call.connection, id);
  if (!group) throw scimNotFound('Group', id);
  return group;
}

export async function getScimGroup(deps: Deps, call: ScimCall, id: string, params: ListParams = {}) {
  return project(await resourceOf(deps, call, await requireGroup(deps, call, id), params), params);
}

/**
 * GET /Groups: the connection's live groups by name (two equalities), or the one an equality names (`displayName`, `externalId`, `id`), checked
 * against the whole filter, then paged. Members are read only when the answer shows them.
 */
export async function listScimGroups(deps: Deps, call: ScimCall, params: ListParams) {
  const filter = parseFilter(params.filter);
  const { startIndex, count } = pageOf(params);
  const own = (g: GroupDoc | null) => (g?.identityProvider === call.connection._id ? [g] : []);
  const eq = equalityOf(filter, ['id', 'displayname', 'externalid']);
  let groups: GroupDoc[];
  if (eq?.attr === 'id') groups = own(await deps.groups.findLive(eq.value));
  else if (eq?.attr === 'displayname') groups = own(await deps.groups.findLiveByName(eq.value));
  else if (eq?.attr === 'externalid')
    groups = own(await findGroupByExternalId(deps, call.connection, eq.value));
  else groups = await deps.groups.ofProvider(call.connection._id, MAX_SCANNED_GROUPS);
  // The filter is checked without members unless it names them (members are read per group).
  const filterNamesMembers = /members/i.test(params.filter ?? '');
  const matching: GroupDoc[] = [];
  for (const g of groups) {
    const resource = filterNamesMembers ? await resourceOf(deps, call, g) : groupResource(g, null, call.at);
    if (matches(resource, filter)) matching.push(g);
  }
  const page = matching.slice(startIndex - 1, startIndex - 1 + count);
  const resources = [];
  for (const g of page) resources.push(project(await resourceOf(deps, call, g, params), params));
  return listResponse(resources, matching.length, startIndex);
}

/** POST /Groups: a new group of the connection with its members (409 `uniqueness` for a taken name). */
export async function createScimGroup(deps: Deps, call: ScimCall, body: Record<string, unknown>) {
  const externalId = externalIdOf(body);
  if (externalId && (await findGroupByExternalId(deps, call.connection, externalId))) {
    throw new ScimError(409, 'uniqueness', `A group with externalId ${externalId} already exists`);
  }
  const members = memberIds(body);
  const { group } = await provisionGroup(deps, call.connection, call.ctx, {
    externalId,
    displayName: groupName(body),
  });
  if (members.length > 0)
    await changeGroupMembers(deps, call.connection, call.ctx, group._id, { add: members });
  return getScimGroup(deps, call, group._id);
}

/** PUT /Groups/:id: the name and the whole membership as sent. */
export async function replaceScimGroup(
  deps: Deps,
  call: ScimCall,
  id: string,
  body: Record<string, unknown>,
) {
  await requireGroup(deps, call, id);
  await provisionGroup(
    deps,
    call.connection,
    call.ctx,
    { externalId: externalIdOf(body), displayName: groupName(body), wholeGroup: true },
    id,
  );
  await changeGroupMembers(deps, call.connection, call.ctx, id, { replace: memberIds(body) });
  return getScimGroup(deps, call, id);
}

/**
 * PATCH /Groups/:id: the operations applied to the group's resource; a new name is a rename, and
 * the members that appear or disappear are added or removed (one user write each).
 */
export async function patchScimGroup(deps: Deps, call: ScimCall, id: string, body: unknown) {
  const group = await requireGroup(deps, call, id);
  const current = await resourceOf(deps, call, group);
  const { patched, touched } = applyPatch(current, body, GROUP_RESOURCE);
  const name = groupName(patched);
  const externalId = externalIdOf(patched);
  const members = memberIds(patched);
  assertKept(
    patched,
    groupResource(
      { ...group, name, externalId },
      members.map((m) => ({ id: m, name: '' })),
      call.at,
    ),
    touched,
  );
  if (name !== group.name || externalId !== (group.externalId ?? null)) {
    await provisionGroup(
      deps,
      call.connection,
      call.ctx,
      { externalId, displayName: name, wholeGroup: true },
      id,
    );
  }
  const before = new Set(memberIds(current));
  const after = new Set(members);
  await changeGroupMembers(deps, call.connection, call.ctx, id, {
    add: [...after].filter((m) => !before.has(m)),
    remove: [...before].filter((m) => !after.has(m)),
  });
  return getScimGroup(deps, call, id);
}

/** DELETE /Groups/:id: its members leave it, then it is deleted (a later GET answers 404). */
export async function deleteScimGroup(deps: Deps, call: ScimCall, id: string) {
  await requireGroup(deps, call, id);
  await removeProvisionedGroup(deps, call.connection, call.ctx, id);
}
