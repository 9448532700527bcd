import type { IncomingHttpHeaders } from 'node:http';
import httpProxy from '@fastify/http-proxy';
import {
  AUTHENTICATED_CLIENT_HEADER,
  CONSOLE_ROUTES,
  type ForwardedCall,
  OAUTH_ROUTES,
  type OAuthRoute,
} from '@support-desk/contracts';
import { addressKey, type BoundCall, humanBytes } from '@support-desk/platform/core';
import { errorBody, type HttpApp } from '@support-desk/platform/http';
import type { FastifyReply, FastifyRequest } from 'fastify';
import {
  type RateDecision,
  type RateLimiter,
  RateLimitUnavailableError,
  rateLimitHeaders,
} from '../store/rate-limiter.js';
import type { GatewayConfig } from '../config.js';
import { BufferedBody, fromOptions, isUnsafe, nameBodyLimit, upstreamPool } from './upstream.js';
import type { UpstreamHealth } from './upstream-health.js';

export interface OAuthProxyDeps {
  config: GatewayConfig;
  /** Identity's replicas. */
  identityUrls: string[];
  upstreamHealth: UpstreamHealth;
  rateLimiter: RateLimiter | null;
  signForwarded: (forwarded: ForwardedCall, call: BoundCall) => string;
}

/** client_id from HTTP Basic client authentication, the query, or a form/JSON body. */
function oauthClientId(request: FastifyRequest, rawBody?: string): string | null {
  const auth = request.headers.authorization;
  if (auth?.toLowerCase().startsWith('basic ')) {
    const decoded = Buffer.from(auth.slice(6).trim(), 'base64').toString('utf8');
    let id = '';
    try {
      id = decodeURIComponent(decoded.split(':')[0] ?? '');
    } catch {
      // Malformed percent-encoding: no client is named (identity answers invalid_client).
    }
    if (id) return id;
  }
  const query = request.query as Record<string, unknown> | undefined;
  if (typeof query?.client_id === 'string' && query.client_id) return query.client_id;
  if (rawBody) {
    const type = String(request.headers['content-type'] ?? '');
    if (type.includes('json')) {
      try {
        const id = (JSON.parse(rawBody) as { client_id?: unknown }).client_id;
        if (typeof id === 'string' && id) return id;
      } catch {
        return null;
      }
    } else {
      const id = new URLSearchParams(rawBody).get('client_id');
      if (id) return id;
    }
  }
  return null;
}

/**
 * The authorization server's calls carry no API credential, so they get their own limits
 * (credential stuffing, code guessing). Every POST counts per client address (an IPv6 /64)
 * before anything else. The token and revocation endpoints also have a budget per OAuth
 * client, but a call counts against it only once identity has authenticated the client
 * (`countAuthenticatedClient`): anyone can name a client, so counting named clients would let
 * anonymous posts block an app's code exchange and refresh. Here the named client's budget is
 * only checked, so a client that spent it is refused before identity is asked.
 */
async function limitAuthCall(
  deps: OAuthProxyDeps,
  request: FastifyRequest,
  reply: FastifyReply,
  clientId: string | null,
): Promise<boolean> {
  const limiter = deps.rateLimiter;
  if (!limiter) return true;
  const decisions: RateDecision[] = [];
  try {
    const byAddress = await limiter.take(`auth:ip:${addressKey(request.ip)}`, deps.config.OAUTH_LIMIT_PER_IP);
    if (byAddress) decisions.push(byAddress);
    if (clientId && byAddress?.allowed !== false) {
      const byClient = await limiter.take(clientKey(clientId), deps.config.OAUTH_TOKEN_LIMIT_PER_CLIENT, {
        record: false,
      });
      if (byClient) decisions.push(byClient);
    }
  } catch (err) {
    if (!(err instanceof RateLimitUnavailableError)) throw err;
    reply.code(503).send(errorBody('SERVICE_UNAVAILABLE', 'Rate limiting is unavailable; retry later'));
    return false;
  }
  // Report the binding limit: a refusal (latest retry) first, else the one with least room.
  const refused = decisions.filter((d) => !d.allowed).sort((a, b) => b.retryAfter - a.retryAfter);
  const tightest = refused[0] ?? [...decisions].sort((a, b) => a.remaining - b.remaining)[0];
  if (!tightest) return true;
  reply.headers(rateLimitHeaders('auth', tightest));
  if (tightest.allowed) return true;
  reply.header('retry-after', String(tightest.retryAfter));
  reply
    .code(429)
    .send(
      errorBody(
        'RATE_LIMITED',
        `Rate limit exceeded for the auth bucket; retry after ${tightest.retryAfter} s`,
      ),
    );
  return false;
}

const clientKey = (clientId: string) => `auth:client:${clientId}`;

/** Counts the call against the client identity authenticated, and keeps identity's note inside. */
function countAuthenticatedClient(deps: OAuthProxyDeps) {
  return (headers: IncomingHttpHeaders): IncomingHttpHeaders => {
    const { [AUTHENTICATED_CLIENT_HEADER]: clientId, ...rest } = headers;
    if (typeof clientId === 'string' && clientId && deps.rateLimiter) {
      // Unavailable Redis was already handled by the check before the call.
      deps.rateLimiter
        .take(clientKey(clientId), deps.config.OAUTH_TOKEN_LIMIT_PER_CLIENT)
        .catch(() => undefined);
    }
    return rest;
  };
}

// OAuth calls keep their Authorization header (client authentication for the token endpoint).
const OAUTH_BODY_LIMIT = 64 * 1024;

/** The route's own path with the query as sent: what identity receives and the assertion binds. */
const forwardedUrl = (route: OAuthRoute, url: string) => {
  const queryAt = url.indexOf('?');
  return queryAt < 0 ? route.path : route.path + url.slice(queryAt);
};

/**
 * The routes of `OAUTH_ROUTES` and the settings console's `CONSOLE_ROUTES` → identity, without
 * API authentication (the console signs administrators in with identity's login session). Each is proxied to its
 * own path (plus the query as sent), whatever spelling of it the router matched: no other path
 * reaches identity through here. Bodies are small forms, buffered (so the token endpoint's
 * client can be named before the call) and sent on as the very bytes received. Each call carries
 * the gateway's signed forwarding assertion, bound to those bytes: identity takes the client's
 * address from it, never from a header a client sets.
 */
export async function registerOAuthProxy(app: HttpApp, deps: OAuthProxyDeps): Promise<void> {
  const { config, identityUrls, signForwarded } = deps;
  await app.register(async (scope) => {
    scope.removeAllContentTypeParsers();
    scope.addContentTypeParser('*', { parseAs: 'buffer', bodyLimit: OAUTH_BODY_LIMIT }, (_req, body, done) =>
      done(null, body),
    );
    nameBodyLimit(scope, `OAuth request bodies are limited to ${humanBytes(OAUTH_BODY_LIMIT)}`);
    for (const route of [...OAUTH_ROUTES, ...CONSOLE_ROUTES]) {
      const replyOptions = fromOptions(
        true,
        route.clientAuthenticated ? countAuthenticatedClient(deps) : undefined,
      );
      const { base, undici } = upstreamPool(config, identityUrls, {
        writes: isUnsafe(route.method),
        health: deps.upstreamHealth,
        service: 'identity',
      });
      await scope.register(httpProxy, {
        upstream: base,
        undici,
        prefix: '/',
        routes: [route.path],
        httpMethods: route.method === 'GET' ? ['GET', 'HEAD'] : [route.method],
        preRewrite: (url: string) => forwardedUrl(route, url),
        // Keeps the string parser above (http-proxy would stream bodies instead).
        preValidation: async () => undefined,
        disableRequestLogging: true,
        preHandler: async (request: FastifyRequest, reply: FastifyReply) => {
          const bytes = Buffer.isBuffer(request.body) ? request.body : null;
          if (route.method === 'POST') {
            const clientId = route.clientAuthenticated ? oauthClientId(request, bytes?.toString()) : null;
            if (!(await limitAuthCall(deps, request, reply, clientId))) return reply;
          }
          if (bytes) request.body = new BufferedBody(bytes);
          request.forwardedAssertion = signForwarded(
            { clientIp: request.ip ?? null, userAgent: request.headers['user-agent'] ?? null },
            {
              audience: 'identity',
              method: request.method,
              url: forwardedUrl(route, request.url),
              body: bytes,
            },
          );
        },
        replyOptions: replyOptions as never,
      });
    }
  });
}
