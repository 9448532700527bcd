import { newId, ROLES, type Role } from '@support-desk/contracts';
import {
  conflict,
  type EventContext,
  isDuplicateKeyError,
  notFound,
  validationError,
} from '@support-desk/platform/core';
import { emailKey, type IdentityProviderDoc, type UserDoc } from '../store/index.js';
import type { Deps } from './deps.js';
import { firstUserProblem } from './input-checks.js';
import { applyUserPatch, type UserPatch } from './user-changes.js';
import { createUser } from './users.js';

/**
 * Provisioning: what an identity provider connection does to the users it owns, shared by SCIM
 * (pushed) and the LDAP sync (pulled). Every change goes through the same use cases as /v1
 * (`createUser`, `applyUserPatch`), so it emits the same events, with the connection as actor and
 * `scim`/`ldap` as source (`provisioningContext`).
 */
export type Connection = Pick<IdentityProviderDoc, '_id' | 'kind' | 'defaultRole' | 'groupRoles'>;

export interface ProvisionedUser {
  /** The provider's id of the user (SCIM `externalId`, an LDAP entry's id); null when it sends none. */
  externalId: string | null;
  email: string;
  name: string;
  active: boolean;
  /** The provider's attributes; replaces the user's `metadata` (absent: left as it is). */
  metadata?: Record<string, string>;
  /**
   * The input is the whole user (a SCIM PUT, or the resource after a PATCH), so an `externalId`
   * of null removes the user's; otherwise null leaves it as it is.
   */
  wholeUser?: boolean;
}

/** The user, when it is this connection's (a user of another connection or a local one is not). */
export async function findProvisionedUser(
  deps: Deps,
  connection: Connection,
  id: string,
): Promise<UserDoc | null> {
  const user = await deps.users.findById(id);
  return user?.identityProvider === connection._id ? user : null;
}

async function requireProvisionedUser(deps: Deps, connection: Connection, id: string): Promise<UserDoc> {
  const user = await findProvisionedUser(deps, connection, id);
  if (!user) throw notFound('User');
  return user;
}

/** This connection's user of that external id, or null. */
export async function findByExternalId(deps: Deps, connection: Connection, externalId: string) {
  const id = await deps.identityProviders.resolveExternal('user', connection._id, externalId);
  return id ? findProvisionedUser(deps, connection, id) : null;
}

function checkInput(input: ProvisionedUser) {
  const problem = firstUserProblem({
    email: input.email.trim(),
    name: input.name.trim(),
    role: 'viewer',
    ...(input.metadata ? { metadata: input.metadata } : {}),
  });
  if (problem) throw validationError(problem.field, problem.message);
  if (input.externalId !== null && (input.externalId.length === 0 || input.externalId.length > 200)) {
    throw validationError('externalId', 'must be 1..200 characters');
  }
}

const RANK: Record<Role, number> = { viewer: 0, agent: 1, admin: 2 };

/** How a role rule may name one of the connection's groups: never by its display name. */
export interface GroupRefs {
  /** Support Desk's id of the group (`grp_…`). */
  id: string;
  /** The provider's id of it: SCIM `externalId`, the LDAP entry's id attribute (`entryUUID`). */
  externalId: string | null;
}

/**
 * The role of a member of these groups (this connection's groups): the highest role the
 * connection's group → role rules give, else its default role. A rule names a group by its
 * external id or its Support Desk id (an LDAP connection's rules may give the DN: the sync
 * resolves it to the entry's id, `ruleByDn`), never by its display name, which the provider (or
 * anyone who may rename a group there) changes at will.
 */
export function roleFor(connection: Connection, groups: Iterable<GroupRefs>): Role {
  const refs = new Set([...groups].flatMap((g) => [g.id, ...(g.externalId ? [g.externalId] : [])]));
  let role: Role | null = null;
  for (const rule of connection.groupRoles ?? []) {
    if (refs.has(rule.group.trim()) && ROLES.includes(rule.role)) {
      if (!role || RANK[rule.role] > RANK[role]) role = rule.role;
    }
  }
  return role ?? connection.defaultRole;
}

/** The groups among `ids` that this connection owns (local groups grant no role). */
async function connectionGroups(deps: Deps, connection: Connection, ids: string[]): Promise<GroupRefs[]> {
  const groups = await Promise.all(ids.map((id) => deps.groups.findLive(id)));
  return groups
    .filter((g) => g?.identityProvider === connection._id)
    .map((g) => ({ id: g!._id, externalId: g!.externalId ?? null }));
}

/**
 * Creates or updates a user of the connection: by `id` when given (SCIM's replace and patch), else
 * by external id, else a new user. Returns the user as written and whether it was created.
 * `active: false` deactivates (credentials end at once, as with `DELETE /v1/users/:id`); `true`
 * reactivates, as `PATCH /v1/users/:id {status: "active"}` does (revoked credentials stay revoked).
 */
export async function provisionUser(
  deps: Deps,
  connection: Connection,
  ctx: EventContext,
  input: ProvisionedUser,
  id?: string,
): Promise<{ user: UserDoc; created: boolean }> {
  checkInput(input);
  let existing: UserDoc | null = null;
  if (id) existing = await requireProvisionedUser(deps, connection, id);
  else if (input.externalId) existing = await findByExternalId(deps, connection, input.externalId);
  if (existing)
    return { user: await updateProvisionedUser(deps, connection, ctx, existing, input), created: false };
  return { user: await createProvisionedUser(deps, connection, ctx, input), created: true };
}

async function createProvisionedUser(
  deps: Deps,
  connection: Connection,
  ctx: EventContext,
  input: ProvisionedUser,
) {
  const id = newId('user', deps.clock().getTime());
  const { externalId } = input;
  if (externalId) {
    const isStale = async (holder: string) => (await findProvisionedUser(deps, connection, holder)) === null;
    if (!(await deps.identityProviders.claimExternal('user', connection._id, externalId, id, isStale))) {
      throw conflict(`A user with externalId ${externalId} already exists`);
    }
  }
  try {
    await createUser(
      deps,
      ctx,
      {
        email: input.email,
        name: input.name,
        role: roleFor(connection, []),
        metadata: input.metadata ?? {},
        identityProvider: connection._id,
      },
      { provisioned: { id, externalId } },
    );
  } catch (err) {
    if (externalId) await deps.identityProviders.releaseExternal('user', connection._id, externalId, id);
    throw err;
  }
  if (!input.active) return setUserActive(deps, connection, ctx, id, false);
  return (await deps.users.findById(id))!;
}

async function updateProvisionedUser(
  deps: Deps,
  connection: Connection,
  ctx: EventContext,
  user: UserDoc,
  input: ProvisionedUser,
) {
  const email = input.email.trim();
  const newKey = emailKey(email);
  const oldKey = user.emailKey;
  if (newKey !== oldKey && !(await deps.users.claimEmail(newKey, user._id))) {
    throw conflict(`A user with email ${email} already exists`);
  }
  const externalId = input.externalId ?? (input.wholeUser ? null : (user.externalId ?? null));
  if (externalId && externalId !== user.externalId) {
    const isStale = async (holder: string) => (await findProvisionedUser(deps, connection, holder)) === null;
    if (
      !(await deps.identityProviders.claimExternal('user', connection._id, externalId, user._id, isStale))
    ) {
      throw conflict(`A user with externalId ${externalId} already exists`);
    }
  }
  let after: UserDoc;
  try {
    ({ user: after } = await applyUserPatch(deps, ctx, user._id, async (before) => {
      const patch: UserPatch = {
        email,
        name: input.name.trim(),
        status: input.active ? 'active' : 'inactive',
        externalId,
        role: roleFor(connection, await connectionGroups(deps, connection, before.groups)),
      };
      if (input.metadata) patch.metadata = input.metadata;
      return patch;
    }));
  } catch (err) {
    if (isDuplicateKeyError(err)) throw conflict(`A user with email ${email} already exists`);
    throw err;
  }
  if (newKey !== oldKey) await deps.users.releaseEmail(oldKey, user._id);
  if (user.externalId && user.externalId !== externalId) {
    await deps.identityProviders.releaseExternal('user', connection._id, user.externalId, user._id);
  }
  return after;
}

/** Deactivates (`false`) or reactivates (`true`) a user of the connection. */
export async function setUserActive(
  deps: Deps,
  connection: Connection,
  ctx: EventContext,
  id: string,
  active: boolean,
): Promise<UserDoc> {
  await requireProvisionedUser(deps, connection, id);
  const { user } = await applyUserPatch(deps, ctx, id, () => ({ status: active ? 'active' : 'inactive' }));
  return user;
}

/**
 * Sets which of the connection's groups a user is in (memberships of local groups stay), and the
 * role those groups give. One write, with its `user.updated` (`changes.groups`) and, when the role
 * changes, `user.role_changed`.
 */
export async function setUserGroups(
  deps: Deps,
  connection: Connection,
  ctx: EventContext,
  id: string,
  change: (connectionGroups: string[]) => string[],
): Promise<UserDoc> {
  await requireProvisionedUser(deps, connection, id);
  const { user } = await applyUserPatch(deps, ctx, id, async (before) => {
    const groups = await Promise.all(before.groups.map((g) => deps.groups.findLive(g)));
    const owned = new Set(groups.filter((g) => g?.identityProvider === connection._id).map((g) => g!._id));
    const next = [...new Set(change(before.groups.filter((g) => owned.has(g))))];
    const local = before.groups.filter((g) => !owned.has(g) && groups.some((x) => x?._id === g));
    return {
      groups: [...local, ...next],
      role: roleFor(connection, await connectionGroups(deps, connection, next)),
    };
  });
  return user;
}
