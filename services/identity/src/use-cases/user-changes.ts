import type { Changes, CredentialNotice } from '@support-desk/contracts';
import {
  buildEvent,
  diffChanges,
  type EventContext,
  eventEntry,
  messageEntry,
  notFound,
  type OutboxEntry,
} from '@support-desk/platform';
import type { UserDoc } from '../store/index.js';
import type { Deps } from './deps.js';

export async function findUser(deps: Deps, id: string): Promise<UserDoc> {
  const user = await deps.users.findById(id);
  if (!user) throw notFound('User');
  return user;
}

const notice = (kind: CredentialNotice['kind'], userId: string, now: Date): CredentialNotice => ({
  kind,
  userId,
  at: now.toISOString(),
});

/**
 * The events (and credential notices) one user change emits: `user.updated` for ordinary fields
 * and membership, `user.role_changed` for the role, `user.deactivated` for deactivation.
 */
export function userChangeEntries(
  deps: Deps,
  ctx: EventContext,
  userId: string,
  changes: Changes,
  now: Date,
): OutboxEntry[] {
  const entries: OutboxEntry[] = [];
  const { role, status, deactivatedAt, ...rest } = changes;
  const deactivated = status?.to === 'inactive';
  if (status && !deactivated) rest.status = status;
  if (deactivatedAt && !deactivated) rest.deactivatedAt = deactivatedAt;
  if (Object.keys(rest).length > 0) {
    entries.push(eventEntry(deps.names, buildEvent('user.updated', userId, ctx, rest, now)));
  }
  if (role) {
    entries.push(eventEntry(deps.names, buildEvent('user.role_changed', userId, ctx, { role }, now)));
    entries.push(messageEntry(deps.names.credentialNotices, notice('user_role_changed', userId, now)));
  }
  if (deactivated) {
    const c: Changes = { status };
    if (deactivatedAt) c.deactivatedAt = deactivatedAt;
    entries.push(eventEntry(deps.names, buildEvent('user.deactivated', userId, ctx, c, now)));
    entries.push(messageEntry(deps.names.credentialNotices, notice('user_deactivated', userId, now)));
  } else if (status?.to === 'active') {
    entries.push(messageEntry(deps.names.credentialNotices, notice('user_reactivated', userId, now)));
  }
  return entries;
}

export type UserPatch = Partial<Pick<UserDoc, 'name' | 'role' | 'groups' | 'isVip' | 'status' | 'metadata'>>;

/**
 * Applies `patch` with optimistic concurrency (the write only lands if the user is unchanged
 * since it was read; else it is planned again on the new state), so the `changes` in the events
 * are exactly what happened.
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
    if (patch.status === 'inactive' && before.status !== 'inactive') set.deactivatedAt = now;
    if (patch.status === 'active' && before.status !== 'active') set.deactivatedAt = null;
    const changes = diffChanges(
      { ...before, deactivatedAt: before.deactivatedAt?.toISOString() ?? null } as Record<string, unknown>,
      {
        ...set,
        ...(set.deactivatedAt instanceof Date ? { deactivatedAt: set.deactivatedAt.toISOString() } : {}),
      },
      ['name', 'role', 'groups', 'isVip', 'status', 'metadata', 'deactivatedAt'],
    );
    if (Object.keys(changes).length === 0) return { write: null, result: { changes, after: before } };
    const written = { ...set, updatedAt: now };
    return {
      write: { set: written, outbox: userChangeEntries(deps, ctx, id, changes, now) },
      result: { changes, after: { ...before, ...written } as UserDoc },
    };
  });
  return { user: after, changes };
}
