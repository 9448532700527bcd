import {
  type Changes,
  type CredentialNotice,
  NOTICE_VERSION,
  type UserDetail,
} from '@support-desk/contracts';
import {
  buildEvent,
  diffChanges,
  type EventContext,
  eventEntry,
  messageEntry,
  type OutboxEntry,
  revisionAfter,
  withSnapshot,
} from '@support-desk/platform/core';
import { emailKey, type UserDoc } from '../store/index.js';
import { revokeUserCredentials } from './credential-sweep.js';
import { tokensExpireBy } from './grant-revocation.js';
import type { Deps } from './deps.js';
import { userEventSnapshot } from './views.js';

const notice = (deps: Deps, kind: CredentialNotice['kind'], userId: string, now: Date): CredentialNotice => ({
  v: NOTICE_VERSION,
  kind,
  userId,
  at: now.toISOString(),
  tokensExpireBy: tokensExpireBy(deps, now),
});

/**
 * The events (and credential notices) one user change emits: `user.updated` for ordinary fields
 * and membership, `user.role_changed` for the role, `user.deactivated` for deactivation; each
 * event carries the user as the change leaves it (`snapshot`).
 */
function userChangeEntries(
  deps: Deps,
  ctx: EventContext,
  userId: string,
  changes: Changes,
  now: Date,
  snapshot: UserDetail,
): OutboxEntry[] {
  const entries: OutboxEntry[] = [];
  const event = (type: 'user.updated' | 'user.role_changed' | 'user.deactivated', c: Changes) =>
    eventEntry(deps.names, withSnapshot(buildEvent(type, userId, ctx, c, now), snapshot));
  const { role, status, deactivatedAt, ...rest } = changes;
  const deactivated = status?.to === 'inactive';
  if (status && !deactivated) rest.status = status;
  if (deactivatedAt && !deactivated) rest.deactivatedAt = deactivatedAt;
  if (Object.keys(rest).length > 0) entries.push(event('user.updated', rest));
  if (role) {
    entries.push(event('user.role_changed', { role }));
    entries.push(messageEntry(deps.names.credentialNotices, notice(deps, 'user_role_changed', userId, now)));
  }
  if (deactivated) {
    const c: Changes = { status };
    if (deactivatedAt) c.deactivatedAt = deactivatedAt;
    entries.push(event('user.deactivated', c));
    entries.push(messageEntry(deps.names.credentialNotices, notice(deps, 'user_deactivated', userId, now)));
  } else if (status?.to === 'active') {
    entries.push(messageEntry(deps.names.credentialNotices, notice(deps, 'user_reactivated', userId, now)));
  }
  return entries;
}

export type UserPatch = Partial<
  Pick<
    UserDoc,
    'name' | 'role' | 'groups' | 'isVip' | 'status' | 'metadata' | 'email' | 'externalId' | 'identityProvider'
  >
>;

/**
 * Applies `patch` with optimistic concurrency (the write only lands if the user is unchanged
 * since it was read; else it is planned again on the new state), so the `changes` in the events
 * are exactly what happened.
 *
 * Deactivation ends every credential of the user (sessions, OAuth grants, API keys), so a later
 * reactivation revives none of them: the user signs in again and an administrator issues new
 * keys. Reactivation sweeps again whatever predates the deactivation, in case a crash came
 * between the user's write and the sweep.
 */
export async function applyUserPatch(
  deps: Deps,
  ctx: EventContext,
  id: string,
  makePatch: (user: UserDoc) => Promise<UserPatch> | UserPatch,
): Promise<{ user: UserDoc; changes: Changes }> {
  const { changes, after } = await deps.users.update(id, async (before) => {
    const patch = await makePatch(before);
    const now = deps.clock();
    const set: Record<string, unknown> = { ...patch };
    // Only identity providers change an email (the caller moved its look-up entry first).
    if (patch.email !== undefined) set.emailKey = emailKey(patch.email);
    if (patch.status === 'inactive' && before.status !== 'inactive') set.deactivatedAt = now;
    if (patch.status === 'active' && before.status !== 'active') set.deactivatedAt = null;
    const changes = diffChanges(
      { ...before, deactivatedAt: before.deactivatedAt?.toISOString() ?? null } as Record<string, unknown>,
      {
        ...set,
        ...(set.deactivatedAt instanceof Date ? { deactivatedAt: set.deactivatedAt.toISOString() } : {}),
      },
      [
        'email',
        'name',
        'role',
        'groups',
        'isVip',
        'status',
        'metadata',
        'externalId',
        'identityProvider',
        'deactivatedAt',
      ],
    );
    if (Object.keys(changes).length === 0) return { write: null, result: { changes, after: before } };
    const written = { ...set, updatedAt: now };
    const after = { ...before, ...written } as UserDoc;
    const snapshot = await userEventSnapshot(deps, after);
    return {
      write: { set: written, outbox: userChangeEntries(deps, ctx, id, changes, now, snapshot) },
      result: { changes, after: { ...after, rev: revisionAfter(before, true) } },
    };
  });
  const status = changes.status?.to;
  if (status === 'inactive') {
    await revokeUserCredentials(deps, ctx, id, {
      reason: 'user_deactivated',
      apiKeys: true,
      createdBefore: null,
    });
  } else if (status === 'active' && typeof changes.deactivatedAt?.from === 'string') {
    const createdBefore = new Date(changes.deactivatedAt.from);
    await revokeUserCredentials(deps, ctx, id, { reason: 'user_deactivated', apiKeys: true, createdBefore });
  }
  return { user: after, changes };
}
