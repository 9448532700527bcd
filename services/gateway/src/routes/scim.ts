import type { IncomingHttpHeaders } from 'node:http';
import httpProxy from '@fastify/http-proxy';
import { AUTHENTICATED_SCIM_HEADER, type ForwardedCall } from '@support-desk/contracts';
import { type BoundCall, humanBytes } from '@support-desk/platform/core';
import type { HttpApp } from '@support-desk/platform/http';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { GatewayConfig } from '../config.js';
import {
  type RateDecision,
  type RateLimiter,
  RateLimitUnavailableError,
  rateLimitHeaders,
} from '../store/rate-limiter.js';
import type { AuthFailureThrottle } from '../use-cases/auth-failure-throttle.js';
import { BufferedBody, fromOptions, nameBodyLimit, upstreamPool } from './upstream.js';
import type { UpstreamHealth } from './upstream-health.js';

export interface ScimProxyDeps {
  config: GatewayConfig;
  /** Failed authentications per client address, shared with /v1. */
  authFailures: AuthFailureThrottle;
  /** Identity's replicas. */
  identityUrls: string[];
  upstreamHealth: UpstreamHealth;
  rateLimiter: RateLimiter | null;
  signForwarded: (forwarded: ForwardedCall, call: BoundCall) => string;
}

const SCIM_PREFIX = '/scim/v2';
/** The prefix spelt as is: what the proxy forwards is then exactly the path received. */
const CANONICAL_PREFIX = /^\/scim\/v2(?:[/?]|$)/;

/** The connection a SCIM token names (`sdscim_<name>_<secret>`), or null. */
function scimConnectionOf(request: FastifyRequest): string | null {
  const auth = request.headers.authorization ?? '';
  return /^Bearer\s+sdscim_([a-z0-9][a-z0-9_-]{0,39})_[A-Za-z0-9_-]{43}$/i.exec(auth)?.[1] ?? null;
}

const connectionKey = (name: string) => `scim:${name}`;

/** The gateway's own refusals in SCIM's shape (RFC 7644 §3.12), as identity answers the rest. */
function sendScimError(reply: FastifyReply, status: number, detail: string, scimType?: string) {
  return reply
    .code(status)
    .type('application/scim+json; charset=utf-8')
    .send({
      schemas: ['urn:ietf:params:scim:api:messages:2.0:Error'],
      status: String(status),
      ...(scimType ? { scimType } : {}),
      detail,
    });
}

/**
 * Each identity provider connection has its own budget (`SCIM_RATE_LIMIT` calls per rate-limit
 * window, the bucket `scim`). Anyone can name a connection in a token, so a call counts against
 * the budget only once identity has authenticated it (`countAuthenticatedConnection`); here the
 * named connection's budget is only checked, so a connection that spent it is refused before
 * identity is asked, and forged tokens cannot spend it.
 */
async function checkBudget(deps: ScimProxyDeps, request: FastifyRequest, reply: FastifyReply) {
  const name = scimConnectionOf(request);
  if (!name || !deps.rateLimiter) return true;
  let decision: RateDecision | null;
  try {
    decision = await deps.rateLimiter.take(connectionKey(name), deps.config.SCIM_RATE_LIMIT, {
      record: false,
    });
  } catch (err) {
    if (!(err instanceof RateLimitUnavailableError)) throw err;
    sendScimError(reply, 503, 'Rate limiting is unavailable; retry later');
    return false;
  }
  if (!decision) return true;
  reply.headers(rateLimitHeaders('scim', decision));
  if (decision.allowed) return true;
  reply.header('retry-after', String(decision.retryAfter));
  sendScimError(
    reply,
    429,
    `Rate limit exceeded for this SCIM connection; retry after ${decision.retryAfter} s`,
  );
  return false;
}

/**
 * Failed SCIM authentications count per client address like /v1's (one counter for both): an
 * address past `AUTH_FAILURES_PER_IP` gets 429 before anything else, and a call without a SCIM
 * token at all is refused here; both before a byte of the body is read. Every 401 answered on
 * these paths (the gateway's or identity's, which checks the token itself) is one failure.
 */
function throttleFailedAuthentication(scope: FastifyInstance, { authFailures }: ScimProxyDeps) {
  const tooMany = (reply: FastifyReply, decision: RateDecision) => {
    reply.header('retry-after', String(decision.retryAfter));
    return sendScimError(
      reply,
      429,
      `Too many failed authentications from this address; retry after ${decision.retryAfter} s`,
    );
  };
  scope.addHook('onRequest', async (request, reply) => {
    const blocked = authFailures.blockedFor(request.ip);
    if (blocked) return tooMany(reply, blocked);
    if (!scimConnectionOf(request)) {
      reply.header('www-authenticate', 'Bearer realm="scim"');
      return sendScimError(reply, 401, 'A valid SCIM bearer token is required');
    }
  });
  scope.addHook('onResponse', async (request, reply) => {
    if (reply.statusCode === 401) await authFailures.recordFailure(request.ip);
  });
}

/** Counts the call against the connection identity authenticated, and keeps identity's note inside. */
function countAuthenticatedConnection(deps: ScimProxyDeps) {
  return (headers: IncomingHttpHeaders): IncomingHttpHeaders => {
    const { [AUTHENTICATED_SCIM_HEADER]: name, ...rest } = headers;
    if (typeof name === 'string' && name && deps.rateLimiter) {
      // Unavailable Redis was already handled by the check before the call.
      deps.rateLimiter.take(connectionKey(name), deps.config.SCIM_RATE_LIMIT).catch(() => undefined);
    }
    return rest;
  };
}

/**
 * `/scim/v2/*` → identity, which authenticates the connection's bearer token itself (it holds the
 * tokens' hashes; a gateway-side check would need a look-up in identity on every call anyway).
 * The gateway adds what only it can: the connection's rate limit, and its signed forwarding
 * assertion (identity records the client's address from it). Bodies are buffered (SCIM bodies
 * are JSON, at most JSON_BODY_LIMIT_BYTES) so the assertion binds the call as sent.
 */
export async function registerScimProxy(app: HttpApp, deps: ScimProxyDeps): Promise<void> {
  const { config, identityUrls, signForwarded } = deps;
  await app.register(async (scope) => {
    throttleFailedAuthentication(scope, deps);
    scope.removeAllContentTypeParsers();
    scope.addContentTypeParser(
      '*',
      { parseAs: 'buffer', bodyLimit: config.JSON_BODY_LIMIT_BYTES },
      (_req, body, done) => done(null, body),
    );
    const tooLarge = `SCIM request bodies are limited to ${humanBytes(config.JSON_BODY_LIMIT_BYTES)}`;
    nameBodyLimit(scope, tooLarge, (reply) => sendScimError(reply as FastifyReply, 413, tooLarge));
    // One pool for every SCIM method, writes among them: it keeps connections only as long as a
    // write pool does.
    const { base, undici } = upstreamPool(config, identityUrls, {
      writes: true,
      health: deps.upstreamHealth,
      service: 'identity',
    });
    await scope.register(httpProxy, {
      upstream: base,
      undici,
      prefix: SCIM_PREFIX,
      rewritePrefix: SCIM_PREFIX,
      // Keeps the string parser above (http-proxy would stream bodies instead).
      preValidation: async () => undefined,
      disableRequestLogging: true,
      preHandler: async (request: FastifyRequest, reply: FastifyReply) => {
        // The router also matches a prefix spelt with escapes (`/scim/%762/…`), which the proxy
        // then forwards as `/scim/v2/…`: the assertion would bind a path identity never sees.
        if (!CANONICAL_PREFIX.test(request.url)) return sendScimError(reply, 404, 'Not found');
        if (!(await checkBudget(deps, request, reply))) return reply;
        // The buffered body goes on as the very bytes received (see BufferedBody), which the
        // assertion binds.
        const bytes = Buffer.isBuffer(request.body) ? request.body : null;
        if (bytes) request.body = new BufferedBody(bytes);
        request.forwardedAssertion = signForwarded(
          { clientIp: request.ip ?? null, userAgent: request.headers['user-agent'] ?? null },
          { audience: 'identity', method: request.method, url: request.url, body: bytes },
        );
      },
      // The Authorization header (the connection's token) goes through: identity checks it.
      replyOptions: fromOptions(true, countAuthenticatedConnection(deps)) as never,
    });
  });
}
