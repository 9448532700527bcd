import { TtlCache } from '@support-desk/platform/core';
import { createRemoteJWKSet, customFetch, type JWTVerifyGetKey, jwtVerify } from 'jose';
import { jwksRefreshes } from '../metrics.js';
import { hashCredential } from '../events/identity-client.js';
import { countedLookups } from '../store/cache-lookups.js';

export interface AccessTokenClaims {
  userId: string;
  clientId: string;
  scopes: string[];
  jti: string | null;
  /** The OAuth grant the token came from (`gid`), checked against the deny-list; null if absent. */
  grantId: string | null;
  /** Epoch seconds. */
  exp: number;
}

export interface TokenVerifierOptions {
  jwksUrl: string;
  issuer: string;
  audience: string;
  algorithms: string[];
  clockToleranceSeconds: number;
  /** Least time between two JWKS fetches triggered by an unknown kid. */
  jwksCooldownMs: number;
  jwksCacheMaxAgeMs: number;
  cacheTtlMs: number;
  cacheMax: number;
  /** Tests pass a local key set; production fetches identity's JWKS. */
  keySet?: JWTVerifyGetKey;
}

export class InvalidTokenError extends Error {}

/**
 * Verifies identity's access tokens locally: signature against the JWKS (refetched, at most
 * once per cooldown, when a token names an unknown kid, so key rotation needs no restart),
 * algorithms pinned, `typ: at+jwt`, issuer, audience, exp/nbf with a small leeway. Verified
 * tokens are cached by their SHA-256 (bounded LRU, never past exp) so repeat calls cost a hash.
 */
export function createTokenVerifier(o: TokenVerifierOptions) {
  const keySet =
    o.keySet ??
    createRemoteJWKSet(new URL(o.jwksUrl), {
      cooldownDuration: o.jwksCooldownMs,
      cacheMaxAge: o.jwksCacheMaxAgeMs,
      timeoutDuration: 5000,
      [customFetch]: (url, options) =>
        fetch(url, options).then(
          (res) => {
            jwksRefreshes.inc({ outcome: res.ok ? 'ok' : 'error' });
            return res;
          },
          (err: unknown) => {
            jwksRefreshes.inc({ outcome: 'error' });
            throw err;
          },
        ),
    });
  const cache = new TtlCache<string, AccessTokenClaims>(o.cacheMax, countedLookups('tokens'));

  return {
    async verify(token: string): Promise<AccessTokenClaims> {
      const hash = hashCredential(token);
      const now = Date.now();
      const cached = cache.get(hash, now);
      if (cached && cached.exp * 1000 > now) return cached;
      let payload: Record<string, unknown>;
      try {
        ({ payload } = await jwtVerify(token, keySet, {
          algorithms: o.algorithms,
          issuer: o.issuer,
          audience: o.audience,
          typ: 'at+jwt',
          clockTolerance: o.clockToleranceSeconds,
          requiredClaims: ['exp', 'sub', 'client_id'],
        }));
      } catch (err) {
        throw new InvalidTokenError((err as Error).message);
      }
      if (typeof payload.sub !== 'string' || typeof payload.client_id !== 'string') {
        throw new InvalidTokenError('sub and client_id must be strings');
      }
      const claims: AccessTokenClaims = {
        userId: payload.sub,
        clientId: payload.client_id,
        scopes: typeof payload.scope === 'string' ? payload.scope.split(' ').filter(Boolean) : [],
        jti: typeof payload.jti === 'string' ? payload.jti : null,
        grantId: typeof payload.gid === 'string' ? payload.gid : null,
        exp: payload.exp as number,
      };
      cache.set(hash, claims, Math.min(o.cacheTtlMs, claims.exp * 1000 - now), now);
      return claims;
    },
    /** Drops cached verifications of one user's tokens (role change, deactivation, revoked grant). */
    dropUser(userId: string) {
      cache.deleteWhere((c) => c.userId === userId);
    },
    get cacheSize() {
      return cache.size;
    },
  };
}

export type TokenVerifier = ReturnType<typeof createTokenVerifier>;
