import { type AggregateDecision, isAppError } from '@support-desk/platform/core';
import { verifyOwnAccessToken, signAccessToken } from '../oauth/tokens.js';
import type { Keyring } from '../oauth/keys.js';
import type { GrantDoc, OAuthClientDoc, UserDoc } from '../store/index.js';
import { PKCE_VALUE, s256 } from './authorize.js';
import type { Deps } from './deps.js';
import { OAuthError } from './oauth-errors.js';
import { randomSecret, safeEqual, sha256 } from './secrets.js';
import { revocation, revokeGrantIf, revoked } from './grant-revocation.js';
import { tokensIssued } from '../metrics.js';

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

/** What one token request made of the grant it read: tokens to issue, or a detected reuse. */
type Redemption =
  | { reused: false; grant: GrantDoc; scopes: string[] }
  | { reused: true; grant: GrantDoc; revokedNow: boolean };

/**
 * Reads the grant, checks the request against it (`check` throws the refusal) and writes what
 * follows: one read and one write, every check made on the grant as the write reads it (a
 * concurrent request that won is seen when the compare-and-set makes the check run again).
 */
async function updateGrant(
  deps: Deps,
  grantId: string,
  unknown: string,
  check: (grant: GrantDoc) => Promise<AggregateDecision<Redemption>>,
): Promise<Redemption> {
  try {
    return await deps.grants.update(grantId, check);
  } catch (err) {
    if (isAppError(err) && err.code === 'NOT_FOUND') throw invalidGrant(unknown);
    throw err;
  }
}

/** A used code or rotated refresh token came back: someone holds a copy; the family is revoked. */
function reuse(deps: Deps, grant: GrantDoc, reason: string): AggregateDecision<Redemption> {
  const write = revocation(deps, grant, reason);
  return { write, result: { reused: true, grant, revokedNow: write !== null } };
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
  if (!parts) throw invalidGrant('unknown authorization code');
  const secret = randomSecret(32);
  const outcome = await updateGrant(deps, parts.grantId, 'unknown authorization code', async (grant) => {
    if (!safeEqual(parts.hash, grant.codeHash)) throw invalidGrant('unknown authorization code');
    if (grant.clientId !== client._id) throw invalidGrant('the code was issued to another client');
    // RFC 6749 §4.1.2: a second redemption revokes what the first one issued.
    if (grant.codeUsedAt || grant.revokedAt) return reuse(deps, grant, 'code_reuse');
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
    return {
      write: {
        set: {
          codeUsedAt: now,
          refreshHash: sha256(secret),
          refreshExpiresAt: new Date(now.getTime() + deps.config.OAUTH_REFRESH_TTL_SECONDS * 1000),
        },
      },
      result: { reused: false, grant, scopes: grant.scopes },
    };
  });
  if (outcome.reused) {
    revoked(deps, outcome.grant, 'code_reuse', outcome.revokedNow);
    throw invalidGrant('authorization code already used');
  }
  const { grant, scopes } = outcome;
  return issueTokens(deps, keyring, grant, scopes, `${grant._id}.${secret}`, 'authorization_code');
}

/** The scopes a refresh asks for: the grant's, or a subset of them (never more). */
function narrowedScopes(grant: GrantDoc, scope: string | undefined): string[] {
  if (scope === undefined) return grant.scopes;
  const asked = scope.split(' ').filter(Boolean);
  if (asked.length === 0 || asked.some((s) => !grant.scopes.includes(s))) {
    throw new OAuthError('invalid_scope', 'scope must be a subset of the originally granted scope');
  }
  return [...new Set(asked)];
}

export async function refresh(
  deps: Deps,
  keyring: Keyring,
  client: OAuthClientDoc,
  input: { refreshToken?: string; scope?: string },
): Promise<TokenResponse> {
  if (!input.refreshToken) throw new OAuthError('invalid_request', 'refresh_token is required');
  const parts = splitToken(input.refreshToken);
  if (!parts) throw invalidGrant('unknown refresh token');
  const secret = randomSecret(32);
  const outcome = await updateGrant(deps, parts.grantId, 'unknown refresh token', async (grant) => {
    if (grant.clientId !== client._id) throw invalidGrant('the refresh token was issued to another client');
    if (grant.revokedAt) throw invalidGrant('the grant has been revoked');
    if ((grant.usedRefreshHashes ?? []).some((h) => safeEqual(h, parts.hash)))
      return reuse(deps, grant, 'refresh_token_reuse');
    if (!grant.refreshHash || !safeEqual(grant.refreshHash, parts.hash))
      throw invalidGrant('unknown refresh token');
    const now = deps.clock();
    if (!grant.refreshExpiresAt || new Date(grant.refreshExpiresAt).getTime() <= now.getTime()) {
      throw invalidGrant('refresh token expired');
    }
    const scopes = narrowedScopes(grant, input.scope);
    await activeUser(deps, grant.userId);
    return {
      write: {
        set: {
          refreshHash: sha256(secret),
          refreshExpiresAt: new Date(now.getTime() + deps.config.OAUTH_REFRESH_TTL_SECONDS * 1000),
          usedRefreshHashes: [...(grant.usedRefreshHashes ?? []), parts.hash].slice(-USED_REFRESH_KEPT),
        },
      },
      result: { reused: false, grant, scopes },
    };
  });
  if (outcome.reused) {
    revoked(deps, outcome.grant, 'refresh_token_reuse', outcome.revokedNow);
    throw invalidGrant('refresh token already used; the grant has been revoked');
  }
  const { grant, scopes } = outcome;
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
    const known = (grant: GrantDoc) =>
      (!!grant.refreshHash && safeEqual(grant.refreshHash, parts.hash)) ||
      (grant.usedRefreshHashes ?? []).some((h) => safeEqual(h, parts.hash));
    await revokeGrantIf(
      deps,
      parts.grantId,
      'revoked_by_client',
      (g) => known(g) && g.clientId === client._id,
    );
    return;
  }
  const claims = await verifyOwnAccessToken(deps.config, keyring, token, deps.clock());
  if (!claims?.gid || claims.client_id !== client._id) return;
  await revokeGrantIf(deps, claims.gid, 'revoked_by_client', (g) => g.clientId === client._id);
}
