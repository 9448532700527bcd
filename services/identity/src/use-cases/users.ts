import {
  type Changes,
  type CreateUserBody,
  DEFAULT_USER_SORT,
  newId,
  type Principal,
  ROLES,
  USER_STATUSES,
  type UpdatedUser,
  type UpdateUserBody,
  type UserListQuery,
} from '@support-desk/contracts';
import {
  buildEvent,
  conflict,
  type EventContext,
  eventEntry,
  isDuplicateKeyError,
  listPage,
  notFound,
  parseEnumList,
  planList,
  requireRevision,
  searchText,
  unauthorized,
  validationError,
  type IfMatch,
  withEntityTag,
  withRevision,
  withSnapshot,
} from '@support-desk/platform/core';
import { emailKey, type UserDoc, type UserListFilter } from '../store/index.js';
import { userOrders, type UserSort } from '../store/user-order.js';
import { assertMayManageAdmins, type CallerScopes } from './admin-authority.js';
import type { Deps } from './deps.js';
import { checkPasswordPolicy, hashPassword } from './secrets.js';
import { revokeUserCredentials } from './credential-sweep.js';
import {
  assertNotProvisionedByApi,
  assertUserDeactivationAllowed,
  assertUserPatchAllowed,
} from './provider-ownership.js';
import { applyUserPatch, type UserPatch } from './user-changes.js';
import { findUser } from './user-lookups.js';
import { groupNames, groupRefs, toDetail, toListItem, toListItems, userEventSnapshot } from './views.js';

/** `GET /v1/users` and a group's members: filters, sort, and paging by page or by cursor. */
export async function listUsers(deps: Deps, query: UserListQuery) {
  const filter: UserListFilter = {
    role: parseEnumList('query.role', query.role, ROLES),
    status: parseEnumList('query.status', query.status, USER_STATUSES),
    groupId: query.groupId,
    isVip: query.isVip,
    search: searchText(query),
  };
  const plan = planList<UserSort['field']>(query, DEFAULT_USER_SORT, userOrders.kinds, { ...filter });
  const found = await deps.users.page(filter, plan.sort, plan.read);
  const page = listPage(
    found.users,
    plan.window,
    plan.scope,
    (u) => userOrders.position(u, plan.sort),
    found,
  );
  return { users: await toListItems(deps, page.items), pagination: page.pagination };
}

export async function getUser(deps: Deps, id: string) {
  const user = await findUser(deps, id);
  return withRevision(toDetail(user, await groupNames(deps, user.groups)), user.rev);
}

/** Throws 400 naming `field` unless every id is a live group; returns their names. */
async function assertGroupsExist(deps: Deps, ids: string[], field: string) {
  const names = await groupNames(deps, ids);
  const missing = ids.filter((id) => !names.has(id));
  if (missing.length > 0) throw validationError(field, `unknown group id(s): ${missing.join(', ')}`);
  return names;
}

export interface CreateUserInput extends CreateUserBody {
  password?: string;
}

/**
 * Creates a user (`user.created`). `provisioned`: made by an identity provider connection (the
 * provisioning use cases), which may name itself in `identityProvider`; /v1 and deskctl may not.
 */
export async function createUser(
  deps: Deps,
  ctx: EventContext,
  input: CreateUserInput,
  { provisioned, scopes }: { provisioned?: { id: string; externalId: string | null } } & CallerScopes = {},
) {
  if (input.role === 'admin') assertMayManageAdmins({ scopes }, 'Creating an admin');
  if (!provisioned) await assertNotProvisionedByApi(deps, input.identityProvider);
  const groups = [...new Set(input.groups ?? [])];
  const names = await assertGroupsExist(deps, groups, 'body.groups');
  let passwordHash: string | null = null;
  if (input.password !== undefined) {
    const problem = checkPasswordPolicy(input.password);
    if (problem) throw validationError('password', problem);
    passwordHash = await hashPassword(input.password);
  }
  const now = deps.clock();
  const id = provisioned?.id ?? newId('user', now.getTime());
  const fields = {
    email: input.email.trim(),
    name: input.name.trim(),
    role: input.role,
    status: 'active' as const,
    isVip: input.isVip ?? false,
    groups,
    metadata: input.metadata ?? {},
    identityProvider: input.identityProvider ?? 'local',
  };
  const changes: Changes = {};
  for (const [k, v] of Object.entries(fields)) {
    const empty = Array.isArray(v) ? v.length === 0 : typeof v === 'object' && Object.keys(v).length === 0;
    if (!empty) changes[k] = { from: null, to: v };
  }
  const user: UserDoc = {
    _id: id,
    ...fields,
    emailKey: emailKey(input.email),
    externalId: provisioned?.externalId ?? null,
    passwordHash,
    lastLoginAt: null,
    deactivatedAt: null,
    createdAt: now,
    updatedAt: now,
  };
  const event = withSnapshot(buildEvent('user.created', id, ctx, changes, now), toDetail(user, names));
  try {
    await deps.users.insert(user, [eventEntry(deps.names, event)]);
  } catch (err) {
    if (isDuplicateKeyError(err)) throw conflict(`A user with email ${fields.email} already exists`);
    throw err;
  }
  return {
    id,
    email: fields.email,
    name: fields.name,
    role: fields.role,
    status: fields.status,
    isVip: fields.isVip,
    groups: groupRefs(groups, names),
    createdAt: now.toISOString(),
  };
}

async function assertNotLastAdmin(deps: Deps, user: UserDoc): Promise<void> {
  if (user.role !== 'admin' || user.status !== 'active') return;
  // The count includes this user, an active admin: is anyone else left to administer?
  if ((await deps.users.countActiveAdmins()) <= 1)
    throw conflict('The last active admin cannot be demoted or deactivated');
}

/** `ifMatch`: the revisions an `If-Match` header accepts (undefined: no precondition). */
export async function updateUser(
  deps: Deps,
  ctx: EventContext,
  id: string,
  body: UpdateUserBody,
  { ifMatch, scopes }: { ifMatch?: IfMatch } & CallerScopes = {},
) {
  const groups = body.groups ? [...new Set(body.groups)] : undefined;
  const names = groups ? await assertGroupsExist(deps, groups, 'body.groups') : undefined;
  const { user, changes } = await applyUserPatch(deps, ctx, id, async (before) => {
    requireRevision(before, ifMatch, 'User');
    if (before.role === 'admin') assertMayManageAdmins({ scopes }, 'Changing an admin');
    if (body.role === 'admin') assertMayManageAdmins({ scopes }, 'Making a user an admin');
    const demoted = body.role !== undefined && body.role !== 'admin';
    if (demoted || body.status === 'inactive') await assertNotLastAdmin(deps, before);
    const patch: UserPatch = {};
    if (body.name !== undefined) patch.name = body.name.trim();
    if (body.role !== undefined) patch.role = body.role;
    if (groups !== undefined) patch.groups = groups;
    if (body.isVip !== undefined) patch.isVip = body.isVip;
    if (body.status !== undefined) patch.status = body.status;
    if (body.metadata !== undefined) patch.metadata = body.metadata;
    await assertUserPatchAllowed(deps, before, patch);
    return patch;
  });
  const out: UpdatedUser = { id, updatedAt: new Date(user.updatedAt).toISOString() };
  // A new membership's names were read when it was checked.
  const userGroupNames = names ?? (await groupNames(deps, user.groups));
  for (const field of Object.keys(changes)) {
    if (field === 'groups') out.groups = groupRefs(user.groups, userGroupNames);
    else (out as Record<string, unknown>)[field] = changes[field].to;
  }
  // The ETag a read now gives, so the next conditional write needs no read first.
  return withEntityTag(out, user.rev ?? 0, toDetail(user, userGroupNames));
}

export async function deactivateUser(
  deps: Deps,
  ctx: EventContext,
  id: string,
  { ifMatch, scopes }: { ifMatch?: IfMatch } & CallerScopes = {},
) {
  const { user } = await applyUserPatch(deps, ctx, id, async (before) => {
    requireRevision(before, ifMatch, 'User');
    if (before.role === 'admin') assertMayManageAdmins({ scopes }, 'Deactivating an admin');
    await assertUserDeactivationAllowed(deps, before);
    await assertNotLastAdmin(deps, before);
    return { status: 'inactive' };
  });
  return {
    id,
    status: 'inactive' as const,
    deactivatedAt: new Date(user.deactivatedAt ?? user.updatedAt).toISOString(),
  };
}

export async function getMe(deps: Deps, principal: Principal) {
  const user = await deps.users.findById(principal.userId);
  if (!user) throw unauthorized('The credential refers to an unknown user');
  const item = toListItem(user, await groupNames(deps, user.groups));
  return {
    id: item.id,
    email: item.email,
    name: item.name,
    role: item.role,
    status: item.status,
    isVip: item.isVip,
    groups: item.groups,
    permissions: [...principal.scopes],
    scopes: [...principal.scopes],
    credential: principal.credential,
  };
}

/**
 * Sets a local password (deskctl). Emits `user.updated` with `changes.password` redacted, and
 * signs the user out everywhere: sessions and OAuth grants made with the old password end (API
 * keys stay: an administrator issued them, the password did not).
 */
export async function setPassword(deps: Deps, ctx: EventContext, email: string, password: string) {
  const problem = checkPasswordPolicy(password);
  if (problem) throw validationError('password', problem);
  const user = await deps.users.findByEmail(email, { forUpdate: true });
  if (!user) throw notFound('User');
  if (user.identityProvider !== 'local') {
    throw conflict(`${user.email} signs in through ${user.identityProvider}; a local password cannot be set`);
  }
  const hash = await hashPassword(password);
  await deps.users.update(
    user._id,
    async (current) => {
      const now = deps.clock();
      const event = withSnapshot(
        buildEvent(
          'user.updated',
          user._id,
          ctx,
          { password: { from: '[redacted]', to: '[redacted]' } },
          now,
        ),
        await userEventSnapshot(deps, { ...current, updatedAt: now }),
      );
      return {
        write: { set: { passwordHash: hash, updatedAt: now }, outbox: [eventEntry(deps.names, event)] },
        result: undefined,
      };
    },
    user,
  );
  await revokeUserCredentials(deps, ctx, user._id, {
    reason: 'password_changed',
    apiKeys: false,
    createdBefore: null,
  });
  return { id: user._id, email: user.email };
}
