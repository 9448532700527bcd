import {
  FORWARDED_HEADER,
  type Principal,
  PRINCIPAL_HEADER,
  type Scope,
  hasScope,
} from '@support-desk/contracts';
import type { FastifyRequest } from 'fastify';
import type { JWTPayload } from 'jose';
import { EMPTY_BODY_DIGEST, verifiedBody } from './body-binding.js';
import { forbidden, unauthorized } from './errors.js';
import type { HttpApp } from './http.js';
import type { OneTimeIds } from './one-time-ids.js';
import { CLOCK_TOLERANCE_SECONDS, createAssertionVerifier, forwardedOf, principalOf } from './principal.js';

// The HTTP side of the principal assertion (principal.ts holds the claims, keys and verifiers):
// the fastify hooks every service route runs behind.

declare module 'fastify' {
  interface FastifyRequest {
    principal: Principal;
    /**
     * The client's address: from the principal, or on a public route from the gateway's
     * forwarding assertion; on a call that did not come through the gateway, the socket's peer.
     */
    clientAddress: string | null;
    /** The digest the assertion names for the body, checked as the body is read. */
    boundBodyDigest: string | null;
  }
  interface FastifyContextConfig {
    /** Route served without a principal (health, OAuth pages). */
    public?: boolean;
    /**
     * The route reads its body as a stream (an upload, which the gateway forwards while it
     * arrives): its assertion is bound by a one-time id rather than a digest.
     */
    streamedBody?: boolean;
  }
}

const ALWAYS_PUBLIC = ['/livez', '/readyz'];

export interface PrincipalGuardOptions {
  /** PEM public key(s) of the gateway's signing key (`PRINCIPAL_VERIFY_KEYS`). */
  verifyKeys: string;
  /** This service's name: assertions for any other audience are refused. */
  audience: string;
  /** Where the one-time ids of streamed calls are spent; needed by a service with such a route. */
  oneTimeIds?: OneTimeIds;
}

/** Methods whose body fastify never reads. */
const BODYLESS = new Set(['GET', 'HEAD']);

/** Whether fastify will read a body (its own rule: a type, a length above 0, or chunks). */
const sendsBody = (headers: FastifyRequest['headers']) =>
  headers['content-type'] !== undefined ||
  headers['transfer-encoding'] !== undefined ||
  (headers['content-length'] !== undefined && headers['content-length'] !== '0');

const replayed = () => unauthorized("The call's assertion does not match its body, or was used before");

/**
 * Every route needs a valid principal assertion, issued for this service and this very call,
 * except health checks and routes marked `config: { public: true }`. Unknown routes still answer
 * 404 (checked after routing). A public route learns the client's address from the gateway's
 * forwarding assertion (a forged or stale one is 401), never from `X-Forwarded-For`: the only
 * hop trusted is the one holding the gateway's key, wherever it runs.
 *
 * Both kinds of assertion also bind the body (body-binding.ts): a digest, checked as the parser
 * reads the body (a mismatch is a 401 before any handler runs), or, on a `streamedBody` route, a
 * one-time id spent before the body is read. An assertion without its binding is refused.
 */
export function requirePrincipal(
  app: HttpApp,
  { verifyKeys, audience, oneTimeIds }: PrincipalGuardOptions,
): void {
  const verify = createAssertionVerifier(verifyKeys, audience);
  app.decorateRequest('principal', null as unknown as Principal);
  app.decorateRequest('clientAddress', null);
  app.decorateRequest('boundBodyDigest', null);
  app.addHook('onRoute', (route) => {
    if (route.config?.streamedBody && !oneTimeIds)
      throw new Error(`${route.url} streams its body: requirePrincipal needs oneTimeIds`);
  });

  const bindBody = async (request: FastifyRequest, claims: JWTPayload) => {
    if (request.routeOptions.config?.streamedBody) {
      // exp is checked already; the id is kept as long as the assertion could be accepted.
      const until = new Date(((claims.exp ?? 0) + CLOCK_TOLERANCE_SECONDS) * 1000);
      if (typeof claims.jti !== 'string' || !oneTimeIds || !(await oneTimeIds.spend(claims.jti, until)))
        throw replayed();
      return;
    }
    if (typeof claims.bd !== 'string') throw replayed();
    if (BODYLESS.has(request.method)) return;
    if (sendsBody(request.headers)) request.boundBodyDigest = claims.bd;
    else if (claims.bd !== EMPTY_BODY_DIGEST) throw replayed();
  };

  app.addHook('onRequest', async (request) => {
    if (!request.routeOptions.url) return; // not-found handler
    const call = { method: request.method, url: request.url };
    if (request.routeOptions.config?.public || ALWAYS_PUBLIC.includes(request.routeOptions.url)) {
      const forwarded = request.headers[FORWARDED_HEADER];
      if (typeof forwarded !== 'string') {
        request.clientAddress = request.socket.remoteAddress ?? null;
        return;
      }
      const claims = await verify(forwarded, call);
      request.clientAddress = forwardedOf(claims).clientIp;
      await bindBody(request, claims);
      return;
    }
    const header = request.headers[PRINCIPAL_HEADER];
    if (typeof header !== 'string') throw unauthorized();
    const claims = await verify(header, call);
    request.principal = principalOf(claims);
    request.clientAddress = request.principal.clientIp;
    await bindBody(request, claims);
  });

  app.addHook('preParsing', (request, _reply, payload, done) =>
    done(
      null,
      request.boundBodyDigest === null ? payload : verifiedBody(payload, request.boundBodyDigest, replayed),
    ),
  );
}

/** Throws 403 unless the caller's effective scopes include `scope` (`admin` implies all). */
export function requireScope(request: FastifyRequest, scope: Scope): void {
  if (!hasScope(request.principal.scopes, scope))
    throw forbidden(`This operation requires the ${scope} scope`);
}
