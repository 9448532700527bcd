import type { UserDoc } from '../../store/index.js';
import type { Deps } from '../deps.js';
import { findByExternalId, findProvisionedUser, provisionUser, setUserActive } from '../provisioning.js';
import { type ListParams, listResponse, pageOf, project, type ScimCall } from './calls.js';
import { ScimError, scimNotFound } from './errors.js';
import { equalityOf, matches, parseFilter } from './filter.js';
import { assertKept } from './kept.js';
import { applyPatch, type Touched } from './patch.js';
import { attr, toProvisionedUser, userResource } from './resources.js';
import { USER_RESOURCE } from './schema.js';

/** A filter without an equality the store can look up reads at most this many of the connection's users. */
const MAX_SCAN = 10_000;

async function resourcesOf(deps: Deps, call: ScimCall, users: UserDoc[]) {
  const owners = await deps.groups.liveOwners(users.flatMap((u) => u.groups));
  const names = await deps.groups.liveNames(
    [...owners].filter(([, o]) => o === call.connection._id).map(([id]) => id),
  );
  return users.map((u) =>
    userResource(
      u,
      u.groups.filter((g) => names.has(g)).map((g) => ({ id: g, name: names.get(g)! })),
      call.at,
    ),
  );
}

async function requireUser(deps: Deps, call: ScimCall, id: string) {
  const user = await findProvisionedUser(deps, call.connection, id);
  if (!user) throw scimNotFound('User', id);
  return user;
}

export async function getScimUser(deps: Deps, call: ScimCall, id: string, params: ListParams = {}) {
  const [resource] = await resourcesOf(deps, call, [await requireUser(deps, call, id)]);
  return project(resource, params);
}

/** The users an equality names (one look-up by `_id` each), or null when the filter has none. */
async function candidates(deps: Deps, call: ScimCall, filter: ReturnType<typeof parseFilter>) {
  const eq = equalityOf(filter, ['id', 'username', 'emails.value', 'externalid', 'displayname']);
  if (!eq) return null;
  const own = (u: UserDoc | null) => (u?.identityProvider === call.connection._id ? [u] : []);
  switch (eq.attr) {
    case 'id':
      return own(await findProvisionedUser(deps, call.connection, eq.value));
    case 'username':
    case 'emails.value':
      return own(await deps.users.findByEmail(eq.value));
    case 'externalid':
      return own(await findByExternalId(deps, call.connection, eq.value));
    default:
      return deps.users.namedOfProvider(call.connection._id, eq.value, MAX_SCAN);
  }
}

/**
 * GET /Users: without a filter, a page of the connection's users from the store (newest first,
 * walked like /v1/users); with one, the users its equality names (`userName` and `emails.value`:
 * the email's entry read by `_id`; `externalId`: the link's; `id`; `displayName`: two equalities)
 * or else up to MAX_SCAN of the connection's users (one equality), checked against the whole
 * filter, then paged.
 */
export async function listScimUsers(deps: Deps, call: ScimCall, params: ListParams) {
  const filter = parseFilter(params.filter);
  const { startIndex, count } = pageOf(params);
  if (!filter) {
    const { users, total } = await deps.users.list(
      { identityProvider: call.connection._id },
      { skip: startIndex - 1, limit: Math.max(count, 1) },
    );
    const page = count === 0 ? [] : await resourcesOf(deps, call, users);
    return listResponse(
      page.map((r) => project(r, params)),
      total,
      startIndex,
    );
  }
  const users =
    (await candidates(deps, call, filter)) ?? (await deps.users.ofProvider(call.connection._id, MAX_SCAN));
  const matching = (await resourcesOf(deps, call, users)).filter((r) => matches(r, filter));
  const page = matching.slice(startIndex - 1, startIndex - 1 + count);
  return listResponse(
    page.map((r) => project(r, params)),
    matching.length,
    startIndex,
  );
}

/** POST /Users: a new user of the connection (409 `uniqueness` when the email or externalId is taken). */
export async function createScimUser(deps: Deps, call: ScimCall, body: Record<string, unknown>) {
  const input = toProvisionedUser(body);
  const existing = input.externalId ? await findByExternalId(deps, call.connection, input.externalId) : null;
  if (existing)
    throw new ScimError(409, 'uniqueness', `A user with externalId ${input.externalId} already exists`);
  const { user } = await provisionUser(deps, call.connection, call.ctx, input);
  return getScimUser(deps, call, user._id);
}

/** PUT /Users/:id: the whole user as sent (attributes left out are cleared, `active` defaults to true). */
export async function replaceScimUser(deps: Deps, call: ScimCall, id: string, body: Record<string, unknown>) {
  await requireUser(deps, call, id);
  await provisionUser(deps, call.connection, call.ctx, { ...toProvisionedUser(body), wholeUser: true }, id);
  return getScimUser(deps, call, id);
}

/**
 * A changed work (primary) email is the user's email: a Support Desk user has one address, which
 * SCIM shows as both `userName` and `emails` (Entra ID maps `mail` to `emails[type eq "work"].value`
 * and patches only that). When the PATCH also sets userName, userName decides (the kept check then
 * refuses emails that say otherwise).
 */
function followChangedEmail(
  patched: Record<string, unknown>,
  current: Record<string, unknown>,
  touched: Touched[],
) {
  const keys = new Set(touched.map((t) => t.key));
  if (!keys.has('emails') || keys.has('userName')) return;
  const emails = Array.isArray(patched.emails) ? (patched.emails as Record<string, unknown>[]) : [];
  const chosen =
    emails.find((e) => attr(e, 'primary') === true) ??
    emails.find((e) => attr(e, 'type') === 'work') ??
    emails[0];
  const value = attr(chosen, 'value');
  if (typeof value === 'string' && value.includes('@') && value !== current.userName)
    patched.userName = value;
}

/**
 * PATCH /Users/:id: the operations applied to the user's resource, the result provisioned. Every
 * operation is applied or the PATCH is refused whole (`patch.ts`): the resource the result would
 * be stored as must show each touched attribute as the PATCH left it.
 */
export async function patchScimUser(deps: Deps, call: ScimCall, id: string, body: unknown) {
  const user = await requireUser(deps, call, id);
  const [current] = await resourcesOf(deps, call, [user]);
  const { patched, touched } = applyPatch(current, body, USER_RESOURCE);
  followChangedEmail(patched, current, touched);
  const input = toProvisionedUser(patched);
  // Removing `active` leaves the status as it is: an unassigned flag must never reactivate a
  // leaver (a PUT without it, a whole resource, still means active).
  if (patched.active === undefined || patched.active === null) input.active = current.active === true;
  const groups = (current.groups as { value: string; display: string }[]).map((g) => ({
    id: g.value,
    name: g.display,
  }));
  const stored = userResource(
    {
      ...user,
      email: input.email,
      name: input.name,
      status: input.active ? 'active' : 'inactive',
      externalId: input.externalId,
      metadata: input.metadata ?? user.metadata,
    },
    groups,
    call.at,
  );
  assertKept(patched, stored, touched, (key) =>
    key === 'emails'
      ? `a Support Desk user has exactly one email address, its userName (${String(stored.userName)})`
      : null,
  );
  await provisionUser(deps, call.connection, call.ctx, { ...input, wholeUser: true }, id);
  return getScimUser(deps, call, id);
}

/**
 * DELETE /Users/:id deactivates: users are never removed (their history stays, as with
 * `DELETE /v1/users/:id`), so the user still answers with `active: false` afterwards.
 */
export async function deleteScimUser(deps: Deps, call: ScimCall, id: string) {
  await requireUser(deps, call, id);
  await setUserActive(deps, call.connection, call.ctx, id, false);
}
