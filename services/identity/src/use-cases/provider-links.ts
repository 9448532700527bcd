import type { UserDetail } from '@support-desk/contracts';
import { conflict, type EventContext, validationError } from '@support-desk/platform/core';
import type { UserDoc } from '../store/index.js';
import type { Deps } from './deps.js';
import { findIdentityProvider } from './identity-providers.js';
import { findProvisionedUser } from './provisioning.js';
import { owningProvider } from './provider-ownership.js';
import { applyUserPatch } from './user-changes.js';
import { findUser } from './user-lookups.js';
import { groupNames, toDetail } from './views.js';

/**
 * Linking an existing user to an identity provider connection: what an administrator does when a
 * provider's user already exists here (a SCIM create of that email is a deliberate 409 CONFLICT:
 * a provider never takes over an account by itself). After the link the user is the connection's,
 * under that external id: the provider's SCIM calls for the external id (or its look-ups by
 * userName) find and manage the user, and /v1 answers 409 for the fields the provider owns.
 * As Okta and Entra ID "match" an existing account, but decided by an administrator here.
 *
 * Refused (409) when it would take something from someone: another user already holds that
 * external id of that connection; the user is managed by another live connection (move them by
 * deleting that connection first, which releases its users); the user is linked to this
 * connection under another external id (the provider changes its own ids); the administrator
 * links themselves (their password sign-in, and with it the console, would end).
 */
export interface LinkInput {
  userId: string;
  provider: string;
  externalId: string;
}

const EXTERNAL_ID_MAX = 200;

function checkedExternalId(raw: string): string {
  const externalId = raw.trim();
  if (externalId.length === 0 || externalId.length > EXTERNAL_ID_MAX)
    throw validationError('externalId', `must be 1..${EXTERNAL_ID_MAX} characters`);
  return externalId;
}

const describe = (u: Pick<UserDoc, '_id' | 'email'>) => `${u.email} (${u._id})`;

export async function linkUserToProvider(
  deps: Deps,
  ctx: EventContext,
  input: LinkInput,
): Promise<{ user: UserDetail; linked: boolean }> {
  const externalId = checkedExternalId(input.externalId);
  const connection = await findIdentityProvider(deps, input.provider);
  const user = await findUser(deps, input.userId);
  const view = async (u: UserDoc) => toDetail(u, await groupNames(deps, u.groups));
  if (user.identityProvider === connection._id && user.externalId === externalId)
    return { user: await view(user), linked: false };
  if (ctx.actor.id === user._id)
    throw conflict('You cannot link your own account: you would lose password sign-in (and this console)');
  const owner = await owningProvider(deps, user.identityProvider);
  if (owner === connection._id)
    throw conflict(
      `User ${describe(user)} is already linked to "${owner}" as ${user.externalId ?? '(no external id)'}: the provider changes its own external ids`,
    );
  if (owner)
    throw conflict(
      `User ${describe(user)} is managed by identity provider "${owner}": a user is linked to one provider (deleting that connection releases its users)`,
    );
  const holderId = await deps.identityProviders.resolveExternal('user', connection._id, externalId);
  const isStale = async (holder: string) => (await findProvisionedUser(deps, connection, holder)) === null;
  const claimed = await deps.identityProviders.claimExternal(
    'user',
    connection._id,
    externalId,
    user._id,
    isStale,
  );
  if (!claimed) {
    const holder = holderId ? await deps.users.findById(holderId) : null;
    throw conflict(
      `External id ${externalId} of "${connection._id}" is already linked to ${holder ? `user ${describe(holder)}` : 'another user'}`,
    );
  }
  let linked: UserDoc;
  try {
    ({ user: linked } = await applyUserPatch(deps, ctx, user._id, (before) => {
      // Decided on the user as written: a provider that took them meanwhile keeps them.
      if (before.identityProvider !== user.identityProvider)
        throw conflict(`User ${describe(before)} changed identity provider meanwhile; try again`);
      return { identityProvider: connection._id, externalId };
    }));
  } catch (err) {
    await deps.identityProviders.releaseExternal('user', connection._id, externalId, user._id);
    throw err;
  }
  // Only local users sign in with a password: the sessions that sign-in made end with it.
  await deps.sessions.removeAllOf(user._id, null);
  return { user: await view(linked), linked: true };
}

/** A user as the console's Users page lists them: with who manages them. */
export interface DirectoryUser {
  id: string;
  email: string;
  name: string;
  role: UserDoc['role'];
  status: UserDoc['status'];
  identityProvider: string;
  externalId: string | null;
  /** Not managed by a live connection: an administrator may link them to one. */
  linkable: boolean;
  createdAt: string;
}

export interface DirectoryQuery {
  /** Case-insensitive part of the name or email. */
  search?: string;
  /** `local`, or a connection's name. */
  identityProvider?: string;
  status?: UserDoc['status'];
  page: number;
  limit: number;
}

/**
 * A page of users (newest first) with their identity provider and external id, and the live
 * connections a user can be linked to: what the console's Users page shows.
 */
export async function listDirectory(deps: Deps, query: DirectoryQuery) {
  const providers = (await deps.identityProviders.list()).map((p) => p._id);
  const live = new Set(providers);
  const { users, total } = await deps.users.list(
    {
      ...(query.search ? { search: query.search } : {}),
      ...(query.identityProvider ? { identityProvider: query.identityProvider } : {}),
      ...(query.status ? { status: [query.status] } : {}),
    },
    { skip: (query.page - 1) * query.limit, limit: query.limit },
  );
  const listed: DirectoryUser[] = users.map((u) => ({
    id: u._id,
    email: u.email,
    name: u.name,
    role: u.role,
    status: u.status,
    identityProvider: u.identityProvider,
    externalId: u.externalId ?? null,
    linkable: !live.has(u.identityProvider),
    createdAt: new Date(u.createdAt).toISOString(),
  }));
  return { users: listed, total, providers };
}
