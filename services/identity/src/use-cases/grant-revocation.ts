import { NOTICE_VERSION } from '@support-desk/contracts';
import {
  type AggregateWrite,
  buildEvent,
  eventEntry,
  isAppError,
  messageEntry,
  systemContext,
} from '@support-desk/platform/core';
import type { GrantDoc } from '../store/index.js';
import type { Deps } from './deps.js';
import { tokenReuseDetected } from '../metrics.js';

/** By when every access token issued until `now` has expired. */
export const tokensExpireBy = (deps: Deps, now: Date) =>
  new Date(now.getTime() + deps.config.OAUTH_ACCESS_TTL_SECONDS * 1000).toISOString();

/**
 * The write that revokes a whole grant (code, refresh-token family, and through the notice the
 * access tokens carrying its `gid`), with its event; null when it is revoked already.
 */
export function revocation(deps: Deps, grant: GrantDoc, reason: string): AggregateWrite | null {
  if (grant.revokedAt) return null;
  const now = deps.clock();
  const notice = {
    v: NOTICE_VERSION,
    kind: 'oauth_grant_revoked',
    keyId: grant._id,
    userId: grant.userId,
    at: now.toISOString(),
    tokensExpireBy: tokensExpireBy(deps, now),
  };
  const event = buildEvent(
    'system.config_changed',
    grant._id,
    systemContext(),
    { revokedAt: { from: null, to: now.toISOString() }, revokedReason: { from: null, to: reason } },
    now,
  );
  return {
    set: { revokedAt: now, revokedReason: reason },
    outbox: [eventEntry(deps.names, event), messageEntry(deps.names.credentialNotices, notice)],
  };
}

/** Counts a detected reuse, and logs a revocation that was made. */
export function revoked(deps: Deps, grant: GrantDoc, reason: string, made: boolean): void {
  if (reason === 'code_reuse') tokenReuseDetected.inc({ kind: 'authorization_code' });
  if (reason === 'refresh_token_reuse') tokenReuseDetected.inc({ kind: 'refresh_token' });
  if (made) deps.logger.warn({ grantId: grant._id, clientId: grant.clientId, reason }, 'oauth grant revoked');
}

/**
 * Revokes the grant when `applies` to it as the write reads it (a grant that does not exist, or
 * to which it does not apply, is left alone). One read and one write. Idempotent.
 */
export async function revokeGrantIf(
  deps: Deps,
  grantId: string,
  reason: string,
  applies: (grant: GrantDoc) => boolean = () => true,
): Promise<void> {
  try {
    const outcome = await deps.grants.update(grantId, (grant) => {
      const applied = applies(grant);
      const write = applied ? revocation(deps, grant, reason) : null;
      return { write, result: { grant, made: write !== null, applied } };
    });
    if (outcome.applied) revoked(deps, outcome.grant, reason, outcome.made);
  } catch (err) {
    if (!(isAppError(err) && err.code === 'NOT_FOUND')) throw err;
  }
}

/** Revokes a grant already read (the credential sweeps). Idempotent. */
export async function revokeGrant(deps: Deps, grant: GrantDoc, reason: string): Promise<void> {
  if (grant.revokedAt) {
    revoked(deps, grant, reason, false);
    return;
  }
  await revokeGrantIf(deps, grant._id, reason);
}
