import type { Principal } from '@support-desk/contracts';
import {
  type BodyOfCall,
  bodyClaimJson,
  PRINCIPAL_ISSUER,
  PRINCIPAL_VERSION,
  PRINCIPAL_TTL_SECONDS,
  principalSigningKey,
  signClaims,
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
 * added. The request id stays inside the signed assertion: services record `principal.requestId`
 * in their events, and the assertion is the only thing they trust about a call.
 */
export function createFastPrincipalSigner(signingKeyPem: string) {
  const key = principalSigningKey(signingKeyPem);
  const fixedJson = new WeakMap<object, string>();
  const iss = JSON.stringify(PRINCIPAL_ISSUER);

  return (fixed: Omit<Principal, 'clientIp' | 'userAgent' | 'requestId'>, call: CallFields): string => {
    let json = fixedJson.get(fixed);
    if (json === undefined) {
      // `{...fixed}` keeps only own data fields, as the spread in a plain principal would.
      json = JSON.stringify({ ...fixed }).slice(0, -1);
      fixedJson.set(fixed, json);
    }
    const iat = Math.floor(Date.now() / 1000);
    const claims =
      `{"p":${json},"clientIp":${JSON.stringify(call.clientIp)},"userAgent":${JSON.stringify(call.userAgent)},` +
      `"requestId":${JSON.stringify(call.requestId)}},"v":${PRINCIPAL_VERSION},"iss":${iss},"aud":${JSON.stringify(call.audience)},` +
      `"htm":${JSON.stringify(call.method)},"htu":${JSON.stringify(call.url)},${bodyClaimJson(call)},` +
      `"iat":${iat},"exp":${iat + PRINCIPAL_TTL_SECONDS}}`;
    return signClaims(key, claims);
  };
}

export type FastPrincipalSigner = ReturnType<typeof createFastPrincipalSigner>;
