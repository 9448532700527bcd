import type { EventContext } from '@support-desk/platform/core';
import { revokeApiKey } from './api-keys.js';
import type { Deps } from './deps.js';
import { revokeGrant } from './grant-revocation.js';

export interface SweepOptions {
  /** Recorded on each revoked grant. */
  reason: string;
  /** API keys are issued by an administrator, not derived from the password: a password change keeps them. */
  apiKeys: boolean;
  /** Only what was created before this moment (null: everything). */
  createdBefore: Date | null;
}

/**
 * Ends the ways a user could still act without signing in again: every sign-in session, every
 * OAuth grant (its refresh tokens, and through the grant notice its unexpired access tokens at
 * the gateway), and with `apiKeys` every API key. Each revocation is its own aggregate write with
 * its own event, so the audit log shows what ended and why. Idempotent.
 */
export async function revokeUserCredentials(
  deps: Deps,
  ctx: EventContext,
  userId: string,
  { reason, apiKeys, createdBefore }: SweepOptions,
): Promise<void> {
  await deps.sessions.removeAllOf(userId, createdBefore);
  for (const grant of await deps.grants.listLiveOf(userId, createdBefore)) {
    await revokeGrant(deps, grant, reason);
  }
  if (!apiKeys) return;
  for (const key of await deps.apiKeys.listLiveOf(userId, createdBefore)) {
    await revokeApiKey(deps, ctx, key._id);
  }
}
