import { conflict } from '@support-desk/platform/core';
import type { GroupDoc, UserDoc } from '../store/index.js';
import type { Deps } from './deps.js';
import type { UserPatch } from './user-changes.js';

/**
 * What an identity provider owns of the users and groups it provisions: those fields change only
 * through the provider (SCIM, an LDAP sync), and /v1 answers 409 CONFLICT naming the provider.
 * The rest (a user's `isVip`, membership of local groups, a group's description) stays the
 * administrators'. A user or group is owned while the connection named in its
 * `identityProvider` exists: deleting a connection releases what it provisioned.
 */
const PROVIDER_OWNED_USER_FIELDS = ['email', 'name', 'role', 'status', 'metadata'] as const;

/** The live connection that owns a user or group, or null (local, or its connection was deleted). */
export async function owningProvider(
  deps: Deps,
  identityProvider: string | undefined,
): Promise<string | null> {
  if (!identityProvider || identityProvider === 'local') return null;
  const connection = await deps.identityProviders.findByName(identityProvider);
  return connection ? connection._id : null;
}

const managed = (what: string, provider: string, fields: string[]) =>
  conflict(
    `${what} is managed by identity provider "${provider}": ${fields.join(', ')} can only be changed there`,
  );

/**
 * The ids of `ids` that are groups owned by a live identity provider connection, with their owner
 * (owners come from the groups' directory: local groups cost no read).
 */
async function ownedGroups(deps: Deps, ids: string[]): Promise<Map<string, string>> {
  const owned = new Map<string, string>();
  for (const [id, identityProvider] of await deps.groups.liveOwners(ids)) {
    const owner = await owningProvider(deps, identityProvider);
    if (owner) owned.set(id, owner);
  }
  return owned;
}

/**
 * Refuses a /v1 change of a user that touches what a provider owns: the provider's fields of a
 * provisioned user (only when the value would actually change, so a client that sends a whole
 * object back is not refused), and membership of provider-owned groups for anyone.
 */
export async function assertUserPatchAllowed(deps: Deps, before: UserDoc, patch: UserPatch): Promise<void> {
  const owner = await owningProvider(deps, before.identityProvider);
  if (owner) {
    const touched = PROVIDER_OWNED_USER_FIELDS.filter(
      (f) => patch[f] !== undefined && JSON.stringify(patch[f]) !== JSON.stringify(before[f]),
    );
    if (touched.length > 0) throw managed(`User ${before._id}`, owner, touched);
  }
  if (patch.groups) {
    const after = new Set(patch.groups);
    const changed = [
      ...patch.groups.filter((g) => !before.groups.includes(g)),
      ...before.groups.filter((g) => !after.has(g)),
    ];
    const owned = await ownedGroups(deps, changed);
    const [group, provider] = [...owned][0] ?? [];
    if (group && provider) throw managed(`Membership of group ${group}`, provider, ['members']);
  }
}

/** Deactivation through /v1 (`DELETE`) of a provisioned user: the provider's to decide. */
export async function assertUserDeactivationAllowed(deps: Deps, user: UserDoc): Promise<void> {
  const owner = await owningProvider(deps, user.identityProvider);
  if (owner) throw managed(`User ${user._id}`, owner, ['status']);
}

/** A provider-owned group's name, existence and members are the provider's. */
export async function assertGroupChangeAllowed(deps: Deps, group: GroupDoc, fields: string[]): Promise<void> {
  if (fields.length === 0) return;
  const owner = await owningProvider(deps, group.identityProvider);
  if (owner) throw managed(`Group ${group._id}`, owner, fields);
}

/** `POST /v1/users` may not make a user owned by a live connection (only provisioning does). */
export async function assertNotProvisionedByApi(
  deps: Deps,
  identityProvider: string | undefined,
): Promise<void> {
  const owner = await owningProvider(deps, identityProvider);
  if (owner) {
    throw conflict(
      `identityProvider "${owner}" is an identity provider connection: its users are created by provisioning`,
    );
  }
}
