import { hash, createPrivateKey, createPublicKey, type KeyObject, sign as signBytes } from 'node:crypto';
import type { ForwardedCall, Principal } from '@support-desk/contracts';
import { type JWTPayload, jwtVerify } from 'jose';
import { type BodyOfCall, bodyClaim } from './body-binding.js';
import { unauthorized } from './errors.js';
import { singleFlight, TtlCache } from './ttl-cache.js';

/**
 * The gateway asserts each call's verified principal to one service as a short-lived EdDSA JWT
 * in one header. Only the gateway holds the private key; services hold public keys only, so no
 * service (and nothing that reaches a service port) can mint a principal. The assertion names
 * its audience (the one target service) and binds the call (`htm` method, `htu` path and query,
 * as DPoP does, and the body: `bd` or `jti`, see body-binding.ts), so it cannot be replayed
 * against another service, another route or with another body.
 */
export const PRINCIPAL_ISSUER = 'support-desk-gateway';
export const PRINCIPAL_ALG = 'EdDSA';
/**
 * The assertion's contract version (claim `v`). Services read the claims they need (`p`'s user
 * id and scopes, the binding) and ignore others, so the gateway may add claims within a version.
 */
export const PRINCIPAL_VERSION = 1;
/** Seconds an assertion lives: one proxied call, plus the clock tolerance below. */
export const PRINCIPAL_TTL_SECONDS = 10;
export const CLOCK_TOLERANCE_SECONDS = 5;

/** The call an assertion is bound to. */
export interface BoundCall extends BodyOfCall {
  /** The service that must accept it (`requests`, `identity`, `audit`, ...). */
  audience: string;
  method: string;
  /** The path and query exactly as the service receives them. */
  url: string;
}

/** What a service checks an assertion against before the body is read: the request line. */
export type CallLine = Pick<BoundCall, 'method' | 'url'>;

const PEM_BLOCK = /-----BEGIN ([A-Z ]+)-----[\s\S]+?-----END \1-----/g;

/** PEM blocks of a configuration value (`\n` may be written as the two characters `\n`). */
export function pemBlocks(value: string): string[] {
  return value.replace(/\\n/g, '\n').match(PEM_BLOCK) ?? [];
}

/** The gateway's Ed25519 private key from PEM (PKCS#8); throws naming what is wrong. */
export function principalSigningKey(pem: string): KeyObject {
  const [block] = pemBlocks(pem);
  if (!block) throw new Error('not a PEM private key');
  const key = createPrivateKey(block);
  if (key.asymmetricKeyType !== 'ed25519') throw new Error('not an Ed25519 key');
  return key;
}

/** The public key(s) a service accepts: one or more PEM (SPKI) blocks, for key rotation. */
export function principalVerifyKeys(pem: string): KeyObject[] {
  const keys = pemBlocks(pem).map((block) => createPublicKey(block));
  if (keys.length === 0) throw new Error('no PEM public key');
  if (keys.some((k) => k.asymmetricKeyType !== 'ed25519')) throw new Error('not an Ed25519 key');
  return keys;
}

const b64 = (value: string | Buffer) => Buffer.from(value).toString('base64url');
const HEADER = b64(JSON.stringify({ alg: PRINCIPAL_ALG, typ: 'JWT' }));

/**
 * Signs `claimsJson` (a JSON object text) as a compact JWS with node:crypto's synchronous
 * Ed25519 (the gateway signs one assertion per proxied call).
 */
export function signClaims(key: KeyObject, claimsJson: string): string {
  const input = `${HEADER}.${b64(claimsJson)}`;
  return `${input}.${signBytes(null, Buffer.from(input), key).toString('base64url')}`;
}

/*
 * Batched assertions (issue 37). An Ed25519 signature is the largest single cost of a proxied
 * call (≈ 40–95 µs in the gateway, and its verification more in the service), so the gateway
 * signs the calls of one event-loop turn together: each call's claims are exactly a single
 * assertion's (principal, audience, `htm`/`htu`, body binding, `iat`/`exp`), sent as their own
 * base64url text, and one EdDSA JWS (the batch) carries the SHA-256 of each such text (`cd`,
 * in order) with the batch's own `iss`/`iat`/`exp`. A call's header is
 * `<claims>~<index>~<batch JWS>`: the service verifies the batch's signature and lifetime (once
 * per batch: verified batches are kept, by their text, until they expire), checks that the
 * digest of the claims it was sent is the batch's `cd[index]`, and then checks the claims as it
 * checks a single assertion's. The signature therefore covers every byte of every call's claims,
 * as it did per call (SHA-256's collision resistance is the only thing added); a service learns
 * nothing of the other calls of a batch but their digests.
 */
const BATCH_SEPARATOR = '~';
// crypto.hash: one call, no Hash object (a third of createHash's cost on short inputs).
const claimsDigest = (claimsText: string) => hash('sha256', claimsText, 'base64url');

/**
 * Signs the claims (JSON object texts, each a whole assertion's) of several calls with one
 * signature; returns each call's header value, in order.
 */
export function signClaimsBatch(
  key: KeyObject,
  claimsJson: readonly string[],
  iat = Math.floor(Date.now() / 1000),
): string[] {
  const texts = claimsJson.map((claims) => b64(claims));
  const batch = signClaims(
    key,
    JSON.stringify({
      v: PRINCIPAL_VERSION,
      iss: PRINCIPAL_ISSUER,
      iat,
      exp: iat + PRINCIPAL_TTL_SECONDS,
      cd: texts.map(claimsDigest),
    }),
  );
  return texts.map((text, i) => `${text}${BATCH_SEPARATOR}${i}${BATCH_SEPARATOR}${batch}`);
}

/** Verified batches kept per verifier: enough for every batch alive at a few thousand calls/s. */
const VERIFIED_BATCHES_MAX = 4096;

/** The claims of one call of a batch, checked as `jwtVerify` checks a single assertion's. */
function batchedClaims(text: string, audience: string, now: number): JWTPayload {
  let claims: JWTPayload;
  try {
    claims = JSON.parse(Buffer.from(text, 'base64url').toString('utf8')) as JWTPayload;
  } catch {
    throw unauthorized();
  }
  if (
    !claims ||
    typeof claims !== 'object' ||
    claims.iss !== PRINCIPAL_ISSUER ||
    claims.aud !== audience ||
    typeof claims.exp !== 'number' ||
    typeof claims.iat !== 'number' ||
    now > claims.exp + CLOCK_TOLERANCE_SECONDS ||
    now < claims.iat - CLOCK_TOLERANCE_SECONDS ||
    now > claims.iat + PRINCIPAL_TTL_SECONDS + 2 * CLOCK_TOLERANCE_SECONDS
  )
    throw unauthorized();
  return claims;
}

/** The registered claims that bind an assertion to one service and one call, body included. */
function boundClaims(call: BoundCall, iat: number) {
  return {
    v: PRINCIPAL_VERSION,
    iss: PRINCIPAL_ISSUER,
    aud: call.audience,
    htm: call.method,
    htu: call.url,
    ...bodyClaim(call),
    iat,
    exp: iat + PRINCIPAL_TTL_SECONDS,
  };
}

export function principalClaims(principal: Principal, call: BoundCall, iat = Math.floor(Date.now() / 1000)) {
  return { p: principal, ...boundClaims(call, iat) };
}

/** Claims of a forwarding assertion: what the gateway saw of an anonymous call (`fwd`). */
export function forwardedClaims(
  forwarded: ForwardedCall,
  call: BoundCall,
  iat = Math.floor(Date.now() / 1000),
) {
  return { fwd: forwarded, ...boundClaims(call, iat) };
}

/** Signs a principal for one call (tests, tools; the gateway has its own fast path). */
export function createPrincipalSigner(signingKeyPem: string) {
  const key = principalSigningKey(signingKeyPem);
  return (principal: Principal, call: BoundCall): string =>
    signClaims(key, JSON.stringify(principalClaims(principal, call)));
}

/** Signs a forwarding assertion for one anonymous call (the gateway's OAuth proxy, tests). */
export function createForwardedSigner(signingKeyPem: string) {
  const key = principalSigningKey(signingKeyPem);
  return (forwarded: ForwardedCall, call: BoundCall): string =>
    signClaims(key, JSON.stringify(forwardedClaims(forwarded, call)));
}

/**
 * Verifies that the gateway signed `token` for this service and this very request line, and
 * returns its claims (the body's binding is checked by `requirePrincipal`); any failure is 401.
 */
export function createAssertionVerifier(verifyKeysPem: string, audience: string) {
  const keys = principalVerifyKeys(verifyKeysPem);
  /** A JWS signed by one of the keys, its times checked: its payload, or undefined. */
  const verified = async (jws: string, required: string[], aud?: string) => {
    for (const key of keys) {
      try {
        const { payload } = await jwtVerify(jws, key, {
          algorithms: [PRINCIPAL_ALG],
          issuer: PRINCIPAL_ISSUER,
          audience: aud,
          clockTolerance: CLOCK_TOLERANCE_SECONDS,
          requiredClaims: required,
          maxTokenAge: PRINCIPAL_TTL_SECONDS + CLOCK_TOLERANCE_SECONDS,
        });
        return payload;
      } catch {
        // Another configured key may have signed it (rotation); refused by the caller if none did.
      }
    }
    return undefined;
  };

  // A batch's digests once its signature and times are verified, until it expires; concurrent
  // first calls of one batch share one verification.
  const batches = new TtlCache<string, readonly unknown[]>(VERIFIED_BATCHES_MAX);
  const oneVerification = singleFlight<string, readonly unknown[] | null>();
  const batchDigests = async (jws: string): Promise<readonly unknown[] | null> => {
    const known = batches.get(jws);
    if (known) return known;
    return oneVerification(jws, async () => {
      const batch = await verified(jws, ['exp', 'iat', 'cd']);
      if (!batch || !Array.isArray(batch.cd)) return null;
      // Kept no longer than jwtVerify would accept it: `exp` and the age limit, with the leeway.
      const until = Math.min(batch.exp!, batch.iat! + PRINCIPAL_TTL_SECONDS) + CLOCK_TOLERANCE_SECONDS;
      batches.set(jws, batch.cd, until * 1000 - Date.now());
      return batch.cd;
    });
  };

  return async (token: string, call: CallLine): Promise<JWTPayload> => {
    let payload: JWTPayload | undefined;
    const parts = token.split(BATCH_SEPARATOR);
    if (parts.length === 1) {
      payload = await verified(token, ['exp', 'iat', 'htm', 'htu'], audience);
    } else if (parts.length === 3 && /^(0|[1-9][0-9]{0,4})$/.test(parts[1])) {
      const digests = await batchDigests(parts[2]);
      if (!digests || digests[Number(parts[1])] !== claimsDigest(parts[0])) throw unauthorized();
      payload = batchedClaims(parts[0], audience, Math.floor(Date.now() / 1000));
    }
    if (!payload || payload.htm !== call.method || payload.htu !== call.url) throw unauthorized();
    return payload;
  };
}

export const principalOf = (claims: JWTPayload): Principal => {
  const p = claims.p as Principal | undefined;
  if (!p || typeof p.userId !== 'string' || !Array.isArray(p.scopes)) throw unauthorized();
  return p;
};

export const forwardedOf = (claims: JWTPayload): ForwardedCall => {
  const fwd = claims.fwd as Partial<ForwardedCall> | undefined;
  const text = (v: unknown) => (typeof v === 'string' ? v : null);
  if (!fwd || typeof fwd !== 'object') throw unauthorized();
  return { clientIp: text(fwd.clientIp), userAgent: text(fwd.userAgent) };
};

/**
 * Verifies a principal assertion for this service and this request line; any failure is 401.
 * (The body's binding needs the request: `requirePrincipal` checks it.)
 */
export function createPrincipalVerifier(verifyKeysPem: string, audience: string) {
  const verify = createAssertionVerifier(verifyKeysPem, audience);
  return async (token: string, call: CallLine): Promise<Principal> => principalOf(await verify(token, call));
}

/** Verifies a forwarding assertion for this service and this request line; any failure is 401. */
export function createForwardedVerifier(verifyKeysPem: string, audience: string) {
  const verify = createAssertionVerifier(verifyKeysPem, audience);
  return async (token: string, call: CallLine): Promise<ForwardedCall> =>
    forwardedOf(await verify(token, call));
}
