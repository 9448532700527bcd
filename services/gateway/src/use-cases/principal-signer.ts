import type { Principal } from '@support-desk/contracts';
import {
  type BodyOfCall,
  bodyClaimJson,
  PRINCIPAL_ISSUER,
  PRINCIPAL_VERSION,
  PRINCIPAL_TTL_SECONDS,
  principalSigningKey,
  signClaims,
  signClaimsBatch,
} from '@support-desk/platform/core';

/** What varies per call; everything else in the principal comes from the (cached) caller. */
export interface CallFields extends BodyOfCall {
  clientIp: string | null;
  userAgent: string | null;
  requestId: string;
  /** The one service that may accept the assertion. */
  audience: string;
  /** The call it is bound to: method, and path with query exactly as forwarded. */
  method: string;
  url: string;
}

/**
 * The same EdDSA assertion as `createPrincipalSigner` in the platform (claims `p`, `iss`, `aud`,
 * `htm`, `htu`, `bd` or `jti`, `iat`, `exp`; verified by the services' `requirePrincipal`), built for
 * the gateway's hot path: the JSON of a caller's fixed principal fields is serialised once per
 * caller object (callers are cached with their credential), and only the per-call fields are
 * added. The request id stays inside the signed claims: services record `principal.requestId`
 * in their events, and the assertion is the only thing they trust about a call.
 *
 * The calls signed in one event-loop turn share one signature (`signClaimsBatch` in the
 * platform: each call keeps its own whole claims, the signature covers their digests), at most
 * `batchMax` to a batch; a turn with one call (or `batchMax` 1) gets a single assertion as
 * before. The answer comes once the turn's I/O callbacks are done (`setImmediate`), the moment
 * the calls of the turn have all asked: no call waits for a later turn.
 */
export function createFastPrincipalSigner(
  signingKeyPem: string,
  { batchMax = 1 }: { batchMax?: number } = {},
) {
  const key = principalSigningKey(signingKeyPem);
  const fixedJson = new WeakMap<object, string>();
  const iss = JSON.stringify(PRINCIPAL_ISSUER);

  const claimsOf = (fixed: FixedPrincipal, call: CallFields, iat: number): string => {
    let json = fixedJson.get(fixed);
    if (json === undefined) {
      // `{...fixed}` keeps only own data fields, as the spread in a plain principal would.
      json = JSON.stringify({ ...fixed }).slice(0, -1);
      fixedJson.set(fixed, json);
    }
    return (
      `{"p":${json},"clientIp":${JSON.stringify(call.clientIp)},"userAgent":${JSON.stringify(call.userAgent)},` +
      `"requestId":${JSON.stringify(call.requestId)}},"v":${PRINCIPAL_VERSION},"iss":${iss},"aud":${JSON.stringify(call.audience)},` +
      `"htm":${JSON.stringify(call.method)},"htu":${JSON.stringify(call.url)},${bodyClaimJson(call)},` +
      `"iat":${iat},"exp":${iat + PRINCIPAL_TTL_SECONDS}}`
    );
  };

  let waiting: { claims: string; resolve: (assertion: string) => void; reject: (err: unknown) => void }[] =
    [];
  const signWaiting = () => {
    const turn = waiting;
    waiting = [];
    for (let from = 0; from < turn.length; from += batchMax) {
      const batch = turn.slice(from, from + batchMax);
      try {
        const assertions =
          batch.length === 1
            ? [signClaims(key, batch[0].claims)]
            : signClaimsBatch(
                key,
                batch.map((b) => b.claims),
              );
        batch.forEach((b, i) => b.resolve(assertions[i]));
      } catch (err) {
        for (const b of batch) b.reject(err);
      }
    }
  };

  return (fixed: FixedPrincipal, call: CallFields): Promise<string> => {
    const claims = claimsOf(fixed, call, Math.floor(Date.now() / 1000));
    return new Promise((resolve, reject) => {
      if (waiting.length === 0) setImmediate(signWaiting);
      waiting.push({ claims, resolve, reject });
    });
  };
}

type FixedPrincipal = Omit<Principal, 'clientIp' | 'userAgent' | 'requestId'>;

export type FastPrincipalSigner = ReturnType<typeof createFastPrincipalSigner>;
