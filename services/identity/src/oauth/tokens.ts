import { randomUUID } from 'node:crypto';
import { createLocalJWKSet, jwtVerify, SignJWT } from 'jose';
import type { IdentityConfig } from '../config.js';
import type { Keyring } from './keys.js';

export interface AccessTokenInput {
  userId: string;
  clientId: string;
  scopes: string[];
  grantId: string;
  now: Date;
}

/**
 * RFC 9068 access token: `typ: at+jwt`, signed with the active key (`kid` in the header).
 * `gid` names the grant it came from, so a revoked grant (credential notice
 * `oauth_grant_revoked` with keyId = grant id) can cut off its unexpired access tokens.
 */
export async function signAccessToken(config: IdentityConfig, keyring: Keyring, input: AccessTokenInput) {
  const signer = await keyring.signer();
  const iat = Math.floor(input.now.getTime() / 1000);
  const exp = iat + config.OAUTH_ACCESS_TTL_SECONDS;
  const token = await new SignJWT({
    client_id: input.clientId,
    scope: input.scopes.join(' '),
    gid: input.grantId,
  })
    .setProtectedHeader({ alg: signer.alg, kid: signer.kid, typ: 'at+jwt' })
    .setIssuer(config.OAUTH_ISSUER)
    .setAudience(config.OAUTH_AUDIENCE)
    .setSubject(input.userId)
    .setIssuedAt(iat)
    .setExpirationTime(exp)
    .setJti(randomUUID())
    .sign(signer.key);
  return { token, expiresIn: config.OAUTH_ACCESS_TTL_SECONDS };
}

/** Verifies one of our own access tokens (for /oauth/revoke); null when it is not one. */
export async function verifyOwnAccessToken(
  config: IdentityConfig,
  keyring: Keyring,
  token: string,
  now: Date,
) {
  try {
    const jwks = createLocalJWKSet(await keyring.jwks());
    const { payload } = await jwtVerify(token, jwks, {
      issuer: config.OAUTH_ISSUER,
      audience: config.OAUTH_AUDIENCE,
      typ: 'at+jwt',
      currentDate: now,
    });
    return payload as { sub?: string; client_id?: string; gid?: string };
  } catch {
    return null;
  }
}
