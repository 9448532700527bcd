import type { CredentialNotice } from '@support-desk/contracts';
import type { DenyList } from '../store/deny-list.js';
import type { IdentityClient } from '../events/identity-client.js';
import type { TokenVerifier } from './token-verifier.js';

/**
 * What each credential notice invalidates in this replica (and, for a deactivation or a revoked
 * grant, in the Redis deny-list every replica reads).
 */
export function createNoticeHandler(identity: IdentityClient, tokens: TokenVerifier, denyList: DenyList) {
  return async (notice: CredentialNotice): Promise<void> => {
    switch (notice.kind) {
      case 'api_key_revoked':
        if (notice.keyId) identity.dropKey(notice.keyId);
        if (notice.userId) identity.dropUser(notice.userId);
        return;
      case 'settings_changed':
        // The global allowlist travels inside key resolutions, and is cached for tokens.
        identity.dropAllKeys();
        identity.dropClients();
        identity.dropSettings();
        return;
      case 'oauth_grant_revoked':
        if (notice.userId) {
          identity.dropUser(notice.userId);
          tokens.dropUser(notice.userId);
        }
        // The grant's unexpired access tokens carry its id in `gid`: refuse them from now on
        // (locally at once, even if the Redis write then fails).
        if (notice.keyId) await denyList.denyGrant(notice.keyId, notice.at, notice.tokensExpireBy);
        return;
      case 'user_deactivated':
      case 'user_reactivated':
      case 'user_role_changed':
        if (!notice.userId) return;
        identity.dropUser(notice.userId);
        tokens.dropUser(notice.userId);
        if (notice.kind === 'user_deactivated')
          await denyList.deny(notice.userId, notice.at, notice.tokensExpireBy);
        if (notice.kind === 'user_reactivated')
          await denyList.allow(notice.userId, notice.at, notice.tokensExpireBy);
        return;
    }
  };
}
