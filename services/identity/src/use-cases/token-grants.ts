import { NOTICE_VERSION } from '@support-desk/contracts';
import { buildEvent, eventEntry, messageEntry, systemContext } from '@support-desk/platform';
import { verifyOwnAccessToken, signAccessToken } from '../oauth/tokens.js';
import type { Keyring } from '../oauth/keys.js';
import type { GrantDoc, OAuthClientDoc, UserDoc } from '../store/index.js';
import { PKCE_VALUE, s256 } from './authorize.js';
import type { Deps } from './deps.js';
import { OAuthError } from './oauth-errors.js';
import { randomSecret, safeEqual, sha256 } from './secrets.js';
import { tokenReuseDetected, tokensIssued } from '../metrics.js';

export interface TokenResponse {
  access_token: string;
  token_type: 'Bearer';
  expires_in: number;
  refresh_token: string;
  scope: string;
}

const GRANT_TOKEN = /^(gnt_[0-9a-hjkmnp-tv-z]{26})\.([A-Za-z0-9_-]{43})$/;

function splitToken(value: string | undefined): { grantId: string; hash: string } | null {
  const m = value ? GRANT_TOKEN.exec(value) : null;
  return m ? { grantId: m[1], hash: sha256(m[2]) } : null;
}

/**
 * Rotated refresh tokens remembered per grant, for reuse detection: the latest ones only, so a
 * long-lived grant's document stays small. An older one presented again is still refused (it
 * is not the current token), it just no longer revokes the family.
 */
export const USED_REFRESH_KEPT = 100;

const invalidGrant = (description: string) => new OAuthError('invalid_grant', description);

/** By when every access token issued until `now` has expired. */
export const tokensExpireBy = (deps: Deps, now: Date) =>
  new Date(now.getTime() + deps.config.OAUTH_ACCESS_TTL_SECONDS * 1000).toISOString();

/**
 * Revokes a whole grant (code, refresh-token family, and through the notice the access tokens
 * carrying its `gid`). Idempotent.
 */
export async function revokeGrant(deps: Deps, grant: GrantDoc, reason: string): Promise<void> {
  if (reason === 'code_reuse') tokenReuseDetected.inc({ kind: 'authorization_code' });
  if (reason === 'refresh_token_reuse') tokenReuseDetected.inc({ kind: 'refresh_token' });
  if (grant.revokedAt) return;
  const revoked = await deps.grants.update(grant._id, (current) => {
    if (current.revokedAt) return { write: null, result: false };
    const now = deps.clock();
    const notice = {
      v: NOTICE_VERSION,
      kind: 'oauth_grant_revoked',
      keyId: current._id,
      userId: current.userId,
      at: now.toISOString(),
      tokensExpireBy: tokensExpireBy(deps, now),
    };
    const event = buildEvent(
      'system.config_changed',
      current._id,
      systemContext(),
      { revokedAt: { from: null, to: now.toISOString() }, revokedReason: { from: null, to: reason } },
      now,
    );
    return {
      write: {
        set: { revokedAt: now, revokedReason: reason },
        outbox: [eventEntry(deps.names, event), messageEntry(deps.names.credentialNotices, notice)],
      },
      result: true,
    };
  });
  if (revoked)
    deps.logger.warn({ grantId: grant._id, clientId: grant.clientId, reason }, 'oauth grant revoked');
}

async function activeUser(deps: Deps, userId: string): Promise<UserDoc> {
  const user = await deps.users.findById(userId);
  if (user?.status !== 'active') throw invalidGrant('the user is no longer active');
  return user;
}

async function issueTokens(
  deps: Deps,
  keyring: Keyring,
  grant: GrantDoc,
  scopes: string[],
  refreshToken: string,
  grantType: 'authorization_code' | 'refresh_token',
): Promise<TokenResponse> {
  const now = deps.clock();
  const access = await signAccessToken(deps.config, keyring, {
    userId: grant.userId,
    clientId: grant.clientId,
    scopes,
    grantId: grant._id,
    now,
  });
  tokensIssued.inc({ grant_type: grantType });
  return {
    access_token: access.token,
    token_type: 'Bearer',
    expires_in: access.expiresIn,
    refresh_token: refreshToken,
    scope: scopes.join(' '),
  };
}

export async function redeemCode(
  deps: Deps,
  keyring: Keyring,
  client: OAuthClientDoc,
  input: { code?: string; redirectUri?: string; codeVerifier?: string },
): Promise<TokenResponse> {
  if (!input.code) throw new OAuthError('invalid_request', 'code is required');
  if (!input.redirectUri) throw new OAuthError('invalid_request', 'redirect_uri is required');
  const parts = splitToken(input.code);
  const grant = parts ? await deps.grants.findById(parts.grantId) : null;
  if (!parts || !grant || !safeEqual(parts.hash, grant.codeHash))
    throw invalidGrant('unknown authorization code');
  if (grant.clientId !== client._id) throw invalidGrant('the code was issued to another client');
  if (grant.codeUsedAt || grant.revokedAt) {
    // RFC 6749 §4.1.2: a second redemption revokes what the first one issued.
    await revokeGrant(deps, grant, 'code_reuse');
    throw invalidGrant('authorization code already used');
  }
  const now = deps.clock();
  if (new Date(grant.codeExpiresAt).getTime() <= now.getTime())
    throw invalidGrant('authorization code expired');
  if (input.redirectUri !== grant.redirectUri)
    throw invalidGrant('redirect_uri does not match the authorization request');
  if (grant.codeChallenge) {
    if (!input.codeVerifier) throw invalidGrant('code_verifier is required');
    if (!PKCE_VALUE.test(input.codeVerifier) || !safeEqual(s256(input.codeVerifier), grant.codeChallenge)) {
      throw invalidGrant('code_verifier does not match the code_challenge');
    }
  } else if (input.codeVerifier) {
    throw invalidGrant('code_verifier sent but no code_challenge was used');
  }
  await activeUser(deps, grant.userId);
  const secret = randomSecret(32);
  const redeemed = await deps.grants.update(grant._id, (current) => {
    // Redeemed or revoked since it was read (a concurrent redemption won): a reuse.
    if (current.codeUsedAt || current.revokedAt) return { write: null, result: false };
    return {
      write: {
        set: {
          codeUsedAt: now,
          refreshHash: sha256(secret),
          refreshExpiresAt: new Date(now.getTime() + deps.config.OAUTH_REFRESH_TTL_SECONDS * 1000),
        },
      },
      result: true,
    };
  });
  if (!redeemed) {
    await revokeGrant(deps, grant, 'code_reuse');
    throw invalidGrant('authorization code already used');
  }
  return issueTokens(deps, keyring, grant, grant.scopes, `${grant._id}.${secret}`, 'authorization_code');
}

export async function refresh(
  deps: Deps,
  keyring: Keyring,
  client: OAuthClientDoc,
  input: { refreshToken?: string; scope?: string },
): Promise<TokenResponse> {
  if (!input.refreshToken) throw new OAuthError('invalid_request', 'refresh_token is required');
  const parts = splitToken(input.refreshToken);
  const grant = parts ? await deps.grants.findById(parts.grantId) : null;
  if (!parts || !grant) throw invalidGrant('unknown refresh token');
  if (grant.clientId !== client._id) throw invalidGrant('the refresh token was issued to another client');
  if (grant.revokedAt) throw invalidGrant('the grant has been revoked');
  if ((grant.usedRefreshHashes ?? []).some((h) => safeEqual(h, parts.hash))) {
    // A rotated token came back: someone holds a copy. Revoke the whole family.
    await revokeGrant(deps, grant, 'refresh_token_reuse');
    throw invalidGrant('refresh token already used; the grant has been revoked');
  }
  if (!grant.refreshHash || !safeEqual(grant.refreshHash, parts.hash))
    throw invalidGrant('unknown refresh token');
  const now = deps.clock();
  if (!grant.refreshExpiresAt || new Date(grant.refreshExpiresAt).getTime() <= now.getTime()) {
    throw invalidGrant('refresh token expired');
  }
  let scopes = grant.scopes;
  if (input.scope !== undefined) {
    const asked = input.scope.split(' ').filter(Boolean);
    if (asked.length === 0 || asked.some((s) => !grant.scopes.includes(s))) {
      throw new OAuthError('invalid_scope', 'scope must be a subset of the originally granted scope');
    }
    scopes = [...new Set(asked)];
  }
  await activeUser(deps, grant.userId);
  const secret = randomSecret(32);
  const rotated = await deps.grants.update(grant._id, (current) => {
    // Rotated or revoked since it was read (a concurrent refresh won): a reuse.
    if (current.revokedAt || current.refreshHash !== parts.hash) return { write: null, result: false };
    return {
      write: {
        set: {
          refreshHash: sha256(secret),
          refreshExpiresAt: new Date(now.getTime() + deps.config.OAUTH_REFRESH_TTL_SECONDS * 1000),
          usedRefreshHashes: [...(current.usedRefreshHashes ?? []), parts.hash].slice(-USED_REFRESH_KEPT),
        },
      },
      result: true,
    };
  });
  if (!rotated) {
    await revokeGrant(deps, grant, 'refresh_token_reuse');
    throw invalidGrant('refresh token already used; the grant has been revoked');
  }
  return issueTokens(deps, keyring, grant, scopes, `${grant._id}.${secret}`, 'refresh_token');
}

/**
 * RFC 7009: revokes the grant behind a refresh token or an access token of this client.
 * Unknown, invalid or foreign tokens are ignored (the endpoint always answers 200).
 */
export async function revokeToken(
  deps: Deps,
  keyring: Keyring,
  client: OAuthClientDoc,
  token: string | undefined,
) {
  if (!token) throw new OAuthError('invalid_request', 'token is required');
  const parts = splitToken(token);
  if (parts) {
    const grant = await deps.grants.findById(parts.grantId);
    const known =
      grant &&
      ((grant.refreshHash && safeEqual(grant.refreshHash, parts.hash)) ||
        (grant.usedRefreshHashes ?? []).some((h) => safeEqual(h, parts.hash)));
    if (grant && known && grant.clientId === client._id) await revokeGrant(deps, grant, 'revoked_by_client');
    return;
  }
  const claims = await verifyOwnAccessToken(deps.config, keyring, token, deps.clock());
  if (!claims?.gid || claims.client_id !== client._id) return;
  const grant = await deps.grants.findById(claims.gid);
  if (grant && grant.clientId === client._id) await revokeGrant(deps, grant, 'revoked_by_client');
}
