import { type Actor, ROLES, type Role } from '@support-desk/contracts';
import {
  buildEvent,
  conflict,
  type EventContext,
  eventEntry,
  isDuplicateKeyError,
  notFound,
  validationError,
} from '@support-desk/platform/core';
import type { GroupRoleRule, IdentityProviderDoc, IdentityProviderKind } from '../store/index.js';
import type { Deps } from './deps.js';
import { secretsPolicy, storedLdapSettings } from './ldap-settings.js';
import { type SyncRunView, syncRunView } from './ldap-sync-view.js';
import { randomSecret, safeEqual, sha256 } from './secrets.js';
import { applyUserPatch } from './user-changes.js';

/** A connection's name: a slug, also the users' `identityProvider` (`local` is the password login). */
const NAME = /^[a-z0-9][a-z0-9_-]{0,39}$/;
const RESERVED_NAMES = new Set(['local']);

/**
 * `sdscim_<connection>_<43 base64url chars>`: the name allows the look-up (one read by `_id`),
 * only the secret's hash is stored, as for API keys. The secret is always 43 characters, so the
 * name is whatever lies between the prefix and the last 44.
 */
const TOKEN_FORMAT = /^sdscim_([a-z0-9][a-z0-9_-]{0,39})_([A-Za-z0-9_-]{43})$/;

export const IDENTITY_PROVIDER_KINDS: readonly IdentityProviderKind[] = ['scim', 'ldap'];

export interface IdentityProviderInput {
  name: string;
  kind: IdentityProviderKind;
  defaultRole?: Role;
  groupRoles?: GroupRoleRule[];
  /** LDAP: the directory's settings (validated by the LDAP sync, which owns their shape). */
  ldap?: Record<string, unknown> | null;
}

export interface IdentityProviderView {
  name: string;
  kind: IdentityProviderKind;
  defaultRole: Role;
  groupRoles: GroupRoleRule[];
  disabled: boolean;
  tokenCreatedAt: string | null;
  ldap: Record<string, unknown> | null;
  /** LDAP: the latest sync run. */
  lastSync: SyncRunView | null;
  /** What an administrator should know about the roles it grants (`roleWarnings`). */
  warnings: string[];
  createdAt: string;
  updatedAt: string;
}

const iso = (d: Date | null | undefined) => (d ? new Date(d).toISOString() : null);

export function toView(doc: IdentityProviderDoc): IdentityProviderView {
  return {
    name: doc._id,
    kind: doc.kind,
    defaultRole: doc.defaultRole,
    groupRoles: doc.groupRoles ?? [],
    disabled: doc.disabled,
    tokenCreatedAt: iso(doc.tokenCreatedAt),
    ldap: doc.ldap ?? null,
    lastSync: doc.lastSync ? syncRunView(doc._id, doc.lastSync) : null,
    warnings: roleWarnings(doc),
    createdAt: iso(doc.createdAt)!,
    updatedAt: iso(doc.updatedAt)!,
  };
}

/**
 * A connection that makes administrators: whoever controls the provider's groups (or, with an
 * `admin` default, its user list) controls who administers Support Desk. Allowed, but said every
 * time the connection is shown or changed.
 */
function roleWarnings(doc: Pick<IdentityProviderDoc, '_id' | 'defaultRole' | 'groupRoles'>): string[] {
  const warnings = (doc.groupRoles ?? [])
    .filter((r) => r.role === 'admin')
    .map(
      (r) =>
        `members of group "${r.group}" become admins: whoever manages that group in ${doc._id} decides who administers Support Desk`,
    );
  if (doc.defaultRole === 'admin')
    warnings.unshift(`every user ${doc._id} provisions becomes an admin (default role admin)`);
  return warnings;
}

/** What events say about a connection: its settings, never a token or its hash. */
const described = (v: IdentityProviderView) => ({
  name: v.name,
  kind: v.kind,
  defaultRole: v.defaultRole,
  groupRoles: v.groupRoles,
  disabled: v.disabled,
});

/** The resource id of a connection's `system.config_changed` events. */
export const connectionResourceId = (name: string) => `idp:${name}`;

function checkInput(input: IdentityProviderInput) {
  if (!NAME.test(input.name) || RESERVED_NAMES.has(input.name)) {
    throw validationError(
      'name',
      'must be a slug of 1..40 of a-z 0-9 _ - (starting with a letter or digit), not "local"',
    );
  }
  if (!IDENTITY_PROVIDER_KINDS.includes(input.kind)) throw validationError('kind', 'must be scim or ldap');
  const roles = [input.defaultRole, ...(input.groupRoles ?? []).map((r) => r.role)];
  if (roles.some((r) => r !== undefined && !ROLES.includes(r))) {
    throw validationError('role', `must be one of ${ROLES.join(', ')}`);
  }
  const groups = (input.groupRoles ?? []).map((r) => r.group.trim().toLowerCase());
  if (groups.some((g) => g.length === 0 || g.length > 100) || new Set(groups).size !== groups.length) {
    throw validationError('groupRoles', 'group names must be 1..100 characters, each named once');
  }
}

const newToken = (name: string) => {
  const secret = randomSecret(32);
  return { token: `sdscim_${name}_${secret}`, hash: sha256(secret) };
};

/**
 * Creates a connection (a deleted one of that name is started afresh). A SCIM connection gets its
 * bearer token, returned once. Emits `system.config_changed` (resource `idp:<name>`).
 */
export async function createIdentityProvider(deps: Deps, ctx: EventContext, input: IdentityProviderInput) {
  checkInput(input);
  const now = deps.clock();
  const secret = input.kind === 'scim' ? newToken(input.name) : null;
  const doc: IdentityProviderDoc = {
    _id: input.name,
    kind: input.kind,
    // The least a provisioned user can be: a connection made without thinking about roles grants
    // read access only.
    defaultRole: input.defaultRole ?? 'viewer',
    groupRoles: (input.groupRoles ?? []).map((r) => ({ group: r.group.trim(), role: r.role })),
    disabled: false,
    tokenHash: secret?.hash ?? null,
    tokenCreatedAt: secret ? now : null,
    ldap:
      input.kind === 'ldap' && input.ldap ? storedLdapSettings(input.ldap, secretsPolicy(deps.config)) : null,
    deletedAt: null,
    createdAt: now,
    updatedAt: now,
  };
  const view = toView(doc);
  const event = () =>
    buildEvent(
      'system.config_changed',
      connectionResourceId(doc._id),
      ctx,
      { identityProvider: { from: null, to: described(view) } },
      now,
    );
  try {
    await deps.identityProviders.insert(doc, [eventEntry(deps.names, event())]);
  } catch (err) {
    if (!isDuplicateKeyError(err)) throw err;
    // A deleted connection of that name is started afresh; a live one is a conflict.
    await deps.identityProviders.update(
      doc._id,
      (current) => {
        if (current.deletedAt == null)
          throw conflict(`An identity provider named "${doc._id}" already exists`);
        const { _id, ...fresh } = doc;
        return { write: { set: fresh, outbox: [eventEntry(deps.names, event())] }, result: undefined };
      },
      { deleted: true },
    );
  }
  return { ...view, ...(secret ? { token: secret.token } : {}) };
}

export async function findIdentityProvider(deps: Deps, name: string): Promise<IdentityProviderDoc> {
  const doc = await deps.identityProviders.findByName(name);
  if (!doc) throw notFound(`Identity provider ${name}`);
  return doc;
}

export const listIdentityProviders = async (deps: Deps) => (await deps.identityProviders.list()).map(toView);

type ConnectionChange = Partial<
  Pick<IdentityProviderDoc, 'disabled' | 'defaultRole' | 'groupRoles' | 'ldap'>
>;

/**
 * Changes a connection's settings (the LDAP sync's settings too): `system.config_changed` with
 * what changed (the LDAP settings only as "changed": they may name a secret's variable).
 */
export async function updateIdentityProvider(
  deps: Deps,
  ctx: EventContext,
  name: string,
  change: ConnectionChange,
) {
  if (change.ldap) change = { ...change, ldap: storedLdapSettings(change.ldap, secretsPolicy(deps.config)) };
  return deps.identityProviders.update(name, (current) => {
    if (change.ldap && current.kind !== 'ldap')
      throw validationError('ldap', `${name} is a ${current.kind} connection: LDAP settings do not apply`);
    const changes: Record<string, { from: unknown; to: unknown }> = {};
    for (const [field, to] of Object.entries(change)) {
      const from = current[field as keyof ConnectionChange] ?? null;
      if (JSON.stringify(from) === JSON.stringify(to)) continue;
      changes[field] = field === 'ldap' ? { from: '[settings]', to: '[settings]' } : { from, to };
    }
    if (Object.keys(changes).length === 0) return { write: null, result: toView(current) };
    const now = deps.clock();
    const event = buildEvent('system.config_changed', connectionResourceId(name), ctx, changes, now);
    const set = { ...change, updatedAt: now };
    return {
      write: { set, outbox: [eventEntry(deps.names, event)] },
      result: toView({ ...current, ...set }),
    };
  });
}

/** A new SCIM token; the previous one stops working at once. Returned once. */
export async function rotateScimToken(deps: Deps, ctx: EventContext, name: string) {
  return deps.identityProviders.update(name, (current) => {
    if (current.kind !== 'scim')
      throw conflict(`${name} is an ${current.kind} connection: it has no SCIM token`);
    const now = deps.clock();
    const secret = newToken(name);
    const event = buildEvent(
      'system.config_changed',
      connectionResourceId(name),
      ctx,
      { tokenCreatedAt: { from: iso(current.tokenCreatedAt), to: now.toISOString() } },
      now,
    );
    return {
      write: {
        set: { tokenHash: secret.hash, tokenCreatedAt: now, updatedAt: now },
        outbox: [eventEntry(deps.names, event)],
      },
      result: { ...toView({ ...current, tokenCreatedAt: now, updatedAt: now }), token: secret.token },
    };
  });
}

/** At most this many users are deactivated by one deletion (bounded work; run it again for more). */
const MAX_DEACTIVATED_ON_DELETE = 100_000;

/**
 * Deletes a connection. Its token stops working and it is no longer synced; its active users are
 * deactivated (with nobody left to deprovision them, leavers would otherwise keep access), each
 * with its `user.deactivated`; then the connection is removed, which releases its users and groups
 * to the administrators (/v1 may change them again; users keep `identityProvider` as their history
 * and still cannot sign in with a password). Re-runnable: an interrupted deletion is finished by
 * running it again (the connection is disabled first, so nothing provisions meanwhile).
 */
export async function deleteIdentityProvider(deps: Deps, ctx: EventContext, name: string) {
  await findIdentityProvider(deps, name);
  await updateIdentityProvider(deps, ctx, name, { disabled: true });
  let deactivated = 0;
  for (let round = 0; round < MAX_DEACTIVATED_ON_DELETE / 100; round++) {
    const users = await deps.users.activeOfProvider(name, 100);
    if (users.length === 0) break;
    for (const user of users) {
      await applyUserPatch(deps, ctx, user._id, () => ({ status: 'inactive' }));
      deactivated++;
    }
  }
  const view = await markDeleted(deps, ctx, name);
  return { ...view, deleted: true as const, deactivatedUsers: deactivated };
}

function markDeleted(deps: Deps, ctx: EventContext, name: string) {
  return deps.identityProviders.update(name, (current) => {
    const now = deps.clock();
    const event = buildEvent(
      'system.config_changed',
      connectionResourceId(name),
      ctx,
      { deleted: { from: false, to: true } },
      now,
    );
    return {
      write: {
        set: { deletedAt: now, tokenHash: null, updatedAt: now },
        outbox: [eventEntry(deps.names, event)],
      },
      result: toView(current),
    };
  });
}

/**
 * The connection a SCIM bearer token belongs to, or null: malformed, unknown, wrong secret,
 * disabled, deleted or not a SCIM connection all answer null (the caller says 401 alike).
 */
export async function authenticateScimToken(
  deps: Deps,
  presented: string,
): Promise<IdentityProviderDoc | null> {
  const match = TOKEN_FORMAT.exec(presented);
  if (!match) return null;
  const [, name, secret] = match;
  const doc = await deps.identityProviders.findWithTokenHash(name);
  // Compared even when there is no such connection, so timing does not tell which names exist.
  const matches = safeEqual(sha256(secret), doc?.tokenHash ?? sha256(''));
  if (!doc || !matches || doc.kind !== 'scim' || doc.disabled) return null;
  return doc;
}

/**
 * Who the events of a connection's changes name: a system-like actor for the connection (its
 * name, never a person), with the source `scim` or `ldap`.
 */
function connectionActor(name: string): Actor {
  return {
    id: connectionResourceId(name),
    name: `${name} (identity provider)`,
    email: `${name}@idp.support-desk.local`,
    role: 'system',
  };
}

export function provisioningContext(
  connection: Pick<IdentityProviderDoc, '_id' | 'kind'>,
  call: { requestId?: string | null; userAgent?: string | null; ipAddress?: string | null } = {},
): EventContext {
  return {
    actor: connectionActor(connection._id),
    source: connection.kind,
    requestId: call.requestId ?? null,
    userAgent: call.userAgent ?? null,
    ipAddress: call.ipAddress ?? null,
  };
}
