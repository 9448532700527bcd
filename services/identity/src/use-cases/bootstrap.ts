import { conflict, type EventContext } from '@support-desk/platform/core';
import { createApiKey } from './api-keys.js';
import type { Deps } from './deps.js';
import { findUserByEmail } from './user-lookups.js';
import { createUser } from './users.js';

/**
 * First start: creates the first admin and an admin-scoped API key for them, only when no
 * active admin exists. Returns `{ skipped: true }` (with `ifNone`) when one already does. The
 * key may be given a lifetime (`expiresInSeconds`): the Kubernetes bootstrap Job prints it to a
 * pod log, where it must not stay usable.
 */
export async function bootstrap(
  deps: Deps,
  ctx: EventContext,
  input: { email: string; name: string; ifNone: boolean; expiresInSeconds?: number },
) {
  const admins = await deps.users.countActiveAdmins();
  if (admins > 0) {
    if (input.ifNone) return { skipped: true as const };
    throw conflict('An active admin already exists; bootstrap only creates the first one');
  }
  let user = await findUserByEmail(deps, input.email);
  if (user && (user.role !== 'admin' || user.status !== 'active')) {
    throw conflict(`${user.email} exists but is not an active admin; promote it with PATCH /v1/users/:id`);
  }
  const userId = user
    ? user._id
    : (await createUser(deps, ctx, { email: input.email, name: input.name, role: 'admin' })).id;
  user = await findUserByEmail(deps, input.email);
  const key = await createApiKey(deps, ctx, {
    ownerEmail: input.email,
    name: 'bootstrap admin key',
    scopes: ['admin'],
    ...(input.expiresInSeconds !== undefined ? { expiresInSeconds: input.expiresInSeconds } : {}),
  });
  return {
    skipped: false as const,
    user: { id: userId, email: user!.email, name: user!.name, role: 'admin' as const },
    keyId: key.id,
    key: key.key,
    expiresAt: key.expiresAt,
  };
}
